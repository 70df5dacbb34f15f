"""The league server's ratings as a league goes on (issue 23, Playing continuously and Pages): the running
tally that decides the gauntlet without re-rating every game, and each bot's rating history, which
must be what `cardarena leaderboard` says of the games played until each round."""

from __future__ import annotations

import random

import pytest

from cardarena.ratings import DEFAULT_MEAN, comparisons_from_ranks, fit
from cardarena.report import leaderboards
from cardarena.server.league_play import ROUND_DEALS, rating_histories
from cardarena.server.standings import (GAUNTLET_GAMES, GAUNTLET_INTERVAL, PRIOR, RunningTally, own_interval,
                                        rating_against, rating_history)
from cardarena.tournament.store import ResultStore
from tests.random_results import write_random_results

BOTS = ["alice-v1", "bob-v1", "carol-v1"]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Random games of two games' boards, spread over several rounds of play (deal // ROUND_DEALS)."""
    path = tmp_path_factory.mktemp("standings") / "class.sqlite"
    write_random_results(path, BOTS, {"knock-rummy": 300, "cuajo": 40}, {"knock-rummy": 2, "cuajo": 4})
    with ResultStore(path) as store:
        return path, list(store.games())


def round_of(game) -> int:
    return game.placement.deal // ROUND_DEALS


def test_the_history_is_the_leaderboard_of_the_games_until_each_round(results):
    path, games = results
    history = rating_histories(path)
    assert [board["title"] for board in history] == [board.title for board in leaderboards(games, bootstrap=0)]
    assert [board["title"] for board in history][-1] == "overall"
    until = {number: {b.title: b for b in leaderboards([g for g in games if round_of(g) <= number], bootstrap=0)}
             for number in {round_of(game) for game in games}}
    for board in history:
        for bot, series in board["series"].items():
            assert [point[1] for point in series] == sorted({point[1] for point in series})  # one point a round
            for seen, number, elo in series:
                boards = until[number]
                row = next(row for row in boards[board["title"]].rows if row.bot == bot)
                assert elo == pytest.approx(row.elo, abs=0.051)  # stored to a tenth
                assert seen == boards[board["title"]].games
        assert max(point[0] for series in board["series"].values() for point in series) == board["games"]


def test_a_long_history_keeps_evenly_spaced_rounds_and_the_last(results):
    _, games = results
    full = rating_history(games, round_of)[1]["series"]["alice-v1"]  # knock-rummy's board: five rounds
    thinned = rating_history(games, round_of, points=2)[1]["series"]["alice-v1"]
    assert len(full) == 5 and [point[1] for point in thinned] == [2, 4]
    assert thinned == [full[2], full[4]]


def test_the_running_tally_of_games_one_by_one_is_the_tally_of_them_all(results):
    _, games = results
    whole = RunningTally.of(games)
    running = RunningTally()
    for game in games:
        running.add(f"{game.game}|{game.placement.cluster}|{game.seed}", game.seats,
                    comparisons_from_ranks(game.seats, game.ranks, game.teams))
    assert running.totals == whole.totals and running.played == whole.played
    ratings, _ = fit(whole.totals, (), PRIOR)
    overall = leaderboards(games, bootstrap=0)[-1]
    assert {row.bot: pytest.approx(row.elo) for row in overall.rows} == {
        bot: value + DEFAULT_MEAN for bot, value in ratings.items()}


def test_a_young_bots_rating_against_a_fixed_field_is_the_joint_fit_of_two_bots():
    """With two bots the joint fit and the fit against the other's rating held fixed are one equation."""
    totals = {("a", "b"): [30.0, 50]}
    joint, _ = fit(totals, (), PRIOR)
    assert rating_against({"a": [20.0, 50]}, {"a": joint["a"]}) == pytest.approx(joint["b"], abs=1e-6)


def games_against_the_field(count: int, strength: float, seed: int = 1) -> RunningTally:
    """Two established bots with 400 games between them, and `count` games of a new one, winning each
    with probability `strength`, one duplicate set of two games at a time."""
    rng = random.Random(seed)
    running = RunningTally()
    for number in range(400):
        winner = rng.random() < 0.6
        running.add(f"old|{number // 2}", ["a", "b"], [("a", "b", 1.0 if winner else 0.0)])
    for number in range(count):
        opponent = "ab"[number % 2]
        running.add(f"new|{number // 2}", ["new", opponent], [("new", opponent, 1.0 if rng.random() < strength else 0.0)])
    return running


def test_a_new_version_leaves_the_gauntlet_once_its_interval_is_narrow():
    assert games_against_the_field(10, 0.5).gauntlet(["a", "b", "new"]) == ["new"]
    out = games_against_the_field(180, 0.5)
    low, high = own_interval(out.young["new"], fit(out.totals, (), PRIOR)[0])
    assert high - low <= GAUNTLET_INTERVAL and out.gauntlet(["a", "b", "new"]) == []


def test_a_perfect_score_leaves_the_gauntlet_after_its_games_and_its_sets_are_let_go():
    perfect = games_against_the_field(GAUNTLET_GAMES - 1, 1.0)
    assert perfect.gauntlet(["new"]) == ["new"] and len(perfect.young["new"]) == (GAUNTLET_GAMES - 1 + 1) // 2
    perfect.add("new|last", ["new", "a"], [("new", "a", 1.0)])
    assert perfect.gauntlet(["new"]) == [] and "new" not in perfect.young  # memory bounded by the young bots


def test_one_duplicate_set_gives_no_interval():
    assert own_interval({"s1": {"a": [1.0, 1]}}, {"a": 0.0}) is None
    assert own_interval({"s1": {"a": [1.0, 1]}, "s2": {"a": [1.0, 1]}}, {"a": 0.0}) is None  # alike: no spread
