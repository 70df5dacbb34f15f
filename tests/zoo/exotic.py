import msgpack

import zoo
from cardarena.protocol.framing import HEADER


def answer(out, message, action):
    """The answer with the first legal entry's keys and values, plus `action`'s items."""
    body = msgpack.packb({"type": "action", "decision": message["decision"],
                          "action": {**message["legal"][0], **action}}, use_bin_type=True, datetime=False)
    zoo.send_raw(out, HEADER.pack(len(body)) + body)


def records(out, message):
    """The answer as msgpackr encodes an object by default: a record, whose structure (its keys) is
    defined by extension type 114 ("r") and its values follow."""
    keys = msgpack.packb(["type", "decision", "action"])
    values = msgpack.packb("action") + msgpack.packb(message["decision"]) + msgpack.packb(message["legal"][0])
    body = b"\xd4\x72\x40" + keys + values
    zoo.send_raw(out, HEADER.pack(len(body)) + body)


zoo.play({
    "timestamp": lambda out, message: answer(out, message, {"when": msgpack.Timestamp(1_700_000_000)}),
    "bin": lambda out, message: answer(out, message, {"type": b"\x00\xffbin"}),
    "bytes-key": lambda out, message: answer(out, message, {b"type": "x"}),
    "records": records,
})
