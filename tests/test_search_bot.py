"""The search example of protocol/SEARCH.md (sample_bots/search/pimc) plays every game legally and
beats random play clearly, in-process (tests/bot_harness.py) on short games, so the suite stays fast.

Strength, in duplicate format: each seat of each deal is played twice, once by the PIMC bot and once
by a random bot, the other seats by the same random bots both times; the seat's payoff
(cardarena.search.bot.payoff: its score less its opponents' mean) is higher with PIMC in more pairs
than lower, by a one-sided sign test at p < 0.01.
"""

from __future__ import annotations

import importlib.util
import math

import pytest

from cardarena.games import get_game
from cardarena.protocol.bot import RandomBot
from cardarena.search.bot import payoff
from tests.bot_harness import play_in_process
from tests.conftest import ROOT

PIMC = ROOT / "sample_bots" / "search" / "pimc" / "bot.py"

#: game -> (players, short-game options, deals, determinizations per decision)
SETTINGS = {
    "knock-rummy": (2, {}, 30, 16),
    "casino": (2, {"target": 11, "max_rounds": 1}, 8, 2),
    "cuajo": (4, {"max_turns": 40}, 6, 2),
    "quitlok": (5, {"max_hands_per_bank": 1}, 8, 8),
}


def pimc_class():
    spec = importlib.util.spec_from_file_location("pimc_bot", PIMC)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PimcBot


def sign_test_p(wins: int, losses: int) -> float:
    """One-sided p-value of at least `wins` successes in wins + losses fair coin flips."""
    trials = wins + losses
    return sum(math.comb(trials, k) for k in range(wins, trials + 1)) / 2 ** trials


@pytest.mark.parametrize("game_name", sorted(SETTINGS))
def test_the_pimc_example_beats_random_play(game_name):
    players, options, deals, determinizations = SETTINGS[game_name]
    game, pimc = get_game(game_name), pimc_class()
    gains = []
    for deal in range(deals):
        for seat in range(players):
            seat_payoffs = []
            for player in (pimc(seed=deal, determinizations=determinizations, seconds=None), RandomBot(seed=-1 - deal)):
                bots = [RandomBot(seed=deal * players + other) for other in range(players)]
                bots[seat] = player
                result = play_in_process(game, bots, seed=10_000 + deal, options=options, time_ms=60_000)
                seat_payoffs.append(payoff(result, seat))
            gains.append(seat_payoffs[0] - seat_payoffs[1])
    better, worse = sum(gain > 0 for gain in gains), sum(gain < 0 for gain in gains)
    assert sign_test_p(better, worse) < 0.01, f"{game_name}: PIMC did better in {better}, worse in {worse} of {len(gains)} pairs"


def test_the_sign_test_rejects_an_even_record():
    assert sign_test_p(10, 10) > 0.5 and sign_test_p(15, 1) < 0.001
