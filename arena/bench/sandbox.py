"""``arena bench sandbox``: what the sandbox costs, measured beside its baselines in the same run.

- per-move round trip referee -> sandboxed trivial bot -> referee, against a raw ``os.pipe`` round trip
  to a forked echo process (target: at most 50 us of overhead at the median);
- time from starting a sandboxed bot to its first move, against the same bot started as a plain
  subprocess with no layers (target: at most 40 ms);
- the referee's own CPU per move against a bot that prints in one-byte writes, against a trivial bot that sends
  nothing extra (what a bot sends costs the referee a bounded amount per move: arena/sandbox/channel.py);
- games/s of random vs random on Hex 7x7 through the sandbox, against in-process ``arena.play``.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from typing import Any

import bots
import games
from arena.bench import Record, cost, rate
from arena.limits import Limits
from arena.referee.loop import play

SUITE = "sandbox"
LIMITS = Limits(move_time=5.0, first_move_time=5.0)


def raw_pipe_round_trip(n: int) -> list[float]:
    """Seconds per round trip of a small message through two pipes to a forked echo process."""
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # echo child
        os.close(a_w)
        os.close(b_r)
        while True:
            data = os.read(a_r, 4096)
            if not data:
                os._exit(0)
            os.write(b_w, data)
    os.close(a_r)
    os.close(b_w)
    message = b'\x00\x00\x00\x10{"id":1,"action":3}'
    times = []
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            os.write(a_w, message)
            os.read(b_r, 4096)
            times.append(time.perf_counter() - t0)
    finally:
        os.close(a_w)
        os.close(b_r)
        os.waitpid(pid, 0)
    return times


def sandboxed_round_trip(n: int, bot: dict[str, Any] | None = None) -> tuple[list[float], list[str], float]:
    """Seconds per move of a sandboxed bot (by default the trivial greedy Nim), freeze/thaw and CPU accounting
    included; also the referee's own CPU seconds per move (this process's CPU time over the timed moves).

    Games of realistic length (100 own moves per bot process), so the O(history) state copies of the
    referee loop stay what they are in real games.
    """
    from arena.sandbox.launcher import Sandbox
    from arena.sandbox.proxy import BotProcess  # start-up: the sandbox only when a bot is started
    game = games.load("nim(n=200,k=1)")
    sandbox = Sandbox(LIMITS, game)
    first, limit = LIMITS.allowance(0), LIMITS.allowance(1)  # what the referee hands a bot's first and later moves
    times: list[float] = []
    cpu = 0.0
    while len(times) < n:
        proxy = BotProcess(bot or {"kind": "builtin", "spec": "greedy"}, game, 0, 1, LIMITS, sandbox=sandbox)
        state = game.new_initial_state()
        try:
            state.apply_action(proxy.step(state, first))  # start-up, not timed
            while not state.is_terminal() and len(times) < n:
                state.apply_action(1)  # the opponent's move
                if state.is_terminal():
                    break
                c0, t0 = time.process_time(), time.perf_counter()
                action = proxy.step(state, limit)
                times.append(time.perf_counter() - t0)
                cpu += time.process_time() - c0
                state.apply_action(action)
        finally:
            proxy.close()
    return times, sandbox.active_layers(), cpu / len(times)


NOISY_BOT = """import os, time
class Bot:
    def __init__(self, game, seat, seed):
        pass
    def step(self, state, limit):
        end = time.monotonic() + {seconds}
        while time.monotonic() < end:
            os.write(2, b"x")  # one byte a write: each can wake the referee
        return state.legal_actions()[0]
"""


def referee_cpu_noisy(moves: int, seconds: float = 0.05) -> float:
    """The referee's CPU seconds per move against a bot that prints one byte per write for ``seconds`` of every
    move (what the referee does because of what a bot sends: bounded per move, arena/sandbox/channel.py)."""
    # start-up: the sandbox stack loads only when this suite runs
    from arena.referee.sandboxed import describe_bot
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        path = os.path.join(d, "noisy.py")
        with open(path, "w") as f:
            f.write(NOISY_BOT.format(seconds=seconds))
        return sandboxed_round_trip(moves, describe_bot(path, games.load("nim(n=200,k=1)")))[2]


def round_trips(moves: int, rounds: int = 3) -> tuple[float, float, list[str]]:
    """(raw median, sandboxed median, layers) in seconds: ``rounds`` alternating runs of each, the median
    over all samples, so a slow phase of a shared machine hits both sides alike."""
    raw: list[float] = []
    boxed: list[float] = []
    layers: list[str] = []
    for _ in range(rounds):
        raw += raw_pipe_round_trip(moves // rounds)
        times, layers, _ = sandboxed_round_trip(moves // rounds)
        boxed += times
    return statistics.median(raw), statistics.median(boxed), layers


def round_trips_on_one_cpu(moves: int) -> tuple[float, float] | None:
    """``round_trips`` in a fresh process pinned to one CPU, so the echo child / the fork server and
    its bots share the referee's CPU: the comparison without cross-CPU wake-ups (which a VM makes
    expensive, ~6 us each). None when affinity cannot be set."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    code = (f"import os, json; os.sched_setaffinity(0, {{{cpu}}}); from arena.bench.sandbox import round_trips; "
            f"print(json.dumps(round_trips({moves})[:2]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    if out.returncode != 0:
        return None
    raw, boxed = json.loads(out.stdout.strip().splitlines()[-1])
    return raw, boxed


def start_to_first_move(isolate: bool, n: int) -> list[float]:
    """Seconds from creating a bot process to its first answered move.

    ``isolate=False`` is the baseline: a fresh interpreter exec'd as a plain subprocess, no layers.
    """
    game = games.load("nim(n=100,k=1)")
    times: list[float] = []
    saved = os.environ.get("ARENA_SANDBOX_ZYGOTE")
    if not isolate:
        os.environ["ARENA_SANDBOX_ZYGOTE"] = "0"
    try:
        return _starts(game, isolate, n, times)
    finally:
        if saved is None:
            os.environ.pop("ARENA_SANDBOX_ZYGOTE", None)
        else:
            os.environ["ARENA_SANDBOX_ZYGOTE"] = saved


def _starts(game: Any, isolate: bool, n: int, times: list[float]) -> list[float]:
    from arena.sandbox.launcher import Sandbox
    from arena.sandbox.proxy import BotProcess  # start-up: the sandbox only when a bot is started
    if isolate:  # the fork server starts once per referee process: not part of a bot's start
        warm = BotProcess({"kind": "builtin", "spec": "greedy"}, game, 0, 1, LIMITS, sandbox=Sandbox(LIMITS, game))
        warm.close()
    for _ in range(n):
        sandbox = Sandbox(LIMITS, game, isolate=isolate)
        state = game.new_initial_state()
        t0 = time.perf_counter()
        proxy = BotProcess({"kind": "builtin", "spec": "greedy"}, game, 0, 1, LIMITS, sandbox=sandbox)
        try:
            proxy.step(state, LIMITS.allowance(0))
            times.append(time.perf_counter() - t0)
        finally:
            proxy.close()
    return times


def games_per_second(n: int) -> tuple[float, float, str]:
    """(sandboxed games/s, in-process games/s, game spec) for random vs random."""
    from arena.referee.sandboxed import play_game  # start-up: the sandbox only when a game is played
    spec, note = "hex(size=7)", ""
    try:
        games.load(spec).new_initial_state()
    except Exception:  # noqa: BLE001 - Hex not built yet
        spec, note = "nim", "Hex is not built: measured on nim instead"
    t0 = time.perf_counter()
    for seed in range(n):
        play_game(spec, ["random", "random"], seed, LIMITS)
    sandboxed = n / (time.perf_counter() - t0)
    game = games.load(spec)
    m = 20 * n
    t0 = time.perf_counter()
    for seed in range(m):
        play(game, [bots.make("random", game, 0, seed), bots.make("random", game, 1, seed + 1)], seed)
    return sandboxed, m / (time.perf_counter() - t0), spec + (f" ({note})" if note else "")


def _fork_server_cpu() -> tuple[float, float]:
    """(CPU seconds of this process's fork server, of its children it reaped: every bot's init and bot)."""
    from arena.sandbox import zygote  # start-up: the sandbox only when this suite runs
    pid = zygote.running_pid()
    if pid is None:
        return 0.0, 0.0
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def game_cost(n: int, spec: str = "nim") -> dict[str, float]:
    """Per sandboxed random-vs-random game, in ms: the wall time end to end (both bots started, played, killed,
    cleaned up), the referee's CPU, the fork server's and its children's (the bots' inits and the bots); and the
    same game in process (``in_process``)."""
    from arena.referee.sandboxed import play_game  # start-up: the sandbox only when a game is played
    for seed in range(3):  # the fork server and the runtime are this process's once: not a game's cost
        play_game(spec, ["random", "random"], seed, LIMITS)
    server0, children0 = _fork_server_cpu()
    cpu0, t0 = time.process_time(), time.perf_counter()
    for seed in range(n):
        play_game(spec, ["random", "random"], 100 + seed, LIMITS)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    server1, children1 = _fork_server_cpu()
    game = games.load(spec)
    t0 = time.perf_counter()
    for seed in range(20 * n):
        play(game, [bots.make("random", game, 0, seed), bots.make("random", game, 1, seed + 1)], seed)
    return {"wall_ms": wall / n * 1e3, "referee_cpu_ms": cpu / n * 1e3,
            "fork_server_cpu_ms": (server1 - server0) / n * 1e3, "bots_cpu_ms": (children1 - children0) / n * 1e3,
            "in_process_ms": (time.perf_counter() - t0) / (20 * n) * 1e3}


def run(quick: bool = False) -> Iterable[Record]:
    """The suite's records (``quick``: fewer repetitions)."""
    moves = 300 if quick else 3000
    raw, boxed, layers = round_trips(moves)
    overhead = boxed - raw
    yield cost(SUITE, "per-move round trip (median, sandboxed trivial bot)", boxed * 1e6, "us",
               "raw os.pipe round trip", raw * 1e6, target=raw / (raw + 50e-6),
               note=f"overhead {overhead * 1e6:.1f} us per move (target <= 50 us); default CPU placement; JSON "
                    f"frames, freeze/thaw, CPU accounting included; layers: {', '.join(layers)}")
    pinned = round_trips_on_one_cpu(moves)
    if pinned is not None:
        raw1, boxed1 = pinned
        yield cost(SUITE, "per-move round trip, referee and bot on one CPU (median)", boxed1 * 1e6, "us",
                   "raw os.pipe round trip on one CPU", raw1 * 1e6, target=raw1 / (raw1 + 50e-6),
                   note=f"overhead {(boxed1 - raw1) * 1e6:.1f} us per move (target <= 50 us); both sides pinned "
                        "to one CPU: no cross-CPU wake-ups")
    _, _, quiet = sandboxed_round_trip(moves // 3)
    noisy = referee_cpu_noisy(10 if quick else 40)
    # start-up: the sandbox stack loads only when this suite runs
    from arena.sandbox.channel import OUTPUT_PAUSE, OUTPUT_PER_MOVE, READS_PER_MOVE
    yield cost(SUITE, "referee CPU per move, bot printing one byte a write for 50 ms a move", noisy * 1e6, "us",
               "referee CPU per move, trivial bot that sends nothing extra", quiet * 1e6,
               note=f"bound: the referee reads a bot's output as it comes at most {READS_PER_MOVE} times and "
                    f"{OUTPUT_PER_MOVE >> 20} MiB a move, then once every {OUTPUT_PAUSE * 1e3:g} ms; answers in more "
                    f"than {READS_PER_MOVE} pieces, answers to requests never made and hang-ups of the answer pipe "
                    "are the bot's failure at once; a hung-up output pipe is not waited on")
    starts = 3 if quick else 10
    plain = statistics.median(start_to_first_move(False, starts))
    boxed_start = statistics.median(start_to_first_move(True, starts))
    yield cost(SUITE, "start to first move (median, sandboxed bot)", boxed_start * 1e3, "ms",
               "fresh interpreter, plain subprocess, no layers", plain * 1e3, target=plain / 0.040,
               note="target <= 40 ms (the ratio target is baseline/40 ms); sandboxed bots fork from the "
                    "fork server (arena/sandbox/zygote.py), which starts once per referee process")
    nim = game_cost(10 if quick else 60)
    yield cost(SUITE, "a sandboxed random vs random nim game, end to end (-j 1)", nim["wall_ms"], "ms",
               "the same game in process", nim["in_process_ms"],
               note=f"goal <= 12 ms (issue 33); CPU a game: referee {nim['referee_cpu_ms']:.1f} ms, fork server "
                    f"{nim['fork_server_cpu_ms']:.1f} ms, its children (each bot's init and the bot) "
                    f"{nim['bots_cpu_ms']:.1f} ms (clock ticks: coarse over few games)", details=nim)
    sandboxed, inproc, spec = games_per_second(3 if quick else 20)
    yield rate(SUITE, f"random vs random games/s through the sandbox, {spec}", sandboxed, "games/s",
               "in-process arena.referee.loop", inproc, note="two sandboxed processes started per game")
