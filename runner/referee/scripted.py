"""A bot in memory, as a test scripts it: a `Transport` with no process, so that the rules of the
decision loop (fallback, faults of every kind, late and unsolicited frames, ranks) can be checked
in microseconds; the hostile bots of tests/zoo check the same rules end to end over real pipes.

A script is a function the transport calls with each message the referee's frames deliver to the
bot (decoded, in order); what it returns is what the bot does in reply:

    {"type": "action", ...}      a frame holding that message (written at once)
    b"..."                       raw bytes on its stdout (a broken frame, printed text)
    Late(reply)                  a reply that arrives only after the referee's next message: an
                                 answer that misses its deadline, or bytes nobody asked for
    Exit(status)                 the bot exits (negative: killed by that signal)
    Stderr("...")                text on its stderr
    Think(seconds)               the bot thinks that long before the frames and bytes that follow

Nothing returned (an empty list) is silence: the referee's wait for an answer times out at once.
Time is a `Clock` of the test's (several bots may share one): a bot's thinking moves it on only as
far as the referee waits, so a reply that comes after its deadline is a timeout, and a test says
to the microsecond how long each decision takes (the time banks' rules are checked so).
The idea is python-chess's `MockTransport` (chess/engine.py): the expected exchange, scripted.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Union

from cardarena.protocol import PROTOCOL_VERSION
from cardarena.protocol.actions import random_action
from cardarena.protocol.framing import DEFAULT_MAX_FRAME, FrameError, FrameReader, decode_body, encode, text_on_stdout
from cardarena.referee.transport import NoReply, Transport, TransportError

STDERR_TAIL = 2048  # characters of stderr kept, as a real bot's transport keeps bytes


@dataclass(frozen=True)
class Late:
    """A reply that reaches the referee only after its next message has reached the bot."""

    reply: Any


@dataclass(frozen=True)
class Exit:
    """The bot exits with `status` (negative: killed by that signal)."""

    status: int = 0


@dataclass(frozen=True)
class Stderr:
    """Text the bot writes to its stderr."""

    text: str


@dataclass(frozen=True)
class Think:
    """The bot spends `seconds` before what it does next (its frames and bytes arrive that much later)."""

    seconds: float


@dataclass
class Clock:
    """Virtual time in seconds: the referee's waits move it on (`ScriptedTransport.receive`), and so
    may a test, for time that is neither a bot's nor a wait (the referee's own work, say)."""

    now: float = 0.0

    def advance(self, seconds: float) -> None:
        self.now += seconds


Reply = Union[dict, bytes, Late, Exit, Stderr, Think]
#: script(message) -> what the bot does on reading `message`
Script = Callable[[dict[str, Any]], Iterable[Reply]]


def hello(name: str = "scripted") -> dict[str, Any]:
    """A bot's valid answer to the referee's hello."""
    return {"type": "hello", "protocol": PROTOCOL_VERSION, "name": name, "version": "1"}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """A valid answer to a decision request: a legal action drawn at random, seeded by the game and decision."""
    action = random_action(request["legal"], random.Random(f"{request['game_id']}:{request['decision']}"))
    return {"type": "action", "decision": request["decision"], "action": action}


def well_behaved(message: dict[str, Any]) -> list[Reply]:
    """The script of a bot that does everything right: hello, then a legal action per decision,
    and a clean exit on shutdown."""
    if message["type"] == "hello":
        return [hello()]
    if message["type"] == "decision":
        return [answer(message)]
    if message["type"] == "shutdown":
        return [Exit(0)]
    return []


class ScriptedTransport(Transport):
    """A bot whose every reply comes from `script`; `heard` lists what it has read, in order."""

    def __init__(self, script: Script = well_behaved, *, max_frame: int = DEFAULT_MAX_FRAME,
                 start_error: str | None = None, deaf: bool = False, cap: str | None = None,
                 clock: Clock | None = None):
        """`start_error`: why it cannot start (a start fault); `deaf`: it never reads its input (the
        referee's writes time out); `cap`: the resource cap it is found to have hit when it crashes
        or times out (as a real sandbox's counters would tell); `clock`: the time it lives in (its
        own when None)."""
        self.script = script
        self.clock = clock or Clock()
        self.start_error = start_error
        self.deaf = deaf
        self.cap = cap
        self.heard: list[dict[str, Any]] = []
        self.frozen = False
        self._spawned = False
        self._status: int | None = None  # the exit status, once it has exited
        self._input = FrameReader(max_frame)
        self._output = FrameReader(max_frame)
        self._late: list[Any] = []
        self._sent: list[tuple[float, bytes]] = []  # what the bot wrote and not yet arrived: (when, bytes)
        self._thinking = 0.0  # when the bot is done with what it has read so far
        self._stderr = ""
        self._received = False

    @property
    def alive(self) -> bool:
        return self._spawned and self._status is None

    @property
    def started(self) -> bool:
        return self._spawned

    @property
    def pid(self) -> int | None:
        return None

    def now(self) -> float:
        return self.clock.now

    def spawn(self) -> None:
        if self.start_error is not None:
            raise TransportError("start", self.start_error)
        self._spawned = True

    def offer(self, data: bytes) -> int:
        if not self.alive:
            raise TransportError("crash", f"the bot closed its input ({self.exit_status()})")
        if self.deaf:
            return 0
        self._deliver(data)
        return len(data)

    def write(self, data: bytes, deadline: float) -> None:
        if self.offer(data) < len(data):
            raise TransportError("timeout", f"the bot did not read its input: {len(data)} bytes of a frame "
                                            "could not be sent")

    def receive(self, deadline: float) -> tuple[dict[str, Any], bytes]:
        while True:
            try:
                body = self._output.next_body()
                if body is not None:
                    return decode_body(body), body
            except FrameError as error:
                raise TransportError(error.kind, str(error), error.data) from None
            if not self._sent or (self._sent[0][0] > deadline and self._status is None):
                break
            when, data = self._sent.pop(0)
            self.clock.now = max(self.clock.now, when)
            self._output.feed(data)
        self.clock.now = max(self.clock.now, deadline)  # the referee waited to the end
        pending = self._output.pending()
        if self._status is not None:
            text = text_on_stdout(pending)
            raise TransportError("crash", f"the bot closed its output ({self.exit_status()})"
                                 + (f"; {text}" if text else ""), pending)
        raise NoReply(pending, self._received)

    def settle(self, data: bytes, grace: float) -> int:
        if self.alive and not self.deaf:
            self._deliver(data)
            return len(data)
        return 0

    def unsolicited(self) -> bytes:
        while self._sent and self._sent[0][0] <= self.clock.now:
            self._output.feed(self._sent.pop(0)[1])
        return self._output.pending()

    def freeze(self, frozen: bool) -> None:
        self.frozen = frozen
        if not frozen:
            self._deliver(b"")  # what reached it while it was frozen

    def wait_exit(self, timeout: float) -> int | None:
        return self._status

    def kill(self) -> None:
        if self._spawned and self._status is None:
            self._status = -9
        self.frozen = False

    def exit_status(self) -> str:
        if self._status is None:
            return "still running"
        return f"killed by signal {-self._status}" if self._status < 0 else f"exit status {self._status}"

    def stderr_tail(self) -> str:
        return self._stderr[-STDERR_TAIL:]

    def cap_evidence(self, stderr_tail: str) -> str | None:
        return self.cap

    def _deliver(self, data: bytes) -> None:
        """The bot reads `data` (once thawed, if frozen): each whole message first lets the late
        replies through, then runs the script."""
        self._input.feed(data)
        while self._status is None and not self.frozen and (body := self._input.next_body()) is not None:
            message = decode_body(body, budget=False)
            self.heard.append(message)
            self._thinking = max(self._thinking, self.clock.now)
            late, self._late = self._late, []
            for reply in late:
                self._emit(reply)
            for reply in self.script(message):
                self._emit(reply)

    def _emit(self, reply: Reply) -> None:
        """What the bot does: write a frame or bytes, hold a reply back, exit, write to stderr, or think."""
        if isinstance(reply, Late):
            self._late.append(reply.reply)
        elif isinstance(reply, Exit):
            self._status = reply.status
        elif isinstance(reply, Stderr):
            self._stderr += reply.text
        elif isinstance(reply, Think):
            self._thinking += reply.seconds
        else:
            self._sent.append((self._thinking, encode(reply) if isinstance(reply, dict) else reply))
            self._received = True
