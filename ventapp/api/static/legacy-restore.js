// The test page after a reload: the tab's session (kept in sessionStorage by index.html) is read
// again through GET /api/chat/history/{id} and drawn as the live page draws it, through the same
// handleEvent. If the session waits on a pause, GET /api/chat/interrupt gives its card back with
// the interrupt_token, so it can still be answered through POST /api/chat/resume.
(function () {
  "use strict";
  var page = window.ventLegacy;
  if (!page) return;
  var FINISHED = { complete: "done", waiting: "waiting" };
  var STOPPED = "\n\n[stopped]";

  function query(params) {
    return Object.keys(params).map(function (k) {
      return encodeURIComponent(k) + "=" + encodeURIComponent(params[k]);
    }).join("&");
  }

  // The user's message with a chip per file sent with it, as send() draws it live (the file's name).
  function drawQuestion(row) {
    var bubble = page.el("div", "bubble user", row.content);
    (row.attachments || []).forEach(function (path) {
      bubble.appendChild(window.ventDom.fileChip(String(path).split("/").pop()));
    });
    return bubble;
  }

  function drawAnswer(row, agentLabel) {
    var bubble = page.newBubble();
    // The reasoning kept with the answer (rows stored before it was kept have none): collapsed, as live.
    if (row.reasoning) page.handleEvent(bubble, { type: "thinking_token", content: row.reasoning });
    var dropped = !!row.error && row.error.code === "superseded";
    (row.tool_calls || []).forEach(function (call) {
      // `label`: the tool's name in our Accept-Language, as the live frames carry it.
      var base = { tool: call.tool, cn_tool: call.cn_tool, label: call.label, tool_call_id: call.tool_call_id };
      page.handleEvent(bubble, Object.assign({ type: "tool_call", args: call.args }, base));
      if (call.content != null)
        page.handleEvent(bubble, Object.assign(
          { type: "tool_result", content: call.content, error: call.error, message: call.message }, base));
    });
    // The todo list the main agent's last write_todos left (live: the updated_todo_list frame after it ran).
    var todos = null;
    (row.tool_calls || []).forEach(function (call) {
      if (call.tool === "write_todos" && (call.agent_id || "main") === "main" && call.content != null && !call.error)
        todos = (call.args || {}).todos;
    });
    if (Array.isArray(todos)) page.handleEvent(bubble, { type: "updated_todo_list", todos: todos });
    var text = row.content || "";
    // A stopped answer is stored with a marker the stream never sent (run_answer.CANCELLED_MARKER).
    if (row.status === "cancelled" && text.slice(-STOPPED.length) === STOPPED) text = text.slice(0, -STOPPED.length);
    if (text) page.handleEvent(bubble, { type: "token", content: text });
    // The citations frame as it came: its sources, or "model only" for a finished answer without any.
    if ((row.citations && row.citations.length) || row.model_only)
      page.handleEvent(bubble, { type: "citations", items: row.citations || [], model_only: !!row.model_only });
    var state = FINISHED[row.status];
    // The error frame that closed it (its sentence, worded in our language as the stream worded it).
    var closing = row.error || { message: "this answer did not finish", code: row.status };
    if (dropped) page.dropped(bubble);  // as the live page settles it: a note, not an error
    else if (!state) page.handleEvent(bubble, { type: "error", message: closing.message, code: closing.code });
    // A finished run's status line, as its last agent_done frame left it.
    if (state === "done") page.handleEvent(bubble, { type: "agent_done", agent: "ventagent", label: agentLabel });
    // The footer as the live done frame drew it: the stored duration (the one done carried) and usage.
    if (state === "done" && (typeof row.duration_ms === "number" || (row.usage && row.usage.total_tokens)))
      page.handleEvent(bubble, { type: "done", usage: row.usage || {}, duration_ms: row.duration_ms });
    bubble.dataset.state = dropped ? "dropped" : state || "error";
    return bubble;
  }

  async function restore(sessionId) {
    var user = page.user();
    var history = await fetch("/api/chat/history/" + encodeURIComponent(sessionId) + "?" + query({ user_name: user }), {
      headers: { "Accept-Language": document.documentElement.lang || "en" },  // tool labels, errors: as on the stream
    });
    if (!history.ok) { page.setSession(null); return; }  // gone, or another user's
    var body = await history.json();
    page.setSession(body.session_id);
    var last = null;
    (body.messages || []).forEach(function (row) {
      if (row.role === "user") { page.log.appendChild(drawQuestion(row)); last = null; }
      else last = drawAnswer(row, body.agent_label);
    });
    var pending = await fetch("/api/chat/interrupt?" + query({ session_id: body.session_id, user_name: user }), {
      headers: { "Accept-Language": document.documentElement.lang || "en" },  // the page's language, as on the stream
    });
    if (pending.status !== 200) {  // 204: nothing waits (any more)
      if (last && last.dataset.state === "waiting") last.dataset.state = "done";
      return;
    }
    var bubble = last && last.dataset.state === "waiting" ? last : page.newBubble();
    page.handleEvent(bubble, Object.assign({}, await pending.json(), { type: "interrupt" }));
    bubble.dataset.state = "waiting";
  }

  var stored = page.storedSession();
  if (!stored) { page.setSession(null); return; }
  page.setBusy(true);
  restore(stored).catch(function (e) {
    if (window.console) console.warn("restoring the session failed", e);
  }).finally(function () {
    page.setBusy(false);
    window.scrollTo(0, document.body.scrollHeight);
  });
})();
