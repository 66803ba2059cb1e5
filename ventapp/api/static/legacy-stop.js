// The test page's Stop button: POST /api/chat/stop for the open session while its answer streams.
// The stream itself then ends with its `error` frame (code `cancelled`), as any client sees it; the
// page only asks. Before the first answer of a new chat names its session (X-Session-Id) there is
// nothing to stop yet: the button waits, disabled.
(function () {
  "use strict";
  var page = window.ventLegacy, stopEl = document.getElementById("stop");
  if (!page || !stopEl) return;
  stopEl.addEventListener("click", async function () {
    var sessionId = page.session();
    if (!sessionId || stopEl.disabled) return;
    stopEl.disabled = true;
    var fd = new FormData();
    fd.append("session_id", sessionId);
    fd.append("user_name", page.user());
    try {
      await fetch("/api/chat/stop", { method: "POST", body: fd });
    } catch (_) {
      stopEl.disabled = false;  // the server did not hear it: let the person ask again
    }
  });
})();
