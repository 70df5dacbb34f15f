"""One game record (runner/record.py) and its forms: the JSON form round-trips exactly, the storage
form gives back everything the results file keeps, and files written by earlier versions still read;
`Fault.from_dict` round-trips `Fault.to_dict` exactly."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.games.base import Result
from cardarena.record import GameRecord, Placement, RecordError
from cardarena.referee.faults import FAULT_KINDS, Fault
from cardarena.tournament.store import ResultStore

names = st.text(min_size=1, max_size=12)
plain_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**63, max_value=2**64) | st.floats() | st.text(max_size=30)
    | st.binary(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
faults = st.builds(Fault, kind=st.sampled_from(sorted(FAULT_KINDS)), bot=names, detail=st.text(max_size=300),
                   seat=st.none() | st.integers(0, 5), game=st.none() | names, game_id=st.none() | names,
                   decision=st.none() | st.integers(1, 500), data=st.binary(max_size=400),
                   stderr_tail=st.text(max_size=200), message=plain_values)
scores = st.integers(-200, 200) | st.builds(Fraction, st.integers(-200, 200), st.integers(1, 9))
json_maps = st.dictionaries(st.text(max_size=8), st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                            max_size=3)


@st.composite
def records(draw) -> GameRecord:
    players = draw(st.integers(2, 5))
    teams = draw(st.none() | st.just(tuple(seat % 2 for seat in range(players))))
    result = Result.from_scores(draw(st.lists(scores, min_size=players, max_size=players)), teams)
    placement = draw(st.none() | st.builds(Placement, names, st.integers(0, 99), st.integers(0, 4), names))
    return GameRecord(
        game_id=draw(names), game=draw(names), rules_version=draw(st.sampled_from(["1", "2"])),
        options=draw(json_maps), seed=draw(st.integers(0, 2**63)), seats=draw(st.lists(names, min_size=players,
                                                                                         max_size=players)),
        actions=draw(st.lists(st.tuples(st.integers(0, players - 1), json_maps), max_size=6)), result=result,
        ranks=draw(st.permutations(range(players))), faults=draw(st.lists(faults, max_size=2)),
        decision_times=draw(st.lists(st.tuples(st.integers(0, players - 1), st.floats(0, 10)), max_size=3)),
        duration=draw(st.floats(0, 1000)), placement=placement)


@settings(max_examples=150, deadline=None)
@given(faults)
def test_a_fault_round_trips_through_its_dict_and_json(fault):
    assert Fault.from_dict(fault.to_dict()) == fault
    assert Fault.from_dict(json.loads(json.dumps(fault.to_dict()))) == fault


@settings(max_examples=100, deadline=None)
@given(records())
def test_a_record_round_trips_through_its_json_form(record):
    assert GameRecord.from_dict(record.to_dict()) == record
    assert GameRecord.from_dict(json.loads(json.dumps(record.to_dict()))) == record


@settings(max_examples=60, deadline=None)
@given(records().filter(lambda record: record.placement is not None))
def test_a_placed_record_round_trips_through_its_storage_row_but_for_the_decision_times(record):
    assert GameRecord.from_row(record.storage_row(), record.actions_text()) == replace(record, decision_times=[])
    assert GameRecord.from_row(record.storage_row()).actions == []  # read without them


def test_only_a_finished_placed_game_is_stored():
    record = GameRecord("g", "casino", "2", {}, 1, ["a", "b"], result=Result.from_scores([1, 0]))
    with pytest.raises(RecordError, match="placed in a tournament"):
        record.storage_row()


#: a `play --record` file and a stored fault as an earlier cardarena wrote them: no decision times,
#: and a fault without `message` and `data_length` (added when fault evidence became bounded data)
OLD_RECORD = {"game_id": "casino-7", "game": "casino", "rules_version": "2", "options": {"pairs": False}, "seed": 7,
              "seats": ["a", "b"], "actions": [[0, {"type": "trail", "card": "2C"}]],
              "result": {"scores": [3, [1, 2]], "ranks": [0, 1], "teams": None}, "ranks": [1, 0],
              "faults": [{"kind": "crash", "bot": "a", "detail": "exit status 3", "seat": 0, "game": "casino",
                          "decision": 4, "data": "c0ff", "stderr_tail": "boom"}],
              "duration": 0.5}


def test_a_record_written_by_an_earlier_version_still_reads(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps(OLD_RECORD))
    record = GameRecord.read_json(path)
    assert record.scores == [3, [1, 2]] and record.ranks == [1, 0] and record.decision_times == []
    [fault] = record.faults
    assert (fault.kind, fault.data, fault.data_length, fault.message, fault.game_id) == ("crash", b"\xc0\xff", 2, None, None)
    assert record.actions == [(0, {"type": "trail", "card": "2C"})]


@pytest.mark.parametrize("text, why", [
    ("[1, 2]", "a list, not a JSON object"),
    (json.dumps({**OLD_RECORD, "actions": [[0, "trail"]]}), "actions must be"),
    (json.dumps({**OLD_RECORD, "faults": [{"kind": "nonsense", "bot": "a", "detail": ""}]}), "unknown fault kind"),
    (json.dumps({**OLD_RECORD, "result": {"scores": [[1, 0], 0]}}), r"\(Fraction\(1, 0\)\)"),
    (json.dumps({"game": "casino"}), "no .game_id. in it"),
    ("[" * 100_000, "nested too deeply"),
    ("{", "Expecting"),
], ids=["a list", "bad actions", "bad fault", "zero denominator", "a key missing", "deep nesting", "bad JSON"])
def test_a_file_that_is_not_a_record_is_one_clear_error(tmp_path, text, why):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(RecordError, match=why) as raised:
        GameRecord.read_json(path)
    assert str(raised.value).startswith(f"{path}: not a game record written by 'cardarena play --record'")


def test_a_results_file_row_written_by_an_earlier_version_still_reads(tmp_path):
    path = tmp_path / "old.sqlite"
    ResultStore(path, create=True).close()
    with sqlite3.connect(path) as db:  # the row an earlier cardarena wrote: same columns, older fault dicts
        db.execute("INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   ("casino/a+b/d0/r0", "casino/a+b", "casino", "2", '{"pairs": false}', 7, 0, 0, "casino/d0",
                    '["a", "b"]', '[3, [1, 2]]', "[1, 0]", None, json.dumps(OLD_RECORD["faults"]), 0.5))
        db.execute("INSERT INTO actions VALUES (?, ?)", ("casino/a+b/d0/r0", json.dumps(OLD_RECORD["actions"])))
    with ResultStore(path) as store:
        [game] = store.games(actions=True)
    assert game.placement == Placement("casino/a+b", 0, 0, "casino/d0") and game.match_id == "casino/a+b"
    assert (game.scores, game.ranks, game.teams) == ([3, [1, 2]], [1, 0], None)
    assert game.faults == [Fault.from_dict(OLD_RECORD["faults"][0])]
    assert game.actions == [(0, {"type": "trail", "card": "2C"})]
