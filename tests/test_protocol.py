"""The wire protocol: framing limits, schemas, the SDK loop, and PROTOCOL.md's own examples."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path

import msgpack
import pytest

from protocol import PROTOCOL_VERSION
from protocol.bot import RandomBot, read_message, serve, write_message
from protocol.framing import FrameError, FrameReader, decode_body, encode
from protocol.messages import BOT_MESSAGES, REFEREE_MESSAGES, ProtocolViolation, check_hello, check_message

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
