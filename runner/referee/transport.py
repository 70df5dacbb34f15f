"""What a bot session needs of the channel to its bot: start it, move frames both ways under
deadlines, watch it, stop it, and say what it left behind (its stderr, a cap it hit).

`BotSession` (process.py) speaks the protocol over a `Transport`: the real one is a process's pipes
(`pipes.PipeTransport`); an in-memory one scripted by a test (`scripted.ScriptedTransport`) lets the
decision loop's rules be checked without a process. A transport reports what went wrong as a
`TransportError` holding the fault's kind, detail and evidence; the session turns it into the fault
(it alone knows what was asked, and the bot's name).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from typing import Any


class TransportError(Exception):
    """The channel to a bot failed in a way that is the bot's fault: `kind` is the fault kind
    ("start", "crash", "timeout", "oversize", "malformed", ...), `data` the bytes that show it."""

    def __init__(self, kind: str, detail: str, data: bytes = b""):
        super().__init__(detail)
        self.kind = kind
        self.data = data


class NoReply(TransportError):
    """No whole frame before the deadline: `data` holds what did arrive, `received` says whether the
    bot has sent a byte at all since it started. The session words the detail (it knows what it asked)."""

    def __init__(self, data: bytes, received: bool):
        super().__init__("timeout", "", data)
        self.received = received


class Transport(ABC):
    """The channel to one bot: framed messages both ways, every wait bounded by a deadline."""

    def now(self) -> float:
        """The clock that deadlines and decision times are reckoned on: the monotonic clock (a
        scripted bot's is virtual, so that a test can say how long it thinks)."""
        return time.monotonic()

    @abstractmethod
    def spawn(self) -> None:
        """Start the bot; TransportError("start") when it cannot be started."""

    @property
    @abstractmethod
    def alive(self) -> bool:
        """True while the bot runs."""

    @property
    @abstractmethod
    def started(self) -> bool:
        """True once `spawn` has started the bot (until `kill`, which leaves it so)."""

    @property
    @abstractmethod
    def pid(self) -> int | None:
        """The bot's process id, where it has one."""

    @abstractmethod
    def write(self, data: bytes, deadline: float) -> None:
        """Write frames to the bot, waiting for it to read at most until `deadline` (TransportError)."""

    @abstractmethod
    def offer(self, data: bytes) -> int:
        """Write what of `data` the channel takes now, without waiting (a frozen bot's pipe takes a
        request); return how many bytes. TransportError("crash") when the bot's input is closed."""

    @abstractmethod
    def receive(self, deadline: float) -> tuple[dict[str, Any], bytes]:
        """One message and its raw body before `deadline`: TransportError for a bad frame or an
        exit, NoReply when the deadline passes first."""

    @abstractmethod
    def settle(self, data: bytes, grace: float) -> int:
        """Write what of `data` fits without waiting and give the bot up to `grace` seconds to read
        it (so that whatever it sent in reply to what came before has arrived); return how many
        bytes were written."""

    @abstractmethod
    def unsolicited(self) -> bytes:
        """What the bot has sent beyond the frames read so far, without waiting (at most a maximum
        frame's worth). An end of file is left to the next `receive`."""

    @abstractmethod
    def freeze(self, frozen: bool) -> None:
        """Stop (or resume) every process of the bot, acting only when that changes its state, and
        not at all where it cannot be frozen."""

    @abstractmethod
    def wait_exit(self, timeout: float) -> int | None:
        """The bot's exit status once it exits within `timeout` seconds, else None."""

    @abstractmethod
    def kill(self) -> None:
        """Kill the bot and everything it started, and release what it held. Safe to call twice."""

    @abstractmethod
    def exit_status(self) -> str:
        """How the bot ended ("exit status 3", "killed by signal 9", "still running")."""

    @abstractmethod
    def stderr_tail(self) -> str:
        """The last bytes the bot wrote to stderr, decoded leniently."""

    @abstractmethod
    def cap_evidence(self, stderr_tail: str) -> str | None:
        """Which resource cap stopped the bot, with its value, or None when none did."""
