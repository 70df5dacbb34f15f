"""Sends SIGKILL to its parent (the referee's worker) mid-game, every game (with --at-hello: at once)."""
import os
import signal
import sys

import zoo

if "--at-hello" in sys.argv:
    os.kill(os.getppid(), signal.SIGKILL)
zoo.play(lambda out, message: os.kill(os.getppid(), signal.SIGKILL))
