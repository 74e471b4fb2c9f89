"""Issue 33b attack round: tests/arena/hostile/heap_scan.py's scan, reported from ``__init__`` (the last seat of a
many-player game, before any move), or a plain player whose snapshot digest is looked for. Otherwise the same:

Scans the memory it inherited for bot snapshot digests: a launch plan the fork server decoded names a bot's
snapshot folder, whose name is its digest (64 hex digits). Finding another bot's digest would tell a bot who its
opponent is (a pair of colluding bots would know each other by it). Scans the pages around a malloc'd buffer (the
heap) and around small objects (pymalloc's arenas, where decoded strings live and stay after they are freed). Reads
safely: each page is first written into a pipe (EFAULT, not a crash, where nothing is mapped) and read back. Raises
``RuntimeError("HEAP <json>")`` with the distinct digests it found."""
import ctypes
import json
import os
import re

DIGEST = re.compile(rb"/([0-9a-f]{64})")
PAGE = 4096


def scan():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
    libc.write.restype = ctypes.c_ssize_t
    pipe = os.pipe()

    def readable(address):
        if libc.write(pipe[1], ctypes.c_void_p(address), PAGE) != PAGE:
            return False
        os.read(pipe[0], PAGE)
        return True

    anchor = bytearray(2000)  # malloc'd (over pymalloc's 512 bytes): inside the heap
    anchors = [ctypes.addressof((ctypes.c_char * len(anchor)).from_buffer(anchor))]
    anchors += [id(x) for x in (os.sep, json.dumps, "x" * 40, (1, 2), 1.5, re.compile, scan)]  # pymalloc's arenas
    found, seen = set(), set()
    for anchor_address in anchors:
        start = anchor_address & ~(PAGE - 1)
        for step in (-PAGE, PAGE):
            address, misses = start, 0
            while misses < 64 and abs(address - start) < (64 << 20):
                if address in seen:
                    break
                seen.add(address)
                if readable(address):
                    misses = 0
                    for match in DIGEST.finditer(ctypes.string_at(address, PAGE)):
                        found.add(match.group(1).decode())
                else:
                    misses += 1
                address += step
    return sorted(found)


class Bot:
    """Reports from ``__init__`` when ``report.txt`` lies beside it (a folder bot); else plays the first legal
    action (an opponent with a snapshot digest of its own)."""

    def __init__(self, game, seat, seed):
        if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "report.txt")):
            raise RuntimeError("HEAP " + json.dumps(scan()))

    def step(self, state, limit):
        return state.legal_actions()[0]
