"""Says hello with a 1,000-level nested list beside the usual keys, then waits to be killed."""

import sys

import zoo
from cardarena.protocol.bot import read_message

read_message(sys.stdin.buffer)
zoo.send_raw(sys.stdout.buffer, zoo.deep_frame({"type": "hello", "protocol": 1, "name": "deep", "version": "0"}))
sys.stdin.buffer.read()
