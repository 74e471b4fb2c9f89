"""Writes garbage straight into the protocol pipe (which, from mode.txt beside this file), then stalls."""
import os
import struct
import time

from arena.sandbox import host

FRAMES = {
    "not_json": lambda: b"\x00\x00\x00\x05hello",
    "nan": lambda: frame(b'{"id": 1, "action": NaN}'),
    "huge_int": lambda: frame(b'{"id": 1, "action": ' + b"9" * 6000 + b"}"),
    "deep": lambda: frame(b"[" * 50000 + b"]" * 50000),
    "oversized": lambda: struct.pack(">I", 2**31) + b"{" * 100,
    "not_object": lambda: frame(b"[1, 2, 3]"),
    "bad_utf8": lambda: frame(b'{"action": "\xff\xfe"}'),
    "pickle": lambda: frame(b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94."),
    "no_action": lambda: frame(b'{"id": 1, "move": 3}'),
    "future_id": lambda: frame(b'{"id": 99, "action": 1}'),
    "bool_id": lambda: frame(b'{"id": true, "action": 1}'),
}


def frame(body):
    return struct.pack(">I", len(body)) + body


class Bot:
    def __init__(self, game, seat, seed):
        with open(os.path.join(os.path.dirname(__file__), "mode.txt")) as f:
            self.mode = f.read().strip()

    def step(self, state, limit):
        data = FRAMES[self.mode]()
        os.write(host._OUT_FD, data)
        time.sleep(30)
