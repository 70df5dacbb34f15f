import sys
import zoo


def quit_now(out, message):
    sys.exit(3)


zoo.play(quit_now)
