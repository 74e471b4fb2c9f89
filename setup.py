"""Builds every Cython module under games/ and bots/ (found by glob, so a new module needs no edit here).

Directives are set once, here (one deviation from sklearn's set: wraparound stays on, see below).
``ARENA_CYTHON_DEBUG=1`` turns bounds checking back on.
``ARENA_BUILD_ONLY=games/hex,bots`` limits a local rebuild to modules whose path starts with one of the
prefixes (handy while developing; never set it for an install).
"""
from __future__ import annotations

import glob
import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("ARENA_CYTHON_DEBUG") == "1"
DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    # wraparound stays on: with it off, `some_list[-1]` in Python-level code of a .pyx silently reads
    # or writes outside the list (a real crash we hit). Hot loops index raw C arrays, which never wrap.
    "wraparound": True,
    "cdivision": True,
    "initializedcheck": DEBUG,
    "embedsignature": True,
    "binding": True,
}


def extensions() -> list[Extension]:
    only = [p for p in os.environ.get("ARENA_BUILD_ONLY", "").split(",") if p]
    exts = []
    for pyx in sorted(glob.glob("games/**/*.pyx", recursive=True) + glob.glob("bots/**/*.pyx", recursive=True)):
        if only and not any(pyx.startswith(p) for p in only):
            continue
        module = pyx[:-4].replace(os.sep, ".")
        exts.append(Extension(module, [pyx], include_dirs=[numpy.get_include(), "."],
                              extra_compile_args=["-O3", "-Wno-unused-function", "-Wno-unreachable-code"]))
    return exts


setup(ext_modules=cythonize(extensions(), compiler_directives=DIRECTIVES, include_path=["."],
                            nthreads=int(os.environ.get("ARENA_BUILD_JOBS", "0"))))
