"""A bot is a snapshot: written safely (issue 12 §2), and the only files its process sees (§3).

Hostile: planted symlinks where arena writes bot files, a bot reading its neighbours (an alias class, a
2 MB file, a subfolder), a bot reading the league directory it was started from. Plus the size limit
and folder bots (a bot that imports its own helper module) in match, league and submit."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arena.sandbox import check
from tests.arena.sandbox_helpers import HOSTILE, IS_ROOT, play
from tests.leaderboards.support import RANDOM_BOT, arena, write

pytestmark = pytest.mark.xdist_group("sandbox")

if check.missing_mandatory():
    pytest.skip(f"mandatory sandbox layers missing on this machine: {check.missing_mandatory()}",
                allow_module_level=True)

CLI_FAST = ["--move-time", "2", "--first-move-time", "10"]


def attacker(path: Path, targets: list[str]) -> Path:
    """hostile/read_targets.py with its targets filled in, as a single file at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((HOSTILE / "read_targets.py").read_text().replace("__TARGETS__", "|".join(targets)))
    os.chmod(path, 0o644)
    for d in (path.parent, path.parent.parent):
        os.chmod(d, 0o755)
    return path


def seen(detail: str, secret: str, tried: str) -> None:
    """Nothing was read or listed, and the attack ran: the bot reported its attempt on ``tried`` (an error)."""
    assert secret not in detail, detail
    assert "read b" not in detail and "listed" not in detail, detail
    assert f"{tried}: " in detail, f"no report of the attempt on {tried}: the attack did not run\n{detail}"


# -- §3: a bot sees its own snapshot and nothing else ---------------------------------------------------
@pytest.mark.parametrize("disguise", ["alias", "big", "subfolder"])
def test_a_bot_cannot_read_the_bots_beside_it(tmp_path, disguise):
    """Every submission in one folder, the victim disguised so it does not look like a bot file."""
    secret = f"CANARY-{uuid.uuid4()}"
    folder = tmp_path / "submissions"
    folder.mkdir()
    victim = {"alias": folder / "victim.py", "big": folder / "victim.py",
              "subfolder": folder / "sub" / "victim.py"}[disguise]
    victim.parent.mkdir(exist_ok=True)
    body = {"alias": f"class Agent:\n    pass\n\nBot = Agent\n# {secret}\n",
            "big": "#" * (2 << 20) + f"\nclass Bot:\n    pass\n# {secret}\n",
            "subfolder": f"class Bot:\n    pass\n# {secret}\n"}[disguise]
    victim.write_text(body)
    os.chmod(victim, 0o644)
    os.chmod(victim.parent, 0o755)
    inside = "/bot/" + str(victim.relative_to(folder))  # where the folder would be mounted
    bot = attacker(folder / "attacker.py", ["/bot", inside, os.path.dirname(inside), str(victim), str(folder)])
    record = play(str(bot))
    failure = record.failures[0]
    assert failure.seat == 0 and failure.reason == "crash"
    assert secret not in failure.detail, failure.detail
    assert re.search(r"/bot: listed \['attacker.py'\]", failure.detail), failure.detail  # its snapshot: itself


def test_the_league_directory_a_run_starts_from_is_invisible(tmp_path):
    """Started from a league directory with a ``bots/`` folder, a league file and a store, and with that
    directory first on sys.path (as Ray workers have the driver's cwd): no bot sees any of it."""
    secret = f"CANARY-{uuid.uuid4()}"
    here = tmp_path / "league"
    (here / "bots" / "victim").mkdir(parents=True)
    files = {here / "bots" / "victim" / "bot.py": f"class Bot:\n    pass\n# {secret}\n",
             here / "league.toml": f"# {secret}\n", here / "arena.sqlite": secret}
    for path, text in files.items():
        path.write_text(text)
        os.chmod(path, 0o644)
    for d in (tmp_path, here, here / "bots", here / "bots" / "victim"):
        os.chmod(d, 0o755)
    bot = attacker(tmp_path / "elsewhere" / "attacker.py", [str(p) for p in files] + [str(here), str(here / "bots")])
    code = ("import sys; sys.path.insert(0, ''); from arena.cli import main; "
            "main(['match', 'nim', sys.argv[1], 'random', '--games', '1', '--json'] + sys.argv[2:])")
    out = subprocess.run([sys.executable, "-c", code, str(bot), *CLI_FAST], cwd=here, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    game = json.loads(out.stdout)["games"][0]
    assert game["terminations"] == ["crash", "normal"]
    seen(game["failures"][0]["detail"], secret, str(here / "bots" / "victim" / "bot.py"))


def test_runtime_trees_come_from_the_installed_package_not_the_cwd(tmp_path):
    """A ``bots/`` folder in the cwd with the cwd on sys.path (a Ray worker) or a node started from ``/``:
    the bot's runtime is arena's own package directories, never the cwd or one of its ancestors."""
    (tmp_path / "bots").mkdir()
    for cwd, first in ((tmp_path, ""), (Path("/"), str(tmp_path))):  # the driver's cwd first on a worker in /
        code = (f"import sys, json; sys.path.insert(0, {first!r}); import bots; "
                "from arena.sandbox.spawn import runtime_trees; print(json.dumps(runtime_trees()))")
        out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        trees = json.loads(out.stdout)
        here = os.path.realpath(cwd)
        assert not [t for t in trees if here == t or here.startswith(t.rstrip("/") + "/")], trees


# -- §2: writing bot files safely ------------------------------------------------------------------------
@pytest.fixture
def submit_league(tmp_path):
    """A store with a league and a bot to submit, run with TMPDIR pointing at a directory of the test."""
    write(tmp_path / "league.toml", 'name = "snap"\ngames = ["nim"]\nbots = ["random", "greedy"]\n[limits]\n'
                                    'move_time = 2.0\nfirst_move_time = 10.0\n')
    code = arena(tmp_path, "league", "run", "league.toml", "--concurrency", "1")
    assert code.returncode == 0, code.stderr
    bot = write(tmp_path / "mine.py", RANDOM_BOT)
    os.chmod(bot, 0o644)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    os.chmod(tmp, 0o1777)  # like /tmp: world-writable and sticky
    return tmp_path, bot, tmp


def _left_in(tmp: Path) -> set[str]:
    """What runs left in TMPDIR, except a non-root user's sandbox runtime directory ``arena-sandbox-<uid>``
    (slot locks and the bots' new-root mount point, kept for the next run as root keeps /run/arena-sandbox)."""
    runtime = set() if os.geteuid() == 0 else {f"arena-sandbox-{os.geteuid()}"}
    return set(os.listdir(tmp)) - runtime


def _submit(cwd: Path, bot: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TMPDIR=str(tmp))
    return subprocess.run([sys.executable, "-m", "arena.cli", "submit", str(bot), "--league", "snap"], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


def _plant(tmp: Path, at: str, digest: str, target: Path) -> None:
    """Another local user's symlinks where arena used to write (``arena-bots-<uid>`` or its digest folder)."""
    base = tmp / f"arena-bots-{os.getuid()}"
    if at == "root":
        base.symlink_to(target)
    else:
        base.mkdir()
        (base / digest[:16]).symlink_to(target)
        if IS_ROOT:  # the attacker owns what it planted
            os.lchown(base / digest[:16], 20999, 20999)
            os.chown(base, 20999, 20999)


@pytest.mark.parametrize("at", ["root", "digest"])
def test_a_planted_symlink_is_never_written_through(submit_league, at):
    cwd, bot, tmp = submit_league
    import hashlib
    target = cwd / "attacker-target"
    target.mkdir()
    before = _left_in(tmp)
    _plant(tmp, at, hashlib.sha256(bot.read_text().encode()).hexdigest(), target)
    planted = _left_in(tmp) - before
    out = _submit(cwd, bot, tmp)
    assert out.returncode == 0, out.stderr
    assert list(target.iterdir()) == [], f"written through a planted symlink: {list(target.rglob('*'))}"
    assert _left_in(tmp) == before | planted, "the submit left files behind"


@pytest.mark.slow
def test_what_a_run_creates_it_removes(submit_league):
    cwd, bot, tmp = submit_league
    out = _submit(cwd, bot, tmp)
    assert out.returncode == 0, out.stderr
    assert _left_in(tmp) == set()
    write(cwd / "with_file.toml", f'name = "snap2"\ngames = ["nim"]\n[[bots]]\nspec = "random"\n[[bots]]\n'
                                  f'file = "{bot}"\n[limits]\nfirst_move_time = 10.0\n')
    env = dict(os.environ, TMPDIR=str(tmp))
    run = subprocess.run([sys.executable, "-m", "arena.cli", "league", "run", "with_file.toml", "--concurrency", "2"],
                         cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert _left_in(tmp) == set()
    assert not [p for p in cwd.iterdir() if p.name.endswith(".bots")], list(cwd.iterdir())
    match = subprocess.run([sys.executable, "-m", "arena.cli", "match", "nim", str(bot), "random", "--games", "1",
                            *CLI_FAST], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert match.returncode == 0, match.stderr
    assert _left_in(tmp) == set()


# -- the size limit ----------------------------------------------------------------------------------------
def _big_bot(path: Path, mb: float) -> Path:
    write(path, RANDOM_BOT + "\n#" + "x" * int(mb * (1 << 20)) + "\n")
    os.chmod(path, 0o644)
    return path


def test_a_bot_over_the_size_limit_is_refused_with_one_line(tmp_path):
    big = _big_bot(tmp_path / "big.py", 2)
    out = arena(tmp_path, "match", "nim", str(big), "random", "--games", "1", *CLI_FAST)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "big.py" in lines[0] and "2.0 MB" in lines[0] and "--max-bot-mb" in lines[0], lines
    ok = arena(tmp_path, "match", "nim", str(big), "random", "--games", "1", "--max-bot-mb", "3", *CLI_FAST)
    assert ok.returncode == 0, ok.stderr


@pytest.mark.slow
def test_submit_and_league_refuse_a_bot_over_the_limit(submit_league):
    cwd, _, _ = submit_league
    big = _big_bot(cwd / "big.py", 2)
    out = arena(cwd, "submit", str(big), "--league", "snap")
    assert out.returncode == 2 and "big.py" in out.stderr and "--max-bot-mb" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    ok = arena(cwd, "submit", str(big), "--league", "snap", "--max-bot-mb", "2.5")
    assert ok.returncode == 0, ok.stderr
    write(cwd / "big.toml", 'name = "big"\ngames = ["nim"]\n[[bots]]\nspec = "random"\n[[bots]]\nfile = "big.py"\n'
                            '[limits]\nfirst_move_time = 10.0\n')
    refused = arena(cwd, "league", "run", "big.toml")
    assert refused.returncode == 2 and "big.py" in refused.stderr and "max_bot_mb" in refused.stderr, refused.stderr
    (cwd / "big.toml").write_text((cwd / "big.toml").read_text() + "max_bot_mb = 2.5\n")
    raised = arena(cwd, "league", "run", "big.toml", "--concurrency", "1")
    assert raised.returncode == 0, raised.stderr


# -- folder bots ---------------------------------------------------------------------------------------------
HELPER = "import random\n\ndef choose(state, rng):\n    return rng.choice(state.legal_actions())\n"
FOLDER_ENTRY = """
import random

import helper


class Bot:
    def __init__(self, game, seat, seed):
        self.rng = random.Random(seed)

    def step(self, state, limit):
        return helper.choose(state, self.rng)
"""


def folder_bot(path: Path, entry: str = "bot.py") -> Path:
    path.mkdir(parents=True)
    write(path / entry, FOLDER_ENTRY)
    write(path / "helper.py", HELPER)
    return path


def test_a_folder_bot_imports_its_helper_in_a_match(tmp_path):
    bot = folder_bot(tmp_path / "mybot")
    out = arena(tmp_path, "match", "nim", str(bot), "random", "--games", "2", "--json", *CLI_FAST)
    assert out.returncode == 0, out.stderr
    games = json.loads(out.stdout)["games"]
    assert [g["terminations"] for g in games] == [["normal", "normal"]] * 2, games


@pytest.mark.slow
def test_a_folder_bot_plays_a_league_and_is_submitted(submit_league):
    cwd, _, _ = submit_league
    folder_bot(cwd / "listed", entry="main.py")
    write(cwd / "folders.toml", 'name = "folders"\ngames = ["nim"]\ngames_per_pairing = 2\n[[bots]]\nspec = "random"\n'
                                '[[bots]]\nname = "listed"\nfile = "listed"\nentry = "main.py"\n'
                                '[limits]\nfirst_move_time = 10.0\n')
    run = arena(cwd, "league", "run", "folders.toml", "--concurrency", "1")
    assert run.returncode == 0, run.stderr
    submitted = folder_bot(cwd / "submitted")
    sub = arena(cwd, "submit", str(submitted), "--league", "folders")
    assert sub.returncode == 0, sub.stderr
    again = arena(cwd, "league", "run", "folders.toml", "--concurrency", "1")
    assert again.returncode == 0, again.stderr
    from leaderboards.store import Store
    with Store.open(cwd / "arena.sqlite") as store:
        league = store.find_league("folders")
        games = store.games(league.id)
    by_bot = {name: [g.terminations[g.players.index(name)] for g in games if name in g.players]
              for name in ("listed", "submitted")}
    assert by_bot["listed"] and by_bot["submitted"], by_bot
    assert all(t == "normal" for ts in by_bot.values() for t in ts), by_bot
