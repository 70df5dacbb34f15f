"""`cardarena check` through the real CLI: every sample bot passes, every misbehaving zoo bot fails
with the right diagnosis (kind, decision, rule, evidence, a replay line that really replays it)
and exit status, and the JUnit report is valid XML with one testcase per game.

Kept fast: few games per game, and only Knock Rummy for the zoo.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardarena.checking import GameCheck, CheckReport, describe_lifecycle, describe_verdict, seatings_of
from cardarena.cli import main
from cardarena.games import get_game
from cardarena.referee.faults import FAULT_KINDS
from cardarena.config import Limits
from tests.conftest import ROOT, ZOO, python_bot_folder, skip_without_bwrap

SAMPLES = ROOT / "sample_bots"
ALL_GAMES = ["casino", "cuajo", "knock-rummy", "quitlok"]


def run_check(*args: str) -> tuple[int, str, str]:
    """`cardarena check ARGS` in this process: exit status, stdout, stderr."""
    result = CliRunner().invoke(main, ["check", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def zoo(script: str, after: int = 1) -> str:
    """A zoo bot as NAME=CMD, by absolute path so it runs from any directory."""
    return f"{script}={shlex.quote(sys.executable)} {ZOO / (script + '.py')} --after {after}"


def junit_cases(path: Path) -> dict[str, ET.Element]:
    """The testcases of a JUnit file, by name (parsing fails the test if the XML is invalid)."""
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    cases = root.findall("./testsuite/testcase")
    assert len({case.get("name") for case in cases}) == len(cases)
    return {case.get("name"): case for case in cases}


def build(command: list[str], cwd: Path) -> None:
    """Build a sample bot (idempotent), failing the test with the build's own output if it fails."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{shlex.join(command)} failed:\n{done.stdout}\n{done.stderr}"


def assert_passes(folder: Path, tmp_path: Path) -> None:
    """`check` on a sample bot: exit 0, every game in the JUnit report, each without a failure."""
    junit = tmp_path / "junit.xml"
    status, out, _ = run_check(str(folder), "--games-per-game", "2", "--junit", str(junit))
    assert status == 0, out
    assert "handshake: ok" in out and "shutdown: ok" in out and "PASS" in out
    cases = junit_cases(junit)
    assert sorted(cases) == ALL_GAMES
    assert all(case.find("failure") is None for case in cases.values())


def test_random_bot_passes(tmp_path):
    assert_passes(SAMPLES / "random", tmp_path)


def test_heuristic_bot_passes(tmp_path):
    assert_passes(SAMPLES / "heuristic", tmp_path)


def test_js_bot_passes(tmp_path):
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js and npm are not installed (CI installs them: see .ci/run)")
    if not (SAMPLES / "js" / "node_modules" / "@msgpack" / "msgpack").is_dir():
        build(["npm", "ci", "--no-audit", "--no-fund"], SAMPLES / "js")
    assert_passes(SAMPLES / "js", tmp_path)


def test_c_bot_passes(tmp_path):
    if shutil.which("make") is None or shutil.which("cc") is None:
        pytest.skip("no C compiler or make (CI installs them: see .ci/run)")
    if not Path("/usr/include/msgpack.h").is_file():
        pytest.skip("msgpack-c is not installed: apt-get install libmsgpack-dev (CI does: see .ci/run)")
    build(["make"], SAMPLES / "c")
    assert_passes(SAMPLES / "c", tmp_path)


@pytest.mark.parametrize("script, kind, detail, sent", [
    ("sleepy", "timeout", "no reply within the 1 s allowed", None),
    ("quitter", "crash", "exit status 3", None),
    ("garbage", "malformed", "not valid msgpack", "data"),
    ("huge_header", "oversize", "announces 2147483648 bytes", "data"),
    ("illegal", "illegal", "is not among the", "message"),
    ("wrong_type", "protocol", 'expected a "action" message', "message"),
    ("deaf", "timeout", "no reply within the 1 s allowed", None),
    ("forker", "timeout", "no reply within the 1 s allowed", None),
    ("orphaner", "crash", "exit status 4", None),
])
def test_zoo_bot_fails_with_its_diagnosis(script, kind, detail, sent):
    status, out, _ = run_check(zoo(script), "--games", "knock-rummy", "--games-per-game", "2", "--json")
    assert status == 1
    report = json.loads(out)
    assert report["passed"] is False and report["lifecycle_faults"] == []
    [game] = report["games"]
    assert game["game"] == "knock-rummy" and game["games_played"] == 2
    faults = game["faults"]
    assert faults and all(f["bot"] == script and not f["opponent"] for f in faults)
    first = faults[0]
    assert first["kind"] == kind and detail in first["detail"]
    assert first["rule"] == FAULT_KINDS[kind]
    assert first["decision"] == 2  # the zoo bots play one legal decision, then misbehave
    assert first["seat"] == game["seatings"][0]["seat"]
    if sent == "message":
        assert first["message"]["type"] in ("action", "hello")
    elif sent == "data":
        assert first["data_hex"] and first["message"] is None
    command = first["reproduce"]
    assert f"--seed {first['seed']}" in command and f"--bot '{script}=" in command


def test_text_report_and_replay_line_reproduce_the_fault(tmp_path):
    junit = tmp_path / "junit.xml"
    status, out, _ = run_check(zoo("illegal"), "--games", "knock-rummy", "--games-per-game", "1",
                               "--junit", str(junit))
    assert status == 1
    lines = out.splitlines()
    fault = next(line for line in lines if line.strip().startswith("FAULT"))
    assert "FAULT illegal (knock-rummy, seat 0 of 2, decision 2): illegal:" in fault
    assert any("sent:" in line and "'card': 'ZZ'" in line for line in lines)
    assert any("rule:" in line and FAULT_KINDS["illegal"] in line for line in lines)
    assert lines[-1].startswith("FAIL: illegal: 1 fault(s) in knock-rummy")
    [replay] = [line.split("reproduce: ", 1)[1] for line in lines if "reproduce: " in line]
    # The line runs as printed from any shell: it names this cardarena by its full path, so it needs
    # neither the venv active nor the script on PATH.
    words = shlex.split(replay)
    assert words[2] == "&&" and Path(words[3]).is_absolute() and "play" in words[4:7]
    played = subprocess.run(replay, shell=True, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PATH": "/usr/bin:/bin"})
    assert "FAULT illegal: illegal (knock-rummy, game knock-rummy-0, seat 0, decision 2)" in played.stderr
    failure = junit_cases(junit)["knock-rummy"].find("failure")
    assert failure.get("type") == "illegal" and "reproduce: cd " in failure.text


def test_the_report_names_the_time_bank_and_the_replay_line_carries_it(tmp_path):
    """A bot that sleeps through its limit and its whole bank times out with the bank named in the
    detail, in the text, the JSON and the JUnit properties, and in the line that replays the game."""
    junit = tmp_path / "junit.xml"
    limits = ("--timeout", "0.2", "--time-bank", "0.3")
    status, out, _ = run_check(zoo("sleepy"), "--games", "knock-rummy", "--games-per-game", "1", *limits,
                               "--junit", str(junit))
    assert status == 1
    assert "decision limit 200.0 ms, time bank 0.3 s per game" in out.splitlines()[0]
    assert "plus the 0.300 s left in its time bank" in out and "is used up" in out
    [replay] = [line.split("reproduce: ", 1)[1] for line in out.splitlines() if "reproduce: " in line]
    assert "--timeout 0.2 --time-bank 0.3" in replay
    properties = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert (properties["decision_timeout"], properties["time_bank"]) == ("0.2", "0.3")
    report = CheckReport("b", ("b",), None, Limits(decision_timeout=0.2, time_bank=0.3))
    assert (report.to_dict()["decision_timeout"], report.to_dict()["time_bank"]) == (0.2, 0.3)
    assert "no time bank" in describe_lifecycle(CheckReport("b", ("b",), None, Limits()))[0]


def test_bad_hello_fails_the_handshake_and_every_game(tmp_path):
    junit = tmp_path / "junit.xml"
    status, out, _ = run_check(zoo("bad_hello"), "--game", "knock-rummy,casino", "--junit", str(junit))
    assert status == 1
    assert "FAULT handshake: bad_hello: bot speaks protocol version 99" in out
    assert "knock-rummy: SKIPPED: the handshake failed" in out
    cases = junit_cases(junit)
    assert sorted(cases) == ["casino", "knock-rummy"]
    assert all(case.find("failure").get("type") == "handshake" for case in cases.values())


def test_well_behaved_zoo_bots_pass():
    for bot in (zoo("noisy"), zoo("patient", after=10**9)):
        status, out, _ = run_check(bot, "--games", "knock-rummy", "--games-per-game", "2")
        assert status == 0, out


def test_a_bot_that_does_not_exit_cleanly_after_shutdown_fails():
    code = "import sys; from cardarena.protocol.bot import RandomBot, serve; serve(RandomBot(), sys.stdin.buffer, sys.stdout.buffer); sys.exit(4)"
    bot = f"unclean={shlex.quote(sys.executable)} -c {shlex.quote(code)}"
    status, out, _ = run_check(bot, "--games", "knock-rummy", "--games-per-game", "1", "--json")
    assert status == 1
    report = json.loads(out)
    assert [f["kind"] for f in report["lifecycle_faults"]] == ["crash"]
    assert "of shutdown" in report["lifecycle_faults"][0]["detail"]
    assert [f["kind"] for f in report["games"][0]["faults"]] == ["crash"]


@pytest.mark.parametrize("args, message", [
    (["no/such/bot"], "no such bot manifest"),
    ([str(SAMPLES / "random"), "--game", "chess"], "chess"),
    (["x=true", "--games-per-game", "0"], "--games-per-game"),
    (["x=true", "--time-bank", "-1"], "Invalid value for '--time-bank': a time bank must be a number of seconds"),
    (["x=true", "--time-bank", "x"], "Invalid value for '--time-bank': 'x' is not a number of seconds"),
])
def test_usage_errors_print_one_line_and_no_traceback(args, message):
    status, out, err = run_check(*args)
    assert status == 2
    assert message in err and "Traceback" not in err + out


def test_seatings_cover_every_player_count_partnership_and_seat():
    casino = seatings_of(get_game("casino"))
    assert len(casino) == 2 + 3 + 4 + 4  # four players twice: alone, and in partnerships
    assert {(s.players, s.options.get("partnerships", False), s.seat) for s in casino} == (
        {(p, False, seat) for p in (2, 3, 4) for seat in range(p)} | {(4, True, seat) for seat in range(4)})
    first_two = seatings_of(get_game("knock-rummy"))[:2]
    assert [(s.players, s.seat) for s in first_two] == [(2, 0), (3, 1)]  # a short check varies both


def test_slow_decisions_warn_without_failing():
    game = GameCheck("knock-rummy", decision_times=[0.1, 0.2, 0.6])
    report = CheckReport("slow", ("x",), None, Limits(decision_timeout=1.0), games=[game])
    assert report.passed
    assert report.warnings() == ["knock-rummy: worst decision time 600.0 ms is over half the 1000.0 ms limit"]
    assert game.timing(1.0)["median"] == 0.2


def test_a_time_bank_that_covers_slow_decisions_silences_the_warning():
    """Issue 22: with a time bank, a decision past half the limit is what the bank is for; the warning
    comes when one game drew over half the bank."""
    covered = GameCheck("knock-rummy", decision_times=[0.1, 0.6, 1.2], bank_draws=[0.2])
    report = CheckReport("banked", ("x",), None, Limits(decision_timeout=1.0, time_bank=1.0), games=[covered])
    assert report.warnings() == []
    assert covered.timing(1.0, 1.0)["most_drawn"] == 0.2
    drained = GameCheck("knock-rummy", decision_times=[0.1, 1.7], bank_draws=[0.0, 0.7])
    report = CheckReport("banked", ("x",), None, Limits(decision_timeout=1.0, time_bank=1.0), games=[drained])
    assert report.warnings() == ["knock-rummy: one game drew 700.0 ms of the 1 s time bank, over half of it"]


def test_the_verdict_counts_one_game_as_one_game():
    """Issue 24 item 5: "played 1 games" no more."""
    one = GameCheck("knock-rummy", seatings=seatings_of(get_game("knock-rummy"))[:1], decision_times=[0.1])
    report = CheckReport("solo", ("x",), None, Limits(decision_timeout=1.0), games=[one])
    assert describe_verdict(report)[-1] == "PASS: solo played 1 game without a fault"
    one.seatings *= 2
    assert describe_verdict(report)[-1] == "PASS: solo played 2 games without a fault"


def test_a_second_answer_to_a_games_last_decision_fails_that_game_and_its_replay_line_reproduces_it():
    """Issue 10 item 12 through `check`: the fault names the game it was sent in, so its line reproduces it."""
    bot = f"double_knock={shlex.quote(sys.executable)} {ZOO / 'double_knock.py'}"
    status, out, _ = run_check(bot, "--games", "knock-rummy", "--games-per-game", "2", "--json")
    assert status == 1
    [game] = json.loads(out)["games"]
    assert game["faults"] and all(f["kind"] == "protocol" and not f["opponent"] for f in game["faults"])
    first = game["faults"][0]
    assert f"after its answer to decision {first['decision']} that no request asked for" in first["detail"]
    assert first["message"]["type"] == "action" and first["message"]["action"]["type"] == "knock"
    command = shlex.split(first["reproduce"])  # cd FOLDER && cardarena play ...
    replay = CliRunner().invoke(main, command[command.index("play"):] + ["--quiet"], catch_exceptions=False)
    assert replay.exit_code == 1 and "Traceback" not in replay.stderr
    assert (f"FAULT double_knock: protocol (knock-rummy, game knock-rummy-{first['seed']}, seat {first['seat']}, "
            f"decision {first['decision']}): sent 54 bytes after its answer") in replay.stderr


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_a_bot_on_the_sdks_old_import_name_is_told_the_new_one(mode, tmp_path):
    """runner/README.md: the SDK is `cardarena.protocol`; a bot still written `from protocol.bot
    import run` fails its handshake, and check shows the message that names the new import."""
    skip_without_bwrap(mode)
    bot = python_bot_folder(tmp_path, "old", "import random\nfrom protocol.bot import random_action, run\n"
                            "run(lambda view, legal: random_action(legal, random.Random(1)), name='old')\n")
    status, out, err = run_check(str(bot), "--games", "knock-rummy", "--sandbox", mode)
    assert status == 1
    assert "write `from cardarena.protocol.bot import run` instead of `from protocol.bot import run`" in out + err
