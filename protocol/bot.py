"""The Python bot SDK: write `decide(view, legal)` and get framing, handshake and the game loop.

    import random
    from cardarena.protocol.bot import random_action, run

    rng = random.Random(1)

    def decide(view, legal):
        return random_action(legal, rng)  # a legal entry, with an integer drawn inside any range

    run(decide, name="my-random")

or subclass `Bot` to keep state across a game (`start_game`, `end_game`, `decide`). A Bot's
`decide(view, legal, request)` also gets the whole decision request, a `Request`: a dict with
the clock as attributes (`request.time_ms`, the limit per decision; `request.bank_ms`, what is
left of the seat's time bank in this game; `request.deadline()`, when to answer by). The SDK
only needs msgpack; it never imports the referee. Anything printed to stdout would corrupt the
protocol, so `run` moves `sys.stdout` to stderr while the bot runs: print() freely for logs.
"""

from __future__ import annotations

import random
import sys
import time

from cardarena.protocol import PROTOCOL_VERSION
from cardarena.protocol.actions import find_legal, is_range, random_action
from cardarena.protocol.framing import HEADER, decode_body, encode

__all__ = ["Bot", "RandomBot", "Request", "run", "serve", "read_message", "write_message",
           "find_legal", "is_range", "random_action", "seed_argument"]

TYPE_CHECKING = False  # typing's own flag without importing typing (4 ms of a Python bot's start)
if TYPE_CHECKING:
    from typing import Any, BinaryIO, Callable

    View = dict[str, Any]
    Action = dict[str, Any]
else:
    View = Action = dict


class Request(dict):
    """A decision request as the referee sent it (`request["view"]`, `request["legal"]` ...), with
    its clock as attributes (PROTOCOL.md § 5). A bot that ignores them keeps working: answering
    within `time_ms` never touches the bank."""

    def __init__(self, message: dict[str, Any], received_at: float | None = None):
        super().__init__(message)
        #: time.monotonic() when the SDK read the request: the referee's clock started a little before
        self.received_at = time.monotonic() if received_at is None else received_at

    @property
    def time_ms(self) -> int:
        """Milliseconds the bot has for this decision without touching its time bank."""
        return self["time_ms"]

    @property
    def bank_ms(self) -> int:
        """Milliseconds left of the seat's time bank in this game (0 without a bank, or from an
        older referee): a decision may take this much more than `time_ms`, and what it takes
        beyond `time_ms` is gone for the rest of the game."""
        return self.get("bank_ms", 0)

    def deadline(self, bank_share: float = 0.0) -> float:
        """The time.monotonic() by which to answer, spending `bank_share` (0 to 1) of what is left
        in the bank; keep a margin below it for sending the answer."""
        return self.received_at + (self.time_ms + bank_share * self.bank_ms) / 1000


class Bot:
    """A bot: override `decide`; the other hooks are optional."""

    name = "bot"
    version = "0"

    def start_game(self, info: dict[str, Any]) -> None:
        """Called with the game_start message (game, seat, players, names, teams, options)."""

    def decide(self, view: View, legal: list[Action], request: Request) -> Action:
        """Return one action: a legal entry, with an integer chosen inside every range it gives;
        `request` is the whole decision request, with its time limit and time bank."""
        raise NotImplementedError

    def end_game(self, info: dict[str, Any]) -> None:
        """Called with the game_end message (result, reveal, final events)."""


class _FunctionBot(Bot):
    def __init__(self, decide: Callable[[View, list[Action]], Action], name: str, version: str):
        self._decide = decide
        self.name = name
        self.version = version

    def decide(self, view: View, legal: list[Action], request: Request) -> Action:
        return self._decide(view, legal)


class RandomBot(Bot):
    """Plays a uniformly random legal action; seeded, so its play is reproducible."""

    name = "random"
    version = "1"

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.rng = random.Random(seed)

    def start_game(self, info: dict[str, Any]) -> None:
        # Reseed per game so a game's play does not depend on the games before it.
        self.rng = random.Random(f"{self.seed}:{info['game_id']}:{info['seat']}")

    def decide(self, view: View, legal: list[Action], request: Request) -> Action:
        return random_action(legal, self.rng)


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    """`size` bytes from `stream`, or None at a clean end of input before the first byte."""
    data = bytearray()
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            if data:
                raise EOFError("input ended inside a frame")
            return None
        data += chunk
    return bytes(data)


def read_message(stream: BinaryIO) -> dict[str, Any] | None:
    """The next message from the referee, or None when the input has ended."""
    header = _read_exactly(stream, HEADER.size)
    if header is None:
        return None
    (length,) = HEADER.unpack(header)
    body = _read_exactly(stream, length)
    if body is None:
        raise EOFError("input ended inside a frame")
    return decode_body(body, budget=False)  # the referee's frames are trusted: no budget to check


def write_message(stream: BinaryIO, message: dict[str, Any]) -> None:
    """Send one message to the referee."""
    stream.write(encode(message))
    stream.flush()


def serve(bot: Bot, inp: BinaryIO, out: BinaryIO) -> None:
    """Speak the protocol on the given binary streams until shutdown or end of input."""
    while (message := read_message(inp)) is not None:
        kind = message["type"]
        if kind == "hello":
            write_message(out, {"type": "hello", "protocol": PROTOCOL_VERSION,
                                "name": bot.name, "version": bot.version})
        elif kind == "game_start":
            bot.start_game(message)
        elif kind == "decision":
            request = Request(message)
            action = bot.decide(request["view"], request["legal"], request)
            write_message(out, {"type": "action", "decision": message["decision"], "action": action})
        elif kind == "game_end":
            bot.end_game(message)
        elif kind == "shutdown":
            return
        else:
            raise ValueError(f"unknown message type {kind!r} from the referee")


def run(bot: Bot | Callable[[View, list[Action]], Action], name: str = "bot", version: str = "0") -> None:
    """Run `bot` (a Bot, or a `decide(view, legal)` function) on this process's stdin/stdout."""
    if not isinstance(bot, Bot):
        bot = _FunctionBot(bot, name, version)
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # print() in a bot goes to the log, never into the protocol stream
    serve(bot, inp, out)


def seed_argument(argv: list[str] | None = None, default: int = 0) -> int:
    """The seed a bot's command line gives (`--seed N` or `--seed=N`; `default` without one), for bots
    whose one option is their seed. Every game starts the bot afresh, and argparse adds some 15 ms to
    each start of a Python bot (its imports), a third of the whole; this parses the one option
    without it. Anything else on the command line ends the bot as argparse would: a usage line on
    stderr, exit status 2 (`--help`: the usage on stdout, status 0)."""
    args = sys.argv[1:] if argv is None else list(argv)
    usage = f"usage: {sys.argv[0] if sys.argv else 'bot'} [--seed N]"
    if args in (["-h"], ["--help"]):
        print(usage)
        raise SystemExit(0)
    if len(args) == 1 and args[0].startswith("--seed="):
        args = ["--seed", args[0].removeprefix("--seed=")]
    if not args:
        return default
    if len(args) == 2 and args[0] == "--seed":
        try:
            return int(args[1])
        except ValueError:
            pass
        problem = f"--seed takes an integer, not {args[1]!r}"
    else:
        problem = f"unexpected arguments {' '.join(args)!r}"
    print(f"{usage}\n{problem}", file=sys.stderr)
    raise SystemExit(2)
