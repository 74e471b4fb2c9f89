"""``arena serve --league FILE [--host 127.0.0.1] [--port 8424] [--behind-https] [--concurrency N]``: the course
server (docs/server.md): students log in and submit, the league keeps running and takes in every accepted bot.

Exit status: 130 after Ctrl-C, 143 after SIGTERM (as ``arena league run``: nothing lost, the next ``serve``
resumes); 2 usage errors (a bad league file, a port that cannot be bound); 1 anything else.
"""
from __future__ import annotations

import contextlib
import socket
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import click

from arena.errors import ConfigError
from arena.text import shown
from leaderboards.store import DEFAULT_DB

STOP_WAIT = 5.0
"""Seconds the web server gets to finish its requests at a stop."""


@click.command("serve")
@click.option("--league", "league_file", required=True, metavar="FILE",
              help="The league file (its store is found as `arena league run` finds it).")
@click.option("--db", metavar="PATH", default=None, help="The store (overrides the league file's database).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (put a reverse proxy with HTTPS in front for anything but this machine).")
@click.option("--port", type=click.IntRange(0, 65535), default=8424, show_default=True)
@click.option("--behind-https", is_flag=True,
              help="A reverse proxy terminates HTTPS in front: cookies get Secure, and the client address comes "
                   "from its X-Forwarded-For (trusted from 127.0.0.1 only).")
@click.option("--concurrency", "-j", type=click.IntRange(min=1), default=None,
              help="League games at once (default: the league file's, else 1; validation plays one more).")
def serve(league_file: str, db: str | None, host: str, port: int, behind_https: bool,
          concurrency: int | None) -> None:
    """Serve the league's site (login, submit, my bot, leaderboard, API) and run the league continuously: each
    accepted submission is validated from every seat, then plays its games against the field."""
    # start-up: the web stack and the league schema only when serving
    from arena.league.config import load_config
    from arena.server import connections, logs
    from arena.server.app import Site, create_app
    from arena.server.ladder import run_ladder

    cfg = load_config(league_file)
    path = Path(db) if db else (cfg.database or Path(DEFAULT_DB))
    listener = _listen(host, port)
    # the league's workers, the validator's and the scrimmages', then what is left of the open files for the web side
    # (+ 2: the validator's worker and the scrimmages' worker)
    share = connections.budget(connections.raise_open_files(), (concurrency or cfg.concurrency or 1) + 2)
    logs.limit()
    if share.connections == connections.MIN_CONNECTIONS:
        click.echo(f"arena serve: only {share.open_files} open files allowed (ulimit -n): the site takes "
                   f"{share.connections} connections at once; raise the limit for more", err=True)
    helpers: dict[str, Any] = {}  # the ladder's threads, as run_ladder hands them over
    web: list[tuple[Any, threading.Thread]] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        # the application's helpers live as long as it does: the validator and the scrimmages' thread (the ladder
        # keeps the main thread, where SIGINT and SIGTERM land, and stops them too when it ends)
        for name in ("validator", "scrimmager"):
            helpers[name].start()
        bound = listener.getsockname()
        click.echo(f"arena serve: league {shown(cfg.name)} on http://{shown(bound[0])}:{bound[1]}/ (store "
                   f"{shown(path)}); Ctrl-C stops", err=True)
        try:
            yield
        finally:
            for name in ("scrimmager", "validator"):
                helpers[name].stop()

    def started(league_id: int, entered: threading.Event, validator: Any, store: Any) -> None:
        helpers["validator"] = validator
        # the site is built whole here, once the ladder holds the store and its threads run (never changed after)
        site = Site(db=path, config=cfg, secure=behind_https, base=store, entered=entered, wake=validator.wake.set,
                    scrimmage_wake=helpers["scrimmager"].wake.set,
                    problems=lambda: [validator.runtime_problem] if validator.runtime_problem else [])
        server = connections.GuardedServer(connections.config(
            create_app(site, lifespan=lifespan), share.connections, log_level="warning", access_log=False,
            lifespan="on", proxy_headers=behind_https, forwarded_allow_ips="127.0.0.1",
            timeout_graceful_shutdown=int(STOP_WAIT)))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, name="arena-web", daemon=True)
        web.append((server, thread))
        thread.start()

    try:
        summary = run_ladder(cfg, path, concurrency=concurrency, started=started,
                             scrimmaging=lambda s: helpers.update(scrimmager=s), start_helpers=False)
    finally:
        for server, thread in web:
            server.should_exit = True
            thread.join(STOP_WAIT)
        listener.close()
    if summary.interrupted:
        click.echo(f"arena: stopped by {summary.interrupted}: {summary.abandoned} games in flight abandoned (not "
                   "stored; the next serve plays them)", err=True)
        sys.stdout.flush()
        sys.exit(143 if summary.interrupted == "SIGTERM" else 130)


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so that a port in use is one line (exit 2) before anything starts."""
    try:
        info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(info[0], socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(info[4])
        sock.listen(128)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); pick another --port or --host") \
            from None
    sock.set_inheritable(False)
    return sock
