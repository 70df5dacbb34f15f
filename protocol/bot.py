"""The Python bot SDK: write `decide(view, legal)` and get framing, handshake and the game loop.

    import random
    from cardarena.protocol.bot import random_action, run

    rng = random.Random(1)

    def decide(view, legal):
        return random_action(legal, rng)  # a legal entry, with an integer drawn inside any range

    run(decide, name="my-random")

or subclass `Bot` to keep state across a game (`start_game`, `end_game`, `decide`). The SDK
only needs msgpack; it never imports the referee. Anything printed to stdout would corrupt the
protocol, so `run` moves `sys.stdout` to stderr while the bot runs: print() freely for logs.
"""

from __future__ import annotations

import random
import sys
from typing import Any, BinaryIO, Callable

from cardarena.protocol import PROTOCOL_VERSION
from cardarena.protocol.actions import find_legal, is_range, random_action
from cardarena.protocol.framing import HEADER, decode_body, encode

__all__ = ["Bot", "RandomBot", "run", "serve", "read_message", "write_message",
           "find_legal", "is_range", "random_action"]

View = dict[str, Any]
Action = dict[str, Any]


class Bot:
    """A bot: override `decide`; the other hooks are optional."""

    name = "bot"
    version = "0"

    def start_game(self, info: dict[str, Any]) -> None:
        """Called with the game_start message (game, seat, players, names, teams, options)."""

    def decide(self, view: View, legal: list[Action], request: dict[str, Any]) -> Action:
        """Return one action: a legal entry, with an integer chosen inside every range it gives."""
        raise NotImplementedError

    def end_game(self, info: dict[str, Any]) -> None:
        """Called with the game_end message (result, reveal, final events)."""


class _FunctionBot(Bot):
    def __init__(self, decide: Callable[[View, list[Action]], Action], name: str, version: str):
        self._decide = decide
        self.name = name
        self.version = version

    def decide(self, view: View, legal: list[Action], request: dict[str, Any]) -> Action:
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

    def decide(self, view: View, legal: list[Action], request: dict[str, Any]) -> Action:
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
            action = bot.decide(message["view"], message["legal"], message)
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
