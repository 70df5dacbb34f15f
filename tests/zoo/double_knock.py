"""Plays patiently, then answers its first offered knock twice, in two writes (a buggy send loop).

The knock ends a Knock Rummy game, so the second frame follows the game's last decision: a
`protocol` fault of that game. `--double-in GAME_ID` limits the misbehaviour to one game.
"""
import argparse
import random
import sys

from cardarena.protocol.bot import read_message, write_message

import zoo

parser = argparse.ArgumentParser()
parser.add_argument("--double-in", default=None, help="the one game in which to answer twice (default: every game)")
args = parser.parse_args()
rng = random.Random(0)
inp, out = sys.stdin.buffer, sys.stdout.buffer
while (message := read_message(inp)) is not None:
    if message["type"] == "hello":
        write_message(out, {"type": "hello", "protocol": 1, "name": "double_knock", "version": "0"})
    elif message["type"] == "decision":
        knocks = [entry for entry in message["legal"] if entry["type"] == "knock"]
        if knocks and args.double_in in (None, message["game_id"]):
            answer = {"type": "action", "decision": message["decision"], "action": knocks[0]}
            write_message(out, answer)
            write_message(out, answer)
            continue
        zoo.answer_patiently(out, message, rng)
    elif message["type"] == "shutdown":
        break
