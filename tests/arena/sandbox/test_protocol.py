"""The wire format: framing, size caps, strict parsing (every parse error is a ProtocolError forfeit)."""
from __future__ import annotations

import os
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.errors import ProtocolError
from arena.sandbox import protocol
from arena.sandbox.protocol import FrameError


def body(frame: bytes) -> bytes:
    length = protocol.frame_length(frame[:4], protocol.MAX_REFEREE_MESSAGE)
    assert len(frame) == 4 + length
    return frame[4:]


json_values = st.recursive(st.none() | st.booleans() | st.integers(-2**62, 2**62) | st.text(max_size=20)
                           | st.floats(allow_nan=False, allow_infinity=False),
                           lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                           max_leaves=20)


@given(st.dictionaries(st.text(max_size=10), json_values, max_size=5))
def test_round_trip(message):
    assert protocol.decode(body(protocol.encode(message)), max_depth=None) == message


def test_frame_header_is_big_endian_length():
    frame = protocol.encode({"action": 3})
    assert struct.unpack(">I", frame[:4])[0] == len(frame) - 4


def test_encode_refuses_nan():
    with pytest.raises(ValueError):
        protocol.encode({"x": float("nan")})


def test_oversized_frame_is_refused_from_the_header_alone():
    with pytest.raises(FrameError, match="exceeds"):
        protocol.frame_length(struct.pack(">I", protocol.MAX_BOT_MESSAGE + 1), protocol.MAX_BOT_MESSAGE)
    assert protocol.frame_length(struct.pack(">I", protocol.MAX_BOT_MESSAGE), protocol.MAX_BOT_MESSAGE) \
        == protocol.MAX_BOT_MESSAGE


@pytest.mark.parametrize("raw", [
    b"hello", b"{", b'{"action": NaN}', b'{"action": Infinity}', b'{"action": -Infinity}',
    b'{"action": ' + b"9" * 5000 + b"}", b"[" * 100000 + b"]" * 100000, b'{"a":' * 50 + b"1" + b"}" * 50,
    b"[1, 2]", b'"text"', b"3", b"null", b"\xff\xfe{}", b"",
])
def test_garbage_bodies_raise_protocol_errors(raw):
    with pytest.raises(ProtocolError):
        protocol.decode(raw)


def test_nesting_limit_counts_brackets_not_string_contents():
    assert protocol.decode(b'{"note": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}') == {"note": "[" * 32}
    assert protocol.decode(b'{"a": [[[[[[1]]]]]]}') == {"a": [[[[[[1]]]]]]}  # depth 7 <= 8
    with pytest.raises(FrameError, match="nested"):
        protocol.decode(b'{"a": [[[[[[[[[1]]]]]]]]]}')


@pytest.mark.parametrize("message", [{"action": "1"}, {"action": 1.0}, {"action": True}, {"action": None},
                                     {"action": [1]}, {"move": 1}, {"action": -1}, {"action": 2**63}, {"action": 9}])
def test_parse_action_refuses_non_actions(message):
    with pytest.raises(FrameError):
        protocol.parse_action(message, num_actions=9)


def test_parse_action_accepts_ints_in_range():
    assert protocol.parse_action({"action": 0, "id": 3}, 9) == 0
    assert protocol.parse_action({"action": 8}, 9) == 8


def test_blocking_helpers_frame_over_a_pipe():
    r, w = os.pipe()
    try:
        protocol.write_frame(w, {"type": "step", "actions": [[0, 1], [-1, 2]]})
        protocol.write_frame(w, {"id": 2})
        assert protocol.read_frame(r) == {"type": "step", "actions": [[0, 1], [-1, 2]]}
        assert protocol.read_frame(r) == {"id": 2}
        os.close(w)
        w = -1
        assert protocol.read_frame(r) is None  # end of file
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_partial_frame_at_eof_is_end_of_stream():
    r, w = os.pipe()
    os.write(w, struct.pack(">I", 10) + b"{}")
    os.close(w)
    try:
        assert protocol.read_frame(r) is None
    finally:
        os.close(r)


def test_frame_reader_splits_a_stream_into_frames():
    r, w = os.pipe()
    try:
        data = protocol.encode({"a": 1}) + protocol.encode({"b": [2, 3]}) + protocol.encode({"c": "x" * 70000})
        reader = protocol.FrameReader(r)
        import threading
        writer = threading.Thread(target=lambda: os.write(w, data))
        writer.start()
        assert reader.read() == {"a": 1}
        assert reader.read() == {"b": [2, 3]}
        assert reader.read() == {"c": "x" * 70000}  # larger than one read
        writer.join()
        os.close(w)
        w = -1
        assert reader.read() is None
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


@pytest.mark.parametrize("body", [
    b'{"id":1,"action":0}', b'{"id":12,"action":345}', b'{"id":999999999999999999,"action":999999999999999999}',
    b'{"id":01,"action":3}', b'{"id":1,"action":-3}', b'{"id":1,"action":3.0}', b'{"id":1, "action":3}',
    b'{"action":3,"id":1}', b'{"id":1,"action":3,"x":1}', b'{"id":1,"action":1e3}', b'{"id":0,"action":2}',
    b'{"id":1,"action":3}\n', b'{"id":1,"action":NaN}', b'{"id":1,"action":"3"}',
])
def test_answer_fast_path_agrees_with_strict_json(body):
    try:
        expected = protocol.decode(body)
    except protocol.FrameError:
        with pytest.raises(protocol.FrameError):
            protocol.decode_answer(body)
        return
    assert protocol.decode_answer(body) == expected


def test_answer_frame_is_what_the_referee_parses():
    frame = protocol.answer_frame(7, 42)
    assert protocol.frame_length(frame[:4], protocol.MAX_BOT_MESSAGE) == len(frame) - 4
    assert protocol.decode_answer(frame[4:]) == {"id": 7, "action": 42}


@pytest.mark.parametrize("actions,limit", [([], None), ([3], None), ([0, 17, 2], None),
                                           ([1, 2], b'{"time":2.0,"memory_mb":500,"first_move":false}')])
def test_step_frame_round_trips_through_the_bot_side_reader(actions, limit):
    frame = protocol.step_frame(5, actions, limit)
    expected = {"type": "step", "id": 5, "actions": actions}
    if limit:
        expected["limit"] = {"time": 2.0, "memory_mb": 500, "first_move": False}
    assert protocol.decode(frame[4:], max_depth=None) == expected
    r, w = os.pipe()
    try:
        os.write(w, frame + frame)  # two frames in one read: the buffered path
        reader = protocol.FrameReader(r)
        assert reader.read() == expected
        assert reader.read() == expected
        os.write(w, frame)  # one frame per read: the direct path
        assert reader.read() == expected
    finally:
        os.close(r)
        os.close(w)
