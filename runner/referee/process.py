"""One bot's session: shake hands, exchange the protocol's messages under deadlines, stop it, and
turn whatever goes wrong into a fault that names the bot and shows the evidence.

The session speaks the protocol; how bytes reach the bot is its `Transport`'s business: a real
process's pipes (`BotProcess`, over `pipes.PipeTransport`), or a script in memory for tests
(`scripted.ScriptedTransport`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cardarena.config import BotSpec, Limits
from cardarena.protocol import PROTOCOL_VERSION
from cardarena.protocol.framing import encode, text_on_stdout
from cardarena.protocol.messages import ProtocolViolation, check_hello
from cardarena.referee.faults import BotFault, Fault
from cardarena.referee.pipes import PipeTransport
from cardarena.referee.transport import NoReply, Transport, TransportError

REFEREE_NAME = "cardarena"
SILENT_HINT = ("it sent nothing: does it read frames from stdin (a 4-byte big-endian length, then one msgpack map), "
               "answer hello and flush stdout? A decoder that returns JS Maps (msgpackr's mapsAsObjects: false) "
               "hides the \"type\" key: decode to plain objects (PROTOCOL.md § Checklist for a bot in a new language)")


class BotSession:
    """A bot speaking the protocol over `transport`; every failure is a BotFault."""

    def __init__(self, spec: BotSpec, limits: Limits, transport: Transport):
        self.spec = spec
        self.limits = limits
        self.transport = transport
        self.hello: dict[str, Any] | None = None
        self._outbox = bytearray()

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """True while the bot runs."""
        return self.transport.alive

    @property
    def pid(self) -> int | None:
        return self.transport.pid

    def start(self) -> dict[str, Any]:
        """Start the bot and complete the handshake; return its hello (BotFault on any failure)."""
        self.spawn()
        deadline = self.transport.now() + self.limits.handshake_timeout
        self.send({"type": "hello", "protocol": PROTOCOL_VERSION, "referee": REFEREE_NAME}, deadline)
        message, raw = self.receive(deadline, self.limits.handshake_timeout)
        try:
            self.hello = check_hello(message)
        except ProtocolViolation as error:
            raise BotFault(self._fault("handshake", str(error), raw, message)) from None
        return self.hello

    def spawn(self) -> None:
        """Start the bot without the handshake."""
        try:
            self.transport.spawn()
        except TransportError as error:
            raise BotFault(self._fault(error.kind, str(error), error.data)) from None

    def freeze(self, frozen: bool) -> None:
        """Stop (or resume) every process of the bot, so that what it runs outside its turn costs the
        bot deciding nothing; acts only when the state changes, and not at all where it cannot."""
        self.transport.freeze(frozen)

    def stop(self) -> bool:
        """Ask the bot to shut down, wait `shutdown_grace`, then kill it; True if it exited by itself."""
        if not self.transport.started:
            return True
        clean = False
        self.freeze(False)
        if self.alive:
            try:
                self.send({"type": "shutdown"}, self.transport.now() + self.limits.shutdown_grace)
                clean = self.transport.wait_exit(self.limits.shutdown_grace) == 0
            except BotFault:
                clean = False
        self.kill()
        return clean

    def kill(self) -> None:
        """Kill the bot and everything it started. Safe to call twice."""
        self.transport.kill()

    # -- messages --------------------------------------------------------------------------

    def post(self, message: dict[str, Any]) -> None:
        """Queue a notification (game_start, game_end) to go out with the next `send`.

        A bot needs no answer to these, so coalescing them into the next write spares it one
        wake-up per message: on short games that is most of the referee's overhead.
        """
        self._outbox += encode(message)

    def send(self, message: dict[str, Any], deadline: float) -> None:
        """Write queued notifications and one frame, waiting for the bot at most until `deadline`."""
        self._write(self._frames(message), deadline)

    def ask(self, request: dict[str, Any], allowed: float, bank: float = 0.0) -> tuple[dict[str, Any], bytes, float]:
        """Send a decision request and take the answer within `allowed` seconds and `bank` more (what
        is left of the seat's time bank); return the answer, its raw body and the seconds the bot took.
        The clock starts once the frames are encoded (the referee's work, not the bot's), as the
        referee writes them, and stops when the whole answer has arrived (PROTOCOL.md § 5).

        A frozen bot is thawed once what fits of the request is in its pipe: the read it resumes
        finds the request, where thawing it first would wake it once for nothing (its read, back
        to sleep) and again for the request, two more switches of a shared core per turn."""
        data = self._frames(request)
        started = self.transport.now()
        deadline = started + allowed + bank
        try:
            sent = self.transport.offer(data)
        except TransportError as error:
            raise BotFault(self._fault(error.kind, str(error), error.data)) from None
        self.freeze(False)
        if sent < len(data):
            self._write(memoryview(data)[sent:], deadline)
        message, raw = self.receive(deadline, allowed, bank if self.limits.time_bank else None)
        return message, raw, self.transport.now() - started

    def _frames(self, message: dict[str, Any]) -> bytes:
        """The queued notifications and `message`, encoded, the queue emptied."""
        if not self._outbox:
            return encode(message)
        self._outbox += encode(message)
        data = bytes(self._outbox)
        self._outbox.clear()
        return data

    def _write(self, data: bytes, deadline: float) -> None:
        try:
            self.transport.write(data, deadline)
        except TransportError as error:
            raise BotFault(self._fault(error.kind, str(error), error.data)) from None

    def receive(self, deadline: float, allowed: float | None = None,
                bank: float | None = None) -> tuple[dict[str, Any], bytes]:
        """Read one message before `deadline` (`allowed` seconds after the request, and `bank` more
        from a time bank when one is in play, for the timeout's message); return it and its raw body."""
        try:
            return self.transport.receive(deadline)
        except NoReply as error:
            detail = self._timeout_detail(deadline, allowed, bank, error)
            raise BotFault(self._fault("timeout", detail, error.data)) from None
        except TransportError as error:
            raise BotFault(self._fault(error.kind, str(error), error.data)) from None

    def settle(self, grace: float) -> bytes:
        """Deliver the queued notifications now, give the bot up to `grace` seconds to read them, and
        return `unsolicited()`: a bot handles its input in order, so once it has read on, whatever it
        sent in reply to what came before (a second answer, say) has arrived."""
        del self._outbox[:self.transport.settle(bytes(self._outbox), grace)]
        return self.unsolicited()

    def unsolicited(self) -> bytes:
        """What the bot has sent beyond the messages read so far, without waiting (at most a maximum
        frame's worth): bytes no request asked for. An end of file is left to the next request."""
        return self.transport.unsolicited()

    def _timeout_detail(self, deadline: float, allowed: float | None, bank: float | None, error: NoReply) -> str:
        """Why a reply timed out: the limit, what was left of the time bank, the time waited, and what
        arrived (text printed on stdout, part of a frame, or nothing at all at the handshake)."""
        detail = "no hello" if self.hello is None else "no reply"
        if allowed is None:
            detail += " within the time allowed"
        elif bank is None:
            waited = self.transport.now() - (deadline - allowed)
            detail += f" within the {allowed:g} s allowed (waited {waited:.3f} s)"
        else:
            waited = self.transport.now() - (deadline - allowed - bank)
            total = f"its time bank of {self.limits.time_bank:g} s per game"
            detail += (f" within the {allowed:g} s allowed plus the {bank:.3f} s left in its time bank (waited "
                       f"{waited:.3f} s): {total} is used up" if bank > 0 else
                       f" within the {allowed:g} s allowed (waited {waited:.3f} s): {total} was used up by "
                       "its earlier decisions")
        text = text_on_stdout(error.data)
        if text is not None:
            return f"{detail}; {text}"
        if error.data:
            return f"{detail}; {len(error.data)} bytes of an incomplete frame arrived"
        if self.hello is None and not error.received:
            return f"{detail}; {SILENT_HINT}"
        return detail

    # -- evidence --------------------------------------------------------------------------

    def stderr_tail(self) -> str:
        """The last bytes the bot wrote to stderr, decoded leniently."""
        return self.transport.stderr_tail()

    def exit_status(self) -> str:
        """How the bot ended ("exit status 3", "killed by signal 9"), waiting briefly for it."""
        return self.transport.exit_status()

    def _fault(self, kind: str, detail: str, data: bytes = b"", message: Any = None) -> Fault:
        tail = self.stderr_tail()
        if kind in ("crash", "timeout"):
            cap = self.transport.cap_evidence(tail)
            if cap is not None:
                kind, detail = "resource", f"{cap}; {detail}"
        return Fault(kind=kind, bot=self.spec.name, detail=detail, data=data, stderr_tail=tail, message=message)


class BotProcess(BotSession):
    """A bot session over a real process's pipes, started under the sandbox."""

    def __init__(self, spec: BotSpec, limits: Limits, log_path: Path | None = None, log_note: str = ""):
        """`log_path` is the bot's stderr log, shared by all its starts in a run (appended to, capped
        at `limits.stderr_cap` on disk); `log_note` says where this start belongs in its header line."""
        super().__init__(spec, limits, PipeTransport(spec, limits, log_path, log_note))
