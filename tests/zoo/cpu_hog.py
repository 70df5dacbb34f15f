"""At its first decision after `--after`, starts `--threads` workers (default 8) that burn CPU for
as long as it runs, then keeps answering legally: it must not slow the opponents sharing its core.
`--mode threads` spins threads; `--mode sessions` forks processes that each start a session of their
own (`setsid`), which defeats the kernel's per-session scheduling groups (autogroup)."""
import argparse
import hashlib
import os
import threading

import zoo

parser = argparse.ArgumentParser()
parser.add_argument("--threads", type=int, default=8)
THREADS = parser.parse_known_args()[0].threads
BLOCK = bytes(1 << 20)  # hashing a block this big releases the GIL: the threads really run at once


def spin():
    while True:
        hashlib.sha256(BLOCK).digest()


def spin_in_sessions():
    for _ in range(THREADS):
        if os.fork() == 0:
            os.setsid()
            spin()


def spin_in_threads():
    for _ in range(THREADS):
        threading.Thread(target=spin, daemon=True).start()


def hogging(start):
    def hog(out, message, started=[]):
        if not started:
            start()
            started.append(True)
        zoo.answer_patiently(out, message)
    return hog


zoo.play({"threads": hogging(spin_in_threads), "sessions": hogging(spin_in_sessions)})
