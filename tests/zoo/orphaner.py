"""Starts a `sleep` child that inherits its stdout, then exits with status 4: the referee must see
the exit at once (a crash), though the child still holds the pipe, and leave nothing behind."""
import os
import random
import subprocess
import sys

import zoo


def exit_leaving_a_child(out, message):
    # a unique sleep length names the child from outside a PID namespace too
    seconds = f"{3600 + random.random():.9f}"
    child = subprocess.Popen(["sleep", seconds])  # inherits stdin, stdout and stderr
    sys.stderr.write(f"bot {os.getpid()} grandchild {child.pid} sleep {seconds}\n")
    sys.stderr.flush()
    sys.exit(4)


zoo.play(exit_leaving_a_child)
