"""The packages bots may import load inside the sandbox (issue 30 §1): the runtime's library closure covers every
extension module a bot may import, and ``arena sandbox check`` imports them all in a sandboxed bot and fails loudly
when one cannot load."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from arena.referee import import_probe
from arena.sandbox import check, runtime

pytestmark = [pytest.mark.xdist_group("sandbox"),
              pytest.mark.skipif(bool(check.missing_mandatory()),
                                 reason=f"mandatory sandbox layers missing: {check.missing_mandatory()}")]


def _in_fresh_process(code: str) -> dict:
    """Runs ``code`` in a new interpreter (the view is cached per process) and returns the JSON it prints last."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_library_an_extension_module_needs_is_in_the_view_with_numpy_alone():
    """Only numpy as a bot package, so no other package's libraries fill the gap (OpenSpiel's pyspiel also needs
    libstdc++, which hid the fault in a venv with the test extras): every DT_NEEDED name of every ELF file a bot can
    read, numpy's extension modules in its subfolders included, is a file of the view (Tk's module aside: no bot
    draws windows, and its libraries are left out on purpose)."""
    result = _in_fresh_process("""
        import json, os
        from arena.sandbox import runtime, spawn
        runtime.BOT_PACKAGES = ("numpy",)
        files = runtime.files(spawn.bot_runtime())
        names = {os.path.basename(p) for p in files}
        extensions = [p for p in files if "/numpy/" in p and p.endswith(".so")]
        missing = {p: [n for n in runtime._elf(h)[1] if n not in names] for p, h in files.items()
                   if not os.path.basename(p).startswith("_tkinter")}  # Tk/X11: left out on purpose
        print(json.dumps({"extensions": extensions, "missing": {p: m for p, m in missing.items() if m}}))
    """)
    assert any("_multiarray_umath" in p for p in result["extensions"]), result["extensions"][:5]
    assert result["missing"] == {}


def test_walk_sees_a_folder_bound_over_a_mask_but_not_masks_inside_it(tmp_path):
    site = tmp_path / "site-packages"
    (site / "pkg" / "sub" / "deep").mkdir(parents=True)
    (site / "pkg" / "hidden").mkdir()
    for f in ("pkg/a.so", "pkg/sub/b.so", "pkg/sub/deep/c.so", "pkg/hidden/d.so", "other.so"):
        (site / f).write_text("x")
    found = runtime._walk([str(site / "pkg")], [str(site), str(site / "pkg" / "hidden")])
    assert sorted(os.path.relpath(f, site) for f in found) == ["pkg/a.so", "pkg/sub/b.so", "pkg/sub/deep/c.so"]


def test_the_module_list_holds_the_packages_and_their_nested_extension_modules():
    names = import_probe.modules()
    assert names[0] == "numpy"
    assert "numpy._core._multiarray_umath" in names or "numpy.core._multiarray_umath" in names
    assert not any(".libs" in n for n in names)


@pytest.mark.slow
def test_every_bot_package_module_loads_inside_the_sandbox():
    report = import_probe.probe()
    assert report.problem is None, report.problem
    assert report.ok, report.summary()
    assert report.modules > 10


def test_the_probe_fails_loudly_when_the_view_leaves_out_a_library():
    """A view without libstdc++ (what the plain install had): the probe names numpy and the missing library, and
    `arena sandbox check`'s exit status would be 1 (report.ok False)."""
    result = _in_fresh_process("""
        import json, os
        from dataclasses import asdict
        from arena.referee import import_probe
        from arena.sandbox import runtime
        real = runtime.libraries
        runtime.libraries = lambda objects: {t: s for t, s in real(objects).items() if "libstdc++" not in t}
        os.environ["ARENA_SANDBOX_ZYGOTE"] = "0"  # as import_probe.probe() runs it
        report = import_probe.probe_here()
        print(json.dumps(asdict(report) | {"ok": report.ok, "summary": report.summary()}))
    """)
    assert not result["ok"]
    assert result["problem"] is None, result["problem"]
    assert "libstdc++" in result["summary"], result["summary"]
    assert any(name.startswith("numpy") for name in result["failed"]), result["failed"]


def test_a_probe_that_cannot_start_says_nothing_of_the_runtime(monkeypatch):
    """Out of open files (a flooded server): inconclusive, never a runtime problem that pauses the league."""
    import errno

    def no_files(*args, **kwargs):
        raise OSError(errno.EMFILE, "Too many open files")
    monkeypatch.setattr(import_probe.subprocess, "run", no_files)
    report = import_probe.probe()
    assert report.inconclusive and not report.ok and "Too many open files" in (report.problem or "")
