"""A bot that kills or stops its parent, the referee's worker process, costs a replay or a fault of its
own, never the command: `play`, `check` and `run` finish, and a run killed part-way and resumed
gives the same results as an undisturbed one.

The zoo bots: kills_parent (SIGKILL to its parent at its second decision), stops_parent (SIGSTOP),
kills_parent_once (SIGKILL the first time only, then plays on). They run with `--sandbox none`:
under bubblewrap a bot cannot see or signal its parent at all (tests/test_sandbox.py), so this is
the defence of a referee without the sandbox.
"""

from __future__ import annotations

import json
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from cardarena.cli import main
from cardarena.tournament.execute import stall_limit
from cardarena.referee.process import BotSpec, Limits
from tests.conftest import RANDOM_BOT, ROOT, ZOO
from tests.test_tournament import cardarena, leaderboard_json, stored_games

PYTHON = shlex.quote(sys.executable)


def zoo_bot(name: str, script: str, *args: str) -> str:
    return f"{name}={PYTHON} {ZOO / script} {shlex.join(args)}"


def play(bot: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """`cardarena play casino` between `bot` and the random bot: the finished command and its record."""
    done = cardarena("play", "casino", "--bot", bot, "--bot", f"r={PYTHON} {RANDOM_BOT}", "--quiet",
                     "--timeout", "0.5", "--record", str(tmp_path / "record.json"), "--sandbox", "none")
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


def check(bot: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", bot, "--games", "casino", "--games-per-game", "1",
                                       "--timeout", "0.5", "--sandbox", "none"], catch_exceptions=False)
    return result.exit_code, result.stdout


def test_check_reports_a_bot_that_kills_or_stops_its_parent():
    for script, how in [("kills_parent.py", "killed by signal 9 (SIGKILL)"), ("stops_parent.py", "stopped")]:
        status, out = check(zoo_bot("hostile", script))
        assert status == 1, out
        assert (f"FAULT sabotage (casino, seat 0 of 2): hostile: the referee's process was {how} "
                "while it waited on this bot; the game was played again") in out
        assert "FAULT sabotage (casino, seat 0 of 2): hostile: left out of the rest of the run" in out
        assert "FAIL: hostile: 2 fault(s) in casino" in out


def test_check_and_run_survive_a_bot_that_kills_its_parent_at_its_start(tmp_path):
    status, out = check(zoo_bot("early", "kills_parent.py", "--at-hello"))
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
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
