"""Issue 32 ("What people see"): a tournament drawn for people. The bracket as inline SVG (a box per match, both bots
with their scores, the winner marked, a bye, a match to be played, lines from a match to the next), the Swiss table
with its tie-breaks, the places; in `arena report`'s index page; `arena export matches` and `arena export placings`;
every bot name escaped."""
from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from arena.output.brackets import bracket_svg, cut, layout, signature, tournament
from arena.output.report import write_report
from arena.tournament.matches import Match, Played
from arena.tournament.progress import State, current, view
from leaderboards.store import Store
from tests.leaderboards.support import arena
from tests.league_files import league_toml

pytestmark = pytest.mark.xdist_group("report")

SCRIPT = "<script>alert(1)</script>"
QUOTES = "&\"'"
HOSTILE_BOTS = [{"name": SCRIPT, "spec": "random"}, {"name": QUOTES, "spec": "greedy"},
                {"name": "mc20", "spec": "mc(n=20)"}, {"name": "mc5", "spec": "mc(n=5)"},
                {"name": "=rnd()", "spec": "random"}]
SVG = "{http://www.w3.org/2000/svg}"


def svg_tree(markup: str) -> ET.Element:
    """The drawing parsed as XML (a name left unescaped would break it or add elements)."""
    return ET.fromstring(markup.replace("<svg ", f'<svg xmlns="{SVG[1:-1]}" ', 1))


def texts(tree: ET.Element, cls: str) -> list[str]:
    return ["".join(t.itertext()) for t in tree.iter(f"{SVG}text") if cls in (t.get("class") or "").split()]


def partly_played() -> State:
    """A knockout of 6 (a bracket of 8: seeds 1 and 2 have byes): one first-round match won, one being played."""
    r1 = [Match("R1", 1, (1, None), done=True, winner=1),
          Match("R1", 1, (4, 5), games=[Played(0, 11, (1.0, 0.0)), Played(1, 12, (0.5, 0.5))], done=True, winner=4),
          Match("R1", 1, (2, None), done=True, winner=2),
          Match("R1", 1, (3, 6), games=[Played(0, 13, (1.0, 0.0))], needed=[1])]
    return State("knockout", [1, 2, 3, 4, 5, 6], rounds=[r1, [Match("R2", 2, (1, 4), needed=[0, 1])]])


LABELS = {1: SCRIPT, 2: QUOTES, 3: "x" * 40, 4: "d", 5: "e", 6: "f"}


def test_a_knockout_in_progress_is_drawn_whole_with_every_name_escaped() -> None:
    markup = str(bracket_svg(partly_played(), LABELS, bot_href=lambda b: f"/bots/{b}"))
    assert "<script" not in markup and "&lt;script&gt;alert(1)&lt;/script&gt;" in markup
    assert "&amp;&quot;&#x27;" in markup  # the quotes escaped in text and in titles
    tree = svg_tree(markup)  # well-formed: nothing a name brought became markup
    boxes = {g.get("data-match"): g for g in tree.iter(f"{SVG}g")}
    assert list(boxes) == ["R1-1", "R1-2", "R1-3", "R1-4", "R2-1", "R2-2", "R3"]  # 4 + 2 + 1, the final too
    classes = {k: g.get("class") for k, g in boxes.items()}
    assert classes == {"R1-1": "match bye", "R1-2": "match done", "R1-3": "match bye", "R1-4": "match playing",
                       "R2-1": "match waiting", "R2-2": "match waiting", "R3": "match waiting"}
    # the winner's line is marked and bold, with both scores; a bye says so; an open slot says where it comes from
    assert texts(boxes["R1-2"], "won") == ["d \u2713"] and texts(boxes["R1-2"], "score") == ["1.5", "0.5"]
    assert texts(boxes["R1-1"], "open") == ["bye"]
    assert texts(boxes["R1-1"], "bot") == [cut(SCRIPT)] == [SCRIPT[:21] + "\u2026"]  # cut at NAME characters
    assert texts(boxes["R1-4"], "score") == ["1", "0"] and "playing" in texts(boxes["R1-4"], "caption")[0]
    assert texts(boxes["R2-1"], "caption") == ["R2-1 \u00b7 to be played"]  # entrants known, no game yet
    assert texts(boxes["R2-2"], "bot") == [QUOTES] and texts(boxes["R2-2"], "open") == ["winner of R1-4"]
    assert texts(boxes["R3"], "open") == ["winner of R2-1", "winner of R2-2"]
    assert texts(boxes["R1-4"], "bot")[0] == "x" * 21 + "\u2026"  # a long name cut; whole in the tooltip
    assert "x" * 40 in "".join(boxes["R1-4"].find(f"{SVG}title").itertext())
    assert [a.get("href") for a in boxes["R1-2"].iter(f"{SVG}a")] == ["/bots/4", "/bots/5"]
    # a line from each match to the next one: 4 into round 2, 2 into the final
    assert len([p for p in tree.iter(f"{SVG}path") if p.get("class") == "link"]) == 6


def test_rounds_run_left_to_right_and_a_match_sits_level_with_its_feeders() -> None:
    slots = {s.name: s for s in layout(partly_played())}
    assert slots["R1-1"].x < slots["R2-1"].x < slots["R3"].x
    assert slots["R2-1"].y == (slots["R1-1"].y + slots["R1-2"].y) / 2
    assert slots["R3"].y == (slots["R2-1"].y + slots["R2-2"].y) / 2


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """Three finished tournaments of five bots with hostile names (real `arena league run`s): knockout, double
    elimination and Swiss, each with its own store."""
    d = tmp_path_factory.mktemp("tournaments")
    for fmt in ("knockout", "double_elimination", "swiss"):
        (d / f"{fmt}.toml").write_text(league_toml(fmt, seed=5, database=f"{fmt}.sqlite", format=fmt,
                                                   bots=HOSTILE_BOTS))
        run = arena(d, "league", "run", f"{fmt}.toml", "-q")
        assert run.returncode == 0, run.stderr
    return d


def load(d: Path, fmt: str):  # type: ignore[no-untyped-def]
    store = Store.open(d / f"{fmt}.sqlite", readonly=True)
    return store, store.find_league(fmt)


@pytest.mark.parametrize("fmt", ["knockout", "double_elimination"])
@pytest.mark.slow
def test_a_played_bracket_draws_every_match_with_its_result(played, fmt) -> None:
    store, lg = load(played, fmt)
    with store:
        t = tournament(store, lg)
        state = current(store, lg.id, lg.config)
    assert t is not None and state is not None and t.finished and t.started and t.entrants == 5
    tree = svg_tree(str(t.figure))
    boxes = {g.get("data-match"): g for g in tree.iter(f"{SVG}g")}
    matches = [m for r in state.rounds for m in r]
    assert len(boxes) == len(matches)  # every match, none waiting: the tournament is over
    for m in matches:
        names = [cut(t.labels[b]) for b in m.bots if b is not None]
        box = next(g for g in boxes.values() if [x.removesuffix(" \u2713") for x in texts(g, "bot")] == names and
                   texts(g, "caption")[0].split(" ")[0].split("-")[0] == m.label)
        if m.is_bye:
            assert box.get("class") == "match bye" and texts(box, "open") == ["bye"]
        else:
            assert texts(box, "score") == [f"{m.score[0]:g}", f"{m.score[1]:g}"]
            assert texts(box, "won") == [cut(t.labels[m.winner]) + " \u2713"]
    assert t.placings[0].bots == t.doc["placings"][0] and t.placings[0].place == 1
    if fmt == "double_elimination":  # the winners' bracket above the losers', the grand final right of both
        slots = layout(state)
        top = max(s.y for s in slots if s.node.bracket == "winners")
        assert all(s.y > top for s in slots if s.node.bracket == "losers")
        gf = next(s for s in slots if s.node.label == "GF")
        assert all(gf.x > s.x for s in slots if s.node.bracket != "final")


@pytest.mark.slow
def test_the_report_shows_the_bracket_and_its_places(played, tmp_path) -> None:
    with Store.open(played / "double_elimination.sqlite") as store:
        write_report(store, "double_elimination", tmp_path / "r", 5)
        lg = store.find_league(None)
        doc = view(current(store, lg.id, lg.config), {b.id: b.label for b in store.bots(lg.id, source=False)})
    page = (tmp_path / "r" / "index.html").read_text()
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    section = page[page.index('<section id="tournament"'):page.index("</section>")]
    assert "<h2>Double elimination</h2>" in section and '<svg class="pic bracket"' in section
    assert 'data-finished="yes"' in section and f'data-progress="{signature(doc)}"' in section
    places = re.findall(r'<li value="(\d+)">(.*?)</li>', section)
    assert [int(p) for p, _ in places] == [1, 2, 3, 4, 5]
    first = re.search(r'<a href="bots/(bot-\d+\.html)">(.*?)</a>', places[0][1])
    assert first is not None and (tmp_path / "r" / "bots" / first.group(1)).is_file()
    assert first.group(2) == {SCRIPT: "&lt;script&gt;alert(1)&lt;/script&gt;",
                              QUOTES: "&amp;&#34;&#39;"}.get(doc["placings"][0][0], doc["placings"][0][0])


def test_the_report_of_a_swiss_tournament_has_its_table_with_tie_breaks(played, tmp_path) -> None:
    with Store.open(played / "swiss.sqlite") as store:
        write_report(store, "swiss", tmp_path / "r", 0)
        lg = store.find_league(None)
        doc = view(current(store, lg.id, lg.config), {b.id: b.label for b in store.bots(lg.id, source=False)})
    page = (tmp_path / "r" / "index.html").read_text()
    assert "<script>alert" not in page and "<svg class=\"pic bracket\"" not in page
    table = page[page.index('<table id="swiss">'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr><td>(\d+)</td><td><a [^>]*>(.*?)</a></td><td>([\d.]+)</td><td>([\d.]+)</td>"
                      r"<td>([\d.]+)</td><td>(\d+)</td></tr>", table)
    import html
    assert [(html.unescape(r[1]), float(r[2]), float(r[3]), float(r[4]), int(r[5])) for r in rows] == \
        [(e["bot"], e["points"], e["buchholz"], e["sonneborn_berger"], e["byes"]) for e in doc["standings"]]
    assert rows[0][0] == "1" and all(int(a[0]) <= int(b[0]) for a, b in zip(rows, rows[1:]))
    assert page.count('<table class="swiss-round">') == len(doc["rounds"]) and "bye</td>" in page  # five bots


def test_a_tournament_not_started_says_so_and_a_round_robin_has_none(tmp_path) -> None:
    with Store.open(tmp_path / "t.sqlite", create=True) as store:
        ko = store.ensure_league("ko", {"format": "knockout", "games": ["nim"], "seed": 1})
        rr = store.ensure_league("rr", {"games": ["nim"], "seed": 1})
        assert tournament(store, rr) is None
        t = tournament(store, ko)
        assert t is not None and not t.started and t.doc == {"format": "knockout", "finished": False, "rounds": [],
                                                              "placings": []}
        write_report(store, "ko", tmp_path / "r", 0)
    page = (tmp_path / "r" / "index.html").read_text()
    assert "<h2>Knockout</h2>" in page and "Not started: no match has been paired yet." in page


@pytest.mark.parametrize("fmt", ["double_elimination", "swiss"])
def test_export_matches_lists_every_match_as_the_bracket_names_it(played, fmt) -> None:
    as_csv = arena(played, "export", "matches", "--league", f"{fmt}.toml")
    as_json = arena(played, "export", "matches", "--league", fmt, "--db", f"{fmt}.sqlite", "--json")
    games = arena(played, "export", "games", "--league", f"{fmt}.toml", "--json")
    assert as_csv.returncode == as_json.returncode == games.returncode == 0, as_csv.stderr + as_json.stderr
    doc = json.loads(as_json.stdout)
    store, lg = load(played, fmt)
    with store:
        t = tournament(store, lg)
    assert t is not None and doc["league"] == fmt and doc["format"] == fmt and doc["finished"] is True
    listed = [m for r in t.doc["rounds"] for m in r]
    assert [(m["label"], m["bot_1"], m["bot_2"], m["winner"], m["games"]) for m in doc["matches"]] == \
        [(m["label"], m["bots"][0], m["bots"][1] if len(m["bots"]) > 1 else None, m["winner"], m["games"])
         for m in listed]
    assert [m["score_1"] for m in doc["matches"] if m["status"] == "done"] == \
        [m["score"][0] for m in listed if m["score"]]
    if fmt != "swiss":  # each match is named as its box in the drawing
        drawn = {g.get("data-match") for g in svg_tree(str(t.figure)).iter(f"{SVG}g")}
        assert {m["match"] for m in doc["matches"]} == drawn
    else:
        assert [m["match"] for m in doc["matches"]][:2] == ["R1-1", "R1-2"]
        assert {m["status"] for m in doc["matches"]} == {"done", "bye"}  # five bots: a bye every round
    # a match's round is its games' round; every game of the tournament is in exactly one match
    rounds = {g["id"]: g["round"] for g in json.loads(games.stdout)["games"]}
    assert sorted(i for m in doc["matches"] for i in m["games"]) == sorted(rounds)
    assert all(rounds[i] == m["round"] for m in doc["matches"] for i in m["games"])
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert [r["match"] for r in rows] == [m["match"] for m in doc["matches"]]
    assert [r["games"] for r in rows] == [" ".join(map(str, m["games"])) for m in doc["matches"]]
    names = {r["bot_1"] for r in rows} | {r["bot_2"] for r in rows}
    assert SCRIPT in names and QUOTES in names and "'=rnd()" in names and "=rnd()" not in names  # no formula


def test_export_placings_of_a_swiss_and_a_knockout(played) -> None:
    swiss = arena(played, "export", "placings", "--league", "swiss.toml", "--json")
    ko = arena(played, "export", "placings", "--league", "knockout.toml")
    assert swiss.returncode == ko.returncode == 0, swiss.stderr + ko.stderr
    doc = json.loads(swiss.stdout)
    store, lg = load(played, "swiss")
    with store:
        t = tournament(store, lg)
    assert t is not None
    standing = {e["bot"]: e for e in t.doc["standings"]}
    assert [p["bot"] for p in doc["placings"]] == [n for g in t.doc["placings"] for n in g]
    for p in doc["placings"]:
        e = standing[p["bot"]]
        assert (p["points"], p["buchholz"], p["sonneborn_berger"], p["byes"]) == \
            (e["points"], e["buchholz"], e["sonneborn_berger"], e["byes"])
    assert [p["place"] for p in doc["placings"]] == sorted(p["place"] for p in doc["placings"])
    rows = list(csv.DictReader(io.StringIO(ko.stdout)))
    assert list(rows[0]) == ["place", "bot", "bot_id"] and len(rows) == 5
    assert rows[0]["place"] == "1" and rows[1]["place"] == "2"  # the final's winner, then its loser
    assert {r["bot"] for r in rows} == {SCRIPT, QUOTES, "mc20", "mc5", "'=rnd()"}


def test_a_round_robin_has_no_matches_to_export(tmp_path) -> None:
    (tmp_path / "rr.toml").write_text(league_toml("rr", seed=1, database="rr.sqlite"))
    assert arena(tmp_path, "league", "run", "rr.toml", "-q").returncode == 0
    for what in ("matches", "placings"):
        run = arena(tmp_path, "export", what, "--league", "rr.toml")
        assert run.returncode == 2 and run.stdout == ""
        assert run.stderr.strip().splitlines() == [
            "arena: error: league rr is a round_robin, not a tournament (format = \"swiss\", \"knockout\" or "
            "\"double_elimination\"); `arena export games` exports its games"]
    both = arena(tmp_path, "export", "matches", "--league", "rr.toml", "--csv", "--json")
    assert both.returncode == 2 and "exclude each other" in both.stderr
