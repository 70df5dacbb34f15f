"""The referee against real bot processes: the happy path, and the zoo of misbehaving bots.

Every misbehaviour must be recorded as the right fault while the game still finishes, the
faulting bot ranked last, and no process left behind.
"""

from __future__ import annotations

import os
import re
import sys
import time

import pytest

from runner.games import get_game
from runner.referee.faults import BotFault
from runner.referee.match import Match, ranks_with_faults
from runner.referee.process import BotProcess, BotSpec, Limits
from runner.games.base import Result
from tests.conftest import random_bot, zoo_bot

KNOCK_RUMMY = get_game("knock-rummy")
LIMITS = Limits(handshake_timeout=10.0, decision_timeout=1.0)


def gone(pid: int) -> bool:
    """True when no live process has this pid (a zombie reparented to init counts as gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            text = status.read()
    except FileNotFoundError:
        return True
    state = re.search(r"^State:\s+(\w)", text, re.M).group(1)
    ppid = int(re.search(r"^PPid:\s+(\d+)", text, re.M).group(1))
    return state == "Z" and ppid != os.getpid()


def play_against_random(bad: BotSpec, seed: int = 5, games: int = 1):
    """Play `games` knock-rummy games, zoo bot in seat 0; return the records and every bot pid seen."""
    pids = set()
    records = []
    with Match([bad, zoo_bot("patient.py", after=10**9)], LIMITS) as match:
        for n in range(games):
            records.append(match.play(KNOCK_RUMMY, seed + n))
            pids.update(p.pid for p in match._processes if p is not None)
    return records, pids


def test_two_random_bots_finish_a_game_without_faults():
    with Match([random_bot("a", 1), random_bot("b", 2)], LIMITS) as match:
        record = match.play(KNOCK_RUMMY, seed=11)
        pids = [p.pid for p in match._processes]
    assert record.faults == [] and match.shutdown_faults == []
    assert record.result is not None and sum(record.result.scores) == 0
    assert record.ranks == list(record.result.ranks)
    assert all(gone(pid) for pid in pids)
    # The record replays: seed + actions reproduce the game exactly.
    state = KNOCK_RUMMY.new_state(2, record.options, record.seed)
    for seat, action in record.actions:
        assert state.to_move() == seat
        state.checked_apply(action)
    assert state.result() == record.result


def test_one_process_plays_many_games():
    with Match([random_bot("a", 1), random_bot("b", 2)], LIMITS) as match:
        first = match.play(KNOCK_RUMMY, seed=1)
        pids = [p.pid for p in match._processes]
        second = match.play(KNOCK_RUMMY, seed=2, seating=[1, 0])
        assert [p.pid for p in match._processes] == pids
    assert not first.faults and not second.faults
    assert second.seats == ["b", "a"]


@pytest.mark.parametrize("script,kind,detail", [
    ("sleepy.py", "timeout", "no reply within"),
    ("quitter.py", "crash", "exit status 3"),
    ("garbage.py", "malformed", "not valid msgpack"),
    ("huge_header.py", "oversize", "announces 2147483648 bytes"),
    ("illegal.py", "illegal", "not among the"),
    ("wrong_type.py", "protocol", 'expected a "action" message'),
    ("deaf.py", "timeout", "no reply within"),
    ("bad_hello.py", "handshake", "protocol version 99"),
])
def test_zoo_bot_faults_are_recorded_and_the_game_finishes(script, kind, detail):
    started = time.monotonic()
    records, pids = play_against_random(zoo_bot(script), games=2)
    for record in records:
        assert len(record.faults) == 1, record.faults
        fault = record.faults[0]
        assert (fault.kind, fault.seat, fault.bot, fault.game) == (kind, 0, script[:-3], "knock-rummy")
        assert detail in fault.detail
        assert record.result is not None, "the game must still finish"
        assert record.ranks[0] == 1 and record.ranks[1] == 0, "the faulting bot is ranked last"
        if kind != "handshake":
            assert fault.decision is not None and fault.decision >= 2  # it played one decision first
    assert all(gone(pid) for pid in pids)
    assert time.monotonic() - started < 20


def test_offending_bytes_are_kept_in_the_fault():
    records, _ = play_against_random(zoo_bot("garbage.py"))
    assert b"this is not msgpack" in records[0].faults[0].data
    records, _ = play_against_random(zoo_bot("illegal.py"))
    fault = records[0].faults[0]
    assert fault.message["type"] == "action" and "ZZ" in repr(fault.message["action"])


def test_a_killed_bot_takes_its_grandchildren_with_it():
    records, _ = play_against_random(zoo_bot("forker.py"))
    fault = records[0].faults[0]
    assert fault.kind == "timeout"
    grandchild = int(re.search(r"grandchild (\d+)", fault.stderr_tail).group(1))
    deadline = time.monotonic() + 5
    while not gone(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(grandchild)


def test_stderr_flood_is_capped_and_does_not_disturb_play(tmp_path):
    limits = Limits(decision_timeout=2.0, stderr_cap=100_000)
    noisy = BotSpec("noisy", (sys.executable, "noisy.py"), cwd=str(zoo_bot("noisy.py").cwd))
    with Match([noisy, random_bot()], limits, log_dir=tmp_path) as match:
        record = match.play(KNOCK_RUMMY, seed=3)
    assert record.faults == []
    log = tmp_path / "noisy.0.stderr.log"
    assert 100_000 <= log.stat().st_size <= 100_000 + 100


def test_a_bot_that_never_reads_cannot_block_a_send():
    """PROTOCOL.md § Deadlines: writes to a bot are bounded by the same deadline as reads."""
    deaf = BotProcess(zoo_bot("deaf.py", after=0), Limits(handshake_timeout=10))
    deaf.start()
    try:
        deaf.send({"type": "decision", "decision": 1, "legal": []}, time.monotonic() + 1)  # it stops reading
        started = time.monotonic()
        with pytest.raises(BotFault) as raised:
            for _ in range(100):  # ~25 MiB: far more than any pipe buffer holds
                deaf.send({"type": "game_end", "blob": "x" * 250_000}, time.monotonic() + 0.5)
        assert raised.value.fault.kind == "timeout" and "did not read its input" in raised.value.fault.detail
        assert time.monotonic() - started < 5
    finally:
        deaf.kill()
    assert gone(deaf.pid)


def test_an_unstartable_bot_is_a_start_fault_and_the_game_still_finishes():
    ghost = BotSpec("ghost", ("/nonexistent/bot",))
    with Match([ghost, random_bot()], LIMITS) as match:
        record = match.play(KNOCK_RUMMY, seed=1)
    assert [f.kind for f in record.faults] == ["start"]
    assert "cannot run" in record.faults[0].detail and record.ranks == [1, 0]


def test_faulting_teams_rank_last_together():
    result = Result.from_scores([10, -10, 10, -10], teams=(0, 1, 0, 1))
    assert ranks_with_faults(result, {2}) == [2, 0, 2, 0]
    assert ranks_with_faults(Result.from_scores([3, 1, 2]), {0}) == [2, 1, 0]


def test_a_bot_that_dies_between_games_is_a_crash_in_the_next_game():
    with Match([random_bot("a", 1), random_bot("b", 2)], LIMITS) as match:
        match.play(KNOCK_RUMMY, seed=1)
        match._processes[1]._proc.kill()
        match._processes[1]._proc.wait()
        second = match.play(KNOCK_RUMMY, seed=2)
        third = match.play(KNOCK_RUMMY, seed=3)
    assert [(f.kind, f.seat) for f in second.faults] == [("crash", 1)]
    assert "exited between games (killed by signal 9)" in second.faults[0].detail
    assert third.faults == [], "the bot is started afresh for the next game"


def test_the_applied_action_is_the_engines_own_entry():
    """A legal answer with its keys in another order is accepted; the engine's entry is what is
    applied and recorded, so the game never holds objects a bot built."""
    reordered = BotSpec("reordered", (sys.executable, "reordered.py"), cwd=str(zoo_bot("reordered.py").cwd))
    with Match([reordered, random_bot()], LIMITS) as match:
        record = match.play(KNOCK_RUMMY, seed=4)
    assert record.faults == []
    state = KNOCK_RUMMY.new_state(2, record.options, 4)
    for seat, action in record.actions:
        assert any(list(action.items()) == list(entry.items()) for entry in state.legal_actions())
        state.apply(action)
