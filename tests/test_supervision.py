"""A bot that kills or stops its parent, the referee's worker process, costs a replay or a fault of its
own, never the command: `play`, `check` and `run` finish, and a run killed part-way and resumed
gives the same results as an undisturbed one.

The zoo bots: kills_parent (SIGKILL to its parent at its second decision), stops_parent (SIGSTOP),
kills_parent_once (SIGKILL the first time only, then plays on), frames_opponent (SIGSTOP to its
parent 100 ms after its own answer, while its opponent thinks). They run with `--sandbox none` on a
machine where unshare cannot give a bot a PID namespace of its own (a non-root organiser without
user namespaces, simulated by tests/unisolated): under bubblewrap, or under `none` where unshare
works, a bot cannot see or signal its parent at all (tests/test_sandbox.py), so this is the
defence of a referee whose bots run beside it.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from cardarena.cli import main
from cardarena.tournament.execution.execute import stall_limit
from cardarena.config import BotSpec, Limits
from cardarena.referee import sandbox
from tests.conftest import RANDOM_BOT, ROOT, ZOO
from tests.test_tournament import leaderboard_json, stored_games

PYTHON = shlex.quote(sys.executable)
UNISOLATED = ROOT / "tests" / "unisolated"  # its sitecustomize: a machine where bots run beside the referee


def unisolated_env(isolated: bool = False) -> dict[str, str]:
    """The CLI's environment: on a machine where bots run beside the referee, unless `isolated`."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(([] if isolated else [str(UNISOLATED)]) + [str(ROOT)])}


def cardarena(*args: str, isolated: bool = False) -> subprocess.CompletedProcess:
    """The CLI in a fresh process (see `unisolated_env`)."""
    return subprocess.run([sys.executable, "-m", "cardarena.cli", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=unisolated_env(isolated))


def zoo_bot(name: str, script: str, *args: str) -> str:
    return f"{name}={PYTHON} {ZOO / script} {shlex.join(args)}"


def play(bot: str, tmp_path: Path, isolated: bool = False) -> tuple[subprocess.CompletedProcess, dict]:
    """`cardarena play casino` between `bot` and the random bot: the finished command and its record."""
    done = cardarena("play", "casino", "--bot", bot, "--bot", f"r={PYTHON} {RANDOM_BOT}", "--quiet",
                     "--timeout", "0.5", "--record", str(tmp_path / "record.json"), "--sandbox", "none",
                     isolated=isolated)
    assert (tmp_path / "record.json").exists(), f"play wrote no record (exit {done.returncode}): {done.stderr}"
    record = json.loads((tmp_path / "record.json").read_text())
    assert done.returncode == (1 if record["faults"] else 0), done.stderr  # play exits 1 after a fault
    assert "Traceback" not in done.stderr
    return done, record


def test_play_survives_a_bot_that_kills_its_parent_and_plays_its_seat_out(tmp_path):
    done, record = play(zoo_bot("k", "kills_parent.py"), tmp_path)
    lost = "warning: the referee's worker process was killed by signal 9 (SIGKILL) while it waited on k"
    assert done.stderr.count(lost) == 2
    assert [fault["kind"] for fault in record["faults"]] == ["sabotage"] and record["ranks"][0] == 1
    assert record["faults"][0]["detail"].startswith("left out of the rest of the run: twice in one game")
    assert "FAULT k: sabotage (casino, game casino-0, seat 0)" in done.stderr


def test_play_survives_a_bot_that_stops_its_parent(tmp_path):
    done, record = play(zoo_bot("s", "stops_parent.py"), tmp_path)
    assert done.stderr.count("worker process was stopped while it waited on s") == 2
    assert [fault["kind"] for fault in record["faults"]] == ["sabotage"]


def test_play_replays_a_game_whose_worker_was_killed_once(tmp_path):
    done, record = play(zoo_bot("o", "kills_parent_once.py", "--marker", str(tmp_path / "marker")), tmp_path)
    assert done.stderr.count("killed by signal 9 (SIGKILL) while it waited on o") == 1
    assert "game casino-0 is played again" in done.stderr
    assert record["faults"] == [] and "FAULT" not in done.stderr
    again, replayed = play(zoo_bot("o", "kills_parent_once.py", "--marker", str(tmp_path / "marker")), tmp_path)
    assert "warning" not in again.stderr and replayed["actions"] == record["actions"]


def test_a_bot_that_stops_the_worker_after_its_answer_gets_its_opponent_no_fault(tmp_path):
    """The framing attack: frames_opponent stops the worker 100 ms after its own answer, while the
    random bot thinks. Its opponent is never blamed: the framer is frozen while the opponent decides,
    so its stop lands in its own turn (blamed on it, the saboteur), and in a PID namespace of its own
    (unshare) its parent is out of reach altogether."""
    done, record = play(zoo_bot("f", "frames_opponent.py"), tmp_path)
    assert all(fault["bot"] == "f" for fault in record["faults"]), record["faults"]
    assert "waited on r" not in done.stderr and "FAULT r" not in done.stderr
    if sandbox.isolation_problem() is None:
        done, record = play(zoo_bot("f", "frames_opponent.py"), tmp_path, isolated=True)
        assert record["faults"] == [] and "FAULT" not in done.stderr, done.stderr
        assert "waited on" not in done.stderr


def check(bot: str, monkeypatch) -> tuple[int, str]:
    monkeypatch.setattr(sandbox, "isolation_problem", lambda: "unshare cannot create namespaces here (simulated)")
    result = CliRunner().invoke(main, ["check", bot, "--games", "casino", "--games-per-game", "1",
                                       "--timeout", "0.5", "--sandbox", "none"], catch_exceptions=False)
    return result.exit_code, result.stdout


def test_check_reports_a_bot_that_kills_or_stops_its_parent(monkeypatch):
    for script, how in [("kills_parent.py", "killed by signal 9 (SIGKILL)"), ("stops_parent.py", "stopped")]:
        status, out = check(zoo_bot("hostile", script), monkeypatch)
        assert status == 1, out
        assert (f"FAULT sabotage (casino, seat 0 of 2): hostile: the referee's process was {how} "
                "while it waited on this bot; the game was played again") in out
        assert "FAULT sabotage (casino, seat 0 of 2): hostile: left out of the rest of the run" in out
        assert "FAIL: hostile: 2 fault(s) in casino" in out


def test_check_and_run_survive_a_bot_that_kills_its_parent_at_its_start(tmp_path, monkeypatch):
    status, out = check(zoo_bot("early", "kills_parent.py", "--at-hello"), monkeypatch)
    assert status == 1
    assert ("FAULT sabotage: early: the referee's process was killed by signal 9 (SIGKILL) during the bot's "
            "handshake or shutdown") in out
    done = cardarena("run", "--game", "casino", "--deals", "1", "--bootstrap", "0", "--out", str(tmp_path / "r.sqlite"),
                     "--sandbox", "none", "--bot", zoo_bot("early", "kills_parent.py", "--at-hello"),
                     "--bot", f"a={PYTHON} {RANDOM_BOT}", "--bot", f"b={PYTHON} {RANDOM_BOT} --seed 1")
    assert done.returncode == 0, done.stderr
    assert ("warning: early left out of this run: the referee's process was killed by signal 9 (SIGKILL) "
            "while it started") in done.stderr


def hostile_run(out: Path, marker: Path, *extra: str) -> list[str]:
    """Two random bots, a bot that kills its parent, one that stops it, and one that kills it once."""
    return ["run", "--game", "casino", "--deals", "2", "--seed", "4", "--deal-seed", "4", "--timeout", "0.5",
            "--jobs", "2", "--bootstrap", "10", "--out", str(out), "--sandbox", "none",
            "--bot", f"a={PYTHON} {RANDOM_BOT} --seed 1", "--bot", f"b={PYTHON} {RANDOM_BOT} --seed 2",
            "--bot", zoo_bot("k", "kills_parent.py"), "--bot", zoo_bot("s", "stops_parent.py"),
            "--bot", zoo_bot("o", "kills_parent_once.py", "--marker", str(marker)), *extra]


def test_run_disqualifies_saboteurs_and_a_resumed_run_matches_an_undisturbed_one(tmp_path):
    undisturbed = tmp_path / "undisturbed.sqlite"
    done = cardarena(*hostile_run(undisturbed, tmp_path / "marker-1"))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    games = stored_games(undisturbed)
    assert len(games) == 10 * 2 * 2  # 10 pairs of 5 bots, 2 rotations, 2 deals: every game stored once
    with sqlite3.connect(undisturbed) as db:
        disqualified = json.loads(db.execute("SELECT value FROM meta WHERE key = 'disqualified'").fetchone()[0])
    assert sorted(disqualified) == ["k", "s"]
    for row in games:
        seats, faults = json.loads(row[9]), json.loads(row[13])
        assert sorted(fault["bot"] for fault in faults) == sorted(seat for seat in seats if seat in "ks")
        assert all(fault["kind"] == "sabotage" and fault["decision"] is None for fault in faults)
    assert done.stderr.count("while it waited on o") == 1

    resumed = tmp_path / "resumed.sqlite"
    runner = subprocess.Popen([sys.executable, "-m", "cardarena.cli", *hostile_run(resumed, tmp_path / "marker-2")],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=unisolated_env())
    deadline = time.monotonic() + 60
    recorded = 0
    while recorded < 6 and time.monotonic() < deadline and runner.poll() is None:
        time.sleep(0.05)
        if not resumed.exists():
            continue  # (connecting would create it)
        try:
            with sqlite3.connect(resumed) as db:
                recorded = db.execute("SELECT count(*) FROM games").fetchone()[0]
        except sqlite3.OperationalError:
            recorded = 0  # not created yet
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    assert 6 <= len(stored_games(resumed)) < len(games), "the run was not killed part-way"
    finished = cardarena(*hostile_run(resumed, tmp_path / "marker-2", "--resume"))
    assert finished.returncode == 0, finished.stderr
    assert stored_games(resumed) == games
    assert leaderboard_json(resumed) == leaderboard_json(undisturbed)


def test_the_stuck_worker_limit_scales_with_the_bot_limits():
    fast = stall_limit(Limits(handshake_timeout=0.5, decision_timeout=0.2, shutdown_grace=0.1))
    slow = stall_limit(Limits(handshake_timeout=10, decision_timeout=30, shutdown_grace=1))
    assert fast < 10 < 30 < slow
    person = BotSpec("person", ("human",), decision_timeout=3600.0)  # a human seat's own limit counts too
    assert stall_limit(Limits(), [person]) > 3600 > stall_limit(Limits())
    banked = stall_limit(Limits(handshake_timeout=10, decision_timeout=30, shutdown_grace=1, time_bank=60))
    assert banked > 90 > slow  # a decision may draw on the whole time bank (PROTOCOL.md § 5)
