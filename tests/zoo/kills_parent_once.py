"""Sends SIGKILL to its parent mid-game the first time it runs (no file at --marker yet), then plays on."""
import argparse
import os
import random
import signal
from pathlib import Path

import zoo
from cardarena.protocol.actions import random_action
from cardarena.protocol.bot import write_message

parser = argparse.ArgumentParser()
parser.add_argument("--marker", type=Path, required=True)
marker = parser.parse_known_args()[0].marker


def kill_parent_once(out, message):
    if not marker.exists():
        marker.touch()
        os.kill(os.getppid(), signal.SIGKILL)
        return
    legal = [entry for entry in message["legal"] if entry["type"] != "knock"] or message["legal"]
    write_message(out, {"type": "action", "decision": message["decision"],
                        "action": random_action(legal, random.Random(message["decision"]))})


zoo.play(kill_parent_once)
