"""The organiser's results (issue 18 §1, §2, §4): progress on a pipe, `arena export games`, the leaderboard's CSV and
league file, byte-identical bots flagged, `arena report` opened in a real headless browser."""
from __future__ import annotations

import csv
import io
import json
import shutil
import time
from pathlib import Path

import pytest

from leaderboards.store import Store
from tests.browser import browser
from tests.leaderboards.support import RANDOM_BOT, SYNTAX_ERROR_BOT, arena, write
from tests.league_files import BUILT_INS, bot_tables, league_toml

pytestmark = pytest.mark.xdist_group("report")

HOSTILE = "</script><script>window.pwned=1</script>"
CRASHY = """
class Bot:
    def __init__(self, game, seat, seed):
        self.n = 0

    def step(self, state, limit):
        self.n += 1
        if self.n == 3:
            raise RuntimeError("third move trouble")
        return state.legal_actions()[0]
"""
LEAGUE = league_toml("course", seed=3, database="results/course.sqlite", probation_after=0, probation_failures=0,
                     bots=[*BUILT_INS, {"name": HOSTILE, "file": "crashy.py"},
                           {"name": "copycat", "file": "copy_of_crashy.py"}, {"name": "broken", "file": "broken.py"}])


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    """A played 5-bot Nim league (20 games) whose file sets `database`, and its run's output (stderr a pipe)."""
    d = tmp_path_factory.mktemp("course")
    write(d / "crashy.py", CRASHY)
    write(d / "copy_of_crashy.py", CRASHY)
    write(d / "broken.py", SYNTAX_ERROR_BOT)
    (d / "results").mkdir()
    config = write(d / "league.toml", LEAGUE)
    run = arena(d, "league", "run", str(config), "-j", "2")
    assert run.returncode == 0, run.stderr
    return d, config, run


# -- §1 progress ---------------------------------------------------------------------------------------------------
def test_a_league_run_into_a_log_shows_done_of_total_from_the_start(league):
    _, _, run = league
    assert "league course: 0/20 games (0%), no game finished yet" in run.stderr


def test_quiet_and_a_resumed_league_print_no_progress(league):
    d, config, _ = league
    again = arena(d, "league", "run", str(config), "-q")
    assert again.returncode == 0 and "games (" not in again.stderr and "0/0" not in again.stderr


def test_match_shows_progress_in_a_log_and_quiet_silences_it(tmp_path):
    loud = arena(tmp_path, "match", "nim", "random", "random", "--games", "2")
    assert loud.returncode == 0, loud.stderr
    assert "nim: 0/2 games (0%)" in loud.stderr
    quiet = arena(tmp_path, "match", "nim", "random", "random", "--games", "2", "-q")
    assert quiet.returncode == 0 and quiet.stderr == ""


# -- §2 byte-identical bots ----------------------------------------------------------------------------------------
def test_a_league_file_bot_identical_to_another_is_flagged_when_it_enters(league):
    _, _, run = league
    assert "arena: warning: bot copycat is byte-identical to </script><script>window.pwned=1</script>" in run.stderr


def test_a_submission_identical_to_another_bot_is_flagged(league, tmp_path):
    d, _, _ = league
    honest = write(tmp_path / "honest.py", RANDOM_BOT)
    first = arena(d, "submit", str(honest), "--league", "course", "--name", "student8", "--db",
                  "results/course.sqlite")
    assert first.returncode == 0 and "byte-identical" not in first.stderr, first.stderr
    copy = shutil.copy(honest, tmp_path / "mine.py")  # another file name, the same bytes
    sub = arena(d, "submit", str(copy), "--league", "course", "--name", "student7", "--db", "results/course.sqlite")
    assert sub.returncode == 0, sub.stderr
    assert "arena: warning: bot student7 is byte-identical to student8" in sub.stderr
    by_file = arena(d, "submit", str(write(tmp_path / "other.py", RANDOM_BOT + "\n# mine\n")), "--league",
                    "league.toml", "--name", "student9")  # the league file: its store found, no --db
    assert by_file.returncode == 0 and "entered as student9" in by_file.stdout, by_file.stderr


# -- §2 export -----------------------------------------------------------------------------------------------------
def test_export_games_csv_has_every_game_with_players_returns_failures_and_times(league):
    d, config, _ = league
    out = arena(d, "export", "games", "--league", str(config), "--csv")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert len(rows) >= 20 and len({r["id"] for r in rows}) == len(rows)
    crashed = [r for r in rows if "crash" in (r["termination_0"], r["termination_1"])]
    assert crashed and all("crash at move" in r["failures"] for r in crashed)
    assert any("third move trouble (at crashy.py, line 8, in step)" in r["failures"] for r in crashed)
    assert any("SyntaxError: expected ':' (at broken.py, line 2)" in r["failures"] for r in crashed)
    assert {r["player_0"] for r in rows} >= {"random", "greedy", HOSTILE, "copycat"}
    for r in rows:
        assert float(r["return_0"]) + float(r["return_1"]) == 0
        assert float(r["move_ms_p50"]) <= float(r["move_ms_p90"]) <= float(r["move_ms_max"])
        assert int(r["moves"]) >= 1 and r["finished"].endswith("+00:00")


def test_export_games_json_keeps_each_failure_s_detail(league):
    d, config, _ = league
    out = arena(d, "export", "games", "--league", str(config), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["league"] == "course"
    fails = [f for g in data["games"] for f in g["failures"]]
    assert fails and all(f["reason"] == "crash" and 'File "' in f["detail"] and "/bot/" not in f["detail"]
                         for f in fails)
    assert {f["bot"] for f in fails} == {HOSTILE, "copycat", "broken"}
    assert all(len(g["players"]) == len(g["returns"]) == 2 for g in data["games"])


def test_export_refuses_json_with_csv(league):
    d, config, _ = league
    both = arena(d, "export", "games", "--league", str(config), "--csv", "--json")
    assert both.returncode == 2 and "exclude each other" in both.stderr


# -- §2/§4 leaderboard ---------------------------------------------------------------------------------------------
def test_leaderboard_takes_the_league_file_and_finds_its_database(league):
    d, config, _ = league
    by_name = arena(d, "leaderboard", "--league", "course")
    assert by_name.returncode == 2 and "--league course.toml" in by_name.stderr  # the hint, not only "no store"
    by_file = arena(d, "leaderboard", "--league", str(config))
    assert by_file.returncode == 0, by_file.stderr
    assert "course: " in by_file.stdout and "greedy" in by_file.stdout


def test_leaderboard_csv_has_spec_version_and_status_reason(league):
    d, config, _ = league
    out = arena(d, "leaderboard", "--league", str(config), "--csv", "--all")
    rows = {r["bot"]: r for r in csv.DictReader(io.StringIO(out.stdout))}
    assert rows["greedy"]["spec"] == "greedy" and rows["copycat"]["spec"] == "copy_of_crashy.py"
    assert rows["greedy"]["version"] == "1" and "status_reason" in rows["greedy"]


def test_leaderboard_csv_with_h2h_prints_the_pairs(league):
    d, config, _ = league
    out = arena(d, "leaderboard", "--league", str(config), "--csv", "--h2h")
    assert out.returncode == 0, out.stderr
    pairs = list(csv.DictReader(io.StringIO(out.stdout)))
    greedy = {p["opponent"]: p for p in pairs if p["bot"] == "greedy"}
    assert greedy["random"]["games"] == "2" and greedy["random"]["wins"] == "2"


# -- §2 the report, in a real browser --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def report(league):
    d, config, _ = league
    out = arena(d, "report", "--league", str(config), "--out", "rep")
    assert out.returncode == 0, out.stderr
    return d / "rep"


def test_the_report_has_a_page_per_bot_with_failures_and_slowest_moves(report):
    pages = sorted((report / "bots").glob("bot-*.html"))
    assert len(pages) >= 4
    crashy = next(p.read_text() for p in pages if "<h1>&lt;/script&gt;" in p.read_text())
    assert "<script>" not in crashy and "&lt;/script&gt;" in crashy
    assert "Failures (" in crashy and "third move trouble" in crashy and 'line 8, in step' in crashy
    assert "Slowest moves" in crashy and 'replay.html#game=' in crashy
    blob = (report / "data" / "games.js").read_text()
    assert "</script" not in blob and "<\\/script" in blob


def test_the_report_opens_from_file_in_a_real_browser(report, tmp_path):
    from selenium.webdriver.common.by import By
    b = browser(tmp_path)
    try:
        b.get((report / "index.html").as_uri())
        rows = b.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
        names = [r.find_elements(By.TAG_NAME, "td")[1].text for r in rows]
        assert names[0] == "greedy" and HOSTILE in names and len(names) >= 4
        assert b.execute_script("return window.pwned === undefined")  # the name stayed text
        matrix = b.find_element(By.CSS_SELECTOR, "svg.h2h")  # the head-to-head as a colour matrix, drawn
        assert matrix.size["width"] > 100 and len(matrix.find_elements(By.TAG_NAME, "rect")) >= 4 * 3
        labels = [t.get_attribute("textContent") for t in matrix.find_elements(By.TAG_NAME, "text")]
        assert HOSTILE[:24] in labels  # (names cut at 24 characters), as text
        b.find_element(By.LINK_TEXT, HOSTILE).click()
        assert "third move trouble" in b.find_element(By.CLASS_NAME, "failure").text
        pictures = b.find_elements(By.CSS_SELECTOR, "svg.pic")  # its rating over time, its first and later move times
        assert len(pictures) == 3 and all(p.size["height"] > 50 for p in pictures), [p.size for p in pictures]
        assert b.find_elements(By.CSS_SELECTOR, "svg.moves rect")  # a bar per move
        assert b.execute_script("return window.pwned === undefined")
        link = b.find_element(By.CSS_SELECTOR, ".failure a")
        game_id = link.text
        link.click()  # to the replay of the failed game
        deadline = time.monotonic() + 20
        while "game " + game_id not in b.find_element(By.ID, "title").text:
            assert time.monotonic() < deadline, "the replay did not load"
            time.sleep(0.1)
        moves = b.find_elements(By.CSS_SELECTOR, "#moves li")
        assert moves and "[" in moves[0].text and " ms]" in moves[0].text
        assert "crash at move" in b.find_element(By.ID, "result").text
        last = b.find_element(By.ID, "board").text
        assert "current" in moves[-1].get_attribute("class")  # the last move is highlighted
        b.find_element(By.ID, "first").click()
        first = b.find_element(By.ID, "board").text
        assert first and first != last and "move 0 of" in b.find_element(By.ID, "step").text
        assert b.execute_script("return window.pwned === undefined")
    finally:
        b.quit()


def test_the_report_needs_no_inline_script_under_the_sites_csp(report, tmp_path):
    """The report served over HTTP with `arena serve`'s Content-Security-Policy (script-src 'self', no inline script
    or style): its pages, pictures and replay viewer run with no violation in the browser's log."""
    import functools
    import http.server
    import threading

    from selenium.webdriver.common.by import By

    from arena.server.app import CSP

    class WithCSP(http.server.SimpleHTTPRequestHandler):
        def end_headers(self) -> None:
            self.send_header("Content-Security-Policy", CSP)
            super().end_headers()

        def log_message(self, *args: object) -> None:  # (quiet)
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(WithCSP, directory=str(report)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    b = browser(tmp_path)
    base = f"http://127.0.0.1:{httpd.server_address[1]}/"
    try:
        b.get(base + "index.html")
        assert b.find_elements(By.CSS_SELECTOR, "svg.h2h rect")
        b.get(base + b.find_element(By.LINK_TEXT, "greedy").get_attribute("href").split(base)[1])
        assert len(b.find_elements(By.CSS_SELECTOR, "svg.pic")) == 3  # (rating, first moves, later moves)
        b.get(base + "replay.html")
        deadline = time.monotonic() + 20
        while "game " not in b.find_element(By.ID, "title").text:  # (the viewer is a script: it ran)
            assert time.monotonic() < deadline, "the replay did not load"
            time.sleep(0.1)
        b.find_element(By.ID, "first").click()
        assert "move 0 of" in b.find_element(By.ID, "step").text
        errors = [e["message"] for e in b.get_log("browser") if "Content Security Policy" in e.get("message", "")]
        assert not errors, errors
    finally:
        b.quit()
        httpd.shutdown()
        httpd.server_close()


def test_report_refuses_a_file_as_out(league, tmp_path):
    d, config, _ = league
    target = write(tmp_path / "file.txt", "x")
    out = arena(d, "report", "--league", str(config), "--out", str(target))
    assert out.returncode == 2 and "is a file" in out.stderr
    assert target.read_text() == "x"  # untouched


# -- §4 a syntax error keeps its file and line ----------------------------------------------------------------------
def test_a_syntax_error_keeps_its_file_and_line_in_submit_and_replay(league, tmp_path):
    d, _, _ = league
    broken = write(tmp_path / "syn.py", SYNTAX_ERROR_BOT)
    sub = arena(d, "submit", str(broken), "--league", "course", "--db", "results/course.sqlite")
    assert sub.returncode == 1 and "syntax error in syn.py, line 2: expected ':'" in sub.stderr, sub.stderr
    from leaderboards.store import Store
    with Store.open(d / "results" / "course.sqlite", readonly=True) as store:
        lg = store.find_league("course")
        game = next(g for g in store.iter_games(lg.id) if "broken" in g.players)
    replay = arena(d, "replay", str(game.id), "--db", "results/course.sqlite", "--no-board")
    assert replay.returncode == 0, replay.stderr
    assert "SyntaxError: expected ':' (at broken.py, line 2)" in replay.stdout


# -- a report written again into the same folder (issue 18 follow-up) ------------------------------------------------
THREE = bot_tables([*BUILT_INS, {"name": "../escape", "spec": "random"}, {"name": "../../x.html", "spec": "greedy"}])
TWO = bot_tables(BUILT_INS)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The same league played twice from scratch: first with four bots (two with path-like names), then with two
    (the two gone): each into its own store, so the second's bot ids are 1 and 2 and bots 3 and 4 are gone."""
    d = tmp_path_factory.mktemp("redo")
    for db, bots in (("first.sqlite", THREE), ("second.sqlite", TWO)):
        config = write(d / f"{db}.toml", league_toml("redo", seed=1, database=db, bots=()) + bots)
        run = arena(d, "league", "run", str(config), "-j", "2", "-q")
        assert run.returncode == 0, run.stderr
    return d


def report_into(d: Path, which: str, out: Path):  # type: ignore[no-untyped-def]
    return arena(d, "report", "--league", str(d / f"{which}.sqlite.toml"), "--out", str(out))


def bot_pages(out: Path) -> set[str]:
    return {p.name for p in (out / "bots").iterdir()}


@pytest.mark.slow
def test_a_report_written_again_removes_the_pages_of_bots_gone(two_runs, tmp_path):
    out = tmp_path / "rep"
    assert report_into(two_runs, "first", out).returncode == 0
    assert bot_pages(out) == {f"bot-{i}.html" for i in (1, 2, 3, 4)}
    again = report_into(two_runs, "second", out)
    assert again.returncode == 0, again.stderr
    assert bot_pages(out) == {"bot-1.html", "bot-2.html"}  # no stale page of a bot that is gone
    assert "escape" not in (out / "index.html").read_text()


@pytest.mark.slow
def test_a_report_keeps_the_user_s_own_files_in_the_folder(two_runs, tmp_path):
    out = tmp_path / "rep"
    (out / "bots").mkdir(parents=True)
    (out / "data").mkdir()
    mine = {out / "notes.txt": "mine", out / "bots" / "comments.html": "<p>mine</p>", out / "data" / "extra.js": "1;",
            out / "bots" / "bot-9.html": "a page the report never wrote"}
    for path, text in mine.items():
        path.write_text(text)
    for league in ("first", "second", "first"):
        done = report_into(two_runs, league, out)
        assert done.returncode == 0, done.stderr
    assert {p: p.read_text() for p in mine} == mine
    assert (out / "bots" / "bot-4.html").is_file()


def test_a_report_never_writes_or_deletes_outside_its_folder(two_runs, tmp_path):
    """Bot names such as ``../escape`` never make a file name (pages are named by bot id), and what is planted in
    the folder (links to files or folders outside, a forged list of written files) is never followed."""
    outside = tmp_path / "outside"
    outside.mkdir()
    victims = {outside / "victim.html": "precious", outside / "kept.txt": "precious too"}
    for path, text in victims.items():
        path.write_text(text)
    out = tmp_path / "deep" / "rep"
    out.mkdir(parents=True)
    (out / "bots").mkdir()
    (out / "index.html").symlink_to(outside / "victim.html")
    (out / "bots" / "bot-1.html").symlink_to(outside / "victim.html")
    done = report_into(two_runs, "first", out)
    assert done.returncode == 0, done.stderr
    assert {p: p.read_text() for p in victims} == victims  # the links were replaced, not written through
    assert not (out / "index.html").is_symlink() and not (out / "bots" / "bot-1.html").is_symlink()
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == ["rep"]  # nothing beside the folder
    assert all(p.name.startswith("bot-") for p in (out / "bots").iterdir())
    # a forged record of what the last report wrote: names outside the folder are never deleted
    manifests = [p for p in out.iterdir() if p.name.startswith(".arena-report") and p.is_file()]
    assert len(manifests) == 1
    manifests[0].write_text(json.dumps({"files": ["../../outside/kept.txt", str(outside / "kept.txt"),
                                                  "bots/../../../outside/kept.txt", "../rep2"]}))
    assert report_into(two_runs, "second", out).returncode == 0
    assert {p: p.read_text() for p in victims} == victims
    # a folder of the report planted as a link to a folder outside: refused, nothing written through it
    (out / "data").rename(out / "data-old")
    (out / "data").symlink_to(outside, target_is_directory=True)
    refused = report_into(two_runs, "first", out)
    assert refused.returncode == 2 and "symbolic link" in refused.stderr and refused.stderr.count("\n") == 1
    assert sorted(p.name for p in outside.iterdir()) == ["kept.txt", "victim.html"]
    assert {p: p.read_text() for p in victims} == victims


def test_a_report_that_fails_midway_leaves_the_earlier_report_whole(two_runs, tmp_path, monkeypatch):
    from arena.output import report as report_module
    out = tmp_path / "rep"
    assert report_into(two_runs, "first", out).returncode == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    calls = []

    def failing_page(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("disk trouble")
        return "<p>half</p>"

    monkeypatch.setattr(report_module, "bot_page", failing_page)
    with Store.open(two_runs / "second.sqlite", readonly=True) as store, pytest.raises(RuntimeError):
        report_module.write_report(store, "redo", out, 10)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before  # the earlier report, every byte, and no half-written folder left beside it
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["bots", "data"]


def test_a_public_replay_carries_no_traceback_of_anyone_s(league):
    """The replay data `arena serve` hands anyone (replays.replay(details=False)) names a failure's reason and move,
    never the headline of the bot's traceback; the organiser's report keeps it."""
    from arena.output.replays import replay, script_json
    d, _, _ = league
    with Store.open(d / "results" / "course.sqlite", readonly=True) as store:
        failed = next(g for g in store.games(1) if any("third move trouble" in f.detail for f in g.failures))
    assert "third move trouble" in script_json(replay(failed, {}))
    public = replay(failed, {}, details=False)
    assert public is not None and public["failures"] and "third move trouble" not in script_json(public)
    assert all(f["reason"] and f["move"] for f in public["failures"])


def test_the_replay_viewer_shows_each_seats_game_clock(tmp_path):
    """A league with game clocks: the viewer shows each seat's clock after its latest move, as stored (none before
    a seat's first move), and each move's line says what its mover had left."""
    import re

    from selenium.webdriver.common.by import By
    write(tmp_path / "league.toml", league_toml("clocked", seed=5, database="clocked.sqlite", games_per_pairing=2,
                                                limits={"time_control": "30+0.5"},
                                                bots=[{"spec": "random"}, {"spec": "greedy"}]))
    run = arena(tmp_path, "league", "run", "league.toml", "-q")
    assert run.returncode == 0, run.stderr
    out = arena(tmp_path, "report", "--league", "league.toml", "--out", "rep")
    assert out.returncode == 0, out.stderr
    with Store.open(tmp_path / "clocked.sqlite", readonly=True) as store:
        g = store.games(store.find_league("clocked").id)[0]
    ends = g.info["clocks_end"]
    assert g.info["time_control"] and len(ends) == 2 and all(0 < x <= 30 + 0.5 * len(g.history) for x in ends)
    b = browser(tmp_path)
    try:
        b.get((tmp_path / "rep" / "replay.html").as_uri() + f"#game={g.id}")
        deadline = time.monotonic() + 20
        while f"game {g.id}" not in b.find_element(By.ID, "title").text:
            assert time.monotonic() < deadline, "the replay did not load"
            time.sleep(0.1)
        shown = b.find_element(By.ID, "clocks").text  # the last position: both seats have moved
        assert shown.startswith("clocks (30+0.5): seat 0 (") and shown.count(" left") == 2, shown
        readings = [int(m) * 60 + float(s) for m, s in re.findall(r"(\d+):(\d\d\.\d) left", shown)]
        assert [abs(x - y) <= 0.06 for x, y in zip(readings, ends)] == [True, True], (readings, ends)
        moves = b.find_elements(By.CSS_SELECTOR, "#moves li")
        assert moves and all(re.search(r" ms, \d+:\d\d\.\d left\]$", m.text) for m in moves), [m.text for m in moves]
        b.find_element(By.ID, "first").click()
        assert b.find_element(By.ID, "clocks").text.count("not started") == 2
    finally:
        b.quit()
