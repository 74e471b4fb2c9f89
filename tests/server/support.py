"""A real `arena serve` on a free port of 127.0.0.1, talked to with a real HTTP client (urllib, no shortcuts)."""
from __future__ import annotations

import http.cookiejar
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any

ARENA = os.path.join(os.path.dirname(sys.executable), "arena")
PLAIN = '''import random
class Bot:
    def __init__(self, game, seat, seed):
        self.rng = random.Random(seed)
    def step(self, state, limit):
        return self.rng.choice(state.legal_actions())
'''
RAISER = '''class Bot:
    def __init__(self, game, seat, seed):
        pass
    def step(self, state, limit):
        return [][1]
'''
LEAGUE = '''name = "srv"
games = ["nim(n=9)"]
games_per_pairing = 2
seed = 1
database = "srv.sqlite"
bots = ["random", "greedy"]
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def multipart(files: dict[str, tuple[str, bytes]], fields: dict[str, str] | None = None) -> tuple[bytes, str]:
    b = uuid.uuid4().hex
    out = b""
    for k, v in (fields or {}).items():
        out += f"--{b}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n".encode()
    for k, (name, data) in files.items():
        out += (f"--{b}\r\nContent-Disposition: form-data; name=\"{k}\"; filename=\"{name}\"\r\n"
                f"Content-Type: application/octet-stream\r\n\r\n").encode() + data + b"\r\n"
    return out + f"--{b}--\r\n".encode(), f"multipart/form-data; boundary={b}"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _headers(message: Any) -> dict[str, str]:
    """Lower-case names; several Set-Cookie headers one per line."""
    out = {k.lower(): v for k, v in message.items()}
    out["set-cookie"] = "\n".join(message.get_all("set-cookie") or [])
    return out


class Client:
    """One browser-like client: its own cookies, no redirects followed (tests look at them)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect())

    def request(self, method: str, path: str, body: bytes | None = None, ctype: str | None = None,
                token: str | None = None, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
        req = urllib.request.Request(self.base + path, data=body, method=method)
        if ctype:
            req.add_header("Content-Type", ctype)
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with self.opener.open(req, timeout=30) as r:
                return r.status, _headers(r.headers), r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            return e.code, _headers(e.headers), e.read().decode(errors="replace")

    def get(self, path: str, **kw: Any) -> tuple[int, dict[str, str], str]:
        return self.request("GET", path, **kw)

    def form(self, path: str, fields: dict[str, str]) -> tuple[int, dict[str, str], str]:
        return self.request("POST", path, urllib.parse.urlencode(fields).encode(), "application/x-www-form-urlencoded")

    def login(self, name: str, token: str) -> int:
        _, _, text = self.get("/login")
        csrf = re.search(r'name="login_csrf" value="([^"]+)"', text).group(1)
        return self.form("/login", {"login_csrf": csrf, "name": name, "token": token})[0]

    def csrf(self) -> str:
        _, _, text = self.get("/submit")
        return re.search(r'name="csrf" value="([^"]+)"', text).group(1)

    def submit_api(self, token: str | None, name: str, data: bytes) -> tuple[int, dict[str, Any]]:
        body, ctype = multipart({"file": (name, data)})
        code, _, text = self.request("POST", "/api/submissions", body, ctype, token=token)
        try:
            return code, json.loads(text)
        except ValueError:
            return code, {"raw": text}

    def status(self, token: str, sid: int) -> tuple[int, dict[str, Any]]:
        code, _, text = self.get(f"/api/submissions/{sid}", token=token)
        try:
            return code, json.loads(text)
        except ValueError:
            return code, {"raw": text}

    def wait(self, token: str, sid: int, want: set[str], limit: float = 120) -> dict[str, Any]:
        deadline = time.time() + limit
        doc: dict[str, Any] = {}
        while time.time() < deadline:
            _, doc = self.status(token, sid)
            if doc.get("status") in want:
                return doc
            time.sleep(0.3)
        raise AssertionError(f"submission {sid} never reached {want}: {doc}")


class Server:
    """`arena serve` in its own session (so a test can signal it and its workers); ``open_files``: its
    RLIMIT_NOFILE, soft and hard, or (soft, hard) (None: the test's own); ``env``: variables added to the test's
    environment."""

    def __init__(self, work: Path, *extra: str, open_files: int | tuple[int, int] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.work, self.extra, self.open_files, self.env = work, extra, open_files, env
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[str] | None = None

    def start(self, limit: float = 60) -> Server:
        self.log = open(self.work / f"serve-{time.time():.3f}.log", "w")
        files = (self.open_files, self.open_files) if isinstance(self.open_files, int) else self.open_files

        def limited() -> None:
            if files is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, files)
        self.proc = subprocess.Popen([ARENA, "serve", "--league", "l.toml", "--port", str(self.port), *self.extra],
                                     cwd=self.work, stdout=self.log, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True, preexec_fn=limited if files is not None else None,
                                     env=None if self.env is None else {**os.environ, **self.env})
        deadline = time.time() + limit
        while time.time() < deadline and self.proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"serve did not start: {self.output()}")

    def output(self) -> str:
        return (self.work / Path(self.log.name).name).read_text()

    def stop(self, sig: int = signal.SIGTERM, limit: float = 15) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
        try:
            return self.proc.wait(limit)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)

    def kill(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)


def make_league(work: Path, league: str = LEAGUE) -> None:
    (work / "l.toml").write_text(league)


def accounts(work: Path, *names: str, organiser: bool = False) -> dict[str, str]:
    p = subprocess.run([ARENA, "accounts", "add", "--league", "l.toml", *(["--organiser"] if organiser else []),
                        *names], cwd=work, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return dict(line.split() for line in p.stdout.splitlines())


def wait_idle(work: Path, limit: float = 120) -> int:
    """Until no submission is queued or validating and every game of the league's schedule for its bots is
    stored; returns the games stored."""
    from arena.league.config import load_config
    from arena.league.planning import missing, plan
    from leaderboards.store import Store
    cfg = load_config(str(work / "l.toml"))
    deadline = time.time() + limit
    left: object = None
    while time.time() < deadline:
        with Store.open(work / "srv.sqlite", readonly=True) as store:
            lg = store.find_league(cfg.name)
            pending = [s for s in _submissions(store) if s in ("queued", "validating")]
            left = len(missing(plan(store, lg.id, cfg), store.sorted_schedule_keys(lg.id)))
            if not pending and not left:
                return store.count_games(lg.id)
        time.sleep(0.5)
    raise AssertionError(f"the league never became idle: {left} games left")


def _submissions(store: Any) -> list[str]:
    from leaderboards import accounts as acc
    return [s.status for s in acc.submissions(store, store.find_league(None).id)]
