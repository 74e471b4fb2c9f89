"""Whether the packages bots may import load inside the sandbox: every extension module of them, imported by a
real sandboxed bot.

Why: a bot sees a narrowed runtime (:mod:`arena.sandbox.runtime`), so a shared library an extension module needs
but the view left out makes ``import numpy`` fail for every bot, while the same import works outside. That is the
organiser's install, never a bot author's fault, and nothing but loading the modules in the sandbox shows it. Each
module is first imported in a plain interpreter (the baseline): a module that fails there too is reported apart,
not as the sandbox's fault.

``python -m arena.referee.import_probe`` prints the report as JSON (``arena serve``'s validator runs it that way, in a
process of its own); ``arena sandbox check`` prints it as part of its report.
"""
from __future__ import annotations

import errno
import importlib.machinery
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field

from arena.sandbox import runtime

MARK = "arena-import-probe:"
"""Starts the probe bot's exception message; the JSON list of failures follows it."""


@dataclass
class ImportReport:
    """What loaded in the sandbox."""

    modules: int
    """Modules the probe imported (the bot packages and every extension module in them)."""
    failed: dict[str, str] = field(default_factory=dict)
    """The first module (by name) that loads outside the sandbox but not inside -> its error; ``"..."`` -> how many
    more."""
    failed_outside: list[str] = field(default_factory=list)
    """Modules that fail in a plain interpreter too (not the sandbox's doing)."""
    problem: str | None = None
    """The probe itself could not run (no sandbox, an error before the imports): what happened."""
    seconds: float = 0.0
    inconclusive: bool = False
    """The machine was out of open files or processes: nothing was learnt of the runtime (ask again later)."""

    @property
    def ok(self) -> bool:
        return not self.failed and self.problem is None

    def summary(self) -> str:
        """One line for an organiser: what cannot load and what to do."""
        if self.problem:
            return f"the sandbox's import check could not run: {self.problem}"
        if not self.failed:
            return f"all {self.modules} modules of the bot packages load inside the sandbox"
        name, error = next(iter(self.failed.items()))
        more = f" (and {self.failed['...']})" if "..." in self.failed else ""
        return (f"bot-package modules cannot load inside the sandbox: {name}: {error}{more}; every bot importing "
                "them fails to start. Report it with "
                "`arena sandbox check --json` (an arena bug), or reinstall arena")


def modules(view: runtime.View | None = None) -> list[str]:
    """The importable names of the bot packages (:data:`runtime.BOT_PACKAGES`, installed) and of every extension
    module inside them, in import order (packages first)."""
    if view is None:
        from arena.sandbox import spawn  # start-up: the launch code only when no view is given
        view = spawn.bot_runtime()
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    sites = sorted({os.path.dirname(b[1]) for b in view.binds
                    if b[0] != runtime.MASK and os.path.dirname(b[1]).endswith(("site-packages", "dist-packages"))},
                   key=len, reverse=True)
    names: set[str] = set()
    for inside in runtime.files(view):
        site = next((s for s in sites if inside.startswith(s + "/")), None)
        if site is None or not inside.endswith(suffixes):
            continue
        rel = inside[len(site) + 1:]
        parts = rel.split("/")
        if any(not p.isidentifier() for p in parts[:-1]):  # a `numpy.libs` folder: libraries, not modules
            continue
        stem = parts[-1]
        for suffix in suffixes:
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
                break
        if stem.isidentifier():
            names.add(".".join(parts[:-1] + [stem]))
    tops = [t for t in runtime.BOT_PACKAGES if any(n == t or n.startswith(t + ".") for n in names)
            or _installed(t, sites)]
    return tops + sorted(names - set(tops), key=lambda n: (n.count("."), n))


def _installed(top: str, sites: list[str]) -> bool:
    return any(os.path.exists(os.path.join(s, top)) or os.path.exists(os.path.join(s, top + ".py")) for s in sites)


_IMPORT_ALL = """
import importlib, json, sys
failed = {}
for name in NAMES:
    try:
        importlib.import_module(name)
    except BaseException as exc:  # an extension module's load error is an ImportError or OSError
        lines = [line for line in str(exc).splitlines() if line.strip()] or [""]
        failed[name] = f"{type(exc).__name__}: {lines[-1].strip()}"[:120]  # numpy's last line names the cause
"""


def _bot_source(names: list[str]) -> str:
    return (f"NAMES = {names!r}\nMARK = {MARK!r}\n" + _IMPORT_ALL + """
if failed:  # the first failure and the count: a failure's detail keeps ~300 characters
    raise ImportError(MARK + json.dumps([len(failed), *min(failed.items())]))


class Bot:
    def __init__(self, game, seat, seed):
        pass

    def step(self, state, limit):
        return state.legal_actions()[0]
""")


def _outside(names: list[str]) -> set[str]:
    """The modules that fail to import in a plain interpreter (this one, isolated mode, no sandbox)."""
    code = f"NAMES = {names!r}\n" + _IMPORT_ALL + "print(json.dumps(sorted(failed)))"
    try:
        out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=300,
                             env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"})
        return set(json.loads(out.stdout.strip().splitlines()[-1]))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return set()  # no baseline: every failure inside counts


def probe() -> ImportReport:
    """Imports every bot-package module in a real sandboxed bot, started as a fresh interpreter in a process of
    its own (``python -m arena.referee.import_probe``): the fork server has imported the games before any sandbox
    exists, numpy among them where a game needs it, so a bot forked from it would load numpy whatever the view
    holds."""
    env = dict(os.environ, ARENA_SANDBOX_ZYGOTE="0")
    out = None
    try:
        # in an empty folder: `-m` puts the working folder on sys.path, and a checkout's arena/ is not built
        with tempfile.TemporaryDirectory(prefix="arena-import-probe-") as empty:
            out = subprocess.run([sys.executable, "-m", "arena.referee.import_probe"], capture_output=True, text=True,
                                 timeout=600, env=env, cwd=empty)
        fields = json.loads(out.stdout.strip().splitlines()[-1])
        return ImportReport(int(fields["modules"]), dict(fields["failed"]), list(fields["failed_outside"]),
                            fields["problem"], float(fields["seconds"]))
    except OSError as exc:
        if exc.errno in (errno.EMFILE, errno.ENFILE, errno.EAGAIN, errno.ENOMEM):  # the machine's, not the runtime's
            return ImportReport(0, problem=f"the probe could not start: {exc}", inconclusive=True)
        return ImportReport(0, problem=f"the probe's process failed ({type(exc).__name__}: {exc})")
    except subprocess.TimeoutExpired as exc:  # a machine too slow to tell, not a broken runtime
        return ImportReport(0, problem=f"the probe took too long: {exc}", inconclusive=True)
    except (subprocess.SubprocessError, ValueError, IndexError, KeyError, TypeError) as exc:
        said = out.stderr.strip().splitlines()[-1:] if out is not None and out.stderr.strip() else []
        return ImportReport(0, problem=f"the probe's process failed ({type(exc).__name__}: {exc}) {' '.join(said)}")


def probe_here() -> ImportReport:
    """:func:`probe`'s work, in this process (whose fork server, if any, must be off: ``ARENA_SANDBOX_ZYGOTE=0``)."""
    from arena.limits import Limits  # start-up: pydantic and the referee only when probing
    from arena.referee.sandboxed import play_game
    t0 = time.perf_counter()
    names = modules()
    report = ImportReport(len(names))
    outside = _outside(names)
    report.failed_outside = sorted(outside)
    inside = [n for n in names if n not in outside]
    with tempfile.TemporaryDirectory(prefix="arena-import-probe-") as tmp:
        path = os.path.join(tmp, "import_probe.py")
        with open(path, "w") as f:
            f.write(_bot_source(inside))
        try:
            record = play_game("nim", [path, "random"], seed=1,
                               limits=Limits(move_time=5, first_move_time=120, memory_mb=4096))
        except Exception as exc:  # noqa: BLE001 - reported: the probe is a diagnosis, never a crash
            report.problem = f"{type(exc).__name__}: {exc}"
            report.seconds = time.perf_counter() - t0
            return report
    failure = next((f for f in record.failures if f.seat == 0), None)
    if failure is not None:
        detail = failure.detail or ""
        at = detail.find(MARK)
        if at < 0:
            report.problem = f"the probe bot failed: {failure.reason} {detail.splitlines()[0] if detail else ''}"
        else:
            try:
                count, name, error = json.JSONDecoder().raw_decode(detail[at + len(MARK):])[0]
                report.failed = {str(name): str(error)}
                if int(count) > 1:
                    report.failed["..."] = f"{int(count) - 1} more modules"
            except (ValueError, TypeError):
                report.problem = f"the probe bot's answer could not be read: {detail[:200]!r}"
    report.seconds = time.perf_counter() - t0
    return report


def main() -> None:
    os.environ["ARENA_SANDBOX_ZYGOTE"] = "0"  # a fresh interpreter per bot (probe's docstring)
    report = probe_here()
    print(json.dumps(asdict(report) | {"ok": report.ok, "summary": report.summary()}))


if __name__ == "__main__":
    main()
