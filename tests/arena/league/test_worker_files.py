"""A league worker that cannot start for want of open files (EMFILE) leaves none of its files open: `arena serve`
waits and tries again, and each try must not leak the pipes of the last."""
from __future__ import annotations

import errno
import os
import resource

import pytest

from arena.league import workers


def open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


def limit_leaving(free: int) -> int:
    """The soft RLIMIT_NOFILE under which exactly ``free`` more files can be opened (the lowest free numbers)."""
    held, n, left = open_fds(), 0, free
    while True:
        if n not in held:
            if left == 0:
                return n
            left -= 1
        n += 1


@pytest.mark.parametrize("free", [2, 4], ids=["second-pipe", "process-start"])
def test_a_worker_that_cannot_start_leaves_no_file_open(free: int) -> None:
    before = open_fds()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit_leaving(free), hard))
    try:
        with pytest.raises(OSError) as caught:
            workers.LocalBackend(1)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert caught.value.errno == errno.EMFILE
    assert open_fds() == before
