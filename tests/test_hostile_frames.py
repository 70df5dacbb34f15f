"""Property: no frame a bot can send makes the referee fail, and every record it makes can be kept.

Hundreds of generated hostile frames (deep nesting, extension types, bin values and bytes keys,
repeated keys, huge and odd numbers, floats, longer encodings, truncations, random bytes) are each
the first answer of a bot in a real `Match`: no exception escapes, and the game's record goes
through strict JSON and the results store unchanged. Five hundred go through a transport in memory
(runner/referee/scripted.py), forty through a real bot process and its pipes.

The hostile bot is `cat` replaying a file (its hello, then the frame), so it costs a few milliseconds
to start; its opponent is one long-lived sample random bot, and the game is a two-player Knock
Rummy deal (a few decisions when played at random).
"""

from __future__ import annotations

import json
import struct

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardarena.protocol.framing import HEADER, encode
from cardarena.fault_report import CHECK_TEXT, FaultEntry, text_lines
from cardarena.games import get_game
from cardarena.referee.faults import FAULT_KINDS, printable
from cardarena.referee.match import Match
from cardarena.referee.scripted import Exit, ScriptedTransport, well_behaved
from cardarena.config import BotSpec, Limits
from cardarena.tournament.store import ResultStore
from tests.conftest import random_bot

KNOCK_RUMMY = get_game("knock-rummy")
SEED = 0  # seat 0 (the hostile bot) makes decision 1 of this deal
HELLO = encode({"type": "hello", "protocol": 1, "name": "hostile", "version": "0"})

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-2 ** 63, 2 ** 64 - 1), st.sampled_from([0, 1, -1, 2 ** 64 - 1, -2 ** 63]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12), st.binary(max_size=6),
    st.builds(msgpack.Timestamp, st.integers(0, 2 ** 32 - 1)),
    st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=4)),
)
keys = st.one_of(st.sampled_from(["type", "decision", "action", "card", "min", "max"]), st.text(max_size=6),
                 st.binary(max_size=3), st.integers(-5, 5))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.lists(st.tuples(keys, inner), max_size=4).map(dict)), max_leaves=12)
answers = st.fixed_dictionaries({
    "type": st.one_of(st.just("action"), st.text(max_size=8), values),
    "decision": st.one_of(st.just(1), values),
    "action": st.one_of(st.just({"type": "draw", "source": "stock"}), values,
                        st.lists(st.tuples(st.sampled_from(["type", "source", "card"]), values), max_size=3).map(dict)),
})


def packed(value) -> bytes:
    return msgpack.packb(value, use_bin_type=True, datetime=False)


@st.composite
def bodies(draw) -> bytes:
    """A frame body: a packed answer or value, one nested deep, or a map repeating a key."""
    shape = draw(st.sampled_from(["answer", "value", "deep", "repeated", "longer", "random"]))
    if shape == "answer":
        return packed(draw(answers))
    if shape == "value":
        return packed(draw(values))
    if shape == "deep":
        opener = draw(st.sampled_from([b"\x91", b"\x81\xa1k", b"\xdc\x00\x01", b"\xdf\x00\x00\x00\x01\xa0"]))
        levels = draw(st.integers(1, 3000))
        head = packed({"type": "action", "decision": 1})
        return bytes([head[0] + 1]) + head[1:] + b"\xa6action" + opener * levels + packed(draw(scalars))
    if shape == "repeated":
        pairs = draw(st.lists(st.tuples(st.sampled_from(["type", "decision", "action"]), values), min_size=2,
                              max_size=5))
        pairs.append(pairs[draw(st.integers(0, len(pairs) - 1))])
        return bytes([0x80 | len(pairs)]) + b"".join(packed(key) + packed(value) for key, value in pairs)
    if shape == "longer":  # the same answer with every int as a uint32/int32 and every str as str8
        answer = draw(answers)
        return _longer(answer)
    return draw(st.binary(max_size=64))


def _longer(value) -> bytes:
    """`value` packed with encodings longer than needed, where msgpack allows them."""
    if isinstance(value, bool) or value is None:
        return packed(value)
    if isinstance(value, int) and 0 <= value < 2 ** 32:
        return b"\xce" + struct.pack(">I", value)
    if isinstance(value, int) and -2 ** 31 <= value < 0:
        return b"\xd2" + struct.pack(">i", value)
    if isinstance(value, str) and len(value.encode()) < 256:
        return b"\xd9" + bytes([len(value.encode())]) + value.encode()
    if isinstance(value, dict):
        return b"\xde" + struct.pack(">H", len(value)) + b"".join(_longer(k) + _longer(v) for k, v in value.items())
    if isinstance(value, list):
        return b"\xdc" + struct.pack(">H", len(value)) + b"".join(_longer(item) for item in value)
    return packed(value)


@st.composite
def frames(draw) -> bytes:
    """What the bot writes after its hello: a frame, cut short, announced wrongly, or no frame at all."""
    body = draw(bodies())
    how = draw(st.sampled_from(["whole"] * 4 + ["cut", "cut-header", "huge-header", "bare"]))
    if how == "whole":
        return HEADER.pack(len(body)) + body
    if how == "cut":  # the header announces the whole body, the bot stops short and closes its output
        return HEADER.pack(len(body)) + body[:draw(st.integers(0, max(len(body) - 1, 0)))]
    if how == "cut-header":  # the header announces only part of the body: the rest is a stray frame
        return HEADER.pack(draw(st.integers(0, len(body)))) + body
    if how == "huge-header":
        return HEADER.pack(draw(st.integers((1 << 20) + 1, 2 ** 32 - 1))) + body
    return body


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    """A match of the replaying bot (seat 0) and a random bot, a results store, and the replay file."""
    folder = tmp_path_factory.mktemp("hostile")
    folder.chmod(0o755)  # the bot's folder (its replay file's): under a root organiser it runs as nobody
    replay = folder / "frame.bin"
    # The background cat keeps reading the bot's input (so the referee can always send); the bot
    # writes the file, holds its output open a moment (its frame is read meanwhile), and exits.
    hostile = BotSpec("hostile", ("sh", "-c", 'cat >/dev/null & cat "$0"; exec sleep 0.05', str(replay)))
    with Match([hostile, random_bot("random", 1)], Limits(decision_timeout=10.0)) as match, \
            ResultStore(folder / "results.sqlite", create=True) as store:
        yield match, store, replay, iter(range(10 ** 9))


def keeps_its_record(record, store: ResultStore, game_id: str) -> None:
    """The game ended with a result, its faults are the hostile bot's, and its record survives strict
    JSON, the results store and every rendering of its faults unchanged."""
    assert record.result is not None
    assert all(fault.kind in FAULT_KINDS and fault.bot == "hostile" for fault in record.faults)
    data = record.to_dict()
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text)["faults"] == data["faults"]
    store.add_game(data, "hostile", 0, 0, "hostile")
    [stored] = store.games(game_id)
    assert stored.faults == record.faults
    for fault in record.faults:
        lines = text_lines(FaultEntry(fault), CHECK_TEXT)
        assert all(printable(line) == line for line in lines)
        assert len(json.dumps(fault.to_dict())) < 16 * 1024


def replaying(frame: bytes):
    """The script of the replaying bot in memory: its hello and the frame at once, then it exits."""
    def script(message):
        if message["type"] == "hello":
            return [HELLO + frame]
        return [Exit(0)] if message["type"] in ("decision", "shutdown") else []
    return script


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with ResultStore(tmp_path_factory.mktemp("in-memory") / "results.sqlite", create=True) as kept:
        yield kept, iter(range(10 ** 9))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(frame=frames())
def test_any_frame_is_a_fault_or_a_move_and_its_record_can_be_kept(store, frame):
    """Hundreds of frames through the referee's session over a transport in memory (the frame reader,
    the message checks and the decision loop are the ones real pipes feed)."""
    kept, numbers = store
    table = {"hostile": replaying(frame), "random": well_behaved}
    specs = [BotSpec("hostile", ("hostile",)), BotSpec("random", ("random",))]
    connect = lambda spec, limits, log_path, log_note: ScriptedTransport(table[spec.name])  # noqa: E731
    game_id = f"hostile-{next(numbers)}"
    with Match(specs, Limits(decision_timeout=10.0), connect=connect) as match:
        record = match.play(KNOCK_RUMMY, SEED, game_id=game_id)  # an exception here fails the property
    keeps_its_record(record, kept, game_id)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(frame=frames())
def test_any_frame_over_real_pipes_is_a_fault_or_a_move_and_its_record_can_be_kept(arena, frame):
    """The same property end to end, fewer times: a real process writes the frame on a real pipe."""
    match, kept, replay, numbers = arena
    replay.write_bytes(HELLO + frame)
    game_id = f"hostile-{next(numbers)}"
    keeps_its_record(match.play(KNOCK_RUMMY, SEED, game_id=game_id), kept, game_id)


def test_the_replaying_bot_really_sends_its_frame(arena):
    """The property above tests something: a plain illegal answer is recorded as illegal, at decision 1."""
    match, _, replay, numbers = arena
    replay.write_bytes(HELLO + encode({"type": "action", "decision": 1, "action": {"type": "draw", "source": "ZZ"}}))
    [fault] = match.play(KNOCK_RUMMY, SEED, game_id=f"hostile-{next(numbers)}").faults
    assert (fault.kind, fault.decision, fault.message["action"]["source"]) == ("illegal", 1, "ZZ")


def test_the_replaying_bot_in_memory_really_sends_its_frame():
    """The in-memory property tests something too: the same illegal answer, the same fault."""
    frame = encode({"type": "action", "decision": 1, "action": {"type": "draw", "source": "ZZ"}})
    table = {"hostile": replaying(frame), "random": well_behaved}
    specs = [BotSpec("hostile", ("hostile",)), BotSpec("random", ("random",))]
    with Match(specs, Limits(decision_timeout=10.0),
               connect=lambda spec, limits, log_path, log_note: ScriptedTransport(table[spec.name])) as match:
        [fault] = match.play(KNOCK_RUMMY, SEED, game_id="hostile-in-memory").faults
    assert (fault.kind, fault.decision, fault.message["action"]["source"]) == ("illegal", 1, "ZZ")
