"""Ratings against known answers: hand-computed cases, synthetic tournaments, bootstrap coverage."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, settings, strategies as st

from cardarena.ratings import (
    ELO_PER_NAT,
    RatingError,
    comparisons_from_ranks,
    components,
    fit,
    rate,
    tally,
)

ELO_OF_ODDS = lambda odds: 400 * math.log10(odds)  # noqa: E731 - the textbook formula the fit must match


def duel(wins: int, draws: int, losses: int) -> list[tuple[str, list[tuple[str, str, float]]]]:
    """Games of bot a against bot b, each its own cluster."""
    scores = [1.0] * wins + [0.5] * draws + [0.0] * losses
    return [(index, [("a", "b", score)]) for index, score in enumerate(scores)]


def test_two_bots_three_wins_in_four_is_log_odds_three():
    ratings = rate(duel(3, 0, 1), prior=0, bootstrap=0)
    assert ratings.rating["a"] - ratings.rating["b"] == pytest.approx(ELO_OF_ODDS(3))
    assert ratings.rating["a"] + ratings.rating["b"] == pytest.approx(3000)


def test_draws_count_as_half_points():
    # 2 wins and 2 draws score 3 of 4, exactly like 3 wins and a loss
    assert rate(duel(2, 2, 0), prior=0, bootstrap=0).rating["a"] == pytest.approx(1500 + ELO_OF_ODDS(3) / 2)
    assert rate(duel(1, 2, 1), prior=0, bootstrap=0).rating["a"] == pytest.approx(1500)


def test_prior_virtual_draws_keep_perfect_scores_finite():
    # 5 wins plus 2 virtual draws: 6 points of 7, odds 6
    ratings = rate(duel(5, 0, 0), prior=2, bootstrap=50)
    assert ratings.rating["a"] - ratings.rating["b"] == pytest.approx(ELO_OF_ODDS(6))
    # duplicate sets of different sizes, all won: resamples differ, and every one stays finite
    sets = [(deal, [("a", "b", 1.0)] * (deal + 1)) for deal in range(3)]
    ratings = rate(sets, prior=2, bootstrap=50)
    assert all(math.isfinite(v) for bounds in ratings.interval.values() for v in bounds)


def test_perfect_score_without_prior_is_an_error():
    with pytest.raises(RatingError):
        rate(duel(4, 0, 0), prior=0, bootstrap=0)


def test_prior_shrinks_towards_equal():
    # 3-1 plus 2 virtual draws: 4 points of 6, odds 2
    ratings = rate(duel(3, 0, 1), prior=2, bootstrap=0)
    assert ratings.rating["a"] - ratings.rating["b"] == pytest.approx(ELO_OF_ODDS(2))


def test_three_bot_cycle_rates_everyone_equal():
    games = []
    for index, (x, y) in enumerate([("a", "b"), ("b", "c"), ("c", "a")] * 3):
        games.append((index, [(x, y, 1.0 if index < 6 else 0.0)]))  # each wins 2 of 3 against the next
    ratings = rate(games, prior=0, bootstrap=0)
    assert all(value == pytest.approx(1500) for value in ratings.rating.values())


def test_three_bots_in_a_chain_add_up():
    # a beats b at odds 3, b beats c at odds 3, never met: a - c is twice log-odds 3
    games = [(i, [("a", "b", s)]) for i, s in enumerate([1, 1, 1, 0])]
    games += [(10 + i, [("b", "c", s)]) for i, s in enumerate([1, 1, 1, 0])]
    ratings = rate(games, prior=0, bootstrap=0)
    assert ratings.rating["a"] - ratings.rating["c"] == pytest.approx(2 * ELO_OF_ODDS(3))
    assert ratings.rating["b"] == pytest.approx(1500)


def test_anchor_puts_one_bot_at_its_rating():
    ratings = rate(duel(3, 0, 1), prior=2, anchor=("b", 1000), bootstrap=30)
    assert ratings.rating["b"] == pytest.approx(1000)
    assert ratings.rating["a"] == pytest.approx(1000 + ELO_OF_ODDS(2))
    assert ratings.interval["b"] == pytest.approx((1000, 1000))


def test_anchor_that_never_played_is_an_error():
    with pytest.raises(RatingError, match="zed"):
        rate(duel(1, 0, 1), anchor=("zed", 1500))


def test_disconnected_groups_are_rated_apart_and_not_compared():
    games = [(i, [("a", "b", 1.0 if i % 4 else 0.0)]) for i in range(8)]
    games += [(100 + i, [("c", "d", 1.0 if i % 2 else 0.0)]) for i in range(8)]
    ratings = rate(games, bootstrap=40)
    assert sorted(map(sorted, ratings.groups)) == [["a", "b"], ["c", "d"]]
    assert ratings.rating["a"] + ratings.rating["b"] == pytest.approx(3000)
    assert ratings.rating["c"] == pytest.approx(1500) and ratings.rating["d"] == pytest.approx(1500)
    assert ratings.superiority("a", "c") is None
    assert 0.75 < ratings.superiority("a", "b") < 1


def test_components_of_a_graph():
    assert components([("a", "b"), ("c", "d"), ("b", "e")], ["f"]) == [["a", "b", "e"], ["c", "d"], ["f"]]


def test_ranks_become_pairwise_results_with_ties_as_draws():
    assert comparisons_from_ranks(["a", "b", "c"], [1, 0, 1]) == [
        ("a", "b", 0.0), ("a", "c", 0.5), ("b", "c", 1.0)]


def test_copies_of_one_bot_are_not_compared():
    assert comparisons_from_ranks(["a", "a", "b"], [0, 2, 1]) == [("a", "b", 1.0), ("a", "b", 0.0)]


def test_partners_that_are_copies_give_one_team_result():
    assert comparisons_from_ranks(["a", "b", "a", "b"], [1, 0, 1, 0], [0, 1, 0, 1]) == [("a", "b", 0.0)]


def test_mixed_teams_compare_every_cross_pair_at_the_team_ranks():
    result = comparisons_from_ranks(["a", "b", "c", "d"], [0, 1, 0, 1], [0, 1, 0, 1])
    assert sorted(result) == [("a", "b", 1.0), ("a", "d", 1.0), ("c", "b", 1.0), ("c", "d", 1.0)]


def plackett_luce_games(strengths: dict[str, float], deals: int, seats: int, rng: random.Random,
                        ) -> list[tuple[str, list[tuple[str, str, float]]]]:
    """Synthetic duplicate tournament: tables of `seats` bots rank by strength + Gumbel noise.

    With Gumbel noise each pairwise result follows Bradley–Terry exactly, while the results of
    one game are correlated (a bot's results share its own performance), as in real multiplayer games.
    """
    names = sorted(strengths)
    games = []
    for deal in range(deals):
        table = rng.sample(names, seats)
        for rotation in range(seats):
            lineup = table[rotation:] + table[:rotation]
            performance = [strengths[bot] - math.log(-math.log(rng.random())) for bot in lineup]
            ranks = [sum(other > mine for other in performance) for mine in performance]
            games.append((f"deal{deal}", comparisons_from_ranks(lineup, ranks)))
    return games


TRUE_ELO = {"ace": 1700.0, "bee": 1550.0, "cat": 1450.0, "dog": 1300.0}


def test_synthetic_ratings_land_within_their_intervals():
    strengths = {bot: (elo - 1500) / ELO_PER_NAT for bot, elo in TRUE_ELO.items()}
    games = plackett_luce_games(strengths, deals=400, seats=4, rng=random.Random(1))
    ratings = rate(games, bootstrap=200, seed=3)
    for bot, elo in TRUE_ELO.items():
        low, high = ratings.interval[bot]
        assert low <= elo <= high, (bot, elo, low, high)
        assert abs(ratings.rating[bot] - elo) < 25
        assert high - low < 60
    assert sorted(TRUE_ELO, key=ratings.rating.get) == ["dog", "cat", "bee", "ace"]
    assert ratings.superiority("ace", "dog") == 1.0


def test_bootstrap_intervals_cover_the_truth_about_95_percent_of_the_time():
    strengths = {bot: (elo - 1500) / ELO_PER_NAT for bot, elo in TRUE_ELO.items()}
    rng = random.Random(2024)
    covered = total = 0
    for tournament in range(80):
        games = plackett_luce_games(strengths, deals=30, seats=3, rng=rng)
        ratings = rate(games, bootstrap=100, seed=tournament)
        for bot, elo in TRUE_ELO.items():
            low, high = ratings.interval[bot]
            covered += low <= elo <= high
            total += 1
    assert 0.89 <= covered / total <= 0.99, covered / total


def test_intervals_that_ignore_clusters_would_be_too_narrow():
    """The cluster bootstrap matters: resampling single comparisons of 5-player games narrows intervals."""
    strengths = {bot: (elo - 1500) / ELO_PER_NAT for bot, elo in TRUE_ELO.items()}
    strengths["eel"] = 0.0
    games = plackett_luce_games(strengths, deals=60, seats=5, rng=random.Random(5))
    clustered = rate(games, bootstrap=200, seed=1)
    singles = [((cluster, i, j), [comparison]) for i, (cluster, comparisons) in enumerate(games)
               for j, comparison in enumerate(comparisons)]
    naive = rate(singles, bootstrap=200, seed=1)
    width = lambda r: sum(high - low for low, high in r.interval.values())  # noqa: E731
    assert width(naive) < 0.9 * width(clustered)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from("abcd"), st.sampled_from([0.0, 0.5, 1.0])),
                min_size=1, max_size=30), st.randoms(use_true_random=False))
def test_ratings_do_not_depend_on_the_order_of_games(results, shuffler):
    games = [(index // 2, [(a, b, score)]) for index, (a, b, score) in enumerate(results) if a != b]
    if not games:
        return
    shuffled = games[:]
    shuffler.shuffle(shuffled)
    first, second = rate(games, bootstrap=20), rate(shuffled, bootstrap=20)
    assert first.rating == pytest.approx(second.rating)
    assert first.interval == second.interval or all(
        first.interval[bot] == pytest.approx(second.interval[bot]) for bot in first.interval)


def test_no_interval_from_a_single_duplicate_set_or_no_bootstrap():
    """Resampling one cluster only redraws the same games: the interval is unknown, not ±0."""
    one_set = [("deal-0", [("a", "b", 1.0)]), ("deal-0", [("a", "b", 1.0)]), ("deal-0", [("a", "b", 0.0)])]
    assert rate(one_set, bootstrap=100).interval == {"a": None, "b": None}
    assert rate(duel(3, 0, 1), bootstrap=0).interval == {"a": None, "b": None}
    two_sets = one_set + [("deal-1", [("a", "b", 0.0)])]
    low, high = rate(two_sets, bootstrap=100).interval["a"]
    assert low < high


def test_no_interval_from_duplicate_sets_that_all_came_out_alike():
    """Three sets with the same outcome: a resample can only redraw that outcome, so the bootstrap
    would print `1587 to 1587`; the interval is unknown instead (as with a single set)."""
    alike = [(f"deal-{deal}", [("a", "b", 1.0), ("a", "b", 0.0), ("a", "b", 1.0)]) for deal in range(3)]
    assert rate(alike, bootstrap=100).interval == {"a": None, "b": None}
    differing = alike + [("deal-3", [("a", "b", 0.0)])]
    low, high = rate(differing, bootstrap=100).interval["a"]
    assert low < high


def issue_16_games(b0: str, b1: str, b2: str, b3: str) -> list[tuple[int, list[tuple[str, str, float]]]]:
    """b0 beats b1 four times and loses once, draws b2 once; b2 beats b3 once (b3 never scores)."""
    results = [(b0, b1, 1.0)] * 4 + [(b0, b1, 0.0), (b0, b2, 0.5), (b2, b3, 1.0)]
    return [(index, [result]) for index, result in enumerate(results)]


@pytest.mark.parametrize("names", [("b0", "b1", "b2", "b3"), ("b1", "b2", "b3", "b0"), ("z", "y", "x", "a")])
def test_a_bot_that_never_scored_has_no_rating_without_a_prior_whatever_the_names(names):
    """Issue 16: the refusal once depended on whether the scoreless bot was last alphabetically."""
    with pytest.raises(RatingError, match=f": {names[3]} never scored against {names[2]} "):
        rate(issue_16_games(*names), prior=0.0, bootstrap=0)


def test_a_prior_rates_the_issue_16_example_the_same_under_any_names():
    first = rate(issue_16_games("b0", "b1", "b2", "b3"), prior=2.0, bootstrap=0).rating
    renamed = rate(issue_16_games("b1", "b2", "b3", "b0"), prior=2.0, bootstrap=0).rating
    assert all(math.isfinite(value) for value in first.values())
    assert [renamed[bot] for bot in ("b1", "b2", "b3", "b0")] == pytest.approx(
        [first[bot] for bot in ("b0", "b1", "b2", "b3")])
    assert min(first, key=first.get) == "b1" and first["b3"] < first["b2"]


def test_every_part_that_never_scored_is_named():
    """Two groups, each with a part that took no points from the rest of it, are both reported."""
    results = [("a", "b", 1.0), ("b", "c", 0.5), ("a", "c", 1.0), ("p", "q", 0.0), ("q", "r", 0.5), ("r", "p", 1.0)]
    with pytest.raises(RatingError) as error:
        rate([(i, [result]) for i, result in enumerate(results)], prior=0, bootstrap=0)
    assert ": b, c never scored against a; p never scored against q, r (" in str(error.value)


def test_a_bootstrap_resample_without_finite_ratings_is_named_as_such():
    with pytest.raises(RatingError, match=r"^bootstrap resample \d+ of 50: .* never scored against "):
        rate(duel(3, 0, 1), prior=0, bootstrap=50, seed=1)


def test_a_negative_prior_is_an_error():
    with pytest.raises(RatingError, match="prior"):
        rate(duel(3, 0, 1), prior=-1, bootstrap=0)


def test_a_lopsided_but_closed_cycle_has_finite_ratings_that_solve_the_score_equations():
    """One upset closing a chain of near-certain wins makes the fit exist, however far apart it spreads."""
    names = [f"x{i}" for i in range(6)]
    totals = {(names[i], names[i + 1]): [999.0, 1000] for i in range(5)}
    totals[(names[0], names[5])] = [0.0, 1]
    ratings, groups = fit(totals, (), prior=0)
    assert groups == [names]
    assert ratings["x0"] - ratings["x5"] > 5 * ELO_OF_ODDS(100)
    assert max(map(abs, score_residuals(totals, ratings, 0).values())) < 1e-6


def score_residuals(totals, ratings: dict[str, float], prior: float) -> dict[str, float]:
    """Each bot's points minus its expected points at `ratings`: all zero at the maximum-likelihood fit."""
    residual = dict.fromkeys(ratings, 0.0)
    for (a, b), (points, count) in totals.items():
        expected = 1.0 / (1.0 + math.exp((ratings[b] - ratings[a]) / ELO_PER_NAT))
        residual[a] += points + prior / 2 - (count + prior) * expected
        residual[b] -= points + prior / 2 - (count + prior) * expected
    return residual


def finite_fit_exists(totals) -> bool:
    """Ford's condition by brute force: every split of every connected group has each side scoring on the other."""
    for group in components(totals):
        for size in range(1, len(group)):
            for side in map(set, itertools.combinations(group, size)):
                took_points = (points > 0 if a in side else points < count
                               for (a, b), (points, count) in totals.items() if (a in side) != (b in side))
                if not any(took_points):
                    return False
    return True


def scoreless_clauses(message: str) -> set[tuple[frozenset[str], frozenset[str]]]:
    """The (part, opponents) pairs a no-finite-ratings message names, as sets (their order follows the names)."""
    reasons = message.split(": ", 1)[1].rsplit(" (", 1)[0]
    clauses = (reason.split(" never scored against ") for reason in reasons.split("; "))
    return {(frozenset(part.split(", ")), frozenset(opponents.split(", "))) for part, opponents in clauses}


BOTS = ("b0", "b1", "b2", "b3", "b4", "b5")
FRESH_NAMES = st.lists(st.text(alphabet="ABXYZ019_", min_size=1, max_size=4), min_size=6, max_size=6, unique=True)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(BOTS), st.sampled_from(BOTS), st.sampled_from([0.0, 0.5, 1.0])),
                min_size=1, max_size=20),
       st.sampled_from([0.0, 0.0, 0.0, 0.5, 2.0]),
       st.one_of(st.permutations(BOTS), FRESH_NAMES))
def test_renaming_the_bots_renames_the_ratings_or_the_refusal(results, prior, new_names):
    """Issue 16: whether ratings exist, and what they are, cannot depend on the bots' names."""
    rename = dict(zip(BOTS, new_names))
    games = [(index, [(a, b, score)]) for index, (a, b, score) in enumerate(results) if a != b]
    renamed_games = [(index, [(rename[a], rename[b], score)]) for index, [(a, b, score)] in games]
    totals = tally(comparison for _, comparisons in games for comparison in comparisons)
    try:
        first = rate(games, prior=prior, bootstrap=0)
    except RatingError as error:
        assert prior == 0 and not finite_fit_exists(totals)
        with pytest.raises(RatingError) as renamed_error:
            rate(renamed_games, prior=prior, bootstrap=0)
        assert scoreless_clauses(str(renamed_error.value)) == {
            (frozenset(map(rename.get, part)), frozenset(map(rename.get, opponents)))
            for part, opponents in scoreless_clauses(str(error))}
        return
    assert prior > 0 or finite_fit_exists(totals)
    raw = {bot: value - 1500 for bot, value in first.rating.items()}
    assert max(map(abs, score_residuals(totals, raw, prior).values()), default=0) < 1e-6
    second = rate(renamed_games, prior=prior, bootstrap=0)
    assert {rename[bot]: value for bot, value in first.rating.items()} == pytest.approx(second.rating, abs=1e-6)
    assert {frozenset(map(rename.get, group)) for group in first.groups} == set(map(frozenset, second.groups))
