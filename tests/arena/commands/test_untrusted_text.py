"""Text from a bot or a user's file reaches the terminal literally (issue 13 §2).

A league whose stored bot names carry ESC, BEL, OSC 52, a C1 CSI, a bidi override and Rich markup, and a
hostile bot FILE whose crash detail (its exception and its stderr) carries the same, are shown by every
command (league run, leaderboard and its exports, replay, submit, match) as real processes, on a pipe and
on a pseudo-terminal: no raw control sequence, the escaped form visible, the usual exit status. Names
with such characters are refused where they enter.
"""
from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
import unicodedata
from pathlib import Path

import pytest

from arena.league.config import load_config
from leaderboards.store import Store
from tests.leaderboards.support import arena, tamper, write

pytestmark = pytest.mark.xdist_group("untrusted_text")

# What a hostile name or detail carries: clear screen, OSC 52 (write the clipboard), BEL, a C1 CSI, a bidi
# override (U+202E reverses what follows) and a zero-width space.
HOSTILE = "\x1b[2J\x1b]52;c;aGk=\x07\x9b31m\u202e\u200b"
HOSTILE_SHOWN = "\\x1b[2J\\x1b]52;c;aGk=\\x07\\x9b31m\\u202e\\u200b"
BAD_NAME = "bel" + HOSTILE
MARKUP_NAME = "[@x=(]"  # Rich markup that does not parse: MarkupError if it is ever parsed

EVIL_BOT = r'''
import sys

class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        sys.stderr.write("stderr:\x1b[2J\x1b]52;c;aGk=\x07\x9b31m\u202e\u200b [@x=(]\n")
        sys.stderr.flush()
        raise RuntimeError("boom:\x1b[2J\x1b]52;c;aGk=\x07\x9b31m\u202e\u200b \ud800 [@x=(]")
'''

LEAGUE = """
name = "hostile"
games = ["nim"]
games_per_pairing = 2
seed = 3
database = "hostile.sqlite"
probation_after = 1
[limits]
move_time = 2.0
first_move_time = 20.0
[[bots]]
spec = "random"
[[bots]]
spec = "greedy"
"""

# Sequences a terminal acts on that Rich itself writes on a terminal (colours, the progress bar's cursor
# moves and line erases, cursor hide/show): everything else is the data's.
RICH_OWN = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[[0-9]*[ABCDGK]|\x1b\[2K")


def unsafe(out: str) -> list[str]:
    """The characters of ``out`` a terminal would act on, or that are invisible or invalid (newlines aside)."""
    return [ch for ch in out if ch != "\n" and (unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"))]


def assert_literal(out: str, *, tty: bool = False) -> None:
    if tty:
        out = RICH_OWN.sub("", out).replace("\r", "")
    bad = unsafe(out)
    assert not bad, f"raw {sorted(set(bad))!r} in output:\n{out!r}"


def run_tty(cwd: Path, *args: str, timeout: float = 300) -> tuple[int, str]:
    """Runs ``arena ARGS`` with a pseudo-terminal (200 columns) as stdin, stdout and stderr: what a user sees."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
    env["TERM"] = "xterm-256color"
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", *args], cwd=cwd, stdin=slave, stdout=slave,
                            stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
        rc = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return rc, out.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[int, str]]:
    """League ``hostile``: two league-file bots, and two bots entered through the store API (a store may hold
    names from before names were checked) - the hostile bot file named ``[@x=(]`` and ``random`` under a name
    full of control sequences - played with ``arena league run`` on a pseudo-terminal. One game is then given a
    player and a failure detail with a lone surrogate (JSON in the store can hold one; TOML cannot)."""
    d = tmp_path_factory.mktemp("hostile")
    write(d / "evil.py", EVIL_BOT)
    config = write(d / "league.toml", LEAGUE)
    cfg = load_config(config)
    with Store.open(d / "hostile.sqlite", create=True) as store:
        league = store.ensure_league(cfg.name, cfg.to_dict())
        store.upsert_bot(league.id, MARKUP_NAME, origin="submit", filename="evil.py", source=EVIL_BOT.lstrip())
        store.upsert_bot(league.id, BAD_NAME, origin="submit", spec="random")
    result = run_tty(d, "league", "run", str(config), "--concurrency", "2")
    with Store.open(d / "hostile.sqlite") as store:
        lg = store.find_league("hostile")
        games = store.games(lg.id)
        crashed = next(g for g in games if g.failures)
        players = list(crashed.players)
        players[0] = "sur\ud800" + players[0]
        failures = [dict(vars(f), detail=f.detail + "\nlast line \ud800\x1b[2J") for f in crashed.failures]
        tamper(store, crashed.id, players=players, failures=failures)
    return d, result


def test_league_run_on_a_terminal_shows_names_and_probation_literally(played) -> None:
    d, (rc, out) = played
    assert rc == 0, out
    assert_literal(out, tty=True)
    assert "bel" + HOSTILE_SHOWN in out
    assert f"{MARKUP_NAME} is on probation" in out  # the markup name, shown as is, not parsed
    assert "internal error" not in out


@pytest.mark.parametrize("tty", [False, True], ids=["pipe", "tty"])
def test_leaderboard_table_and_h2h(played, tty: bool) -> None:
    d, _ = played
    if tty:
        rc, out = run_tty(d, "leaderboard", "--db", "hostile.sqlite", "--h2h")
    else:
        p = arena(d, "leaderboard", "--db", "hostile.sqlite", "--h2h")
        rc, out = p.returncode, p.stdout + p.stderr
    assert rc == 0, out
    assert_literal(out, tty=tty)
    assert "bel" + HOSTILE_SHOWN in out and MARKUP_NAME in out
    assert "head to head" in out


def test_leaderboard_json_is_strict_ascii_json_with_the_names_as_data(played) -> None:
    d, _ = played
    p = arena(d, "leaderboard", "--db", "hostile.sqlite", "--json", "--h2h")
    assert p.returncode == 0, p.stderr
    assert all(" " <= ch <= "~" for ch in p.stdout.replace("\n", ""))
    data = json.loads(p.stdout)
    assert {r["bot"] for r in data["bots"]} >= {BAD_NAME, MARKUP_NAME}  # data stays exact: JSON escapes it
    assert any(c["bot"] == BAD_NAME for c in data["head_to_head"])


def test_leaderboard_csv_cells_are_escaped(played) -> None:
    d, _ = played
    p = arena(d, "leaderboard", "--db", "hostile.sqlite", "--csv")
    assert p.returncode == 0, p.stderr
    assert_literal(p.stdout)
    bots = {row["bot"] for row in csv.DictReader(io.StringIO(p.stdout))}
    assert {"bel" + HOSTILE_SHOWN, MARKUP_NAME} <= bots


def test_replay_shows_every_game_literally(played) -> None:
    d, _ = played
    with Store.open(d / "hostile.sqlite") as store:
        ids = [g.id for g in store.games(store.find_league("hostile").id)]
    listing = arena(d, "replay", "--db", "hostile.sqlite", "--league", "hostile")
    assert listing.returncode == 0, listing.stderr
    assert_literal(listing.stdout + listing.stderr)
    assert "\\ud800" in listing.stdout and "bel" + HOSTILE_SHOWN in listing.stdout
    seen_detail = False
    for game_id in ids:
        p = arena(d, "replay", str(game_id), "--db", "hostile.sqlite")
        assert p.returncode == 0, (game_id, p.stderr)
        assert_literal(p.stdout + p.stderr)
        seen_detail |= "last line \\ud800\\x1b[2J" in p.stdout
    assert seen_detail  # the tampered game's failure, its last line escaped
    rc, out = run_tty(d, "replay", str(ids[0]), "--db", "hostile.sqlite")
    assert rc == 0, out
    assert_literal(out, tty=True)


def test_league_status_shows_probation_names_literally(played) -> None:
    d, _ = played
    rc, out = run_tty(d, "league", "status", "league.toml")
    assert rc == 0, out
    assert_literal(out, tty=True)
    assert MARKUP_NAME in out


def test_submit_refusal_shows_the_crash_detail_literally(played) -> None:
    d, _ = played
    rc, out = run_tty(d, "submit", "evil.py", "--league", "hostile", "--db", "hostile.sqlite", "--name", "evil2")
    assert rc == 1, out
    assert_literal(out, tty=True)
    assert "refused" in out and "\\x1b[2J" in out


@pytest.mark.parametrize("name", [BAD_NAME, "x" * 65, "sur\udcff"])
def test_submit_refuses_a_bad_name_in_one_line(played, name: str) -> None:
    d, _ = played
    p = subprocess.run([sys.executable, "-m", "arena.cli", "submit", "evil.py", "--league", "hostile", "--db",
                        "hostile.sqlite", "--name", name], cwd=d, capture_output=True, timeout=120)
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode == 2, err
    assert len(err.strip().splitlines()) == 1 and "bot name" in err, err
    assert_literal(err)


def test_submit_refuses_a_file_whose_name_is_not_printable(played) -> None:
    d, _ = played
    path = d / "bad\x1b[2J.py"
    shutil.copy(d / "evil.py", path)
    p = arena(d, "submit", path.name, "--league", "hostile", "--db", "hostile.sqlite")
    assert p.returncode == 2, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "--name" in p.stderr
    assert_literal(p.stderr)


def test_a_league_file_with_a_bad_bot_name_is_refused_before_anything_runs(tmp_path: Path) -> None:
    write(tmp_path / "evil.py", EVIL_BOT)
    for i, name in enumerate(["bel\\u0007", "clear\\u001b[2J", "rtl\\u202e", "x" * 65]):
        config = tmp_path / f"bad{i}.toml"
        config.write_text(LEAGUE.replace('database = "hostile.sqlite"', f'database = "bad{i}.sqlite"')
                          + f'[[bots]]\nname = "{name}"\nfile = "evil.py"\n')
        p = arena(tmp_path, "league", "run", str(config))
        assert p.returncode == 2, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and "name" in p.stderr, p.stderr
        assert_literal(p.stderr)
        assert not (tmp_path / f"bad{i}.sqlite").exists()
    config = tmp_path / "bad_league.toml"
    config.write_text(LEAGUE.replace('name = "hostile"', 'name = "clear\\u001b[2J"'))
    p = arena(tmp_path, "league", "run", str(config))
    assert p.returncode == 2 and "name" in p.stderr and "\\x1b[2J" in p.stderr, p.stderr
    assert_literal(p.stderr)
    assert not (tmp_path / "hostile.sqlite").exists()


def test_match_with_a_hostile_file_name_and_crash_detail(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)  # the sandbox's unprivileged uid reads the bot file from here
    bot = tmp_path / f"{MARKUP_NAME}\x1b[2J.py"
    bot.write_text(EVIL_BOT)
    rc, out = run_tty(tmp_path, "match", "nim", str(bot), "random", "--games", "2", "--move-time", "2",
                      "--first-move-time", "20")
    assert rc == 0, out
    assert_literal(out, tty=True)
    assert f"{MARKUP_NAME}\\x1b[2J.py" in out
    p = subprocess.run([sys.executable, "-m", "arena.cli", "match", "nim", str(bot), "random", "--games", "2",
                        "--move-time", "2", "--first-move-time", "20", "--json"], cwd=tmp_path, capture_output=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode("utf-8")  # strict: valid UTF-8
    assert all(" " <= ch <= "~" for ch in out.strip())
    data = json.loads(out)
    json.dumps(data, ensure_ascii=False).encode("utf-8")  # no lone surrogate for a strict parser
    details = [f["detail"] for g in data["games"] for f in g["failures"]]
    # the exact text as data; the bot's lone surrogate replaced (here, or already escaped by the sandbox)
    assert details and all("\x1b[2J" in d and ("\ufffd" in d or "\\ud800" in d) for d in details)
