"""Typed bot faults: everything a bot can do wrong, with the evidence to diagnose it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

#: fault kinds, each with the part of PROTOCOL.md it breaks
FAULT_KINDS = {
    "timeout": "PROTOCOL.md § Deadlines: no complete reply within the time allowed",
    "crash": "PROTOCOL.md § Lifecycle: the bot process exited or closed its pipes",
    "malformed": "PROTOCOL.md § Framing: the frame body is not one msgpack map with a str type",
    "oversize": "PROTOCOL.md § Framing: the frame header announces more than the maximum frame size",
    "protocol": "PROTOCOL.md § Messages: the message breaks its schema or comes out of turn",
    "illegal": "PROTOCOL.md § Actions: the action is not one of the legal actions offered",
    "handshake": "PROTOCOL.md § Handshake: no valid hello (or a protocol version mismatch)",
    "start": "the bot's command could not be started",
}

MAX_EVIDENCE = 256  # bytes of offending data kept in a fault record


@dataclass(frozen=True)
class Fault:
    """One bot fault: who, where, what kind, why, and the offending bytes and stderr tail."""

    kind: str
    bot: str
    detail: str
    seat: int | None = None
    game: str | None = None
    game_id: str | None = None
    decision: int | None = None
    data: bytes = b""
    stderr_tail: str = ""
    message: Any = None  # the decoded offending message, when it decoded

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}")

    @property
    def rule(self) -> str:
        """The part of the protocol this fault breaks."""
        return FAULT_KINDS[self.kind]

    def at(self, **context: Any) -> "Fault":
        """The same fault with game context (seat, game, decision ...) filled in."""
        return replace(self, **context)

    def summary(self) -> str:
        """One line for humans: bot, kind, place, and what was wrong."""
        where = []
        if self.game:
            where.append(self.game)
        if self.game_id:
            where.append(f"game {self.game_id}")
        if self.seat is not None:
            where.append(f"seat {self.seat}")
        if self.decision is not None:
            where.append(f"decision {self.decision}")
        place = f" ({', '.join(where)})" if where else ""
        return f"{self.bot}: {self.kind}{place}: {self.detail}"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for records: bytes as hex, truncated."""
        data = asdict(self)
        data["data"] = self.data[:MAX_EVIDENCE].hex()
        data["data_length"] = len(self.data)
        return data


class BotFault(Exception):
    """Raised inside the referee when a bot faults; the match turns it into a recorded Fault."""

    def __init__(self, fault: Fault):
        super().__init__(fault.summary())
        self.fault = fault
