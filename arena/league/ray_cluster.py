"""A real multi-node Ray cluster on this host, for the Ray tests and ``arena bench league``.

Each node is started with ``ray start`` (the head with ``--head``, the others joining it), on 127.0.0.1, in a
temp directory of its own, with token authentication on (a token of this cluster only). Nothing is found or
stopped by name: a node's processes are the ones whose command line names its temp directory, plus their
descendants (the raylet's workers), and they are killed by pid.
"""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _ray_cli() -> str:
    beside = Path(sys.executable).parent / "ray"
    return str(beside) if beside.exists() else (shutil.which("ray") or "ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process we can see."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        out[int(entry)] = (ppid, cmd)
    return out


class LocalCluster:
    """``nodes`` Ray nodes of ``cpus`` CPUs each; ``stop()`` (or the ``with`` block's end) kills them all."""

    def __init__(self, nodes: int = 2, cpus: int = 1, base: str | None = None) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="arena-ray-", dir=base or "/tmp"))  # short: Ray's socket paths
        self.cpus = cpus
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.token = secrets.token_hex(16)
        self.nodes: list[Path] = []
        self.count = nodes

    @property
    def env(self) -> dict[str, str]:
        """What a driver of this cluster sets: its address and token (token mode is arena's to turn on)."""
        return {"RAY_ADDRESS": self.address, "RAY_AUTH_TOKEN": self.token}

    def start(self) -> LocalCluster:
        try:
            for _ in range(self.count):
                self.add_node()
        except BaseException:
            self.stop()
            raise
        return self

    def add_node(self, env: dict[str, str] | None = None) -> Path:
        """Starts one more node (the first one is the head); returns its temp directory."""
        head = not self.nodes
        where = self.base / ("head" if head else f"node{len(self.nodes)}")
        where.mkdir()
        self.nodes.append(where)
        args = [_ray_cli(), "start", "--num-cpus", str(self.cpus), "--temp-dir", str(where),
                "--node-ip-address", "127.0.0.1", "--disable-usage-stats"]
        args += ["--head", "--port", str(self.port), "--include-dashboard=false"] if head else \
            ["--address", self.address]
        full = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=self.token, RAY_USAGE_STATS_ENABLED="0",
                    **(env or {}))
        full.pop("RAY_ADDRESS", None)
        out = subprocess.run(args, env=full, cwd=where, capture_output=True, text=True, timeout=180)
        if out.returncode != 0:
            raise RuntimeError(f"ray start failed: {out.stderr.strip().splitlines()[-1:]}")
        return where

    def pids(self, node: Path) -> list[int]:
        """Every process of ``node``: the ones naming its temp directory and their descendants."""
        procs = _processes()
        mine = {pid for pid, (_, cmd) in procs.items() if str(node) + "/" in cmd or cmd.rstrip().endswith(str(node))}
        grew = True
        while grew:
            more = {pid for pid, (ppid, _) in procs.items() if ppid in mine and pid not in mine}
            mine |= more
            grew = bool(more)
        return sorted(mine)

    def raylet(self, node: Path) -> int:
        procs = _processes()
        return next(p for p in self.pids(node) if "/raylet/raylet " in procs.get(p, (0, ""))[1])

    def busy_workers(self, node: Path) -> list[int]:
        """Ray worker processes of ``node`` running a game now (their title names the task)."""
        procs = _processes()
        return [p for p in self.pids(node) if procs.get(p, (0, ""))[1].startswith("ray::_play_remote")]

    def kill_node(self, node: Path) -> None:
        for pid in self.pids(node):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        for node in reversed(self.nodes):
            self.kill_node(node)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(self.pids(n) for n in self.nodes):
            time.sleep(0.1)
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
