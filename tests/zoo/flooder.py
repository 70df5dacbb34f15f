"""Writes 256 KiB to stderr, then exits with status 3, at its first decision of every game (with
`--after 0`): restarted for each game, its stderr log must still stop at the cap for the run."""
import sys

import zoo

FLOOD = b"x" * (256 * 1024)


def flood_and_quit(out, message):
    sys.stderr.buffer.write(FLOOD)
    sys.stderr.buffer.flush()
    sys.exit(3)


zoo.play(flood_and_quit)
