import random
import subprocess
import sys
import time
import zoo


def fork_and_hang(out, message):
    # a unique sleep length names the grandchild from outside a PID namespace too
    seconds = f"{3600 + random.random():.9f}"
    child = subprocess.Popen(["sleep", seconds])
    sys.stderr.write(f"grandchild {child.pid} sleep {seconds}\n")
    sys.stderr.flush()
    time.sleep(3600)


zoo.play(fork_and_hang)
