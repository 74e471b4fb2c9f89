"""A stranger costs `arena serve` bounded resources: more idle connections than the process may open files
(silent ones, half-sent headers, half-sent bodies), held while a submission is validated and its games are
played, leave the league, the validator and the site running, are closed by the server within its timeouts, and
keep the log small."""
from __future__ import annotations

import asyncio
import errno
import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect
from starlette.routing import Route

from arena.server.connections import (
    BODY_IDLE,
    BODY_TIMEOUT,
    HEAD_TIMEOUT,
    LATE,
    STALLED,
    WRITE_STALL,
    Guarded,
    exception_handlers,
)
from leaderboards import accounts as acc
from leaderboards.store import Store
from tests.server.support import PLAIN, Client, Server, accounts, make_league, multipart, wait_idle

pytestmark = pytest.mark.xdist_group("server")

OPEN_FILES = 256
"""The server's RLIMIT_NOFILE (soft and hard): the usual 1,024 scaled down, so that the test is cheap."""
HELD = 340
"""Connections the flood keeps open: more than OPEN_FILES, as 1,100 are more than 1,024."""
LOG_BYTES = 20_000
"""The most the server may write to its log through the whole test (it wrote 40 MB in 23 s before)."""
SLACK = 4.0
"""Seconds beyond a timeout in which the server must have closed a connection (its sweep, a loaded machine)."""


@dataclass
class Held:
    kind: str
    sock: socket.socket
    opened: float
    got: bytes = b""


@dataclass
class Flood:
    """Keeps ``HELD`` connections open, a third of each kind; each one the server closes is noted (how long it
    lived, what it was answered) and opened again."""

    port: int
    held: list[Held] = field(default_factory=list)
    closed: list[tuple[str, float, bytes]] = field(default_factory=list)
    """(kind, seconds it lived, what the server sent) of each connection the server closed."""
    refused: int = 0
    stopping: threading.Event = field(default_factory=threading.Event)

    def open(self, kind: str) -> None:
        try:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            if kind == "head":
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            elif kind == "body":  # a login form that never finishes: read before anything is checked
                s.sendall(b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                          b"Content-Length: 10000\r\n\r\nname=a&token=")
            s.setblocking(False)
        except OSError:
            self.refused += 1
            return
        self.held.append(Held(kind, s, time.monotonic()))

    def sweep(self) -> None:
        for h in list(self.held):
            try:
                while chunk := h.sock.recv(65536):
                    h.got += chunk
            except BlockingIOError:
                continue
            except OSError:
                pass
            h.sock.close()
            self.held.remove(h)
            self.closed.append((h.kind, time.monotonic() - h.opened, h.got))

    def run(self) -> None:
        kinds = ("silent", "head", "body")
        try:
            while not self.stopping.is_set():
                self.sweep()
                while len(self.held) < HELD and not self.stopping.is_set():
                    self.open(kinds[len(self.held) % 3])
                self.stopping.wait(0.5)
        finally:
            for h in self.held:
                h.sock.close()


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.slow
def test_a_flood_of_idle_connections_leaves_the_league_validator_and_site_running(tmp_path):
    make_league(tmp_path)
    tokens = accounts(tmp_path, "alice")
    server = Server(tmp_path, open_files=OPEN_FILES).start()
    flood = Flood(server.port)
    holder = threading.Thread(target=flood.run, daemon=True)
    try:
        wait_idle(tmp_path, 60)  # the league file's own games (random against greedy)
        upload = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        upload.connect()  # a student's connection, open before the flood (it must send within HEAD_TIMEOUT)
        opened = time.monotonic()
        holder.start()
        while len(flood.held) + len(flood.closed) < HELD and time.monotonic() < opened + HEAD_TIMEOUT / 2:
            time.sleep(0.1)
        assert len(flood.held) + len(flood.closed) >= HELD, "the flood was not in place in time"
        body, ctype = multipart({"file": ("alice.py", PLAIN.encode())})
        upload.request("POST", "/api/submissions", body,
                       {"Content-Type": ctype, "Authorization": f"Bearer {tokens['alice']}"})
        answer = upload.getresponse()
        assert answer.status == 202, (answer.status, answer.read()[:300], server.output()[-2000:])
        started = time.monotonic()  # (the upload's connection kept alive meanwhile: every place is taken)
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as probe:  # one more: a 503 at once
            answered = b""
            while chunk := probe.recv(65536):
                answered += chunk
            waited = time.monotonic() - started
        upload.close()
        assert answered.startswith(b"HTTP/1.1 503") and waited < SLACK, (answered[:200], waited)

        # while the flood holds: the submission is validated and accepted, and its games are stored
        most = 0
        deadline = time.monotonic() + 60
        status, games = "", 0
        while time.monotonic() < deadline:
            assert server.proc.poll() is None, server.output()[-3000:]
            most = max(most, open_files(server.proc.pid))
            with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:
                league = store.find_league(None)
                status = acc.submissions(store, league.id)[0].status
                alice = [b.id for b in store.bots(league.id) if b.name == "alice"]
                games = sum(1 for g in store.games(league.id) if set(g.seats) & set(alice))
            if status == "accepted" and games >= 4 and time.monotonic() - started > HEAD_TIMEOUT + SLACK:
                break
            time.sleep(0.5)
        assert status == "accepted", (status, server.output()[-3000:])
        assert games >= 4, (games, server.output()[-3000:])
        flood.stopping.set()
        holder.join(10)

        # the server answers within SLACK afterwards (a 503 with its retry-after meanwhile: a clean-clone run got
        # one at once, likely while the server still counted the flood's closed connections), and the league
        # finishes its schedule
        ended, codes = time.monotonic(), []
        while not codes or codes[-1] != 200 and time.monotonic() < ended + SLACK:
            codes.append(Client(server.base).get("/")[0])
            time.sleep(0.05 if codes[-1] != 200 else 0)
        assert codes[-1] == 200 and set(codes[:-1]) <= {503}, codes
        # no WebSocket: an upgrade is answered as a page, under the same limits
        upgrade = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        upgrade.request("GET", "/", headers={"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version":
                                             "13", "Sec-WebSocket-Key": "a2V5a2V5a2V5a2V5a2V5aw=="})
        assert upgrade.getresponse().status == 200
        upgrade.close()
        wait_idle(tmp_path, 60)
        assert server.proc.poll() is None

        # the flood's connections were closed by the server: the ones it held with a 408 (a silent one with
        # nothing), the others with a 503
        late = {"silent": b"", "head": b"HTTP/1.1 408", "body": b"HTTP/1.1 408"}
        assert {(kind, got[:12]) for kind, _, got in flood.closed if not got.startswith(b"HTTP/1.1 503")} \
            == set(late.items())
        held = [(kind, lived) for kind, lived, got in flood.closed if not got.startswith(b"HTTP/1.1 503")]
        busy = sum(1 for _, _, got in flood.closed if got.startswith(b"HTTP/1.1 503"))

        # and within the stated timeouts (timed here on an idle server: under the flood a connection may wait in
        # the kernel's queue before the server accepts it, which the client cannot tell from being held)
        probes = Flood(server.port)
        for kind in ("silent", "head", "body"):
            probes.open(kind)
        deadline = time.monotonic() + max(HEAD_TIMEOUT, BODY_IDLE) + 3 * SLACK
        while probes.held and time.monotonic() < deadline:
            time.sleep(0.1)
            probes.sweep()
        assert not probes.held, [h.kind for h in probes.held]
        limit = {"silent": HEAD_TIMEOUT, "head": HEAD_TIMEOUT, "body": BODY_IDLE}
        for kind, lived, got in probes.closed:
            assert got[:12] == late[kind], (kind, got[:100])
            assert limit[kind] - 0.5 < lived < limit[kind] + SLACK, (kind, lived)
        print(f"\nheld and closed by the server: {len(held)} (longest {max(lived for _, lived in held):.1f} s), "
              f"answered 503: {busy}, connects that failed: {flood.refused}, probes closed after "
              f"{sorted(round(lived, 1) for _, lived, _ in probes.closed)} s, the server's open files at most {most} "
              f"of {OPEN_FILES}, log {len(server.output().encode())} bytes")
        assert len(server.output().encode()) < LOG_BYTES, server.output()[-3000:]
    finally:
        flood.stopping.set()
        assert server.stop() == 143


OUT_OF_FILES = """
import os, resource, sys, threading, time
from pathlib import Path
from arena.league.config import load_config
from arena.server.ladder import run_ladder
from arena.server.uploads import read_upload
from leaderboards import accounts as acc

resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
snapshot = read_upload("alice.py", open("alice.py", "rb").read(), 1 << 20)
taken = []

def started(league_id, entered, validator, store):
    # (the validator's start-up done: it waits for work, the only waiter on its event)
    while not validator.wake._cond._waiters:
        time.sleep(0.05)
    account = acc.account_named(store, league_id, "alice")
    try:  # every file the process may still open, taken for HOLD seconds
        while True:
            taken.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        pass
    acc.add_submission(store, league_id, account.id, "alice", "alice.py", snapshot)
    validator.wake.set()
    print(f"took {len(taken)} files", flush=True)

    def give_back():
        time.sleep(float(sys.argv[1]))
        for fd in taken:
            os.close(fd)
        print("gave them back", flush=True)
    threading.Thread(target=give_back, daemon=True).start()

summary = run_ladder(load_config("l.toml"), Path("srv.sqlite"), started=started)
print("stopped by", summary.interrupted, flush=True)
"""
HOLD = 3.0
"""Seconds the script keeps every open file of its process taken."""


@pytest.mark.slow
def test_the_league_and_the_validator_wait_out_a_full_file_table(tmp_path):
    """No open file free when the league starts its workers and the validator its worker: both wait and go on."""
    make_league(tmp_path)
    accounts(tmp_path, "alice")
    (tmp_path / "alice.py").write_text(PLAIN)
    (tmp_path / "ladder.py").write_text(OUT_OF_FILES)
    log = tmp_path / "ladder.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "ladder.py", str(HOLD)], cwd=tmp_path, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        status, games = "", 0
        while time.monotonic() < deadline and proc.poll() is None:
            with Store.open(tmp_path / "srv.sqlite", readonly=True) as store:
                league = store.find_league(None)
                subs = acc.submissions(store, league.id)
                status = subs[0].status if subs else ""
                alice = {b.id for b in store.bots(league.id) if b.name == "alice"}
                games = sum(1 for g in store.games(league.id) if set(g.seats) & alice)
            if status == "accepted" and games:
                break
            time.sleep(0.3)
        text = log.read_text()
        assert proc.poll() is None, text[-3000:]
        assert status == "accepted" and games, (status, games, text[-3000:])
        assert "took " in text and "gave them back" in text, text[-3000:]
        # both met the full table (a run that never did would prove nothing)
        assert "the league waits" in text and "validation waits" in text, text[-3000:]
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(30) == 0
        assert "stopped by SIGTERM" in log.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def connection(cycle: object = None, paused: bool = False, buffered: list[int] | None = None, closing: bool = False
               ) -> Guarded:
    """A :class:`Guarded` connection made at time 0, its state as given (no socket: the rules alone)."""
    c = Guarded.__new__(Guarded)
    sizes = buffered or [0]
    c.cycle = cycle  # type: ignore[assignment]
    c.flow = SimpleNamespace(read_paused=paused)  # type: ignore[assignment]
    c.transport = SimpleNamespace(get_write_buffer_size=lambda: sizes[0], is_closing=lambda: closing)  # type: ignore[assignment]
    c.waiting = c.heard = c.request_at = c.stalled = 0.0
    c.buffered = 0
    return c


def test_each_phase_of_a_connection_has_its_timeout() -> None:
    # awaiting a head: nothing sent is closed without an answer, a part of a head with a 408
    c = connection()
    assert c.overdue(HEAD_TIMEOUT - 0.1) is None
    assert c.overdue(HEAD_TIMEOUT + 0.1) == b""
    c.heard = 1.0
    assert c.overdue(HEAD_TIMEOUT + 0.1) == LATE
    # a body: BODY_IDLE without a byte, or BODY_TIMEOUT in all however steady; not while the application is
    # the one not reading
    reading = SimpleNamespace(response_complete=False, more_body=True, response_started=False)
    c = connection(reading)
    assert c.overdue(BODY_IDLE - 0.1) is None and c.overdue(BODY_IDLE + 0.1) == LATE
    c = connection(reading)
    for t in range(1, int(BODY_TIMEOUT) + 2):
        c.heard = float(t)  # a byte every second
        if c.overdue(t) is not None:
            break
    assert t == int(BODY_TIMEOUT) + 1 and c.overdue(t) == LATE
    c = connection(reading, paused=True)
    assert c.overdue(BODY_TIMEOUT * 2) is None
    # a response: a client that reads none of it for WRITE_STALL is dropped; one that reads is not
    answering = SimpleNamespace(response_complete=False, more_body=False, response_started=True)
    sizes = [0]
    c = connection(answering, buffered=sizes)
    assert c.overdue(100.0) is None  # (the application at work: nothing to send yet)
    sizes[0] = 70_000
    assert c.overdue(101.0) is None
    assert c.overdue(101.0 + WRITE_STALL - 0.1) is None
    assert c.overdue(101.0 + WRITE_STALL + 0.1) == STALLED
    c = connection(answering, buffered=sizes)
    for t in range(200, 300):
        sizes[0] = 70_000 - t  # read slowly, but read
        assert c.overdue(float(t)) is None
    # in every phase, a closing connection too (it waits for its buffer to go): the answer of a request that
    # came with `Connection: close`, or the last answer before a head that never comes
    for closing, cycle in ((True, answering), (False, SimpleNamespace(response_complete=True))):
        sizes[0] = 5000
        c = connection(cycle, buffered=sizes, closing=closing)
        c.overdue(1.0)
        assert c.overdue(1.0 + WRITE_STALL + 0.1) == STALLED


@pytest.mark.slow
def test_a_client_that_reads_none_of_its_answers_is_dropped(tmp_path):
    """2,000 pipelined requests whose answers are never read: the server stops after WRITE_STALL, not at the end
    of the 11 MB (which it sent on before, one drain at a time, however long the client took)."""
    make_league(tmp_path)
    server = Server(tmp_path).start()
    try:
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # (before connecting: a small window)
            s.settimeout(10)
            s.connect(("127.0.0.1", server.port))
            s.sendall(b"GET /static/replay.js HTTP/1.1\r\nHost: x\r\n\r\n" * 2000)
            time.sleep(WRITE_STALL + SLACK)
            got = b""
            try:
                while chunk := s.recv(1 << 16):
                    got += chunk
            except (ConnectionResetError, TimeoutError):
                pass
        answers = got.count(b"HTTP/1.1 200")
        print(f"\nanswers read after {WRITE_STALL + SLACK:g} s: {answers} of 2000 ({len(got)} bytes)")
        assert 0 < answers < 2000, answers  # (the kernel's buffers held ~500 of them; all 2,000 came before)
        assert Client(server.base).get("/")[0] == 200
    finally:
        assert server.stop() == 143


def test_the_open_files_limit_is_raised_to_the_hard_one_and_shared(tmp_path):
    make_league(tmp_path)
    server = Server(tmp_path, open_files=(64, 1024)).start()
    try:
        limits = (Path(f"/proc/{server.proc.pid}/limits")).read_text()
        line = next(x for x in limits.splitlines() if x.startswith("Max open files"))
        assert line.split()[3:5] == ["1024", "1024"], line
        assert Client(server.base).get("/")[0] == 200
        assert "connections at once" not in server.output()  # (832 of them: no warning)
    finally:
        assert server.stop() == 143
    # where the hard limit leaves the site under MIN_CONNECTIONS, the server says so and still serves
    server = Server(tmp_path, open_files=64).start()
    try:
        assert Client(server.base).get("/")[0] == 200
        assert "only 64 open files allowed (ulimit -n): the site takes 8 connections at once" in server.output()
    finally:
        assert server.stop() == 143


def asgi_status(app: Any, path: str = "/") -> int:
    """The status an ASGI application answers a GET of ``path`` with (no server: the application alone)."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": [], "scheme": "http", "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1),
             "root_path": "", "http_version": "1.1"}
    asyncio.run(app(scope, receive, send))
    return next(m["status"] for m in sent if m["type"] == "http.response.start")


def test_a_request_out_of_open_files_is_answered_503_and_a_client_gone_quietly() -> None:
    def out_of_files(request: Any) -> Any:
        raise OSError(errno.EMFILE, "Too many open files")

    def other(request: Any) -> Any:
        raise OSError(errno.EACCES, "Permission denied")

    async def gone(request: Any) -> Any:
        raise ClientDisconnect()
    app = Starlette(routes=[Route("/files", out_of_files), Route("/other", other), Route("/gone", gone)],
                    exception_handlers=exception_handlers())
    assert asgi_status(app, "/files") == 503
    assert asgi_status(app, "/gone") == 400  # (no traceback on the log: nobody reads the answer)
    with pytest.raises(OSError):  # any other error stays a 500 with its traceback
        asgi_status(app, "/other")
