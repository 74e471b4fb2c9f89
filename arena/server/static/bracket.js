// arena serve's /bracket: follows a tournament as its matches end, without a reload by hand. It polls /api/bracket
// (`arena bracket --json`'s document) and, when the tournament's progress differs from the page's (games stored,
// matches known, matches done, finished: arena.output.brackets.signature), loads /bracket again and puts its new
// #tournament section in place of the old one. The page is parsed by DOMParser (nothing in it runs) and every name
// in it was escaped by the server, as on any page of the site.
(function () {
  "use strict";
  var PERIOD = 2000;
  function progress(doc) {
    var games = 0, matches = 0, done = 0;
    (doc.rounds || []).forEach(function (round) {
      round.forEach(function (m) {
        matches += 1;
        games += (m.games || []).length;
        if (m.done) { done += 1; }
      });
    });
    return games + "-" + matches + "-" + done + "-" + (doc.finished ? 1 : 0);
  }
  function section() { return document.getElementById("tournament"); }
  function fetched(url, as) {
    return fetch(url, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r[as]() : null; });
  }
  function poll() {
    var shown = section();
    if (!shown) { return; }
    fetched("/api/bracket", "json").then(function (doc) {
      if (!doc || progress(doc) === shown.getAttribute("data-progress")) { return null; }
      return fetched("/bracket", "text").then(function (text) {
        var fresh = text && new DOMParser().parseFromString(text, "text/html").getElementById("tournament");
        if (fresh) { shown.replaceWith(document.importNode(fresh, true)); }
      });
    }).catch(function () { return null; }).then(function () {
      var now = section();
      if (now && now.getAttribute("data-finished") !== "yes") { window.setTimeout(poll, PERIOD); }
    });
  }
  if (section() && section().getAttribute("data-finished") !== "yes") { window.setTimeout(poll, PERIOD); }
})();
