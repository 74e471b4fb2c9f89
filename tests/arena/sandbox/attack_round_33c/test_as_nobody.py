"""Attack round 33c: this folder's attacks again as uid 65534 (no per-bot uids or cgroups, an unprivileged user
namespace; every init forked on demand, none ahead), the way tests/arena/sandbox/test_unprivileged.py runs the
sandbox's tests."""
from __future__ import annotations

import pytest

from tests.arena.sandbox.test_unprivileged import nobody  # noqa: F401 (fixture)
from tests.arena.sandbox.test_unprivileged import pytestmark as unprivileged_marks

pytestmark = [*unprivileged_marks, pytest.mark.slow, pytest.mark.xdist_group("unprivileged")]

FILES = ["tests/arena/sandbox/attack_round_33c/test_scan_all_memory.py",
         "tests/arena/sandbox/attack_round_33c/test_runtime_part.py",
         "tests/arena/sandbox/attack_round_33c/test_handoff.py"]


@pytest.mark.parametrize("test_file", FILES)
def test_the_attack_fails_as_an_unprivileged_user(nobody, test_file):  # noqa: F811
    out = nobody.run(["-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p", "no:xdist", "-rs", test_file], 300)
    print(out.stdout[-6000:], out.stderr[-2000:])
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "skipped" not in out.stdout.split("\n")[-2], out.stdout[-2000:]
