import subprocess
import sys
import time
import zoo


def fork_and_hang(out, message):
    child = subprocess.Popen(["sleep", "3600"])
    sys.stderr.write(f"grandchild {child.pid}\n")
    sys.stderr.flush()
    time.sleep(3600)


zoo.play(fork_and_hang)
