"""Attack round 33c helpers: place a hostile bot of this folder, a fresh fork server, read a probe's report."""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from arena.sandbox import zygote

HERE_HOSTILE = Path(__file__).parent / "hostile"
KEY = bytes(32)


def place_own(name: str, tmp_path: Path) -> str:
    d = tmp_path / f"bot_{name}"
    d.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(d, 0o755)
    target = d / f"{name}.py"
    shutil.copy(HERE_HOSTILE / f"{name}.py", target)
    return str(target)


def report(record, seat: int, tag: str) -> dict:
    failure = next((f for f in record.failures if f.seat == seat), None)
    assert failure is not None, record.failures
    match = re.search(tag + r" (\{.*\})", failure.detail)
    assert match, failure.detail
    return json.loads(match[1])


class PlanSpy:
    """Records every plan the referee hands the fork server's inits (``Zygote.spawn``), by uid."""

    def __init__(self, monkeypatch) -> None:
        self.plans: dict[int, object] = {}
        real = zygote.Zygote.spawn

        def spawn(server, plan, fds, *args, **kw):
            self.plans[plan.uid] = plan
            return real(server, plan, fds, *args, **kw)
        monkeypatch.setattr(zygote.Zygote, "spawn", spawn)

    def groups_of(self, uid: int) -> set[str]:
        return {part for p in self.plans[uid].cgroup_procs for part in p.split("/") if part.startswith("bot-")}

    def others(self, uid: int) -> tuple[set[str], set[str]]:
        """(cgroup names, uids) of every other bot started so far."""
        names = {n for u in self.plans if u != uid for n in self.groups_of(u)} - self.groups_of(uid)
        return names, {str(u) for u in self.plans if u != uid}
