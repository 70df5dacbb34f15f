"""The referee against real bot processes: the happy path, and the zoo of misbehaving bots.

Every misbehaviour must be recorded as the right fault while the game still finishes, the
faulting bot ranked last, and no process left behind.
"""

from __future__ import annotations

import os
import random
import re
import signal
import sys
import time
from pathlib import Path

import pytest

from cardarena.games import get_game
from cardarena.referee.faults import BotFault
from cardarena.referee.match import Match, ranks_with_faults
from cardarena.referee import cgroups, sandbox
from cardarena.config import BotSpec, Limits, SandboxSettings
from cardarena.referee.pipes import LOG_CAPPED_NOTE, append_capped, open_pidfd
from cardarena.referee.process import BotProcess
from cardarena.games.base import Result
from tests.conftest import ZOO, random_bot, zoo_bot

KNOCK_RUMMY = get_game("knock-rummy")
LIMITS = Limits(handshake_timeout=10.0, decision_timeout=1.0)


def running(*argv: str) -> list[int]:
    """The pids of live processes running exactly `argv` (found by command line, so that a process
    in a bot's PID namespace is found too)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().split(b"\0")[:-1] == [a.encode() for a in argv] \
                    and not gone(int(entry.name)):
                found.append(int(entry.name))
        except OSError:
            continue  # exited while being looked at
    return found


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
    seconds = re.search(r"grandchild \d+ sleep ([\d.]+)", fault.stderr_tail).group(1)
    deadline = time.monotonic() + 5
    while running("sleep", seconds) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running("sleep", seconds)


def test_stderr_flood_is_capped_and_does_not_disturb_play(tmp_path):
    limits = Limits(decision_timeout=2.0, stderr_cap=100_000)
    noisy = BotSpec("noisy", (sys.executable, "noisy.py"), cwd=str(zoo_bot("noisy.py").cwd))
    with Match([noisy, random_bot()], limits, log_dir=tmp_path) as match:
        record = match.play(KNOCK_RUMMY, seed=3)
    assert record.faults == []
    log = tmp_path / "noisy.stderr.log"
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
    assert ranks_with_faults(result, set()) == [0, 2, 0, 2]  # no fault: the game's own ranks, ties shared


def test_a_crashed_bots_last_words_are_in_its_fault_though_the_stderr_drain_ran_late(monkeypatch):
    """The fault is taken at once, as the bot's output closes; its stderr tail waits for the drain
    to catch up (a busy machine may not have run that thread since the bot wrote)."""
    from cardarena.referee.pipes import PipeTransport
    drain = PipeTransport._drain_stderr

    def late_drain(self, log):
        time.sleep(0.3)
        drain(self, log)

    monkeypatch.setattr(PipeTransport, "_drain_stderr", late_drain)
    records, _ = play_against_random(zoo_bot("last_words.py"), games=1)
    [fault] = records[0].faults
    assert fault.kind == "crash" and "exit status 4" in fault.detail, fault
    assert "last words: no card left to play" in fault.stderr_tail


def test_a_bot_that_dies_between_games_is_a_crash_in_the_next_game():
    with Match([random_bot("a", 1), random_bot("b", 2)], LIMITS) as match:
        match.play(KNOCK_RUMMY, seed=1)
        dying = match._processes[1]
        os.kill(dying.pid, signal.SIGKILL)
        while dying.alive:
            time.sleep(0.005)
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


@pytest.mark.parametrize("watch", ["pidfd", "waitpid fallback"])
def test_a_bot_that_exits_while_its_child_holds_its_output_is_a_crash_at_once(watch, monkeypatch):
    """Issue 10 item 4: the exit is seen through the process itself, not the pipe the child keeps open."""
    if watch != "pidfd":
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    pidfd = open_pidfd(os.getpid())
    assert (pidfd is None) == (watch != "pidfd")
    if pidfd is not None:
        os.close(pidfd)
    # without a sandbox or a PID namespace of the bot's own (in one the child dies with the bot, so none
    # holds the output): as on a machine where unshare cannot make one
    monkeypatch.setattr(sandbox, "isolation_problem", lambda: "unshare cannot create namespaces here (simulated)")
    limits = Limits(handshake_timeout=10.0, decision_timeout=10.0, sandbox=SandboxSettings(mode="none"))
    with Match([zoo_bot("orphaner.py"), zoo_bot("patient.py", after=10**9)], limits) as match:
        record = match.play(KNOCK_RUMMY, seed=5)
    [fault] = record.faults
    assert (fault.kind, fault.seat) == ("crash", 0) and fault.decision >= 2  # after one legal decision
    assert fault.detail == "the bot exited (exit status 4) while another process still held its output"
    assert record.duration < limits.decision_timeout / 2, "noticed at once, not at the deadline"
    seconds = re.search(r"bot \d+ grandchild \d+ sleep ([\d.]+)", fault.stderr_tail).group(1)
    assert not running("sleep", seconds), "its child is killed"


def test_a_bot_that_exits_during_the_handshake_leaving_a_child_is_a_crash_at_once():
    orphan = BotProcess(BotSpec("orphan", ("sh", "-c", "sleep 3600 & exit 5")), Limits(handshake_timeout=10.0))
    started = time.monotonic()
    try:
        with pytest.raises(BotFault) as raised:
            orphan.start()
    finally:
        orphan.kill()
    assert raised.value.fault.kind == "crash" and "(exit status 5)" in raised.value.fault.detail
    assert time.monotonic() - started < 5, "noticed at once, not at the 10 s handshake deadline"
    assert gone(orphan.pid)


def test_the_stderr_cap_holds_across_restarts(tmp_path):
    """Issue 10 item 6: a bot restarted for every game still writes at most the cap to its one log."""
    limits = Limits(decision_timeout=5.0, stderr_cap=300_000)
    with Match([zoo_bot("flooder.py", after=0), zoo_bot("patient.py", after=10**9)], limits,
               log_dir=tmp_path, log_label="match m") as match:
        records = [match.play(KNOCK_RUMMY, seed) for seed in range(20)]
    assert [[(f.kind, f.seat) for f in r.faults] for r in records] == [[("crash", 0)]] * 20
    log = (tmp_path / "flooder.stderr.log").read_bytes()
    assert len(log) == limits.stderr_cap + len(LOG_CAPPED_NOTE) and log.endswith(LOG_CAPPED_NOTE)
    headers = re.findall(rb"\[cardarena: flooder started, match m, game knock-rummy-(\d+) seat 0, pid \d+, ", log)
    assert headers == [b"0", b"1"], "a header per start while there is room (256 KiB a game, 300 kB cap)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flooder.stderr.log", "patient.stderr.log"]


def test_the_stderr_cap_is_the_size_on_disk_whoever_writes(tmp_path):
    """Two writers of one log (two workers, or a resumed run) share the cap; each overshoots by at most a chunk."""
    path = tmp_path / "bot.stderr.log"
    first, second = (os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT) for _ in range(2))
    try:
        assert append_capped(first, b"a" * 600, 1000) and append_capped(second, b"b" * 300, 1000)
        assert not append_capped(first, b"c" * 300, 1000)
        assert not append_capped(second, b"d" * 10, 1000)
    finally:
        os.close(first)
        os.close(second)
    assert path.read_bytes() == b"a" * 600 + b"b" * 300 + b"c" * 100 + LOG_CAPPED_NOTE


def test_a_second_answer_to_the_last_decision_is_a_fault_of_that_game():
    """Issue 10 item 12: the extra frame costs the game it was sent in, never the next one."""
    double = BotSpec("double_knock", (sys.executable, "double_knock.py", "--double-in", "knock-rummy-5"),
                     cwd=str(zoo_bot("double_knock.py").cwd))
    with Match([double, zoo_bot("patient.py", after=10**9)], LIMITS) as match:
        doubled, after = match.play(KNOCK_RUMMY, 5), match.play(KNOCK_RUMMY, 6)
    [fault] = doubled.faults
    last_seat, last_action = doubled.actions[-1]
    assert (fault.kind, fault.seat, fault.game_id, fault.decision) == ("protocol", 0, "knock-rummy-5", len(doubled.actions))
    assert last_seat == 0 and last_action["type"] == "knock"
    assert fault.detail == (f"sent 54 bytes after its answer to decision {len(doubled.actions)} that no request "
                            "asked for, before the game ended (one action per decision, and nothing else)")
    assert fault.message == {"type": "action", "decision": len(doubled.actions), "action": last_action}
    assert doubled.ranks == [1, 0]
    assert after.faults == [] and match.shutdown_faults == []


def test_a_second_answer_to_the_last_decision_of_the_last_game_is_caught_before_shutdown():
    double = BotSpec("double_knock", (sys.executable, "double_knock.py"), cwd=str(zoo_bot("double_knock.py").cwd))
    with Match([double, zoo_bot("patient.py", after=10**9)], LIMITS) as match:
        record = match.play(KNOCK_RUMMY, 7)
    assert [(f.kind, f.seat, f.game_id) for f in record.faults] == [("protocol", 0, "knock-rummy-7")]
    assert match.shutdown_faults == []


def test_stopping_a_bot_never_waits_for_an_escapee_that_holds_its_stderr(tmp_path, monkeypatch):
    """Without a cgroup to find it, a `setsid` child that inherited the bot's stderr outlives the
    bot (where no PID namespace of the bot's own takes it along); the referee stops draining that pipe
    once the bot is gone instead of waiting on it."""
    monkeypatch.setattr(cgroups, "bot_cgroup_parents", lambda confined: {})
    monkeypatch.setattr(sandbox, "isolation_problem", lambda: "unshare cannot create namespaces here (simulated)")
    token = f"{3600 + random.random():.9f}"
    spec = BotSpec("holder", (sys.executable, "stderr_holder.py", "--token", token), cwd=str(ZOO), folder=str(ZOO))
    bot = BotProcess(spec, Limits(sandbox=SandboxSettings(mode="none")), log_path=tmp_path / "holder.log")
    try:
        bot.start()
        drain = bot.transport._stderr_thread
        bot.stop()
        assert not drain.is_alive()
        assert running("sleep", token)  # what the drain must not wait for
    finally:
        for pid in running("sleep", token):
            os.kill(pid, 9)


def test_a_bot_that_cannot_be_spawned_leaves_the_original_error_visible(tmp_path):
    """A log folder that does not exist (the organiser's mistake, not a bot's) fails the spawn; closing
    the match afterwards must not hide that error behind one about a process that never started."""
    match = Match([random_bot("a"), random_bot("b", 1)], log_dir=tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="missing"):
        with match:
            match.play(get_game("casino"), 1)
    # and the cgroups made for the bot before the failure are gone with it
    mine = [path for parent in cgroups.cgroup_parents().values() for path in parent.glob(f"cardarena-{os.getpid()}-*")]
    assert not mine
