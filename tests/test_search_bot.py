"""The search example of protocol/SEARCH.md (sample_bots/search/pimc): it plays every game legally
in-process (tests/bot_harness.py checks every answer), runs in the sandbox, and beats random play
clearly in Knock Rummy and Cuajo, the games cheap enough to measure here; tests/bench/pimc_margin.py
measures its margin in every game."""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from cardarena.cli import main
from cardarena.games import get_game
from cardarena.protocol.bot import RandomBot
from cardarena.search.bot import payoff
from cardarena.search.evaluate import estimate, pool_cards, unseen_copies
from tests.bot_harness import duplicate_gains, load_pimc, play_in_process, sign_test_p
from tests.conftest import ROOT

#: short games of each game, so that a whole game with a searching seat takes seconds (a Cuajo hand
#: of 80 turns, 20 a seat: long enough that a player who plays for closeness usually wins it)
SHORT = {"knock-rummy": (2, {}), "casino": (2, {"target": 11, "max_rounds": 1}),
         "cuajo": (4, {"max_turns": 80}), "quitlok": (5, {"max_hands_per_bank": 1})}


@pytest.mark.parametrize("game_name", sorted(SHORT))
def test_the_pimc_example_plays_every_seat_of_every_game_legally(game_name):
    players, options = SHORT[game_name]
    pimc = load_pimc()
    for seat in range(players):
        bots = [RandomBot(seed=other) for other in range(players)]
        bots[seat] = pimc(seed=seat, determinizations=1, seconds=None)
        play_in_process(get_game(game_name), bots, seed=seat, options=options, time_ms=60_000)


@pytest.mark.parametrize("game_name, deals, determinizations", [("knock-rummy", 30, 8), ("cuajo", 3, 1)])
def test_the_pimc_example_beats_random_play(game_name, deals, determinizations):
    """Duplicate format (bot_harness.duplicate_gains): better than random in more seat pairs than
    worse, by a one-sided sign test at p < 0.01. (In Cuajo random play almost never wins a hand,
    so the example values a hand's closeness to complete, cardarena.search.evaluate.estimate.)"""
    players, options = SHORT[game_name]
    pimc = load_pimc()
    gains = duplicate_gains(get_game(game_name),
                            lambda deal: pimc(seed=deal, determinizations=determinizations, seconds=None),
                            players=players, options=options, deals=deals)
    better, worse = sum(gain > 0 for gain in gains), sum(gain < 0 for gain in gains)
    assert sign_test_p(better, worse) < 0.01, f"PIMC did better in {better}, worse in {worse} of {len(gains)} pairs"


def test_the_pimc_example_passes_check_in_the_sandbox(tmp_path):
    result = CliRunner().invoke(main, ["check", str(ROOT / "sample_bots" / "search" / "pimc"), "--games",
                                       "knock-rummy", "--games-per-game", "2"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "PASS: pimc played 2 games without a fault" in result.stdout


def test_the_sign_test_rejects_an_even_record():
    assert sign_test_p(10, 10) > 0.5 and sign_test_p(15, 1) < 0.001


def test_estimate_values_a_cuajo_discard_by_the_hand_it_keeps_and_leaves_other_games_to_playouts():
    """cuajo.md § Combinations: the discard that keeps the most cards in combinations scores
    highest (the heuristic bot's choice); a finished game is worth its payoff; Knock Rummy has no
    estimate, so a search plays it out."""
    sys.path.insert(0, str(ROOT / "sample_bots" / "heuristic"))
    from heuristic_bot import cuajo as heuristic

    state = get_game("cuajo").new_state(4, {}, seed=3)
    seat, view = state.to_move(), state.view(state.to_move())
    assert view["phase"] == "discard"
    values = {}
    for action in state.legal_actions():
        branch = state.clone()
        branch.apply(action)
        values[action["card"]] = estimate(branch, seat)
    kept = heuristic.best_discard(pool_cards(view), list(values), unseen_copies(view))
    assert values[kept] == max(values.values()) > min(values.values())
    rummy = get_game("knock-rummy").new_state(2, {}, seed=3)
    assert estimate(rummy, 0) is None
    while not rummy.is_over():
        rummy.apply(rummy.legal_actions()[0])
    assert estimate(rummy, 1) == payoff(rummy.result(), 1)
