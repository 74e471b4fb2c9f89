"""The wire format between the referee and a bot process: length-prefixed JSON with a size cap.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON. Nothing is ever
unpickled. Parsing is strict: oversized frames, bad UTF-8, ``NaN``/``Infinity``, integers too long
to convert, nesting deep enough to hit the recursion limit and non-object payloads all raise
:class:`FrameError` (a :class:`arena.errors.ProtocolError`), which the referee records as a forfeit.
"""
from __future__ import annotations

import json
import os
import re
import struct
from typing import Any

from arena.errors import ProtocolError

HEADER = struct.Struct(">I")
MAX_BOT_MESSAGE = 64 * 1024
"""Largest frame a bot may send (an answer is a few bytes; 64 KiB leaves room for error details)."""
MAX_REFEREE_MESSAGE = 16 * 1024 * 1024
"""Largest frame the referee sends (a game history)."""
MAX_DEPTH = 8
"""Deepest nesting accepted in a bot's message (answers are flat)."""


class FrameError(ProtocolError):
    """A malformed, oversized or unparseable frame."""


def _reject_constant(name: str) -> Any:
    raise FrameError(f"non-finite number {name} in message")


_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def encode(message: dict[str, Any]) -> bytes:
    """One frame for ``message`` (compact JSON, NaN refused)."""
    return frame(_ENCODER.encode(message).encode())


def encode_value(value: Any) -> bytes:
    """Compact JSON for any value (NaN refused), to splice into a frame body."""
    return _ENCODER.encode(value).encode()


def frame(body: bytes) -> bytes:
    """A frame around an already encoded JSON body."""
    return HEADER.pack(len(body)) + body


_ANSWER = re.compile(rb'\{"id":([1-9][0-9]{0,17}),"action":(0|[1-9][0-9]{0,17})\}')
"""The one answer shape of a well-behaved host, which the referee parses without the JSON decoder."""


def answer_frame(request_id: int, action: int) -> bytes:
    """The host's frame for ``{"id": request_id, "action": action}`` (the shape ``decode_answer`` fast-paths)."""
    body = b'{"id":%d,"action":%d}' % (request_id, action)
    return HEADER.pack(len(body)) + body


def decode_answer(body: bytes) -> dict[str, Any]:
    """Parses a bot's frame body: the common answer shape by one anchored regex match (it accepts only
    what JSON would parse to the same dict: two plain decimal integers below 10**18), anything else by
    the strict :func:`decode`."""
    match = _ANSWER.fullmatch(body)
    if match is not None:
        return {"id": int(match[1]), "action": int(match[2])}
    return decode(body)


_STEP = re.compile(rb'\{"type":"step","id":([0-9]{1,18}),"actions":\[([0-9,]*)\]\}')


def decode_request(body: bytes) -> dict[str, Any]:
    """Parses a referee frame body (bot side; trusted sender): the usual ``step`` without a limit by one
    regex match, anything else by JSON."""
    match = _STEP.fullmatch(body)
    if match is not None:
        actions = match[2]
        return {"type": "step", "id": int(match[1]),
                "actions": [int(a) for a in actions.split(b",")] if actions else []}
    return decode(body, max_depth=None)


def step_frame(request_id: int, actions: list[int], limit_json: bytes | None = None) -> bytes:
    """The referee's ``step`` frame; ``actions`` are game action ids (plain ints: JSON is their decimal text)."""
    body = b'{"type":"step","id":%d,"actions":%s%s}' % (  # repr of a list of ints is its JSON plus spaces
        request_id, repr(actions).replace(" ", "").encode(), b',"limit":' + limit_json if limit_json else b"")
    return HEADER.pack(len(body)) + body


def frame_length(header: bytes, cap: int) -> int:
    """The body length announced by a 4-byte header; FrameError above ``cap``."""
    (length,) = HEADER.unpack(header)
    if length > cap:
        raise FrameError(f"message of {length} bytes exceeds the {cap}-byte limit")
    return length


def decode(body: bytes, max_depth: int | None = MAX_DEPTH) -> dict[str, Any]:
    """Parses one frame body into a dict (``max_depth=None``: trusted sender, no nesting check).

    Raises:
        FrameError: invalid UTF-8 or JSON, non-finite numbers, huge integers, too deep, not an object.
    """
    # Deep nesting needs many brackets: check (linearly, without recursion) before json recurses at all.
    if max_depth is not None and body.count(b"[") + body.count(b"{") > max_depth \
            and _bracket_depth(body) > max_depth:
        raise FrameError(f"message nested deeper than {max_depth} levels")
    try:
        value = _DECODER.decode(body.decode("utf-8"))
    except FrameError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError, TypeError) as exc:  # ValueError: bad JSON, huge ints
        raise FrameError(f"unparseable message: {type(exc).__name__}: {str(exc)[:200]}") from None
    if not isinstance(value, dict):
        raise FrameError(f"message must be a JSON object, got {type(value).__name__}")
    return value


def _bracket_depth(body: bytes) -> int:
    """Maximum bracket nesting, ignoring string contents (a linear scan, no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def parse_action(message: dict[str, Any], num_actions: int | None = None) -> int:
    """The action in a bot's ``{"action": int}`` answer.

    Raises:
        FrameError: missing, not a plain integer (bools, floats and strings refused) or out of range.
    """
    action = message.get("action")
    if isinstance(action, bool) or not isinstance(action, int):
        raise FrameError(f"answer must be {{\"action\": <int>}}, got {str(message)[:200]}")
    if action < 0 or (num_actions is not None and action >= num_actions) or action >= 2**63:
        raise FrameError(f"action {str(action)[:40]} is outside the game's action ids")
    return action


# -- blocking helpers for the bot side (the referee side uses non-blocking reads with deadlines) --------
def read_frame(fd: int, cap: int = MAX_REFEREE_MESSAGE) -> dict[str, Any] | None:
    """Reads one frame from a blocking fd; None at end of file. Only for the trusted referee's frames."""
    header = _read_exactly(fd, HEADER.size)
    if header is None:
        return None
    body = _read_exactly(fd, frame_length(header, cap))
    if body is None:
        return None
    return decode(body, max_depth=None)


class FrameReader:
    """Buffered blocking frame reader for the bot side: usually one ``read`` syscall per frame."""

    def __init__(self, fd: int, cap: int = MAX_REFEREE_MESSAGE) -> None:
        self.fd = fd
        self.cap = cap
        self.buffer = bytearray()

    def read(self) -> dict[str, Any] | None:
        """The next frame (trusted sender: no nesting check); None at end of file."""
        buf = self.buffer
        if not buf:  # the usual case: one read returns exactly one frame, parse it without copying around
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            if len(chunk) >= 4:
                (length,) = HEADER.unpack_from(chunk)
                if length == len(chunk) - 4 and length <= self.cap:
                    return decode_request(chunk[4:])
            buf += chunk
        while True:
            if len(buf) >= 4:
                length = frame_length(bytes(buf[:4]), self.cap)
                if len(buf) >= 4 + length:
                    body = bytes(buf[4:4 + length])
                    del buf[:4 + length]
                    return decode_request(body)
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            buf += chunk


def write_frame(fd: int, message: dict[str, Any]) -> None:
    """Writes one frame to a blocking fd."""
    data = memoryview(encode(message))
    while data:
        n = os.write(fd, data)
        data = data[n:]


def _read_exactly(fd: int, n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)
