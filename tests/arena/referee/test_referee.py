"""The sandboxed referee: records, seeds, CPU accounting, freezing, refusal of untrusted files, debug mode."""
from __future__ import annotations

import ast
import os
import pickle
import threading
from pathlib import Path

import pytest

import arena
from arena.errors import ConfigError
from arena.limits import Limits
from arena.referee.sandboxed import bot_seed, play_game
from arena.sandbox import SandboxUnavailableError, check, slots
from tests.arena.sandbox_helpers import FAST, assert_nothing_left, place, play

pytestmark = pytest.mark.xdist_group("sandbox")
needs_layers = pytest.mark.skipif(bool(check.missing_mandatory()),
                                  reason=f"mandatory sandbox layers missing: {check.missing_mandatory()}")
LIMITS = Limits(move_time=2.0, first_move_time=2.0, memory_mb=200)


def write_bot(tmp_path: Path, name: str, source: str) -> str:
    d = tmp_path / name
    d.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(d, 0o755)
    (d / f"{name}.py").write_text(source)
    return str(d / f"{name}.py")


def test_random_vs_random_record_is_complete():
    record = play_game("nim", ["random", "random"], 5, LIMITS)
    assert_nothing_left(record)
    assert record.game == "nim(seed=5)" and record.seed == 5
    assert record.terminations == ["normal", "normal"] and record.failures == []
    decisions = len(record.history)  # nim without the coin has no chance events
    assert len(record.move_seats) == len(record.wall_times) == len(record.cpu_times) == decisions
    assert all(w > 0 for w in record.wall_times) and all(c is not None and c >= 0 for c in record.cpu_times)
    assert sorted(record.returns) == [-1.0, 1.0]
    assert len(set(record.info["bot_uids"])) == (2 if os.geteuid() == 0 else 1)  # without root, bots run as us
    assert set(record.info["sandbox"]) >= {"rlimits", "no_new_privs"}


def test_games_are_reproducible_from_the_seed_and_chance_key():
    from arena.chance import new_key
    key = new_key()  # the secret keys the bots' seeds too (tests/arena/referee/test_chance_secrecy.py)
    a = play_game("nim", ["random", "random"], 11, LIMITS, chance_key=key)
    b = play_game("nim", ["random", "random"], 11, LIMITS, chance_key=key)
    c = play_game("nim", ["random", "random"], 12, LIMITS, chance_key=key)
    assert a.history == b.history and a.returns == b.returns
    assert (c.game, c.history) != (a.game, a.history)


def test_bot_seeds_differ_by_seat_and_are_deterministic():
    assert bot_seed(3, 0) != bot_seed(3, 1)
    assert bot_seed(3, 0) == bot_seed(3, 0) and bot_seed(3, 0) != bot_seed(4, 0)


def test_chance_events_reach_the_bots():
    record = play_game("nim(coin=true)", ["greedy", "random"], 2, LIMITS)
    assert record.terminations == ["normal", "normal"]
    assert len(record.history) > len(record.move_seats)  # coin flips were played and sent to the bots


def test_bad_arguments_fail_before_any_process_starts(tmp_path):
    with pytest.raises(ValueError, match="unknown bot"):
        play_game("nim", ["random", "nobot"], 1)
    with pytest.raises(ConfigError, match="does not exist"):
        play_game("nim", ["random", str(tmp_path / "missing.py")], 1)
    with pytest.raises(ConfigError, match="needs 2 bots"):
        play_game("nim", ["random"], 1)
    with pytest.raises(ConfigError, match="on_failure"):
        play_game("nim", ["random", "random"], 1, on_failure="raise")


@needs_layers
def test_cpu_time_is_measured_for_the_bot_process(tmp_path):
    burner = write_bot(tmp_path, "burner", (
        "import time\n"
        "class Bot:\n"
        "    def __init__(self, game, seat, seed): pass\n"
        "    def step(self, state, limit):\n"
        "        start = time.process_time()\n"
        "        while time.process_time() - start < 0.2: pass\n"
        "        return state.legal_actions()[0]\n"))
    sleeper = write_bot(tmp_path, "napper", (
        "import time\n"
        "class Bot:\n"
        "    def __init__(self, game, seat, seed): pass\n"
        "    def step(self, state, limit):\n"
        "        time.sleep(0.2)\n"
        "        return state.legal_actions()[0]\n"))
    record = play_game("nim(n=4,k=1)", [burner, sleeper], 1, LIMITS)
    assert_nothing_left(record)
    burn = [c for s, c in zip(record.move_seats, record.cpu_times) if s == 0]
    nap = [c for s, c in zip(record.move_seats, record.cpu_times) if s == 1]
    nap_wall = [w for s, w in zip(record.move_seats, record.wall_times) if s == 1]
    assert all(c >= 0.19 for c in burn), burn
    assert all(c < 0.1 for c in nap) and all(w >= 0.2 for w in nap_wall), (nap, nap_wall)


@needs_layers
@pytest.mark.skipif(not check.active("freeze"), reason="no cgroup freezer on this machine")
def test_a_bot_is_frozen_while_it_is_not_its_turn(tmp_path):
    spinner = write_bot(tmp_path, "spinner", (
        "import threading, time\n"
        "class Bot:\n"
        "    def __init__(self, game, seat, seed):\n"
        "        self.count = 0\n"
        "        self.log = []\n"
        "        threading.Thread(target=self.spin, daemon=True).start()\n"
        "    def spin(self):\n"
        "        while True: self.count += 1\n"
        "    def step(self, state, limit):\n"
        "        c0 = self.count\n"
        "        time.sleep(0.3)  # the spinner runs during our own turn\n"
        "        self.log.append((c0, self.count))\n"
        "        if len(self.log) == 3: raise RuntimeError(repr(self.log))\n"
        "        return state.legal_actions()[0]\n"))
    slow = write_bot(tmp_path, "slowpoke", (
        "import time\n"
        "class Bot:\n"
        "    def __init__(self, game, seat, seed): pass\n"
        "    def step(self, state, limit):\n"
        "        time.sleep(1.0)\n"
        "        return state.legal_actions()[0]\n"))
    record = play_game("nim(n=50,k=1)", [spinner, slow], 1, LIMITS)
    assert_nothing_left(record)
    log = eval(record.failures[0].detail.split("RuntimeError: ")[1].splitlines()[0])
    own_turn = [end - start for start, end in log]
    opponent_turn = [log[i + 1][0] - log[i][1] for i in range(len(log) - 1)]
    # Unfrozen, the spinner would count over 3x more during the opponent's 1 s turns than during our own
    # 0.3 s turns; frozen, only the hand-over windows around each request count (GIL switches included).
    assert max(opponent_turn) < 0.5 * min(own_turn), (own_turn, opponent_turn)


@needs_layers
def test_two_games_at_once_get_distinct_uids(tmp_path):
    records = []

    def run(seed):
        records.append(play_game("nim", ["random", "random"], seed, LIMITS))

    threads = [threading.Thread(target=run, args=(s,)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    uids = [u for r in records for u in r.info["bot_uids"]]
    assert len(records) == 2 and all(r.terminations == ["normal", "normal"] for r in records)
    if os.geteuid() == 0:
        assert len(set(uids)) == 4 and min(uids) > slots.BASE_UID


def test_slots_are_exclusive_until_released():
    a = slots.acquire()
    b = slots.acquire(start=a.index - 1)
    try:
        assert a.index != b.index and a.uid == slots.BASE_UID + a.index
    finally:
        b.release()
    c = slots.acquire(start=b.index - 1)
    try:
        assert c.index == b.index  # released slots are reused
    finally:
        a.release()
        c.release()


def test_untrusted_files_are_refused_without_the_mandatory_layers(tmp_path, monkeypatch):
    bot = place("kill_parent", tmp_path)
    monkeypatch.setattr(check, "missing_mandatory", lambda: ["seccomp", "landlock"])
    with pytest.raises(SandboxUnavailableError) as info:
        play_game("nim", [bot, "random"], 1, FAST)
    message = str(info.value)
    assert "seccomp, landlock" in message and "--trusted" in message and "\n" not in message
    # built-in bots are trusted code: they still run
    assert play_game("nim", ["random", "random"], 1, FAST).terminations == ["normal", "normal"]
    # and the user may declare a file trusted
    assert play_game("nim", [bot, "random"], 1, FAST.with_(trusted=True)).terminations == ["normal", "normal"]


def test_debug_mode_runs_bots_in_this_process(tmp_path):
    marker = tmp_path / "pid.txt"
    bot = write_bot(tmp_path, "debugged", (
        "import os\n"
        "class Bot:\n"
        "    def __init__(self, game, seat, seed): pass\n"
        "    def step(self, state, limit):\n"
        f"        open({str(marker)!r}, 'w').write(str(os.getpid()))\n"
        "        assert limit.time is None  # no time limit in debug mode\n"
        "        return state.legal_actions()[0]\n"))
    record = play_game("nim", [bot, "random"], 1, Limits(debug=True))
    assert record.terminations == ["normal", "normal"]
    assert int(marker.read_text()) == os.getpid()
    assert "TRUSTED DEBUG MODE" in record.info["debug"] and record.info["sandbox"] == []


@needs_layers
def test_the_referee_never_unpickles(tmp_path, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("the referee unpickled something")

    monkeypatch.setattr(pickle, "loads", forbidden)
    monkeypatch.setattr(pickle, "load", forbidden)
    monkeypatch.setattr(pickle, "Unpickler", forbidden)
    record = play(place("raw_garbage", tmp_path, {"mode.txt": "pickle"}))
    assert record.terminations == ["protocol", "normal"]
    assert play_game("nim", ["random", "random"], 3, FAST).terminations == ["normal", "normal"]


def test_referee_side_modules_do_not_import_pickle_or_multiprocessing():
    root = Path(arena.__file__).parent
    files = [*sorted((root / "referee").glob("*.py")), *sorted((root / "sandbox").glob("*.py"))]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert name.split(".")[0] not in ("pickle", "_pickle", "multiprocessing", "multiprocess", "dill",
                                                  "marshal", "shelve"), f"{path.name} imports {name}"


def test_layer_report_marks_the_mandatory_layers():
    layers = {layer.name: layer for layer in check.report()}
    assert {n for n, layer in layers.items() if layer.mandatory} == set(check.MANDATORY)
    assert {"uid", "seccomp", "landlock", "mount_namespace", "network_namespace", "cgroup_memory", "cgroup_kill",
            "freeze", "rlimits"} <= set(layers)
    assert check.missing_mandatory() == [n for n in check.MANDATORY if not layers[n].active]
    if os.geteuid() == 0:
        assert layers["uid"].active


@needs_layers
def test_the_exec_path_without_fork_server_gives_the_same_sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_SANDBOX_ZYGOTE", "0")
    record = play(place("whoami", tmp_path))
    detail = record.failures[0].detail
    assert record.terminations == ["crash", "normal"] and "uid=" in detail
    if os.geteuid() == 0:
        assert "uid=0 " not in detail and "groups=[]" in detail
    bomb = play(place("fork_bomb", tmp_path))
    assert "forks that succeeded: 0" in bomb.failures[0].detail


@needs_layers
def test_bots_die_with_the_referee(tmp_path):
    """A referee killed mid-game (SIGKILL: no clean-up code runs) takes its bots and fork server along."""
    import signal
    import subprocess
    import sys
    import time

    from tests.arena.sandbox_helpers import processes_of
    bot = place("sleeper", tmp_path)
    script = (f"import sys; sys.path.insert(0, {str(Path(__file__).parents[3])!r})\n"
              "from arena.referee.sandboxed import play_game\nfrom arena.limits import Limits\n"
              f"play_game('nim', [{bot!r}, 'random'], 1, Limits(move_time=60, first_move_time=60))\n")
    referee = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 30
        uids = set(range(slots.BASE_UID, slots.BASE_UID + slots.MAX_SLOTS + 1)) if os.geteuid() == 0 else None
        mine = []
        while time.monotonic() < deadline and not mine:
            time.sleep(0.2)
            mine = [p for p in (processes_of(uids) if uids else []) if _ancestor(p, referee.pid)]
        if os.geteuid() == 0:
            assert mine, "the referee never started its bots"
    finally:
        referee.send_signal(signal.SIGKILL)
        referee.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in mine):
        time.sleep(0.05)
    assert not [p for p in mine if os.path.exists(f"/proc/{p}")], "bots outlived their referee"


def _ancestor(pid: int, ancestor: int) -> bool:
    for _ in range(10):
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid == ancestor:
            return True
    return False


@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs bots under another uid")
def test_a_private_bot_file_plays_from_its_snapshot(tmp_path):
    """The bot's uid reads the snapshot arena wrote (0644 in a 0755 folder), never the author's file: a 0600 file
    in a 0700 folder plays."""
    bot = write_bot(tmp_path, "private", "class Bot:\n    def __init__(self, game, seat, seed):\n        pass\n\n"
                                         "    def step(self, state, limit):\n        return state.legal_actions()[0]\n")
    os.chmod(bot, 0o600)
    os.chmod(os.path.dirname(bot), 0o700)
    record = play_game("nim", [bot, "random"], 1, FAST.with_(first_move_time=10.0))
    assert record.terminations == ["normal", "normal"], record.failures
