"""Shared loop of the zoo bots: play randomly for `--after` decisions, then misbehave once.

The random play never knocks, so a Knock Rummy game lasts long enough for the misbehaviour
to land mid-game; with `--after` large the bot is a well-behaved, patient opponent.
"""

import argparse
import random
import sys

from protocol import PROTOCOL_VERSION
from protocol.actions import random_action
from protocol.bot import read_message, write_message


def play(misbehave, hello_version=PROTOCOL_VERSION):
    """Speak the protocol; at decision number `--after` + 1 call misbehave(out, message)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--after", type=int, default=1)
    args = parser.parse_args()
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    rng = random.Random(0)
    decisions = 0
    while (message := read_message(inp)) is not None:
        kind = message["type"]
        if kind == "hello":
            write_message(out, {"type": "hello", "protocol": hello_version, "name": "zoo", "version": "0"})
        elif kind == "decision":
            decisions += 1
            if decisions > args.after:
                misbehave(out, message)
                continue
            patient = [entry for entry in message["legal"] if entry["type"] != "knock"]
            action = random_action(patient or message["legal"], rng)
            write_message(out, {"type": "action", "decision": message["decision"], "action": action})
        elif kind == "shutdown":
            return
