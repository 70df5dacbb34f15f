import os
import signal
import zoo


def signal_parent(out, message):
    parent = os.getppid()
    for sig in (signal.SIGSTOP, signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(parent, sig)
            zoo.say(f"sent {sig.name} to my parent {parent}")
        except OSError as error:
            zoo.say(f"cannot send {sig.name} to my parent {parent}: {error}")
    zoo.answer_patiently(out, message)


zoo.play(signal_parent)
