"""Schemas of every protocol message (version 1), and validation of what a bot sends.

A schema maps each key to the accepted Python types after msgpack decoding; every key is
required and no other key is allowed, so a typo in a bot's message is caught, not ignored.
"""

from __future__ import annotations

import itertools
import reprlib
from typing import Any

from cardarena.protocol import PROTOCOL_VERSION

_NUMBER = (int,)
_MAP = (dict,)

#: messages the referee sends, by type (documented in PROTOCOL.md; checked by the tests)
REFEREE_MESSAGES: dict[str, dict[str, tuple[type, ...]]] = {
    "hello": {"type": (str,), "protocol": _NUMBER, "referee": (str,)},
    "game_start": {
        "type": (str,), "game_id": (str,), "game": (str,), "rules_version": (str,), "seat": _NUMBER,
        "players": _NUMBER, "names": (list,), "teams": (list, type(None)), "options": _MAP,
    },
    "decision": {
        "type": (str,), "game_id": (str,), "decision": _NUMBER, "seat": _NUMBER, "view": _MAP,
        "events": (list,), "legal": (list,), "time_ms": _NUMBER, "bank_ms": _NUMBER,
    },
    "game_end": {
        "type": (str,), "game_id": (str,), "result": _MAP, "reveal": _MAP, "events": (list,),
        "faults": (list,),
    },
    "shutdown": {"type": (str,)},
}

#: messages a bot sends, by type
BOT_MESSAGES: dict[str, dict[str, tuple[type, ...]]] = {
    "hello": {"type": (str,), "protocol": _NUMBER, "name": (str,), "version": (str,)},
    "action": {"type": (str,), "decision": _NUMBER, "action": _MAP},
}


class ProtocolViolation(Exception):
    """A decoded message that breaks the schema; the message says exactly how."""


class _BriefRepr(reprlib.Repr):
    """reprlib's bounded repr, but with map keys in their own order (reprlib sorts them)."""

    def repr_dict(self, x: dict, level: int) -> str:
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        pieces = [f"{self.repr1(key, level - 1)}: {self.repr1(value, level - 1)}"
                  for key, value in itertools.islice(x.items(), self.maxdict)]
        return "{" + ", ".join(pieces + ["..."] * (len(x) > self.maxdict)) + "}"


_BRIEF = _BriefRepr()
_BRIEF.maxlevel, _BRIEF.maxdict, _BRIEF.maxlist = 6, 16, 16
_BRIEF.maxstring, _BRIEF.maxother, _BRIEF.maxlong = 80, 80, 40


def brief(value: Any) -> str:
    """repr(value) cut to a readable size (a bot may send a 60,000-key map), for error messages."""
    return _BRIEF.repr(value)


def check_message(message: dict[str, Any], expected_type: str, schemas=BOT_MESSAGES) -> dict[str, Any]:
    """Return `message` if it is a valid message of `expected_type`, else raise ProtocolViolation."""
    schema = schemas[expected_type]
    if len(message) == len(schema) and message.get("type") == expected_type:
        # the common case, checked in one pass (as many keys, all of them the schema's, each of an
        # exact type); the slow path explains failures
        try:
            for key, types in schema.items():
                if type(message[key]) not in types:
                    break
            else:
                return message
        except KeyError:
            pass
    kind = message.get("type")
    if kind != expected_type:
        raise ProtocolViolation(f'expected a "{expected_type}" message, got type {brief(kind)}')
    missing = [key for key in schema if key not in message]
    if missing:
        raise ProtocolViolation(f'"{expected_type}" message lacks {", ".join(map(repr, missing))}')
    extra = [key for key in message if key not in schema]
    if extra:
        shown = ", ".join(map(brief, extra[:8])) + (f" and {len(extra) - 8:,} more" if len(extra) > 8 else "")
        raise ProtocolViolation(f'"{expected_type}" message has unknown key(s) {shown}')
    for key, types in schema.items():
        value = message[key]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            names = " or ".join("nil" if t is type(None) else t.__name__ for t in types)
            raise ProtocolViolation(f'"{expected_type}".{key} must be {names}, got {brief(value)}')
    return message


def check_hello(message: dict[str, Any]) -> dict[str, Any]:
    """Validate a bot's hello, including the protocol version it speaks."""
    check_message(message, "hello")
    if message["protocol"] != PROTOCOL_VERSION:
        raise ProtocolViolation(
            f"bot speaks protocol version {message['protocol']}, the referee speaks {PROTOCOL_VERSION}"
        )
    return message
