"""After each answer, sends SIGSTOP to its parent (the referee's worker) 100 ms later, from a thread,
while its opponent thinks: where it can reach its parent, the worker stalls on the opponent's
decision, and a supervisor that blames whoever the worker was waiting on blames the opponent."""
import os
import signal
import threading
import time

import zoo


framing = threading.Lock()  # one framing thread at a time: a thread per answer would hit the process cap


def stop_parent_later(parent):
    try:
        time.sleep(0.1)
        os.kill(parent, signal.SIGSTOP)
        zoo.say(f"sent SIGSTOP to my parent {parent}")
    except OSError as error:
        zoo.say(f"cannot send SIGSTOP to my parent {parent}: {error}")
    finally:
        framing.release()


def answer_then_frame(out, message):
    zoo.answer_patiently(out, message)
    if framing.acquire(blocking=False):
        threading.Thread(target=stop_parent_later, args=(os.getppid(),), daemon=True).start()


zoo.play(answer_then_frame)
