"""Starts processes in sessions of their own (`sleep SECONDS`, SECONDS from --token) at the start,
out of its process group, then plays random legal moves: they must not outlive the bot."""

import argparse
import subprocess

from cardarena.protocol.bot import RandomBot, run

parser = argparse.ArgumentParser()
parser.add_argument("--token", required=True)
args = parser.parse_args()
for _ in range(5):
    subprocess.Popen(["sleep", args.token], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
run(RandomBot(0))
