"""The wire protocol: framing limits, schemas, the SDK loop, and PROTOCOL.md's own examples."""

from __future__ import annotations

import io
import json
import re
import struct
from pathlib import Path

import msgpack
import pytest

from cardarena.protocol import PROTOCOL_VERSION
from cardarena.protocol.bot import Bot, RandomBot, Request, read_message, serve, write_message
from cardarena.protocol.framing import FrameError, FrameReader, decode_body, encode
from cardarena.protocol.messages import BOT_MESSAGES, REFEREE_MESSAGES, ProtocolViolation, check_hello, check_message

PROTOCOL_MD = Path(__file__).resolve().parent.parent / "protocol" / "PROTOCOL.md"


def test_frame_is_length_then_msgpack_map():
    frame = encode({"type": "shutdown"})
    assert frame[:4] == struct.pack(">I", len(frame) - 4)
    assert msgpack.unpackb(frame[4:]) == {"type": "shutdown"}


def test_reader_reassembles_frames_split_anywhere():
    frames = encode({"type": "a", "n": 1}) + encode({"type": "b", "s": "x" * 300})
    reader = FrameReader()
    bodies = []
    for byte in frames:  # one byte at a time: the worst a pipe can do
        reader.feed(bytes([byte]))
        while (body := reader.next_body()) is not None:
            bodies.append(decode_body(body))
    assert bodies == [{"type": "a", "n": 1}, {"type": "b", "s": "x" * 300}]


def test_oversize_header_is_rejected_before_the_body_arrives():
    """PROTOCOL.md § 2: the length is checked against the limit before reading the body."""
    reader = FrameReader(max_frame=1024)
    reader.feed(struct.pack(">I", 1025))
    with pytest.raises(FrameError) as raised:
        reader.next_body()
    assert raised.value.kind == "oversize" and "1025 bytes" in str(raised.value)


@pytest.mark.parametrize("body,why", [
    (b"\xc1", "not valid msgpack"),
    (msgpack.packb([1, 2]), "not a map"),
    (msgpack.packb({"kind": "x"}), 'no str "type"'),
    (msgpack.packb({1: "x"}), "not valid msgpack"),
])
def test_malformed_bodies(body, why):
    with pytest.raises(FrameError, match=why):
        decode_body(body)


def nested(levels: int) -> list:
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.mark.parametrize("message, why", [
    ({"type": "a", "x": nested(32)}, None),
    ({"type": "a", "x": nested(33)}, "maps and arrays nested more than 32 deep"),
    ({"type": "a", "x": list(range(70_000))}, "more than 65,536 values in one message"),
    ({"type": "a", "x": [{"k": [1, 2]}] * 20_000}, "more than 65,536 values in one message"),
    ({"type": "a", "x": "s" * 65_536}, None),
    ({"type": "a", "x": "s" * 65_537}, "a str of 65,537 bytes, over the 65,536-byte limit"),
    ({"type": "a", "x": b""}, "a value is msgpack bin (bytes)"),
    ({"type": "a", b"x": 1}, "a map key is msgpack bin (bytes)"),
    ({"type": "a", "x": msgpack.Timestamp(1)}, "msgpack extension type -1 (a Timestamp); the protocol has no"),
    ({"type": "a", "x": msgpack.ExtType(114, b"r")}, "extension type 114 (msgpackr's record structures); the protocol has no msgpack extension"),
    ({"type": "a", "x": [2 ** 64 - 1, -2 ** 63, 1.5, float("nan"), float("-inf")]}, None),
])
def test_decoding_has_a_budget(message, why):
    """PROTOCOL.md § 2: depth, values, string length, no bin and no extension types."""
    body = msgpack.packb(message, use_bin_type=True, datetime=False)
    if why is None:
        assert repr(decode_body(body)) == repr(message)
    else:
        with pytest.raises(FrameError, match=re.escape(why)) as raised:
            decode_body(body)
        assert raised.value.kind == "malformed" and raised.value.data == body


def test_a_deeply_nested_body_is_refused_without_recursion():
    body = b"\x82\xa4type\xa1a\xa1x" + b"\x91" * 100_000 + b"\xc0"
    with pytest.raises(FrameError, match="nested more than 32 deep"):
        decode_body(body)


def repeated_key_body(*pairs: bytes) -> bytes:
    """A map body built from packed key/value pairs, which may repeat a key."""
    return bytes([0x80 | len(pairs)]) + b"".join(pairs)


@pytest.mark.parametrize("pairs", [
    (msgpack.packb("type") + msgpack.packb("a"), msgpack.packb("n") + msgpack.packb(1),
     msgpack.packb("n") + msgpack.packb(2)),
    # a float32 grows when encoded again, which must not hide the repeated key
    (msgpack.packb("type") + msgpack.packb("a"), msgpack.packb("f") + b"\xca\x3f\xc0\x00\x00",
     msgpack.packb("n") + msgpack.packb(1), msgpack.packb("n") + msgpack.packb(1)),
    # in a nested map, past the fast path's container count
    (msgpack.packb("type") + msgpack.packb("a"),
     msgpack.packb("x") + msgpack.packb([[1]] * 40)[:-2] + repeated_key_body(b"\xa1k\x01", b"\xa1k\x02")),
])
def test_a_repeated_key_is_a_protocol_fault(pairs):
    """PROTOCOL.md § 2: a repeated key is refused, not read as "the last one wins"."""
    with pytest.raises(FrameError, match="map repeats the key") as raised:
        decode_body(repeated_key_body(*pairs))
    assert raised.value.kind == "protocol"


def test_longer_encodings_than_needed_are_fine():
    body = b"\x83\xd9\x04type\xa6action\xa8decision\xce\x00\x00\x00\x04\xa6action\xde\x00\x01\xa4type\xa4pass"
    assert decode_body(body) == {"type": "action", "decision": 4, "action": {"type": "pass"}}


def test_schemas_reject_missing_unknown_and_mistyped_keys():
    good = {"type": "action", "decision": 3, "action": {"type": "pass"}}
    assert check_message(good, "action") is good
    with pytest.raises(ProtocolViolation, match="lacks 'decision'"):
        check_message({"type": "action", "action": {}}, "action")
    with pytest.raises(ProtocolViolation, match="unknown key"):
        check_message({**good, "note": "hi"}, "action")
    with pytest.raises(ProtocolViolation, match="must be int"):
        check_message({**good, "decision": True}, "action")
    with pytest.raises(ProtocolViolation, match='expected a "action"'):
        check_message({"type": "hello"}, "action")
    with pytest.raises(ProtocolViolation, match="version 2"):
        check_hello({"type": "hello", "protocol": 2, "name": "x", "version": "1"})


def test_sdk_serves_a_whole_exchange():
    inp = io.BytesIO()
    for message in [
        {"type": "hello", "protocol": PROTOCOL_VERSION, "referee": "test"},
        {"type": "game_start", "game_id": "g", "seat": 0},
        {"type": "decision", "decision": 7, "view": {}, "legal": [{"type": "bet", "amount": {"min": 2, "max": 4}}]},
        {"type": "shutdown"},
    ]:
        write_message(inp, message)
    inp.seek(0)
    out = io.BytesIO()
    serve(RandomBot(1), inp, out)
    out.seek(0)
    hello, action = read_message(out), read_message(out)
    assert check_hello(hello)["name"] == "random"
    assert check_message(action, "action")["decision"] == 7
    assert action["action"]["type"] == "bet" and 2 <= action["action"]["amount"] <= 4
    assert read_message(out) is None


def test_the_sdk_gives_decide_the_request_with_its_time_limit_and_time_bank():
    """PROTOCOL.md § 5: `time_ms` and `bank_ms` reach `decide` as attributes of the request, which
    is still the referee's map; a request without `bank_ms` (an older referee) has an empty bank."""
    seen = []

    class Clocked(Bot):
        def decide(self, view, legal, request):
            seen.append((request.time_ms, request.bank_ms, request["decision"], request.received_at))
            return legal[0]

    inp = io.BytesIO()
    legal = [{"type": "pass"}]
    for message in [{"type": "decision", "decision": 3, "view": {}, "legal": legal, "time_ms": 250, "bank_ms": 4000},
                    {"type": "decision", "decision": 5, "view": {}, "legal": legal, "time_ms": 250}]:
        write_message(inp, message)
    inp.seek(0)
    serve(Clocked(), inp, io.BytesIO())
    assert [entry[:3] for entry in seen] == [(250, 4000, 3), (250, 0, 5)]
    request = Request({"time_ms": 200, "bank_ms": 1000}, received_at=10.0)
    assert request.deadline() == pytest.approx(10.2) and request.deadline(0.5) == pytest.approx(10.7)


def test_protocol_md_hex_example_is_a_real_frame():
    text = PROTOCOL_MD.read_text()
    block = text.split("is 54 bytes on the wire")[1].split("```")[1]
    frame = bytes.fromhex(block.replace("\n", " "))
    assert len(frame) == 54
    assert decode_body(frame[4:]) == {"type": "action", "decision": 4, "action": {"type": "knock", "card": "3D"}}


def test_protocol_md_transcript_obeys_the_schemas():
    """Every message in PROTOCOL.md § 9 is valid under the schemas the referee enforces."""
    text = PROTOCOL_MD.read_text()
    section = text.split("## 9.")[1].split("```")[1]
    lines = section.strip().splitlines()
    directions = lines[0::2]
    messages = [json.loads(line) for line in lines[1::2]]
    assert len(messages) >= 6
    for direction, message in zip(directions, messages):
        schemas = REFEREE_MESSAGES if direction.startswith("// referee") else BOT_MESSAGES
        check_message(message, message["type"], schemas)
    kinds = [m["type"] for m in messages]
    assert kinds[:3] == ["hello", "hello", "game_start"] and kinds[-2:] == ["game_end", "shutdown"]
