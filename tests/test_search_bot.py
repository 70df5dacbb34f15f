"""The search example of protocol/SEARCH.md (sample_bots/search/pimc): it plays every game legally
in-process (tests/bot_harness.py checks every answer), runs in the sandbox, and beats random play
clearly in Knock Rummy, the game cheap enough to measure here; tests/bench/pimc_margin.py measures
its margin in every game."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cardarena.cli import main
from cardarena.games import get_game
from cardarena.protocol.bot import RandomBot
from tests.bot_harness import duplicate_gains, load_pimc, play_in_process, sign_test_p
from tests.conftest import ROOT

#: short games of each game, so that a whole game with a searching seat takes seconds
SHORT = {"knock-rummy": (2, {}), "casino": (2, {"target": 11, "max_rounds": 1}),
         "cuajo": (4, {"max_turns": 16}), "quitlok": (5, {"max_hands_per_bank": 1})}


@pytest.mark.parametrize("game_name", sorted(SHORT))
def test_the_pimc_example_plays_every_seat_of_every_game_legally(game_name):
    players, options = SHORT[game_name]
    pimc = load_pimc()
    for seat in range(players):
        bots = [RandomBot(seed=other) for other in range(players)]
        bots[seat] = pimc(seed=seat, determinizations=1, seconds=None)
        play_in_process(get_game(game_name), bots, seed=seat, options=options, time_ms=60_000)


def test_the_pimc_example_beats_random_play_in_knock_rummy():
    """Duplicate format (bot_harness.duplicate_gains): better than random in more seat pairs than
    worse, by a one-sided sign test at p < 0.01."""
    pimc = load_pimc()
    gains = duplicate_gains(get_game("knock-rummy"), lambda deal: pimc(seed=deal, determinizations=8, seconds=None),
                            players=2, options={}, deals=30)
    better, worse = sum(gain > 0 for gain in gains), sum(gain < 0 for gain in gains)
    assert sign_test_p(better, worse) < 0.01, f"PIMC did better in {better}, worse in {worse} of {len(gains)} pairs"


def test_the_pimc_example_passes_check_in_the_sandbox(tmp_path):
    result = CliRunner().invoke(main, ["check", str(ROOT / "sample_bots" / "search" / "pimc"), "--games",
                                       "knock-rummy", "--games-per-game", "2"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "PASS: pimc played 2 games without a fault" in result.stdout


def test_the_sign_test_rejects_an_even_record():
    assert sign_test_p(10, 10) > 0.5 and sign_test_p(15, 1) < 0.001
