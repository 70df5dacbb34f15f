"""End to end through the real `cardarena` command: every game played by real bot processes."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.conftest import RANDOM_BOT, ROOT, python_bot_folder, zoo_script


def cardarena(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cardarena.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


HEURISTIC_BOT = ROOT / "sample_bots" / "heuristic" / "bot.py"


def random_bots(count: int) -> list[str]:
    return [arg for seat in range(count)
            for arg in ("--bot", f"r{seat}={sys.executable} {RANDOM_BOT} --seed {seat}")]


def mixed_bots(count: int) -> list[str]:
    """Sample bots of two kinds, alternating by seat (so partners in 2 v 2 are the same kind)."""
    return [arg for seat in range(count)
            for arg in ("--bot", f"{'rh'[seat % 2]}{seat}={sys.executable} "
                                 f"{(RANDOM_BOT, HEURISTIC_BOT)[seat % 2]} --seed {seat}")]


@pytest.mark.parametrize("game,players,options", [
    ("knock-rummy", 2, []),
    ("knock-rummy", 5, []),
    ("casino", 2, []),
    ("casino", 4, ["--option", "partnerships=true"]),
    ("quitlok", 5, []),
    ("cuajo", 4, []),
])
def test_play_a_whole_game_between_sample_bots(tmp_path, game, players, options):
    record_path = tmp_path / "record.json"
    done = cardarena("play", game, *mixed_bots(players), "--seed", "7", "--timeout", "5",
                     "--record", str(record_path), *options)
    assert done.returncode == 0, done.stderr
    assert "FAULT" not in done.stderr
    record = json.loads(record_path.read_text())
    assert record["game"] == game and record["seed"] == 7 and record["faults"] == []
    assert record["seats"] == [f"{'rh'[seat % 2]}{seat}" for seat in range(players)]
    assert len(record["actions"]) >= 1 and len(record["ranks"]) == players
    assert f"{len(record['actions'])} decisions" in done.stdout
    # The printed log names every decision, numbered, with its bot and seat.
    last_seat = record["actions"][-1][0]
    assert f"{len(record['actions']):>4}  {record['seats'][last_seat]} (seat {last_seat}): " in done.stdout
    # Same seed, same bots: the same game.
    again = cardarena("play", game, *mixed_bots(players), "--seed", "7", "--timeout", "5",
                      "--record", str(tmp_path / "again.json"), *options)
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "again.json").read_text())["actions"] == record["actions"]


@pytest.mark.parametrize("args,message", [
    (["play", "poker", "--bot", "a=x", "--bot", "b=y"], "unknown game 'poker'"),
    (["play", "knock-rummy", "--bot", "a=x"], "knock-rummy is played by 2 to 5 players, not 1"),
    (["play", "knock-rummy", "--bot", "nocommand", "--bot", "b=y"],
     "bot 'nocommand' is neither a bot folder (holding bot.toml) nor NAME=COMMAND"),
    (["play", "casino", "--bot", "a=x", "--bot", "b=y", "--option", "target=20"], "option 'target' must be one of"),
    (["play", "casino", "--bot", "a=x", "--bot", "b=y", "--option", "colour=red"], "casino has no option 'colour'"),
    (["play", "casino", "--bot", "a=x", "--bot", "b=y", "--option", "oops"], "options are given as KEY=VALUE"),
    (["play", "casino", "--bot", "a=x", "--bot", "b=y", "--timeout", "0"], "--timeout"),
    (["play", "casino", "--bot", "a=x", "--bot", "b=y", "--time-bank", "-1"],
     "Invalid value for '--time-bank': a time bank must be a number of seconds from 0 (no bank) to 3600, got -1.0"),
    (["play", "casino", "--bot", "a=x", "--bot", "b=y", "--time-bank", "soon"],
     "Invalid value for '--time-bank': 'soon' is not a number of seconds"),
])
def test_bad_arguments_are_one_clear_line_and_exit_2(args, message):
    done = cardarena(*args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_faulting_bot_is_reported_but_the_game_completes(tmp_path):
    zoo = ROOT / "tests" / "zoo"
    done = cardarena("play", "knock-rummy", "--bot", f"bad={sys.executable} {zoo / 'garbage.py'} --after 0",
                     "--bot", f"good={sys.executable} {RANDOM_BOT}", "--record", str(tmp_path / "r.json"))
    assert done.returncode == 1  # a bot faulted: the game completes, the exit status says so
    assert "FAULT bad: malformed (knock-rummy, game knock-rummy-0, seat 0, decision" in done.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["ranks"] == [1, 0] and record["faults"][0]["kind"] == "malformed"


BANKER = """
import random, sys, time
from cardarena.protocol.bot import Bot, random_action, run


class Banker(Bot):
    \"\"\"Spends half its bank on its first decision, then answers at once (never knocking before its
    sixth decision, so the game lasts); logs every limit and bank it is told.\"\"\"

    name = "banker"
    asked = 0
    rng = random.Random(0)

    def decide(self, view, legal, request):
        print("bank_ms", request.bank_ms, "time_ms", request.time_ms, file=sys.stderr, flush=True)
        self.asked += 1
        if self.asked == 1:
            time.sleep(max(0.0, request.deadline(0.5) - time.monotonic()))
        calm = [action for action in legal if action["type"] != "knock"]
        return random_action(calm if self.asked < 6 and calm else legal, self.rng)


run(Banker())
"""
SLOW = """
import random, time
from cardarena.protocol.bot import random_action, run

rng = random.Random(1)
asked = 0


def decide(view, legal):
    global asked
    asked += 1
    time.sleep(0.1)  # within the limit: no bank pays for it, this bot's or its opponent's
    calm = [action for action in legal if action["type"] != "knock"]
    return random_action(calm if asked < 6 and calm else legal, rng)


run(decide, name="slow")
"""


def test_play_with_a_time_bank_charges_a_bot_for_its_own_overrun_only(tmp_path):
    """PROTOCOL.md § 5, over real pipes: a bot that spends half its bank on its first decision is
    told the other half from then on, however long its opponent thinks on its turns."""
    banker, slow = python_bot_folder(tmp_path, "banker", BANKER), python_bot_folder(tmp_path, "slow", SLOW)
    done = cardarena("play", "knock-rummy", "--bot", str(banker), "--bot", str(slow), "--seed", "5", "--quiet",
                     "--timeout", "0.2", "--time-bank", "0.3", "--log-dir", str(tmp_path / "logs"))
    assert done.returncode == 0, done.stderr
    told = [line.split() for line in (tmp_path / "logs" / "banker.stderr.log").read_text().splitlines()
            if line.startswith("bank_ms")]
    banks = [int(words[1]) for words in told]
    assert {int(words[3]) for words in told} == {200} and len(banks) == 6  # seed 5: 6 decisions, and 4 slow ones
    assert banks[0] == 300 and 90 <= banks[1] <= 150, banks  # 150 ms spent, and the wake-ups of a busy machine
    assert set(banks[1:]) == {banks[1]}, banks


def test_games_lists_every_game_with_players_and_options():
    done = cardarena("games")
    assert done.returncode == 0
    for line in ["knock-rummy  (Knock Rummy; 2-5 players", "casino", "quitlok", "cuajo",
                 "--option partnerships=false", "--option dealer=none"]:  # values as --option takes them
        assert line in done.stdout


def test_log_dir_keeps_each_bots_stderr(tmp_path):
    noisy = f"noisy={sys.executable} {ROOT / 'tests' / 'zoo' / 'noisy.py'}"
    done = cardarena("play", "knock-rummy", "--bot", noisy, "--bot", f"r={sys.executable} {RANDOM_BOT}",
                     "--quiet", "--log-dir", str(tmp_path / "logs"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "logs" / "noisy.stderr.log").stat().st_size >= 65_536
    assert (tmp_path / "logs" / "r.stderr.log").read_text().startswith("[cardarena: r started, match knock-rummy")


def test_a_play_record_replays_through_the_engine(tmp_path):
    record_path = tmp_path / "game.json"
    done = cardarena("play", "casino", *random_bots(2), "--seed", "3", "--quiet", "--record", str(record_path))
    assert done.returncode == 0, done.stderr
    replayed = cardarena("replay", str(record_path), "--quiet")
    assert replayed.returncode == 0, replayed.stderr
    assert "replay matches the record" in replayed.stdout
    record = json.loads(record_path.read_text())
    record["actions"] = record["actions"][:-1]
    record_path.write_text(json.dumps(record))
    broken = cardarena("replay", str(record_path), "--quiet")
    assert broken.returncode == 1 and "the game is not over" in broken.stderr
    record_path.write_text("{}")
    garbage = cardarena("replay", str(record_path))
    assert garbage.returncode == 1 and "not a game record written by 'cardarena play --record'" in garbage.stderr


def test_play_takes_bot_folders_and_reports_a_bad_one(tmp_path):
    done = cardarena("play", "knock-rummy", "--bot", str(ROOT / "sample_bots" / "heuristic"),
                     "--bot", str(ROOT / "sample_bots" / "random"), "--quiet", "--record", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["seats"] == ["heuristic", "random"]
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "bot.toml").write_text('name = "broken"\n')
    bad = cardarena("play", "knock-rummy", "--bot", str(tmp_path / "broken"), "--bot", str(ROOT / "sample_bots" / "random"))
    assert bad.returncode == 2 and "'command' must be a non-empty list of strings" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_play_reports_a_bot_that_exits_leaving_a_child_as_a_crash_at_once():
    orphaner = f"orphaner={sys.executable} {ROOT / 'tests' / 'zoo' / 'orphaner.py'}"
    done = cardarena("play", "knock-rummy", "--bot", orphaner, "--bot", f"r={sys.executable} {RANDOM_BOT}",
                     "--quiet", "--timeout", "30", "--seed", "5", timeout=25)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "FAULT orphaner: crash (knock-rummy, game knock-rummy-5, seat 0, decision " in done.stderr
    # In the sandbox's PID namespace the child dies with the bot, so whether the referee sees the exit
    # before the pipe's end of file is a race: either wording is the crash, seen at once (the CLI's 25 s
    # timeout is under the 30 s decision deadline). test_referee pins the wording where the child lives on.
    assert re.search(r"the bot (exited \(exit status 4\) while another process still held its output"
                     r"|closed its output \(exit status 4\))\n", done.stderr), done.stderr


def test_play_blames_a_second_answer_to_the_last_decision_on_the_game(tmp_path):
    double = f"double_knock={sys.executable} {zoo_script(tmp_path, 'double_knock.py')}"
    done = cardarena("play", "knock-rummy", "--bot", double, "--bot", f"p={sys.executable} {zoo_script(tmp_path, 'patient.py')} --after 1000000000",
                     "--quiet", "--seed", "5", "--record", str(tmp_path / "r.json"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    [fault] = record["faults"]
    assert (fault["kind"], fault["seat"], fault["decision"]) == ("protocol", 0, len(record["actions"]))
    assert record["ranks"] == [1, 0]
