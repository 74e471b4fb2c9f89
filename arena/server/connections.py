"""What a connection may hold of ``arena serve`` before any login is checked: bounded in time, bytes and open
files (docs/server.md, "The web side's threat model").

- Open files: :func:`raise_open_files` lifts the process's soft limit to its hard one at start; :func:`budget`
  keeps a share for the league (its workers' pipes, the store, the log) and gives the web side the rest: its
  threads' store connections, a burst of :data:`BACKLOG` accepted sockets, and at most ``connections`` open
  connections. One more connection is answered 503 at once and closed, so the web side never takes the
  league's files (without a cap, ~1,100 idle connections under 1,024 files killed the whole server).
- Time: :class:`Guarded` connections are swept once a second (:class:`GuardedServer`) and closed when a request's
  head is not in within :data:`HEAD_TIMEOUT` of the connection (or of the last response), when a body stops for
  :data:`BODY_IDLE` or is not all in within :data:`BODY_TIMEOUT`, or when a client reads none of its response for
  :data:`WRITE_STALL`; an idle keep-alive connection is closed after :data:`KEEP_ALIVE` (uvicorn's own timer).
- Bytes: a request head is at most :data:`MAX_HEAD` bytes (counted as it comes, 431 beyond: h11's own limit
  applies only to a head split over reads); bodies are bounded by the handlers (``arena.server.app.limited_body``),
  and what a client sends after its answer (a body the handler did not read, as a 401 before any login) is read and
  dropped up to :data:`DRAIN_AFTER` bytes, then the connection is closed.
- A web request that still finds no file free (``EMFILE``/``ENFILE``) is answered 503 (:func:`exception_handlers`).
"""
from __future__ import annotations

import asyncio
import errno
import logging
import resource
import time
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import h11
import uvicorn
from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, Response
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT = 10.0
"""Seconds from a connection's start (or its last response) in which a request's head must be in."""
BODY_IDLE = 10.0
"""Seconds a request's body may stop before the connection is closed."""
BODY_TIMEOUT = 120.0
"""Seconds in which a request's whole body must be in (a bot of a few MB at a slow student's uplink)."""
WRITE_STALL = 30.0
"""Seconds a client may read nothing of a response before the connection is dropped."""
KEEP_ALIVE = 5
"""Seconds an idle connection is kept between requests."""
MAX_HEAD = 16 * 1024
"""Bytes of a request's head (request line and headers)."""
BACKLOG = 32
"""Connections accepted at once (asyncio accepts up to its ``backlog`` in one turn of the event loop)."""
QUEUE = 1024
"""Connections the kernel keeps waiting to be accepted (they hold no file of the server's): a burst waits
there instead of its clients retrying their connects seconds later."""
WEB_THREADS = 32
"""Threads serving requests at once (each keeps its own store connection)."""
FILES_PER_THREAD = 3
"""Open files a web thread may hold (its store connection's database and WAL, a template or a module loaded)."""
LEAGUE_FILES = 48
"""Open files kept for the league whatever its concurrency: standard streams, the log, the store's connections
of the ladder and the validator, the lock file, event loops."""
FILES_PER_WORKER = 8
"""Open files kept per league or validation worker (its two pipes, two more while it starts, a selector)."""
MIN_CONNECTIONS = 8
"""The fewest connections the web side gets, however low the limit (below it, a line says to raise it)."""
MOST_FILES = 1 << 16
"""The most open files asked for (a hard limit of millions is not needed, and "unlimited" cannot be set)."""
SWEEP = 10
"""uvicorn's ticks (0.1 s each) between two sweeps of the connections."""
OUT_OF_FILES = (errno.EMFILE, errno.ENFILE)

log = logging.getLogger("arena.serve")


@dataclass(frozen=True)
class Budget:
    open_files: int
    """The process's limit (RLIMIT_NOFILE, soft)."""
    league: int
    """Files kept for the league."""
    connections: int
    """Web connections open at once."""


def raise_open_files(most: int = MOST_FILES) -> int:
    """Lifts the soft RLIMIT_NOFILE to the hard one (at most ``most``); returns the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = most if hard == resource.RLIM_INFINITY else min(hard, most)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (OSError, ValueError):
            pass
    return most if soft == resource.RLIM_INFINITY else soft


def budget(open_files: int, workers: int) -> Budget:
    """The share of ``open_files`` kept for the league with ``workers`` worker processes, and the web connections
    that fit in the rest."""
    league = LEAGUE_FILES + FILES_PER_WORKER * workers
    web = open_files - league - WEB_THREADS * FILES_PER_THREAD - BACKLOG
    return Budget(open_files, league, max(MIN_CONNECTIONS, web))


def out_of_files(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in OUT_OF_FILES


BUSY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 5\r\n"
        b"connection: close\r\ncontent-length: 36\r\n\r\nthe server is busy; try again later\n")
STALLED = b"(stalled)"
TOO_BIG_HEAD = (b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
                b"connection: close\r\ncontent-length: 28\r\n\r\nthe request head is too big\n")
DRAIN_AFTER = 32 << 20
"""Bytes of a request body read and dropped after its answer (so a client still sending reads the answer), then
the connection is closed: a stranger's 4 GB upload to a page that answers 401 costs 32 MB, not 10 s of reading."""
LATE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
        b"content-length: 27\r\n\r\nthe request came too slowly")


class Guarded(H11Protocol):
    """uvicorn's h11 connection with a cap on open connections and the timeouts of the module docstring."""

    cap = MIN_CONNECTIONS
    """Connections open at once (set per server by :func:`guarded`)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.cap:  # full: answered at once, so the socket is closed at once
            self.transport, self.refused = transport, True
            log.warning("arena serve: %d connections open, the most allowed; new ones are answered 503",
                        len(self.connections))
            transport.write(BUSY)
            transport.close()
            return
        self.refused = False
        super().connection_made(transport)
        self.waiting = self.heard = time.monotonic()  # since when a request head is awaited; the last byte
        self.request_at = self.waiting
        self.buffered, self.stalled = 0, self.waiting
        self.drained, self.head_bytes, self.head_tail = 0, 0, b""

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.refused:
            super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self.heard = time.monotonic()
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            if cycle is not None and self.conn.their_state is h11.SEND_BODY:  # the rest of an answered request
                self.drained += len(data)
                if self.drained > DRAIN_AFTER:
                    self.transport.close()
                    return
            elif self.head_too_big(data):
                self.transport.write(TOO_BIG_HEAD)
                self.transport.close()
                return
        super().data_received(data)
        pending = self.conn.trailing_data[0]
        if self.conn.their_state is h11.DONE and len(pending) > MAX_HEAD and b"\r\n\r\n" not in pending[:MAX_HEAD + 4]:
            # the next pipelined request's head, held while the one before is answered: h11 keeps it whole, unbounded
            self.transport.write(TOO_BIG_HEAD)
            self.transport.close()

    def head_too_big(self, data: bytes) -> bool:
        """Counts the awaited request head as it comes (its end is the first blank line): over :data:`MAX_HEAD`?"""
        seen = self.head_tail + data
        end = seen.find(b"\r\n\r\n")
        size = self.head_bytes + (len(data) if end < 0 else end + 4 - len(self.head_tail))
        if end < 0:
            self.head_bytes, self.head_tail = size, seen[-3:]
        else:
            self.head_bytes, self.head_tail = 0, b""  # (the head is in: the next is counted from its own start)
        return size > MAX_HEAD

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not cycle:  # a request's head is in
            self.request_at = time.monotonic()
            self.drained, self.head_bytes, self.head_tail = 0, 0, b""

    def on_response_complete(self) -> None:
        self.waiting = time.monotonic()
        super().on_response_complete()

    def overdue(self, now: float) -> bytes | None:
        """What ends this connection now (the answer to write before closing it, :data:`STALLED`: drop it), or
        None: not overdue."""
        size = self.transport.get_write_buffer_size()
        if size == 0 or size != self.buffered:  # nothing to send, or the client took some
            self.buffered, self.stalled = size, now
        elif now - self.stalled > WRITE_STALL:  # (in any phase: a closed connection waits for its buffer too)
            return STALLED
        if self.transport.is_closing():
            return None
        cycle = self.cycle
        if cycle is None or cycle.response_complete:  # awaiting a request's head
            if now - self.waiting <= HEAD_TIMEOUT:
                return None
            return LATE if self.heard > self.waiting else b""  # (nothing sent: closed without an answer)
        if cycle.more_body and not cycle.response_started:  # reading its body
            if self.flow.read_paused:  # (the application has not taken what came: not the client's delay)
                self.heard = now
                return None
            late = now - self.heard > BODY_IDLE or now - self.request_at > BODY_TIMEOUT
            return LATE if late else None
        return None  # the application at work, or answering as fast as the client reads

    def sweep(self, now: float) -> None:
        answer = self.overdue(now)
        if answer is STALLED:
            self.transport.abort()  # (a close would wait for the client to read what is buffered)
        elif answer is not None:
            self.transport.write(answer)
            self.transport.close()


class GuardedServer(uvicorn.Server):
    """uvicorn's server with :data:`WEB_THREADS` threads and a sweep of its connections once a second."""

    async def startup(self, sockets: Any = None) -> None:
        anyio.to_thread.current_default_thread_limiter().total_tokens = WEB_THREADS
        await super().startup(sockets=sockets)
        for sock in sockets or []:  # (after asyncio's listen(BACKLOG): its accepts per turn stay BACKLOG)
            sock.listen(QUEUE)

    async def on_tick(self, counter: int) -> bool:
        if counter % SWEEP == 0:
            now = time.monotonic()
            for connection in list(self.server_state.connections):
                if isinstance(connection, Guarded):
                    connection.sweep(now)
        return await super().on_tick(counter)


def guarded(connections: int) -> type[Guarded]:
    """:class:`Guarded` capped at ``connections`` open at once."""
    return type("Guarded", (Guarded,), {"cap": connections})


def config(app: Any, connections: int, **options: Any) -> uvicorn.Config:
    """uvicorn's configuration with this module's limits (``options``: the rest of ``uvicorn.Config``). No
    WebSockets (the site has none): an upgrade would take the connection out of :class:`Guarded`'s hands."""
    return uvicorn.Config(app, http=guarded(connections), ws="none", loop="asyncio", backlog=BACKLOG,
                          limit_concurrency=connections + 1, timeout_keep_alive=KEEP_ALIVE,
                          h11_max_incomplete_event_size=MAX_HEAD, **options)


# -- the application's side -------------------------------------------------------------------------------------
async def _out_of_files(request: Request, exc: Exception) -> Response:
    if not out_of_files(exc):
        raise exc
    log.warning("arena serve: out of open files (%s); a request was answered 503", exc)
    return PlainTextResponse("the server is busy; try again later\n", 503, headers={"retry-after": "5"})


async def _gone(request: Request, exc: Exception) -> Response:
    return Response(status_code=400)  # (nobody reads it: the client left, or was closed for being slow)


def exception_handlers() -> dict[Any, Any]:
    """Starlette's handlers: a request out of open files is answered 503; a client gone mid-body ends quietly."""
    return {OSError: _out_of_files, ClientDisconnect: _gone}
