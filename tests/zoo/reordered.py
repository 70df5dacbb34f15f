"""Plays legal moves, but writes every action's keys in reverse order: legal, and must be accepted."""
import random
import sys

from cardarena.protocol.actions import random_action
from cardarena.protocol.bot import read_message, write_message

rng = random.Random(0)
inp, out = sys.stdin.buffer, sys.stdout.buffer
while (message := read_message(inp)) is not None:
    if message["type"] == "hello":
        write_message(out, {"type": "hello", "protocol": 1, "name": "reordered", "version": "0"})
    elif message["type"] == "decision":
        action = random_action(message["legal"], rng)
        write_message(out, {"type": "action", "decision": message["decision"],
                            "action": dict(reversed(list(action.items())))})
    elif message["type"] == "shutdown":
        break
