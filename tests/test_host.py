"""The portion host (runner/tournament/execution/host.py): a fresh process that plays the portions sent to it
as a local run would, dies with its parent, and stops its bots when the portion is abandoned."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from cardarena.config import Limits
from cardarena.tournament.execution.events import FinishedGame, FinishedMatch
from cardarena.tournament.execution.execute import ExecutionError, LocalExecutor
from cardarena.tournament.execution.host import PortionHost
from cardarena.tournament.planning.schedule import GameSettings, schedule
from tests.conftest import ROOT, random_bot

LIMITS = Limits(decision_timeout=5.0)
MARK = "424242"  # a seed no other test's bots use: their command lines are found by it


def portions(deals: int = 2) -> list:
    """Two Casino tables of three random bots (seeded MARK): a few games each."""
    return schedule({name: ("casino",) for name in "abc"}, [GameSettings("casino", players=2, deals=deals)], seed=1,
                    deal_key="host-test")[:2]


BOTS = {name: random_bot(name, int(MARK)) for name in "abc"}


def comparable(items: list) -> list:
    """The games and matches, without their timings."""
    return [(item.game_id, {key: value for key, value in item.record.to_dict().items()
                            if key not in ("duration", "decision_times")})
            if isinstance(item, FinishedGame) else item for item in items]


RANDOM_BOT_PATH = ROOT / "sample_bots" / "random" / "bot.py"


def bot_pids() -> list[int]:
    """Pids of processes running this test's bots (the random bot with seed MARK)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(RANDOM_BOT_PATH).encode() in cmdline and MARK.encode() in cmdline:
            found.append(int(entry))
    return found


def wait_until(condition, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_one_host_plays_portion_after_portion_as_a_local_executor_does(tmp_path):
    matches = portions()
    local = list(LocalExecutor(1, pin_cores=False).run(matches, BOTS, LIMITS))
    host = PortionHost(os.environ)
    try:
        pid = host.process.pid
        hosted = [pickle.loads(item) for match in matches for item in host.play(match, BOTS, LIMITS, {}, tmp_path)]
        assert host.alive() and host.process.pid == pid  # the same process played both
    finally:
        host.close()
    assert comparable(hosted) == comparable(local)
    assert sum(isinstance(item, FinishedMatch) for item in hosted) == 2
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.stderr.log", "b.stderr.log", "c.stderr.log"]


def test_a_failed_portion_is_an_execution_error_and_the_host_plays_on(tmp_path):
    good = portions()[0]
    broken = replace(good, game="no-such-game")
    host = PortionHost(os.environ)
    try:
        with pytest.raises(ExecutionError, match="unknown game 'no-such-game'"):
            list(host.play(broken, BOTS, LIMITS, {}, tmp_path))
        assert any(isinstance(pickle.loads(item), FinishedGame) for item in host.play(good, BOTS, LIMITS, {}, tmp_path))
    finally:
        host.close()


def test_a_host_killed_in_mid_portion_is_an_execution_error_saying_how(tmp_path):
    host = PortionHost(os.environ)
    play = host.play(portions(deals=6)[0], BOTS, LIMITS, {}, tmp_path)
    next(play)
    os.kill(host.process.pid, signal.SIGKILL)
    with pytest.raises(ExecutionError, match=r"ended in mid-portion: killed by signal 9 \(SIGKILL\)"):
        list(play)
    assert not host.alive()
    assert wait_until(lambda: not bot_pids()), "the dead host's bots were left running"


def test_a_portion_abandoned_part_way_stops_the_host_and_its_bots(tmp_path):
    host = PortionHost(os.environ)
    play = host.play(portions(deals=6)[0], BOTS, LIMITS, {}, tmp_path)
    next(play)
    assert bot_pids()
    started = time.monotonic()
    play.close()
    assert not host.alive() and time.monotonic() - started < 10
    assert wait_until(lambda: not bot_pids(), 5), "the abandoned portion's bots were left running"


def test_a_host_dies_with_the_process_that_started_it(tmp_path):
    parent = subprocess.Popen([sys.executable, "-c",
                               "import os, sys, time\n"
                               "from cardarena.tournament.execution.host import PortionHost\n"
                               "print(PortionHost(os.environ).process.pid, flush=True)\n"
                               "time.sleep(60)\n"], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        host = int(parent.stdout.readline())
        assert Path(f"/proc/{host}").exists()
        parent.kill()
        parent.wait()
        assert wait_until(lambda: not Path(f"/proc/{host}").exists() or
                          Path(f"/proc/{host}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z")
    finally:
        parent.kill()
        parent.stdout.close()
