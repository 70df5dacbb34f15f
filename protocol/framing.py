"""Frames: a 4-byte big-endian unsigned length, then exactly that many bytes of one msgpack map.

Decoding is incremental (`FrameReader.feed`) so the referee can read from a non-blocking pipe
and check the announced length against its limit before a single byte of the body is read.
A body is decoded under a budget (nesting depth, values, string length; no `bin` or extension
types; no repeated key), so whatever a bot sends becomes plain, small, shallow data or a
FrameError, never an exception deeper in the referee.
"""

from __future__ import annotations

import struct
from _thread import _local as thread_local  # threading.local itself: importing threading costs a bot's start 1.3 ms

import msgpack

TYPE_CHECKING = False  # typing's own flag without importing typing (4 ms of a Python bot's start)
if TYPE_CHECKING:
    from typing import Any, Callable

HEADER = struct.Struct(">I")
DEFAULT_MAX_FRAME = 1 << 20
MAX_DEPTH = 32  # nested maps and arrays in one message (the protocol's own messages use under 10)
MAX_VALUES = 1 << 16  # values of every kind in one message, containers included
MAX_STR = 1 << 16  # bytes of one string

# The first bytes of msgpack maps and arrays (fixmap, fixarray, array 16/32, map 16/32), and the
# bytes that start bin (c4-c6), extension types (c7-c9, d4-d8) and float32 (ca). A body is walked
# token by token only when these bytes, wherever they occur, could add up to a breach of the budget.
_CONTAINER_BYTES = bytes(range(0x80, 0xA0)) + bytes(range(0xDC, 0xE0))
_SUSPECT_BYTES = _CONTAINER_BYTES + bytes(range(0xC4, 0xCB)) + bytes(range(0xD4, 0xD9))
_ALL_BUT_SUSPECT = bytes(sorted(set(range(256)) - set(_SUSPECT_BYTES)))
_SMALL_BODY = min(MAX_STR, MAX_VALUES)  # every value takes a byte at least: no body this short breaks those
_REPACKER = msgpack.Packer()  # pack() runs in C without releasing the GIL: safe to share
# encode's packers, one per thread: msgpack.packb makes a Packer, and its 1 MiB buffer, at every call
# (most of a decision frame's encoding time); not shared, as packing a mapping that is not a plain
# dict calls back into Python, where another thread may run
_PACKERS = thread_local()
_FIXED_SIZES = {0xC0: 1, 0xC2: 1, 0xC3: 1, 0xCA: 5, 0xCB: 9, 0xCC: 2, 0xCD: 3, 0xCE: 5, 0xCF: 9,
                0xD0: 2, 0xD1: 3, 0xD2: 5, 0xD3: 9}  # nil, booleans, floats, ints: header included
_EXT_HINT = ("the protocol has no msgpack extension types: encode plain maps, arrays, str and ints "
             "(msgpackr: useRecords: false, and no Date objects; other libraries: turn ext types off)")
_EXT_NAMES = {-1: "a Timestamp", 0x72: "msgpackr's record structures"}
TEXT_QUOTE = 80  # characters of text printed on stdout quoted in a fault
_TEXT_CONTROLS = set(range(0x20)) - {0x09, 0x0A, 0x0D}


class FrameError(Exception):
    """Bytes that are not a valid frame; `kind` names the fault, `data` holds the offending bytes."""

    def __init__(self, kind: str, message: str, data: bytes = b""):
        super().__init__(message)
        self.kind = kind
        self.data = data


def encode(message: dict[str, Any]) -> bytes:
    """One frame holding `message`."""
    try:
        packer = _PACKERS.packer
    except AttributeError:
        packer = _PACKERS.packer = msgpack.Packer(use_bin_type=True)
    body = packer.pack(message)
    return HEADER.pack(len(body)) + body


def decode_body(body: bytes, budget: bool = True) -> dict[str, Any]:
    """The message in a frame body: a msgpack map with a str "type", within the decoding budget.

    FrameError("malformed") for invalid msgpack or a breach of the budget (the message names the
    limit), FrameError("protocol") for a map that repeats a key. `budget=False` skips the budget
    and the repeated-key check: for the bot SDK, which trusts the referee's frames.
    """
    if not budget:
        message = _unpack(body)
    elif len(body) <= _SMALL_BODY and len(suspect := body.translate(None, _ALL_BUT_SUSPECT)) <= MAX_DEPTH \
            and not suspect.translate(None, _CONTAINER_BYTES):
        # The common small frame: too few container bytes to nest deeply, too short to hold many
        # values or a long string, no bin, ext or float32. Encoding its message again gives a body
        # of the same length unless a repeated key was dropped or the bot's encoding was not the
        # shortest; only then is it decoded again, watching every map for a repeated key.
        message = _unpack(body)
        if len(_REPACKER.pack(message)) != len(body):
            message = _unpack(body, _map_without_repeats)
    else:
        breach = _budget_breach(body)
        if breach is not None:
            raise FrameError("malformed", f"frame body breaks the decoding limits: {breach}", body)
        message = _unpack(body, _map_without_repeats)
    if not isinstance(message, dict):
        raise FrameError("malformed", f"frame body is a msgpack {type(message).__name__}, not a map", body)
    if not isinstance(message.get("type"), str):
        raise FrameError("malformed", 'message has no str "type" key', body)
    return message


def _unpack(body: bytes, pairs_hook: Callable[[list[tuple[str, Any]]], dict[str, Any]] | None = None) -> Any:
    """msgpack.unpackb with string keys and the size limits; any failure becomes a FrameError."""
    try:
        return msgpack.unpackb(body, raw=False, strict_map_key=True, use_list=True, object_pairs_hook=pairs_hook,
                               max_str_len=MAX_STR, max_bin_len=0, max_ext_len=0, max_array_len=MAX_VALUES,
                               max_map_len=MAX_VALUES)
    except FrameError as error:
        error.data = body
        raise
    except Exception as error:  # msgpack raises several unrelated types for bad input
        raise FrameError("malformed", f"frame body is not valid msgpack ({error})", body) from None


def _map_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A decoded map; a key given twice is refused rather than silently keeping the last value."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for repeated, _ in pairs:
            if repeated in seen:
                break
            seen.add(repeated)
        shown = repeated if len(repeated) <= 64 else repeated[:64] + "…"
        raise FrameError("protocol", f"map repeats the key {shown!r} (each key may appear once)")
    return result


def _budget_breach(body: bytes) -> str | None:
    """How `body` breaks the budget (too deep, too many values, too long a string, bin, extension
    types), or None; found by walking its msgpack tokens without building any object.

    Iterative and stopping at the first breach, so its cost is bounded by the budget, not the
    body. It leaves syntax errors (a truncated body, say) to the decoder, which names them.
    """
    position, end, values = 0, len(body), 0
    open_counts: list[int] = []  # per open container, the values still to come (a map entry is 2)
    keys: list[bool] = []  # per open container, whether it is a map
    while position < end:
        is_key = bool(keys) and keys[-1] and open_counts[-1] % 2 == 0
        values += 1
        if values > MAX_VALUES:
            return f"more than {MAX_VALUES:,} values in one message"
        byte = body[position]
        children = 0
        if byte <= 0x7F or byte >= 0xE0:
            size = 1
        elif byte <= 0x8F:
            size, children, is_map = 1, 2 * (byte & 0x0F), True
        elif byte <= 0x9F:
            size, children, is_map = 1, byte & 0x0F, False
        elif byte <= 0xBF or 0xD9 <= byte <= 0xDB:
            if byte <= 0xBF:
                header, length = 1, byte & 0x1F
            else:
                header = 1 + (1 << (byte - 0xD9))
                length = int.from_bytes(body[position + 1:position + header], "big")
            if length > MAX_STR:
                return f"a str of {length:,} bytes, over the {MAX_STR:,}-byte limit"
            size = header + length
        elif 0xC4 <= byte <= 0xC9 or 0xD4 <= byte <= 0xD8:
            return _refused_type(body, position, is_key)
        elif byte in _FIXED_SIZES:
            size = _FIXED_SIZES[byte]
        elif 0xDC <= byte <= 0xDF:
            width = 2 if byte in (0xDC, 0xDE) else 4
            size = 1 + width
            count = int.from_bytes(body[position + 1:position + size], "big")
            is_map = byte >= 0xDE
            children = 2 * count if is_map else count
        else:
            return None  # 0xc1, never used in msgpack: the decoder reports it
        position += size
        if open_counts:
            open_counts[-1] -= 1
        if children:
            if len(open_counts) >= MAX_DEPTH:
                return f"maps and arrays nested more than {MAX_DEPTH} deep"
            open_counts.append(children)
            keys.append(is_map)
        while open_counts and open_counts[-1] == 0:
            open_counts.pop()
            keys.pop()
    return None


def _refused_type(body: bytes, position: int, is_key: bool) -> str:
    """Why the msgpack bin or extension type token at `position` of `body` breaks the budget."""
    byte = body[position]
    if byte <= 0xC6:
        where = "a map key" if is_key else "a value"
        return f"{where} is msgpack bin (bytes); the protocol allows only str (encode text as str, not as bytes)"
    header = 1 + (1 << (byte - 0xC7)) if byte <= 0xC9 else 1
    code = int.from_bytes(body[position + header:position + header + 1], "big", signed=True)
    name = f" ({_EXT_NAMES[code]})" if code in _EXT_NAMES else ""
    return f"msgpack extension type {code}{name}; {_EXT_HINT}"


def printed_text(data: bytes) -> str | None:
    """The first line of `data` when it starts with text (UTF-8 without control characters but tab
    and line ends; two characters at least), quoted for a fault; else None. A bot that printed to
    stdout sends a frame header that reads as letters (and announces hundreds of megabytes)."""
    text = data[:4 * TEXT_QUOTE].decode("utf-8", "replace")
    end = next((index for index, char in enumerate(text)
                if ord(char) in _TEXT_CONTROLS or 0x7F <= ord(char) <= 0x9F or char == "\ufffd"), len(text))
    line = next((part.strip() for part in text[:end].splitlines() if part.strip()), "")
    if len(line) < 2:
        return None
    return line if len(line) <= TEXT_QUOTE else line[:TEXT_QUOTE] + "…"


def text_on_stdout(data: bytes) -> str | None:
    """The fault detail for `data` that is text printed on stdout, else None."""
    line = printed_text(data)
    if line is None:
        return None
    return f'your bot printed text on stdout: "{line}"; stdout carries frames only: write logs to stderr'


class FrameReader:
    """Accumulates bytes and yields complete frame bodies, enforcing the maximum frame size."""

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME):
        self.max_frame = max_frame
        self._buffer = bytearray()

    def feed(self, data: bytes) -> None:
        """Add bytes read from the stream."""
        self._buffer += data

    def pending(self) -> bytes:
        """Bytes received but not yet part of a returned frame (for fault reports)."""
        return bytes(self._buffer)

    def next_body(self) -> bytes | None:
        """The next complete frame body, or None if more bytes are needed.

        Raises FrameError("oversize") as soon as a header announces more than `max_frame`.
        """
        if len(self._buffer) < HEADER.size:
            return None
        (length,) = HEADER.unpack_from(self._buffer)
        if length > self.max_frame:
            text = text_on_stdout(bytes(self._buffer[:4 * TEXT_QUOTE]))
            if text is not None:
                raise FrameError("malformed", text, bytes(self._buffer[:64]))
            raise FrameError(
                "oversize",
                f"frame header announces {length} bytes, over the {self.max_frame}-byte limit",
                bytes(self._buffer[:64]),
            )
        end = HEADER.size + length
        if len(self._buffer) < end:
            return None
        body = bytes(self._buffer[HEADER.size:end])
        del self._buffer[:end]
        return body
