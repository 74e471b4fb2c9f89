"""``arena bench server``: `arena serve` under a course's load, measured from outside with real HTTP.

200 accounts; submissions arrive at 50 a minute (each from another account) while the league plays them; at the
same time readers fetch pages (the leaderboard, a bot page) and the API (the leaderboard, a submission's status).
Measured: page and API latency (p95; the target is 200 ms on 2 cores) and the time from a submission to its
"accepted" verdict, beside the validation games alone (arena.submissions.validation.verdict in this process: the floor).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterable
from pathlib import Path

from arena.bench import Record, cost

ACCOUNTS = 200
PER_MINUTE = 50
LATENCY_TARGET = 0.2
LEAGUE = '''name = "bench"
games = ["nim(n=9)"]
games_per_pairing = 2
seed = 1
database = "bench.sqlite"
bots = ["random", "greedy"]
max_submissions_per_hour = 100
'''
BOT = '''import random
class Bot:
    def __init__(self, game, seat, seed):
        self.rng = random.Random(seed)
    def step(self, state, limit):
        return self.rng.choice(state.legal_actions())
'''


def _p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20)[18] if len(xs) >= 20 else max(xs, default=0.0)


def _get(url: str, token: str | None = None) -> tuple[float, str]:
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as r:
        body = r.read().decode()
    return time.perf_counter() - t0, body


def _submit(base: str, token: str, i: int) -> int:
    b = uuid.uuid4().hex
    body = (f"--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b{i}.py\"\r\n\r\n"
            f"{BOT}# {i}\n\r\n--{b}--\r\n").encode()
    req = urllib.request.Request(base + "/api/submissions", data=body, method="POST")
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Content-Type", f"multipart/form-data; boundary={b}")
    with urllib.request.urlopen(req, timeout=60) as r:
        return int(json.loads(r.read())["id"])


def validation_alone() -> float:
    """Seconds of one bot's validation games played here (no server, no queue)."""
    # start-up: loaded only when this benchmark runs
    from arena.submissions.snapshot import single
    from arena.submissions.validation import verdict
    snap = single("b.py", BOT)
    t0 = time.perf_counter()
    verdict(f"file:{snap.digest}", "b", {snap.digest: snap}, {"games": ["nim(n=9)"], "seed": 1, "limits": {}})
    return time.perf_counter() - t0


def run(quick: bool = False) -> Iterable[Record]:
    duration = 30.0 if quick else 120.0
    work = Path(tempfile.mkdtemp(prefix="arena-bench-server-"))
    arena = os.path.join(os.path.dirname(sys.executable), "arena")
    proc = None
    try:
        (work / "l.toml").write_text(LEAGUE)
        out = subprocess.run([arena, "accounts", "add", "--league", "l.toml", *(f"s{i:03d}" for i in range(ACCOUNTS))],
                             cwd=work, capture_output=True, text=True, check=True).stdout
        tokens = [line.split()[1] for line in out.splitlines()]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        base = f"http://127.0.0.1:{port}"
        proc = subprocess.Popen([arena, "serve", "--league", "l.toml", "--port", str(port)], cwd=work,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 120
        while True:  # up, and its league's bots entered (the first pass waits for the sandbox runtime's check)
            try:
                _get(base + "/api/leaderboard")
                _get(base + "/bots/1")
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise RuntimeError("arena serve did not start") from None
                time.sleep(0.3)
        pages: list[float] = []
        api: list[float] = []
        sent: dict[int, tuple[float, str]] = {}
        accepted: dict[int, float] = {}
        stop = threading.Event()
        lock = threading.Lock()

        def submitter() -> None:
            i = 0
            start = time.perf_counter()
            while not stop.is_set():
                token = tokens[i % ACCOUNTS]
                t = time.perf_counter()
                sid = _submit(base, token, i)
                with lock:
                    sent[sid] = (t, token)
                i += 1
                stop.wait(max(0.0, start + i * 60 / PER_MINUTE - time.perf_counter()))

        def reader() -> None:
            while not stop.is_set():
                for path in ("/", "/bots/1"):
                    pages.append(_get(base + path)[0])
                api.append(_get(base + "/api/leaderboard")[0])
                with lock:
                    waiting = [(sid, t, tok) for sid, (t, tok) in sent.items() if sid not in accepted]
                for sid, t, tok in waiting[:5]:
                    took, body = _get(f"{base}/api/submissions/{sid}", tok)
                    api.append(took)
                    if json.loads(body)["status"] in ("accepted", "refused"):
                        accepted[sid] = time.perf_counter() - t

        threads = [threading.Thread(target=submitter, daemon=True), threading.Thread(target=reader, daemon=True)]
        for t in threads:
            t.start()
        time.sleep(duration)
        stop.set()
        for t in threads:
            t.join(60)
        floor = validation_alone()
        note = (f"{len(sent)} submissions from {ACCOUNTS} accounts at {PER_MINUTE}/min for {duration:.0f} s while the "
                f"league played; {len(pages)} page and {len(api)} API requests; {len(accepted)} verdicts seen")
        waits = sorted(accepted.values())
        yield cost("server", "page p95 latency", _p95(pages), "s", "target 200 ms", LATENCY_TARGET, 1.0, note,
                   {"median": statistics.median(pages) if pages else 0.0})
        yield cost("server", "API p95 latency", _p95(api), "s", "target 200 ms", LATENCY_TARGET, 1.0, note,
                   {"median": statistics.median(api) if api else 0.0})
        if waits:
            yield cost("server", "submission -> verdict (median)", statistics.median(waits), "s",
                       "validation games alone", floor, None,
                       "the queue, validation in the server's worker and the HTTP polling (1 reader) included",
                       {"p95": _p95(waits), "verdicts": float(len(waits)), "submitted": float(len(sent))})
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        shutil.rmtree(work, ignore_errors=True)
