import sys
import time

import zoo
from cardarena.protocol.bot import write_message

CONTROL = "\x1b[2J\x1b]0;owned\x07\x00\x08\x7f\x9b31m\u202e\ufffe"


def escapes(out, message):
    """Terminal escape sequences and control characters on stderr and in an illegal action."""
    sys.stderr.buffer.write(f"about to misbehave {CONTROL}\r\nraw \xff bytes: ".encode() + b"\xff\xfe\xed\n")
    sys.stderr.flush()
    time.sleep(0.3)  # the referee drains stderr in a thread: let the tail hold these lines at the fault
    write_message(out, {"type": "action", "decision": message["decision"], "action": {"type": CONTROL}})


zoo.play(escapes)
