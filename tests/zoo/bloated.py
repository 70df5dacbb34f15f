import zoo
from cardarena.protocol.bot import write_message


def action(message, extra):
    return {"type": "action", "decision": message["decision"], "action": {**message["legal"][0], **extra}}


zoo.play({
    # 60,000 keys: 120,000 values, over the decoder's limit
    "keys": lambda out, message: write_message(out, action(message, {f"k{n}": n for n in range(60_000)})),
    # a 1 MiB frame of tiny maps
    "tiny-maps": lambda out, message: write_message(out, action(message, {"junk": [{"a": 0}] * 262_000})),
    # within the limits (20,000 keys of 40 characters each): decoded, so its evidence must be cut
    "wide": lambda out, message: write_message(out, action(message, {f"{n:040d}": n for n in range(20_000)})),
})
