"""Moved to :mod:`arena.snapshot` (issue 34: a foundation the store builds on lives below it, not in the
submissions package). This name stays for its many importers: it is that same module object, so a name set or
patched on one is seen through the other."""
from __future__ import annotations

import sys

from arena import snapshot as _moved
from arena.snapshot import *  # noqa: F403 - (what type checkers read; at run time this name is the module itself)

sys.modules[__name__] = _moved
