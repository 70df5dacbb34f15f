"""Starts a `sleep` in a session of its own that inherits its stderr (SECONDS from --token), then
plays random legal moves: the referee must not wait for that pipe to close when it stops the bot."""

import argparse
import subprocess

from cardarena.protocol.bot import RandomBot, run

parser = argparse.ArgumentParser()
parser.add_argument("--token", required=True)
args = parser.parse_args()
subprocess.Popen(["sleep", args.token], start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
run(RandomBot(0))
