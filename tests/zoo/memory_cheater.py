"""A cheater with a memory: it keeps what each game showed it (its hand, and the hands `game_end`
reveals) in its own memory, in /tmp, in $HOME, in $TMPDIR, in /dev/shm, in its own folder (the
current directory) and in its uid's kernel keyring (the hand alone; keys that expire after two minutes), and at
each `game_start` looks for a record of the same deal (the game id without its rotation) from an
earlier game. It plays random legal moves and reports on stderr, one line per
game: `memory-cheater game=<id> process=<id> in-memory=<yes|no> found=<places|none>` (a random
process id: in a PID namespace every bot process is pid 2).

Usage: python memory_cheater.py --namespace NAME (NAME keeps one test's records apart from
another's; places where a write fails, as in a read-only folder, are skipped).
"""

import argparse
import ctypes
import hashlib
import json
import tempfile
import uuid
from pathlib import Path

from cardarena.protocol.bot import RandomBot, run


PROCESS = uuid.uuid4().hex  # names this process in the reports
LIBC = ctypes.CDLL(None, use_errno=True)
SYS_ADD_KEY, SYS_KEYCTL = 248, 250  # x86_64
KEY_SPEC_USER_KEYRING, KEYCTL_SEARCH, KEYCTL_SET_TIMEOUT = -4, 10, 15


def record_name(deal: str) -> str:
    """The file a deal's record is kept in (game ids hold slashes)."""
    return hashlib.sha256(deal.encode()).hexdigest()[:16] + ".json"


class MemoryCheater(RandomBot):
    """The random bot, plus a memory of every deal it saw, in-process and on disk."""

    name = "memory-cheater"

    def __init__(self, namespace: str):
        super().__init__(0)
        folder = f"memory-cheater-{namespace}"
        self.places = {"/tmp": Path("/tmp") / folder, "$HOME": Path.home() / f".{folder}",
                       "$TMPDIR": Path(tempfile.gettempdir()) / folder, "/dev/shm": Path("/dev/shm") / folder,
                       "folder": Path.cwd() / f".{folder}"}
        self.key_prefix = folder
        self.remembered: dict[str, dict] = {}  # deal → record, in this process's memory
        self.deal = self.hand = None

    def start_game(self, info):
        super().start_game(info)
        self.deal, self.hand = info["game_id"].rsplit("/", 1)[0], None
        name = record_name(self.deal)
        found = sorted(label for label, folder in self.places.items() if (folder / name).is_file())
        if LIBC.syscall(SYS_KEYCTL, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, b"user", self.key_name(name), 0) > 0:
            found.append("keyring")
        print(f"memory-cheater game={info['game_id']} process={PROCESS} "
              f"in-memory={'yes' if self.deal in self.remembered else 'no'} found={','.join(found) or 'none'}",
              flush=True)

    def decide(self, view, legal, request):
        if self.hand is None:
            self.hand = view.get("hand")
        return super().decide(view, legal, request)

    def end_game(self, info):
        record = {"deal": self.deal, "hand": self.hand, "reveal": info["reveal"]}
        self.remembered[self.deal] = record
        for folder in self.places.values():
            try:
                folder.mkdir(parents=True, exist_ok=True)
                (folder / record_name(self.deal)).write_text(json.dumps(record))
            except OSError:
                pass  # a read-only folder (the sandbox's): nothing to remember there
        # the hand alone: a uid's keys may hold 20,000 bytes in all, and whole records (about 1 KB each)
        # filled that within one test run, after which no key could be added for minutes
        payload = json.dumps(self.hand).encode()
        key = LIBC.syscall(SYS_ADD_KEY, b"user", self.key_name(record_name(self.deal)), payload, len(payload),
                           KEY_SPEC_USER_KEYRING)
        if key > 0:  # refused (the sandbox's seccomp filter): nothing to remember there
            LIBC.syscall(SYS_KEYCTL, KEYCTL_SET_TIMEOUT, key, 120)

    def key_name(self, record: str) -> bytes:
        """The description of a deal's record in the keyring."""
        return f"{self.key_prefix}-{record}".encode()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--namespace", required=True)
    run(MemoryCheater(parser.parse_args().namespace))


if __name__ == "__main__":
    main()
