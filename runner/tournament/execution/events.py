"""What crosses processes during a run, as types, and the one channel that carries it.

An executor yields `RunEvent`s (a game finished, a match's bots were shut down, a worker was
lost) to whoever drives the run, which handles them through an `EventSink` (`drive`). Between
processes, a worker tells its supervisor what it does (`GameBegun`, `Observed`, `Returned`,
`WorkFailed`, `WorkDone`), and a portion host gets `PortionJob`s from its owner and sends back
the run events it played, pickled (`Shipped`). Every one of them travels on a `Channel`: a pipe
of length-prefixed pickled messages, read whole or not at all.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from cardarena.referee.faults import Fault
from cardarena.referee.match import GameRecord
from cardarena.config import BotSpec, Limits
from cardarena.tournament.planning.schedule import PlannedMatch


class EventSink:
    """Whoever drives a run hears each event here; every handler does nothing unless overridden."""

    def game_finished(self, event: FinishedGame) -> bool:
        """A game finished; True stops the run (closing the stream stops the work in flight)."""
        return False

    def match_finished(self, event: FinishedMatch) -> None:
        """A match's bots were shut down."""

    def worker_lost(self, event: WorkerLost) -> None:
        """A worker was lost; its unfinished games are played again."""


@dataclass(frozen=True)
class FinishedGame:
    """A game played to its end: the match and game ids, and its record."""

    match_id: str
    game_id: str
    record: GameRecord

    def deliver(self, sink: EventSink) -> bool:
        return sink.game_finished(self)


@dataclass(frozen=True)
class FinishedMatch:
    """A match whose bots were shut down, with any faults of bots that did not exit cleanly."""

    match_id: str
    shutdown_faults: list[Fault]

    def deliver(self, sink: EventSink) -> bool:
        sink.match_finished(self)
        return False


@dataclass(frozen=True)
class WorkerLost:
    """A worker died or stopped before finishing its match: the game in flight (None when it was
    between games), the bot it was waiting on, and how it ended. Its unfinished games are played again."""

    match_id: str
    game_id: str | None
    bot: str | None  # the waited-on bot's key in `bots`, blamed for the loss
    name: str | None  # that bot's name
    reason: str  # "killed by signal 9 (SIGKILL)", "stopped", ...
    disqualified: str | None = None  # the fault detail, when this loss disqualified the bot

    def deliver(self, sink: EventSink) -> bool:
        sink.worker_lost(self)
        return False

    def line(self) -> str:
        """One warning line: how the worker ended, the bot it waited on, and what it cost."""
        who = f" while it waited on {self.name}" if self.name else ""
        cost = f"game {self.game_id} is played again" if self.game_id else "no game was in flight"
        return f"warning: the referee's worker process was {self.reason}{who} ({self.match_id}): {cost}"


RunEvent = FinishedGame | FinishedMatch | WorkerLost


def drive(events: Iterator[RunEvent], sink: EventSink) -> None:
    """Deliver each event to `sink` until the stream ends or the sink stops it; the stream is closed
    either way, which stops the work in flight and its bots."""
    with contextlib.closing(events):
        for event in events:
            if event.deliver(sink):
                return


# -- between a worker and its supervisor -----------------------------------------------------

@dataclass(frozen=True)
class GameBegun:
    """The worker began a game (the game a loss of the worker would cost)."""

    game_id: str


@dataclass(frozen=True)
class Observed:
    """One of a game's events for the run's observer (a decision, a game's start)."""

    kind: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Returned:
    """What a supervised piece of work returned."""

    value: Any


@dataclass(frozen=True)
class WorkFailed:
    """The work failed outside any bot's control (a bug of the referee's): the traceback, or why."""

    detail: str


@dataclass(frozen=True)
class WorkDone:
    """A worker's or a portion's last message: everything it had to do is done and sent."""


# -- between a portion host and its owner ----------------------------------------------------

@dataclass(frozen=True)
class PortionJob:
    """A portion for a host to play: its bots, limits and disqualified bots, where its logs go,
    and where it is played (`place`) with what went wrong there with each bot beforehand."""

    match: PlannedMatch
    bots: Mapping[str, BotSpec]
    limits: Limits
    disqualified: Mapping[str, str]
    log_root: str
    place: str | None
    problems: Mapping[str, str]


@dataclass(frozen=True)
class Shipped:
    """A run event as the host pickled it: a process that only passes it on need not unpickle it."""

    data: bytes


# -- the channel -----------------------------------------------------------------------------

_HEADER = struct.Struct("<Q")  # the length of each pickled message


class Channel:
    """One end of a pipe of length-prefixed pickled messages: `send` writes to `writer`, `receive`
    waits for one message from `reader`, `arrived` takes those that came without waiting (on a
    non-blocking `reader`). `ended` is set once the other end closed its side."""

    def __init__(self, reader: int | None = None, writer: int | None = None):
        self.reader, self.writer = reader, writer
        self.ended = False
        self._buffer = bytearray()

    def send(self, message: Any) -> None:
        """Write one message (blocking until it is written whole)."""
        data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
        view = memoryview(_HEADER.pack(len(data)) + data)
        while view:
            view = view[os.write(self.writer, view):]

    def receive(self) -> Any:
        """The next message, waiting for it; None when the pipe ended between messages, EOFError
        when it ended in the middle of one."""
        while (message := self._take()) is None:
            if not self._fill():
                if self._buffer:
                    raise EOFError("a message was cut short")
                return None
        return message[0]

    def arrived(self) -> list[Any]:
        """Every whole message that came, without waiting (a partial one waits for its rest)."""
        with contextlib.suppress(BlockingIOError):
            while self._fill():
                pass
        messages = []
        while (message := self._take()) is not None:
            messages.append(message[0])
        return messages

    def _fill(self) -> bool:
        """Read what the pipe holds into the buffer; False at its end (`ended`)."""
        chunk = os.read(self.reader, 1 << 16)
        if not chunk:
            self.ended = True
        self._buffer += chunk
        return bool(chunk)

    def _take(self) -> tuple[Any] | None:
        """The first whole message in the buffer (in a 1-tuple, as a message may be None), or None."""
        if len(self._buffer) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(self._buffer)
        end = _HEADER.size + size
        if len(self._buffer) < end:
            return None
        message = pickle.loads(self._buffer[_HEADER.size:end])
        del self._buffer[:end]
        return (message,)
