"""The command line is consistent: argument errors exit 2 and blame their source, an anchor must be
a bot that played, NAME=CMD bots of a league file run in its folder, an empty `games` list is no
bot, and one spelling per option across commands (the old one kept as a hidden alias)."""

from __future__ import annotations

import shutil
import sys

from click.testing import CliRunner

from cardarena.cli import main
from tests.conftest import ROOT
from tests.test_faults import RANDOM
from tests.test_tournament import cardarena

TWO = ["--bot", f"random={sys.executable} {RANDOM / 'bot.py'}", "--bot", f"b={sys.executable} {RANDOM / 'bot.py'}"]


def small_run(out, *extra: str):
    return cardarena("run", *TWO, "--game", "casino", "--deals", "1", "--jobs", "1", "--bootstrap", "0",
                     "--out", str(out), *extra)


def test_an_unknown_game_blames_the_command_line_not_the_sample_league():
    done = cardarena("run", "--game", "poker")
    assert done.returncode == 2 and done.stderr.startswith("Error: command line: unknown game 'poker'")
    assert "league.toml" not in done.stderr


def test_an_anchor_on_a_bot_that_did_not_play_is_refused(tmp_path):
    refused = small_run(tmp_path / "t.sqlite", "--anchor", "nobody=1000")
    assert refused.returncode == 2 and "--anchor" in refused.stderr and "no bot 'nobody'" in refused.stderr
    assert not (tmp_path / "t.sqlite").exists()  # refused before any game
    assert small_run(tmp_path / "t.sqlite", "--anchor", "random=1000").returncode == 0
    board = cardarena("leaderboard", str(tmp_path / "t.sqlite"), "--anchor", "nobody=1000")
    assert board.returncode == 2 and "no bot 'nobody' played in these results (bots: b, random)" in board.stderr
    assert cardarena("leaderboard", str(tmp_path / "t.sqlite"), "--anchor", "random=1000").returncode == 0


def test_name_cmd_bots_of_a_league_file_name_files_relative_to_it(tmp_path):
    league = tmp_path / "league"
    league.mkdir()
    shutil.copy(RANDOM / "bot.py", league / "mine.py")
    (league / "l.toml").write_text(f'name = "here"\ngames = ["casino"]\ndeals = 1\n'
                                   f'bots = ["mine=python mine.py", "{RANDOM}"]\n')
    done = cardarena("run", str(league / "l.toml"), "--jobs", "1", "--bootstrap", "0", "--sandbox", "none",
                     "--out", str(tmp_path / "t.sqlite"))  # run from the project folder, not the league's
    assert done.returncode == 0 and "left out" not in done.stderr, done.stderr
    assert "mine" in done.stdout and "faults: none" in done.stdout


def test_an_empty_games_list_in_a_manifest_is_refused(tmp_path):
    (tmp_path / "bot.toml").write_text(f'name = "empty"\ncommand = ["python", "{RANDOM / "bot.py"}"]\ngames = []\n')
    done = cardarena("check", str(tmp_path))
    assert done.returncode == 2 and "'games' is empty" in done.stderr


def test_one_spelling_per_option_with_the_old_one_hidden():
    """The help shows the new spelling only; the old one still runs (the new ones run throughout the
    suite: check --game in tests/test_bot_views.py, play --no-pin-cores in tests/test_cores.py)."""
    runner = CliRunner()
    check_help = runner.invoke(main, ["check", "--help"]).output
    play_help = runner.invoke(main, ["play", "--help"]).output
    assert "--game GAME[,GAME]" in check_help and "--games " not in check_help
    assert "--pin-cores / --no-pin-cores" in play_help and "--pin / --no-pin" not in play_help
    done = cardarena("check", str(ROOT / "sample_bots" / "random"), "--games", "casino", "--games-per-game", "1")
    assert done.returncode == 0 and "casino: ok" in done.stdout and "knock-rummy" not in done.stdout, done.stdout
    assert cardarena("play", "casino", *TWO, "--quiet", "--no-pin").returncode == 0
