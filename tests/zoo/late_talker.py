"""Plays patiently, and 0.2 s after each `game_end` sends one more action frame no request asked for.

The frame comes too late for the game's end check (which waits briefly for the bot that decided
last, the one bot the referee sends `game_end` at once), so when the match shuts down after that
game it is found then: a `protocol` fault at the shutdown (in a tournament whose other bot takes its
shutdown grace first, see tests/test_shutdown_faults.py), which changes no game's result.
"""
import random
import sys
import time

from cardarena.protocol.bot import read_message, write_message

import zoo

rng = random.Random(0)
inp, out = sys.stdin.buffer, sys.stdout.buffer
while (message := read_message(inp)) is not None:
    if message["type"] == "hello":
        write_message(out, {"type": "hello", "protocol": 1, "name": "late_talker", "version": "0"})
    elif message["type"] == "decision":
        zoo.answer_patiently(out, message, rng)
    elif message["type"] == "game_end":
        time.sleep(0.2)
        write_message(out, {"type": "action", "decision": 0, "action": {"type": "pass"}})
    elif message["type"] == "shutdown":
        break
