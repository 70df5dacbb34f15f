"""A bench bot that does the same fixed amount of computing at every decision, then answers a
random legal action, and writes on stderr how long each decision took it (wall clock, seconds).
`--iterations N` sets the work (default 1,000,000 loop iterations: some 40 ms of one core)."""
import argparse
import random
import sys
import time

from cardarena.protocol.bot import read_message, write_message
from cardarena.protocol.actions import random_action
from cardarena.protocol import PROTOCOL_VERSION

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=1_000_000)
    work = parser.parse_args().iterations
    inp, out, rng = sys.stdin.buffer, sys.stdout.buffer, random.Random(0)
    while (message := read_message(inp)) is not None:
        if message["type"] == "hello":
            write_message(out, {"type": "hello", "protocol": PROTOCOL_VERSION, "name": "fixed-work", "version": "0"})
        elif message["type"] == "decision":
            started = time.perf_counter()
            total = 0
            for number in range(work):
                total += number
            legal = [entry for entry in message["legal"] if entry["type"] != "knock"] or message["legal"]
            write_message(out, {"type": "action", "decision": message["decision"], "action": random_action(legal, rng)})
            print(f"decision {time.perf_counter() - started:.6f}", file=sys.stderr, flush=True)
        elif message["type"] == "shutdown":
            return


main()
