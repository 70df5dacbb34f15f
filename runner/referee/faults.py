"""Typed bot faults: everything a bot can do wrong, with the evidence to diagnose it.

Evidence comes from a hostile bot, so a Fault keeps it as plain, JSON-safe data of bounded size,
made once when the fault is created (`plain`, `cut`), and every place that shows bot text to a
person escapes its control characters (`printable`).
"""

from __future__ import annotations

import math
import re
import reprlib
import unicodedata
from dataclasses import dataclass, replace
from typing import Any, Mapping

#: fault kinds, each with the part of PROTOCOL.md it breaks
FAULT_KINDS = {
    "timeout": "PROTOCOL.md § Deadlines: no complete reply within the time allowed",
    "crash": "PROTOCOL.md § Lifecycle: the bot process exited or closed its pipes",
    "malformed": "PROTOCOL.md § Framing: the bytes are not frames of one msgpack map with a str type each, "
                 "within the decoding limits (text printed on stdout, say)",
    "oversize": "PROTOCOL.md § Framing: the frame header announces more than the maximum frame size",
    "protocol": "PROTOCOL.md § Messages: the message breaks its schema, repeats a key, or comes out of turn",
    "illegal": "PROTOCOL.md § Actions: the action is not one of the legal actions offered",
    "handshake": "PROTOCOL.md § Messages: no valid hello (or another protocol version) within the handshake "
                 "timeout (§ Deadlines)",
    "start": "PROTOCOL.md § Transport: the bot's command could not be started",
    "sabotage": "PROTOCOL.md § Lifecycle: the referee's process was killed or stopped while it waited on the bot "
                "(twice in one game: the bot is left out of the rest of the run)",
    "resource": "PROTOCOL.md § Resource caps: the bot reached a cap on memory, processes, open files or disk",
}

MAX_EVIDENCE = 256  # bytes of offending data kept in a fault record
MAX_DETAIL = 2048  # characters of a fault's detail
MAX_MESSAGE = 4096  # characters (about) of a decoded message kept as evidence
MAX_STDERR = 4096  # characters of a stderr tail
MAX_NESTING = 40  # levels of a value kept as evidence (beyond the decoder's 32: nothing decoded is cut)
_MAX_INT_BITS = 64  # msgpack's widest int; a wider Python int is kept as a description


def counted(count: int, noun: str) -> str:
    """`count` and `noun`, plural unless the count is one: "1 game", "2 games", "0 games"."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def cut(text: str, limit: int, keep: str = "start") -> str:
    """`text` if it has at most `limit` characters, else its start (or end) with the full length
    noted, the whole within `limit` characters (so cutting twice changes nothing)."""
    if len(text) <= limit:
        return text
    note = f" … [cut: {len(text):,} characters in all]"
    room = max(limit - len(note), 0)
    return text[:room] + note if keep == "start" else note.lstrip() + " " + text[len(text) - room:]


def plain(value: Any, limit: int = MAX_MESSAGE) -> Any:
    """`value` (a decoded message, say) as JSON-safe data of about `limit` characters at most.

    Maps keep str keys (others are written out), bytes become hex, non-finite floats and ints
    wider than 64 bits become text, other objects their bounded repr. Past the limit, long strings
    are cut and containers end with a marker counting what was left out; past MAX_NESTING levels a
    container becomes a marker. The walk recurses at most MAX_NESTING deep.
    """
    remaining = limit

    def walk(item: Any, depth: int) -> Any:
        nonlocal remaining
        if item is None or isinstance(item, bool):
            remaining -= 5
            return item
        if isinstance(item, int):
            remaining -= 8
            return item if item.bit_length() <= _MAX_INT_BITS else f"<int of {item.bit_length()} bits>"
        if isinstance(item, float):
            remaining -= 8
            return item if math.isfinite(item) else repr(item)
        if isinstance(item, str):
            shown = cut(item, max(remaining, 64))
            remaining -= len(shown) + 2
            return shown
        if isinstance(item, (bytes, bytearray, memoryview)):
            shown = cut(bytes(item).hex(), max(remaining, 64))
            remaining -= len(shown) + 2
            return shown
        if isinstance(item, (dict, list, tuple)):
            if depth >= MAX_NESTING:
                remaining -= 40
                return f"<{type(item).__name__} nested over {MAX_NESTING} deep>"
            remaining -= 2
            if isinstance(item, dict):
                kept: dict[str, Any] = {}
                for index, (key, entry) in enumerate(item.items()):
                    if remaining <= 0:
                        kept["…"] = f"[cut: {len(item) - index:,} more of {len(item):,} keys]"
                        break
                    name = cut(key if isinstance(key, str) else repr(walk(key, depth + 1)), max(remaining, 64))
                    remaining -= len(name) + 4
                    kept[name] = walk(entry, depth + 1)
                return kept
            shown_items: list[Any] = []
            for index, entry in enumerate(item):
                if remaining <= 0:
                    shown_items.append(f"… [cut: {len(item) - index:,} more of {len(item):,} items]")
                    break
                shown_items.append(walk(entry, depth + 1))
                remaining -= 1
            return shown_items
        shown = cut(_BOUNDED_REPR.repr(item), max(remaining, 64))
        remaining -= len(shown) + 2
        return shown

    return walk(value, 0)


_BOUNDED_REPR = reprlib.Repr()
_BOUNDED_REPR.maxstring = _BOUNDED_REPR.maxother = 200

#: Unicode general categories never shown as they are, since they hide, reorder or fake what a person
#: reads: controls (C0, DEL, C1: 0x9b starts a terminal escape), format characters (bidirectional marks,
#: overrides and isolates, U+061C, zero-width characters, the byte-order mark, tag characters),
#: private use, unassigned code points (non-characters among them), lone surrogates, line and
#: paragraph separators
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"})
_ASCII_CONTROL = re.compile("[\x00-\x1f\x7f]")


def escape_hidden(text: str, keep: str = "") -> str:
    """`text` with every character of HIDDEN_CATEGORIES but those in `keep` written out visibly
    (`\\x1b`, `\\u200b`, `\\U000e0041`)."""
    if text.isascii():  # the common case, quickly
        return _ASCII_CONTROL.sub(lambda match: match.group() if match.group() in keep else _escape(match.group()), text)
    return "".join(char if char in keep or unicodedata.category(char) not in HIDDEN_CATEGORIES else _escape(char)
                   for char in text)


def printable(text: str) -> str:
    """`text` safe to show a person on a terminal or in XML or Markdown: control and invisible
    characters, escape sequences and lone surrogates are written out visibly (`\\x1b`, `\\n`, `\\ud800`)."""
    return escape_hidden(text, keep="\t")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


_TELLING = re.compile(r"\w*(?:Error|Exception)\b|\bTraceback\b|\bpanicked\b|\bFATAL\b|\bfatal\b")


def telling_lines(stderr: str, count: int = 3) -> list[str]:
    """The `count` most telling lines of a bot's stderr: those naming an error or exception (or a
    traceback, a panic) first, in order, then the last lines; so a Node.js bot's `Cannot find
    module` comes before the `Node.js v20` its runtime prints last."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    telling = [line for line in lines if _TELLING.search(line) and not line.startswith("Traceback (most recent")]
    telling = telling[:count]
    rest = [line for line in lines if line not in telling]
    return telling + rest[max(len(rest) - (count - len(telling)), 0):]


@dataclass(frozen=True)
class Fault:
    """One bot fault: who, where, what kind, why, and the offending bytes and stderr tail.

    Created with the raw evidence (`data_length` left None), it keeps only a bounded, plain copy:
    the first MAX_EVIDENCE bytes of `data` (`data_length` holds the full size), the message as
    `plain` data and the detail and stderr tail cut; so it is cheap to hold, pickle and store.
    """

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
    data_length: int | None = None  # bytes of offending data in all; None: the evidence is still raw

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}")
        if self.data_length is None:
            evidence = {"data": bytes(self.data[:MAX_EVIDENCE]), "data_length": len(self.data),
                        "message": plain(self.message), "detail": cut(str(self.detail), MAX_DETAIL),
                        "stderr_tail": cut(str(self.stderr_tail), MAX_STDERR, keep="end")}
            for name, value in evidence.items():
                object.__setattr__(self, name, value)

    @property
    def rule(self) -> str:
        """The part of the protocol this fault breaks."""
        return FAULT_KINDS[self.kind]

    def at(self, **context: Any) -> "Fault":
        """The same fault with game context (seat, game, decision ...) filled in."""
        return replace(self, **context)

    def summary(self) -> str:
        """One line for humans (control characters escaped): bot, kind, place, and what was wrong."""
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
        return printable(f"{self.bot}: {self.kind}{place}: {self.detail}")

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-safe data for records: the data as hex, the message as `plain` data."""
        return {"kind": self.kind, "bot": self.bot, "detail": self.detail, "seat": self.seat, "game": self.game,
                "game_id": self.game_id, "decision": self.decision, "data": self.data.hex(),
                "stderr_tail": self.stderr_tail, "message": self.message, "data_length": self.data_length}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Fault":
        """The fault `to_dict` gave (exactly: `Fault.from_dict(f.to_dict()) == f`). Keys a file written
        before they were kept lacks (`message`, `data_length`, the game context) read as absent;
        a record that is not a fault raises ValueError."""
        try:
            evidence = bytes.fromhex(data.get("data") or "")
            length = data.get("data_length")
            return cls(kind=data["kind"], bot=data["bot"], detail=data["detail"], seat=data.get("seat"),
                       game=data.get("game"), game_id=data.get("game_id"), decision=data.get("decision"),
                       data=evidence, stderr_tail=data.get("stderr_tail") or "", message=data.get("message"),
                       data_length=len(evidence) if length is None else length)
        except (KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"not a fault record ({type(error).__name__}: {error})") from None


class BotFault(Exception):
    """Raised inside the referee when a bot faults; the match turns it into a recorded Fault."""

    def __init__(self, fault: Fault):
        super().__init__(fault.summary())
        self.fault = fault
