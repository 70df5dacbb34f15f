"""Shared loop of the zoo bots: play randomly for `--after` decisions, then misbehave once.

The random play never knocks, so a Knock Rummy game lasts long enough for the misbehaviour
to land mid-game; with `--after` large the bot is a well-behaved, patient opponent.
"""

import argparse
import random
import sys

from cardarena.protocol import PROTOCOL_VERSION
from cardarena.protocol.actions import random_action
from cardarena.protocol.bot import read_message, write_message
from cardarena.protocol.framing import HEADER, encode


def say(text, status=None):
    """Write one line to stderr (the test reads it in the fault's stderr tail); exit with `status` if given."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
    if status is not None:
        sys.exit(status)


def answer_patiently(out, message, rng=random.Random(0)):
    """Answer a decision with a random legal action, never knocking (games last long)."""
    patient = [entry for entry in message["legal"] if entry["type"] != "knock"]
    action = random_action(patient or message["legal"], rng)
    write_message(out, {"type": "action", "decision": message["decision"], "action": action})


def play(misbehave, hello_version=PROTOCOL_VERSION):
    """Speak the protocol; at decision number `--after` + 1 call misbehave(out, message).

    `misbehave` may be a dict of such functions by name: `--mode NAME` picks one (default: the first).
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--after", type=int, default=1)
    if isinstance(misbehave, dict):
        parser.add_argument("--mode", choices=list(misbehave), default=next(iter(misbehave)))
    args, _ = parser.parse_known_args()  # a bot may take arguments of its own
    if isinstance(misbehave, dict):
        misbehave = misbehave[args.mode]
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
            answer_patiently(out, message, rng)
        elif kind == "shutdown":
            return


def deep_frame(head, levels=1000):
    """A frame of the map `head` plus one key, "deep", holding a list nested `levels` deep (built
    byte by byte: msgpack's own packer refuses to nest so deep)."""
    body = encode(head)[4:]
    body = bytes([body[0] + 1]) + body[1:] + b"\xa4deep" + b"\x91" * levels + b"\xc0"
    return HEADER.pack(len(body)) + body


def send_raw(out, frame):
    out.write(frame)
    out.flush()
