// arena serve's /me: follows each waiting submission's verdict (GET /api/submissions/ID, the session's cookie) and
// shows it without a reload by hand; once a verdict is in, the page is loaded again for its reason and traceback.
(function () {
  "use strict";
  var WAITING = { queued: "received, waiting to be validated", validating: "received, validating" };
  var rows = document.querySelectorAll("[data-submission]");
  var waiting = [];
  rows.forEach(function (row) {
    if (WAITING[row.getAttribute("data-status")]) { waiting.push(row); }
  });
  if (!waiting.length) { return; }
  function show(id, status) {
    document.querySelectorAll('[data-submission="' + id + '"]').forEach(function (el) {
      el.setAttribute("data-status", status);
      var cell = el.querySelector(".status");
      if (cell) { cell.textContent = WAITING[status] || status; }
    });
  }
  function poll() {
    var pending = waiting.filter(function (row) { return WAITING[row.getAttribute("data-status")]; });
    var ids = Array.from(new Set(pending.map(function (row) { return row.getAttribute("data-submission"); })));
    if (!ids.length) { return; }
    Promise.all(ids.map(function (id) {
      return fetch("/api/submissions/" + encodeURIComponent(id), { credentials: "same-origin", cache: "no-store" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (doc) {
          if (!doc) { return false; }
          show(id, doc.status);
          return !WAITING[doc.status];
        }, function () { return false; });
    })).then(function (done) {
      if (done.some(Boolean)) { window.location.reload(); } else { window.setTimeout(poll, 1000); }
    });
  }
  window.setTimeout(poll, 1000);
})();
