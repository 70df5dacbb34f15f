"""The SPRT on duplicate sets: settings, set scores, the reorder buffer, and error rates by simulation."""

from __future__ import annotations

import math
import re
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from cardarena.ratings import elo_of_score, expected_score, score_interval
from cardarena.tournament.planning.sprt import (
    H1,
    SequentialTest,
    SprtError,
    SprtSettings,
    duplicate_score,
    log_likelihood_ratio,
    parse_sprt,
    sprt_settings,
)
from tests.bench.bench_sprt import binomial_margin, set_score_distribution, simulate

RUNS = 2000  # simulated SPRTs per true Elo difference


def test_parse_sprt_reads_the_command_line_form_with_defaults():
    assert parse_sprt("elo0=0,elo1=10") == SprtSettings(0, 10, 0.05, 0.05)
    assert parse_sprt(" elo0=-5 , elo1=5, alpha=0.1,beta=0.2") == SprtSettings(-5, 5, 0.1, 0.2)


@pytest.mark.parametrize("text, message", [
    ("elo0=0", "elo1 must be given"),
    ("elo1=10", "elo0 must be given"),
    ("elo0=10,elo1=0", "elo0 must be below elo1"),
    ("elo0=0,elo1=10,alpha=0", "alpha must be above 0"),
    ("elo0=0,elo1=10,beta=0.5", "beta must be above 0 and below 0.5"),
    ("elo0=0,elo1=ten", "elo1 must be a number, got 'ten'"),
    ("elo0=0,elo1=10,gamma=1", "unknown key(s) gamma"),
    ("elo0=0,elo0=1,elo1=2", "elo0 given twice"),
    ("elo0=0;elo1=10", "elo0 must be a number, got '0;elo1=10'"),
    ("elo0=0,,elo1=10", "KEY=VALUE pairs separated by commas"),
    ("elo0=0,elo1=inf", "finite numbers"),
])
def test_parse_sprt_refuses_settings_that_make_no_test(text, message):
    with pytest.raises(SprtError, match="^--sprt") as caught:
        parse_sprt(text)
    assert message in str(caught.value)


def test_league_table_form_names_its_source():
    assert sprt_settings({"elo0": 0, "elo1": 5, "alpha": 0.01}) == SprtSettings(0, 5, 0.01, 0.05)
    with pytest.raises(SprtError, match=r"^\[sprt\]: unknown key\(s\) elo2"):
        sprt_settings({"elo0": 0, "elo1": 5, "elo2": 1}, "[sprt]")


def test_bounds_are_walds():
    settings = SprtSettings(0, 10, alpha=0.05, beta=0.1)
    assert settings.upper == pytest.approx(math.log(0.9 / 0.05))
    assert settings.lower == pytest.approx(math.log(0.1 / 0.95))


@given(st.floats(-1500, 1500))
def test_elo_and_expected_score_are_inverse(elo):
    assert elo_of_score(expected_score(elo)) == pytest.approx(elo, abs=1e-6)


def test_elo_of_a_perfect_score_is_unbounded():
    assert elo_of_score(1.0) == math.inf and elo_of_score(0.0) == -math.inf


def test_llr_is_the_normal_approximation_with_a_one_set_variance_prior():
    settings = SprtSettings(0, 20)
    scores = [0.75, 0.5, 0.25, 1.0, 0.75]
    n, mean = len(scores), sum(scores) / len(scores)
    variance = (sum((x - mean) ** 2 for x in scores) + 0.25) / (n + 1)
    s0, s1 = 0.5, 1 / (1 + 10 ** (-20 / 400))
    expected = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)
    llr = log_likelihood_ratio(n, sum(scores), sum(x * x for x in scores), settings)
    assert llr == pytest.approx(expected)
    # at the midpoint of the hypotheses the evidence is balanced
    midpoint = (s0 + s1) / 2
    assert log_likelihood_ratio(4, 4 * midpoint, 4 * midpoint ** 2 + 0.1, settings) == pytest.approx(0, abs=1e-12)


def test_sets_are_counted_in_schedule_order_and_none_after_the_decision():
    test = SequentialTest(SprtSettings(0, 10))
    test.record(1, 1.0)
    assert (test.sets, test.waiting, test.llr) == (0, 1, 0.0)  # set 0 is still being played
    test.record(0, 0.5)
    assert (test.sets, test.waiting) == (2, 0)
    index = 2
    while test.decision is None:
        test.record(index, 1.0)
        index += 1
    assert test.decision == H1
    decided_at, llr = test.sets, test.llr
    test.record(index, 0.0)
    assert (test.sets, test.llr) == (decided_at, llr)
    with pytest.raises(ValueError, match="set 0 was already recorded"):
        test.record(0, 1.0)
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        test.record(index + 1, 1.5)


@hypothesis_settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=1, max_size=150), st.randoms())
def test_finishing_order_never_changes_the_outcome(scores, rng):
    """However the sets finish, the test sees them in schedule order: same sets, LLR and decision."""
    in_order, shuffled = SequentialTest(SprtSettings(0, 30)), SequentialTest(SprtSettings(0, 30))
    for index, score in enumerate(scores):
        in_order.record(index, score)
    order = list(range(len(scores)))
    rng.shuffle(order)
    for index in order:
        shuffled.record(index, scores[index])
    assert (shuffled.sets, shuffled.llr, shuffled.decision) == (in_order.sets, in_order.llr, in_order.decision)


def test_estimate_is_the_elo_of_the_mean_score_with_its_interval():
    test = SequentialTest(SprtSettings(-1, 1, 0.001, 0.001))  # too close to decide on these
    assert test.estimate() is None
    for index, score in enumerate([0.75, 0.25] * 50 + [1.0] * 20):
        test.record(index, score)
    assert test.decision is None
    estimate = test.estimate()
    mean = (50 * 1.0 + 20) / 120
    assert estimate.elo == pytest.approx(elo_of_score(mean))
    assert estimate.low < estimate.elo < estimate.high
    error = math.sqrt((sum(x * x for x in [0.75, 0.25] * 50 + [1.0] * 20) / 120 - mean ** 2) / 120)
    low, high = score_interval(mean, error, 120)
    assert (estimate.low, estimate.high) == (pytest.approx(elo_of_score(low)), pytest.approx(elo_of_score(high)))


def test_duplicate_score_compares_each_challenger_seat_with_the_baseline_in_the_twin_game():
    # a field bot F at a three-seat table; C and B swapped on the same deal in the same seats
    games = [(["C", "F", "F2"], [0, 1, 2]), (["B", "F", "F2"], [1, 0, 2]),   # C better
             (["F", "C", "F2"], [0, 2, 1]), (["F", "B", "F2"], [0, 2, 1]),   # equal
             (["F2", "F", "C"], [0, 1, 2]), (["F2", "F", "B"], [1, 2, 0])]   # C worse
    assert duplicate_score(games, "C", "B") == pytest.approx(0.5)
    assert duplicate_score(games[:2], "C", "B") == 1.0 and duplicate_score(games[:2], "B", "C") == 0.0


def test_duplicate_score_of_a_head_to_head_pair_is_the_pair_score():
    """Two seats, the two bots alone: the set is a game pair, scored like a chess pentanomial pair."""
    won_both = [(["C", "B"], [0, 1]), (["B", "C"], [1, 0])]
    split = [(["C", "B"], [0, 1]), (["B", "C"], [0, 1])]
    drawn_and_won = [(["C", "B"], [0, 0]), (["B", "C"], [1, 0])]
    assert [duplicate_score(g, "C", "B") for g in (won_both, split, drawn_and_won)] == [1.0, 0.5, 0.75]


def test_duplicate_score_needs_every_twin():
    with pytest.raises(ValueError, match="no twin of the game seating C, F"):
        duplicate_score([(["C", "F"], [0, 1]), (["F", "B"], [0, 1])], "C", "B")
    with pytest.raises(ValueError, match="no game with C"):
        duplicate_score([(["B", "F"], [0, 1])], "C", "B")


def test_synthetic_sets_have_the_intended_expected_score():
    values, cumulative = set_score_distribution(35.0, comparisons=6, draws=0.3)
    probabilities = [b - a for a, b in zip([0.0] + cumulative, cumulative)]
    assert cumulative[-1] == pytest.approx(1.0)
    assert sum(v * p for v, p in zip(values, probabilities)) == pytest.approx(expected_score(35.0))


def wald_mean_sets(settings: SprtSettings, elo: float, comparisons: int, draws: float) -> float:
    """Wald's approximation of the expected number of sets when H1 is true (overshoot ignored)."""
    values, cumulative = set_score_distribution(elo, comparisons, draws)
    probabilities = [b - a for a, b in zip([0.0] + cumulative, cumulative)]
    mean = sum(v * p for v, p in zip(values, probabilities))
    variance = sum(p * (v - mean) ** 2 for v, p in zip(values, probabilities))
    s0, s1 = expected_score(settings.elo0), expected_score(settings.elo1)
    drift = (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)
    return ((1 - settings.beta) * settings.upper + settings.beta * settings.lower) / drift


def test_error_rates_by_simulation():
    """2,000 SPRTs at each true difference: wrong acceptances within three standard errors of alpha and beta.

    The hypotheses are wide (0 vs 40 Elo) and the sets have eight comparisons, a third drawn, so
    an SPRT takes about fifty sets and the whole simulation a second or two; tests/bench/bench_sprt.py
    runs the same check at 0 vs 10 Elo.
    """
    settings = SprtSettings(0, 40, alpha=0.05, beta=0.05)
    shape = {"comparisons": 8, "draws": 1 / 3}
    at_elo0 = simulate(settings, 0.0, RUNS, seed=11, **shape)
    at_elo1 = simulate(settings, 40.0, RUNS, seed=12, **shape)
    at_twice = simulate(settings, 80.0, RUNS, seed=13, **shape)
    assert at_elo0.undecided == at_elo1.undecided == at_twice.undecided == 0
    assert at_elo0.accepted_h1 / RUNS <= settings.alpha + binomial_margin(settings.alpha, RUNS)
    assert at_elo1.accepted_h0 / RUNS <= settings.beta + binomial_margin(settings.beta, RUNS)
    assert at_twice.accepted_h0 / RUNS <= 0.005  # far beyond elo1, H0 is (almost) never accepted
    # the LLR has the right scale: the test lasts about as long as Wald's approximation says
    # (a little longer: each set's increment overshoots the bound)
    expected = wald_mean_sets(settings, 40.0, **shape)
    assert expected <= at_elo1.mean_sets <= 2 * expected
    assert at_twice.mean_sets < at_elo1.mean_sets


def test_the_simulation_can_tell_a_wrong_llr():
    """The error-rate check has teeth: a test with bounds four times too narrow misses it."""
    loose = SprtSettings(0, 40, alpha=0.3, beta=0.3)
    point = simulate(loose, 0.0, 500, comparisons=8, draws=1 / 3, seed=5)
    assert point.accepted_h1 / 500 > 0.05 + binomial_margin(0.05, 500)


# -- the SPRT as `cardarena run` plays it -------------------------------------------------------

def sprt_run(out, *extra: str):
    from tests.test_tournament import cardarena

    return cardarena("run", "--game", "casino", "--jobs", "2", "--bootstrap", "0", "--out", str(out), *extra)


def sprt_outcome(stdout: str) -> tuple[str, int, int]:
    """The verdict, the duplicate sets counted and the games in them, from the run's report."""
    verdict = re.search(r"^SPRT [^:]*: (H1 accepted|H0 accepted|undecided)", stdout, re.MULTILINE).group(1)
    counted = re.search(r"after (\d+) duplicate sets \((\d+) games\)", stdout)
    return verdict, int(counted.group(1)), int(counted.group(2))


def test_heuristic_against_random_stops_for_h1_and_resumes_past_a_cap(tmp_path):
    from tests.test_tournament import ROOT

    bots = ["--bot", str(ROOT / "sample_bots" / "heuristic"), "--bot", str(ROOT / "sample_bots" / "random"),
            "--challenger", "heuristic", "--baseline", "random", "--sprt", "elo0=0,elo1=10", "--deal-seed", "1"]
    out = tmp_path / "sprt.sqlite"
    capped = sprt_run(out, *bots, "--max-games", "6")
    assert capped.returncode == 3, capped.stderr
    assert sprt_outcome(capped.stdout) == ("undecided", 3, 6)
    assert "undecided after 6 games (the cap, --max-games, is 6)" in capped.stdout
    resumed = sprt_run(out, *bots, "--max-games", "200", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    verdict, sets, games = sprt_outcome(resumed.stdout)
    # casino pairs: the heuristic wins every one, and ten such sets clear the bound
    assert (verdict, sets, games) == ("H1 accepted", 10, 20)
    assert re.search(r"LLR 3\.\d+ \(bounds -2\.944, 2\.944\)", resumed.stdout)
    assert "(6 already played)" in resumed.stderr
    assert re.search(r"^progress: .*LLR 3\.\d\d \(-2\.94, 2\.94\), 10 sets$", resumed.stderr, re.MULTILINE)
    with sqlite3.connect(out) as db:
        seeds = dict(db.execute("SELECT game_id, seed FROM games"))
    assert seeds["casino/heuristic+random/d0/r0"] == seeds["casino/heuristic+random/d0/r1"]


def test_random_against_another_random_seed_accepts_h0_or_reaches_the_cap(tmp_path):
    from tests.test_tournament import bot

    result = sprt_run(tmp_path / "even.sqlite", "--bot", bot("new", 1), "--bot", bot("old", 2), "--deal-seed", "3",
                      "--challenger", "new", "--baseline", "old", "--sprt", "elo0=0,elo1=200", "--max-games", "80")
    verdict, sets, _ = sprt_outcome(result.stdout)
    assert (result.returncode, verdict) in ((1, "H0 accepted"), (3, "undecided")), result.stdout + result.stderr


@pytest.mark.parametrize("args, message", [
    (["--sprt", "elo0=10,elo1=0"], "Invalid value for --sprt: elo0 must be below elo1"),
    (["--sprt", "elo0=0,elo1=10", "--baseline", "b"], "an SPRT tests one challenger against the baseline, got 0"),
    (["--sprt", "elo0=0,elo1=10", "--challenger", "a"], "an SPRT needs a baseline"),
    (["--baseline", "b", "--challenger", "a"], "baseline and max_games belong to an SPRT"),
    (["--sprt", "elo0=0,elo1=10", "--baseline", "a", "--challenger", "a"], "the baseline a is the challenger itself"),
    (["--sprt", "elo0=0,elo1=10", "--baseline", "zed", "--challenger", "a"], "baseline zed is not among the bots"),
    (["--sprt", "elo0=0,elo1=10", "--baseline", "b", "--challenger", "a", "--max-games", "1"],
     "one round of duplicate sets (a deal at every table) takes 2 games, more than max_games 1"),
])
def test_sprt_arguments_are_checked_in_one_line(tmp_path, args, message):
    from tests.test_tournament import bot

    result = sprt_run(tmp_path / "x.sqlite", "--bot", bot("a", 1), "--bot", bot("b", 2), *args)
    assert result.returncode in (1, 2) and message in result.stderr and "Traceback" not in result.stderr


def test_a_league_file_sets_up_an_sprt():
    from cardarena.tournament.planning.league import LeagueError, build_league

    data = {"bots": ["new=python a.py", "old=python b.py"], "challengers": ["new"], "baseline": "old",
            "max_games": 500, "sprt": {"elo0": 0, "elo1": 5}}
    league = build_league(data, Path("."), "x.toml")
    assert (league.sprt, league.baseline, league.max_games, league.format) == (SprtSettings(0, 5), "old", 500,
                                                                                 "gauntlet")
    # the cap is not part of the settings a resumed run must match: a larger one extends the same schedule
    assert league.settings_fingerprint()["sprt"] == {"elo0": 0, "elo1": 5, "alpha": 0.05, "beta": 0.05,
                                                     "baseline": "old"}
    assert "sprt" not in build_league({"bots": data["bots"]}, Path("."), "x.toml").settings_fingerprint()
    with pytest.raises(LeagueError, match=r"^x\.toml: \[sprt\]: unknown key\(s\) elo2"):
        build_league({**data, "sprt": {"elo0": 0, "elo1": 5, "elo2": 9}}, Path("."), "x.toml")


def plan_of(entrants, games, max_games=200):
    from cardarena.tournament.planning.schedule import sprt_schedule

    return sprt_schedule(entrants, games, 1, "new", "old", max_games, deal_key="key")


def test_sprt_schedule_plays_each_deal_on_both_sides_of_a_table_with_the_same_cards():
    from cardarena.tournament.planning.schedule import GameSettings

    plan = plan_of({"new": ["quitlok"], "old": ["quitlok"], "f": ["quitlok"]}, [GameSettings("quitlok", 5, 1)], 100)
    lineups = sorted({match.lineup for match in plan.matches})
    # one field bot fills five seats two ways; each lineup has its twin with old in new's seats
    assert lineups == [("f", "new", "f", "new", "f"), ("f", "old", "f", "old", "f"),
                       ("new", "f", "new", "f", "new"), ("old", "f", "old", "f", "old")]
    games = {game.game_id: game for match in plan.matches for game in match.games}
    assert len(games) == 100 and len(set(plan.set_of.values())) == 10  # 10 rounds of two tables, 10 games each
    twin = games["quitlok/old+f+old+f+old/d3/r2"]
    assert games["quitlok/new+f+new+f+new/d3/r2"].seed == twin.seed and \
        games["quitlok/new+f+new+f+new/d3/r2"].seating == twin.seating
    assert plan.set_of["quitlok/new+f+new+f+new/d3/r2"] == plan.set_of["quitlok/old+f+old+f+old/d3/r0"]
    # sets are numbered in the order the matches are queued: a few deals of one table at a time
    order = [plan.set_of[game.game_id] for match in plan.matches for game in match.games]
    assert list(dict.fromkeys(order)) == list(range(10))


def test_sprt_schedule_between_the_two_bots_alone_makes_the_swap_a_rotation():
    from cardarena.tournament.planning.schedule import GameSettings, ScheduleError

    plan = plan_of({"new": ["casino", "cuajo"], "old": ["casino", "cuajo"]},
                   [GameSettings("casino", 2, 1), GameSettings("cuajo", 4, 1, partnership=True)], 9)
    assert sorted({match.lineup for match in plan.matches}) == [("new", "old"), ("new", "old", "new", "old")]
    assert len(plan.set_of) == 8  # two rounds: a casino pair and two cuajo rotations each
    with pytest.raises(ScheduleError, match="one round of duplicate sets .* takes 4 games, more than max_games 3"):
        plan_of({"new": ["casino", "cuajo"], "old": ["casino", "cuajo"]},
                [GameSettings("casino", 2, 1), GameSettings("cuajo", 4, 1, partnership=True)], 3)
    with pytest.raises(ScheduleError, match="no game in common"):
        plan_of({"new": ["casino"], "old": ["cuajo"]}, [GameSettings("casino", 2, 1)])


def test_duplicate_sets_reach_the_test_when_complete_and_in_schedule_order():
    from cardarena.tournament.planning.sprt import DuplicateSets

    set_of = {"s0/r0": 0, "s0/r1": 0, "s1/r0": 1, "s1/r1": 1}
    sets = DuplicateSets(set_of, "new", "old", SequentialTest(SprtSettings(0, 10)))
    sets.add("s1/r0", ["new", "old"], [0, 1])
    sets.add("s1/r1", ["old", "new"], [1, 0])
    assert (sets.test.sets, sets.test.waiting) == (0, 1)  # set 1 is done, set 0 is not
    sets.add("s0/r0", ["new", "old"], [1, 0])
    assert sets.test.sets == 0
    sets.add("s0/r1", ["old", "new"], [1, 0])
    assert (sets.test.sets, sets.test.total, sets.games_counted) == (2, 1.5, 4)
