"""Plays legally, but writes 64 KiB to stderr before every action: logs must be capped, play unaffected."""
import random
import sys

from cardarena.protocol.actions import random_action
from cardarena.protocol.bot import read_message, write_message

NOISE = b"x" * 65535 + b"\n"
rng = random.Random(0)
inp, out = sys.stdin.buffer, sys.stdout.buffer
while (message := read_message(inp)) is not None:
    if message["type"] == "hello":
        write_message(out, {"type": "hello", "protocol": 1, "name": "noisy", "version": "0"})
    elif message["type"] == "decision":
        sys.stderr.buffer.write(NOISE)
        sys.stderr.buffer.flush()
        write_message(out, {"type": "action", "decision": message["decision"],
                            "action": random_action(message["legal"], rng)})
    elif message["type"] == "shutdown":
        break
