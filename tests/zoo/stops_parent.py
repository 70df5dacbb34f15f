"""Sends SIGSTOP to its parent (the referee's worker) mid-game, every game."""
import os
import signal
import zoo

zoo.play(lambda out, message: os.kill(os.getppid(), signal.SIGSTOP))
