// The replay viewer of arena report and of arena serve's game pages. Works from file:// and any web host: the
// games' data arrive as <script> files (data/games.js, data/replays-N.js; a server's page gives its one game's
// data in ARENA_REPLAYS, already loaded), never by fetch(). Every name and board is set with textContent, never as
// HTML: names come from bots and users' files.
(function () {
  "use strict";
  var games = window.ARENA_GAMES || [];
  var byId = {};
  games.forEach(function (g) { byId[g.id] = g; });
  var chunks = window.ARENA_REPLAYS || {};
  var waiting = {};
  var current = null;
  var step = 0;
  var $ = function (id) { return document.getElementById(id); };

  window.arenaReplays = function (n, replays) {
    chunks[n] = replays;
    (waiting[n] || []).forEach(function (f) { f(); });
    delete waiting[n];
  };

  function load(n, then) {
    if (chunks[n]) { then(); return; }
    if (waiting[n]) { waiting[n].push(then); return; }
    waiting[n] = [then];
    var s = document.createElement("script");
    s.src = "data/replays-" + n + ".js";
    s.onerror = function () { message("the data file " + s.src + " is missing"); };
    document.body.appendChild(s);
  }

  function message(text) { $("message").textContent = text; }

  function seatName(r, frame) {  // an opening move was chosen by nobody: it is the opening's, not a seat's
    return frame.opening ? "opening" : frame.seat === null ? "chance" : "seat " + frame.seat + " (" + r.players[frame.seat] + ")";
  }

  function drawBoard(el, board) {  // text, or the game's own board as [text, css classes] runs (textContent only)
    el.textContent = "";
    if (typeof board === "string") { el.textContent = board; return; }
    board.forEach(function (run) {
      var span = document.createElement("span");
      span.textContent = run[0];
      if (run[1]) { span.className = run[1]; }
      el.appendChild(span);
    });
  }

  function clockText(seconds) {  // 83.4 -> "1:23.4"; 59.97 -> "1:00.0" (rounded first, not "0:60.0")
    var tenths = Math.round(Math.max(seconds, 0) * 10);
    var m = Math.floor(tenths / 600);
    var s = ((tenths - 600 * m) / 10).toFixed(1);
    return m + ":" + (s < 10 ? "0" : "") + s;
  }

  function drawClocks(r, f) {  // each seat's clock after its latest move (a game with game clocks only)
    var el = $("clocks");
    if (!el) { return; }
    el.textContent = !f.clocks ? "" : "clocks (" + r.time_control + "): " + f.clocks.map(function (left, s) {
      return "seat " + s + " (" + r.players[s] + ") " + (left === null ? "not started" : clockText(left) + " left");
    }).join(", ");
  }

  function render() {
    var r = current;
    var f = r.frames[step];
    drawBoard($("board"), f.board);
    drawClocks(r, f);
    $("step").textContent = "move " + step + " of " + (r.frames.length - 1);
    var items = $("moves").children;
    for (var i = 0; i < items.length; i++) {
      items[i].className = i + 1 === step ? "current" : "";
    }
    if (step > 0 && items[step - 1]) { items[step - 1].scrollIntoView({block: "nearest"}); }
  }

  function show(id) {
    var meta = byId[id];
    message("");
    if (!meta) { message("no game " + id + " in this report"); return; }
    $("game-select").value = String(id);
    if (meta.chunk === null) {
      $("title").textContent = "game " + id + ": " + meta.game;
      $("players").textContent = meta.players.join(" vs ");
      $("result").textContent = meta.result;
      $("board").textContent = "";
      $("moves").textContent = "";
      message("this report has no replay of game " + id + " (only of the newest games; see arena report --replays)");
      return;
    }
    load(meta.chunk, function () {
      current = chunks[meta.chunk][String(id)];
      $("title").textContent = "game " + id + ": " + current.game;
      $("players").textContent = current.players.map(function (p, s) { return "seat " + s + ": " + p; }).join(", ");
      var fails = current.failures.map(function (x) {
        return "; seat " + x.seat + " " + x.reason + " at move " + x.move + (x.detail ? ": " + x.detail : "");
      }).join("");
      $("result").textContent = "result: " + current.result + fails;
      var moves = $("moves");
      moves.textContent = "";
      current.frames.slice(1).forEach(function (fr, i) {
        var li = document.createElement("li");
        var left = fr.clocks && fr.seat !== null ? fr.clocks[fr.seat] : null;
        li.textContent = seatName(current, fr) + ": " + fr.move + (fr.ms === null ? "" : "  [" + fr.ms + " ms" +
          (left === null ? "" : ", " + clockText(left) + " left") + "]");
        li.onclick = function () { step = i + 1; render(); };
        moves.appendChild(li);
      });
      step = current.frames.length - 1;  // the final position first, as the leaderboard's reader wants
      render();
    });
  }

  function go(to) {
    if (!current) { return; }
    step = Math.max(0, Math.min(current.frames.length - 1, to));
    render();
  }

  function fromHash() {
    var m = /game=(\d+)/.exec(location.hash);
    if (m) { show(Number(m[1])); } else if (games.length) { show(games[0].id); } else { message("no games yet"); }
  }

  var select = $("game-select");
  games.forEach(function (g) {
    var o = document.createElement("option");
    o.value = String(g.id);
    o.textContent = g.id + ": " + g.game + ": " + g.players.join(" vs ");
    select.appendChild(o);
  });
  select.onchange = function () { location.hash = "game=" + select.value; };
  $("first").onclick = function () { go(0); };
  $("prev").onclick = function () { go(step - 1); };
  $("next").onclick = function () { go(step + 1); };
  $("last").onclick = function () { go(Infinity); };
  document.addEventListener("keydown", function (e) {
    if (e.key === "ArrowLeft") { go(step - 1); }
    if (e.key === "ArrowRight") { go(step + 1); }
  });
  window.addEventListener("hashchange", fromHash);
  fromHash();
}());
