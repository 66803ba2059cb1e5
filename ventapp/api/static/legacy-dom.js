// Small DOM and storage helpers of the SSE test page (index.html), kept apart so the page's own
// script stays under the project's file-size limit. Every piece of server or model text goes
// through textContent (no innerHTML, so no XSS).
(function () {
  "use strict";
  window.ventDom = {
    el: function (tag, cls, text) {
      var e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text != null) e.textContent = String(text);
      return e;
    },
    // JSON shown indented; a string that is not JSON as it is.
    pretty: function (v) {
      if (v == null) return "";
      if (typeof v === "string") {
        try { return JSON.stringify(JSON.parse(v), null, 2); } catch (_) { return v; }
      }
      try { return JSON.stringify(v, null, 2); } catch (_) { return String(v); }
    },
    // Only http(s) links are made clickable (a citation's URL comes from a tool).
    safeUrl: function (u) {
      try { var p = new URL(u, location.href); return /^https?:$/.test(p.protocol) ? p.href : null; }
      catch (_) { return null; }
    },
    nearBottom: function () { return window.innerHeight + window.scrollY >= document.body.scrollHeight - 80; },
    scrollDown: function (stick) { if (stick) window.scrollTo(0, document.body.scrollHeight); },
    storeGet: function (k) { try { return localStorage.getItem(k); } catch (_) { return null; } },
    storeSet: function (k, v) { try { localStorage.setItem(k, v); } catch (_) { /* private mode */ } },
    // A file sent with a question (live and after a reload): a word, not an emoji, which draws as
    // a box on machines without an emoji font.
    fileChip: function (name) { return window.ventDom.el("div", "status attachment", "attached: " + name); }
  };
})();
