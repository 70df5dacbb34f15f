"""`cardarena check --strength` (issue 22 item 3): the estimator against the ladder's fixed ratings,
the adaptive choice of opponents, the shipped scale, and the command's figures and --min-elo verdict
in text, JSON and JUnit."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from cardarena.check import check
from cardarena.ratings import ELO_PER_NAT, Z95, elo_of_score
from cardarena.samples import SAMPLE_BOTS
from cardarena.strength import (BASELINE, CHALLENGER, PLAYERS, PRIOR_VARIANCE, START_RUNG, Estimate, GameStrength,
                                Rung, Scale, StrengthError, StrengthReport, StrengthSettings, choose_rung,
                                describe_strength, estimate_text, fit_rating, lineups, load_scale, mean_rating, neighbours,
                                next_game, strength_verdict)

RUNGS = (Rung("random", 1000, 1000, 1000, 0), Rung("heuristic", 1400, 1350, 1450, 40),
         Rung("search-fast", 1500, 1440, 1560, 40), Rung("search-strong", 1580, 1500, 1660, 40))


# -- the estimator --------------------------------------------------------------------------------

def test_a_known_mean_score_against_one_rung_gives_its_elo_and_the_sandwich_interval():
    results = [(1400.0, 0.75), (1400.0, 0.25), (1400.0, 1.0), (1400.0, 1.0)]  # mean 0.75
    estimate = fit_rating(results, prior=0)
    assert estimate.elo == pytest.approx(1400 + elo_of_score(0.75))
    spread = sum((score - 0.75) ** 2 for _, score in results) + PRIOR_VARIANCE
    assert estimate.error == pytest.approx(math.sqrt(spread) / (4 * 0.75 * 0.25 / ELO_PER_NAT))
    assert (estimate.low, estimate.high) == pytest.approx((estimate.elo - Z95 * estimate.error,
                                                          estimate.elo + Z95 * estimate.error))
    assert estimate.sets == 4


def test_even_scores_give_the_rung_s_rating_and_a_perfect_score_stays_finite():
    assert fit_rating([(1234.0, 0.5)] * 6).elo == pytest.approx(1234.0)
    perfect = fit_rating([(1000.0, 1.0)] * 10)  # the prior's virtual draw keeps it finite
    assert perfect.elo == pytest.approx(1000 + elo_of_score(10.5 / 11))
    assert math.isfinite(perfect.high)


def test_the_prior_s_pull_towards_a_far_rung_fades_with_the_sets_elsewhere():
    """A bot level with random that lost its first 4 sets to a rung 900 above is pulled up by no more
    than its share of one virtual set."""
    estimate = fit_rating([(1900.0, 0.0)] * 4 + [(1000.0, 0.5)] * 20)
    assert 1000 < estimate.elo < 1000 + (4 / 24) * 0.5 / (20 * 0.25) * ELO_PER_NAT


def test_scores_against_two_rungs_place_the_bot_between_them():
    estimate = fit_rating([(1000.0, 0.9)] * 8 + [(1400.0, 0.3)] * 8)
    assert 1000 < estimate.elo < 1400
    assert neighbours(RUNGS, estimate.elo)[0].name == "random"


scores = st.lists(st.tuples(st.sampled_from([1000.0, 1400.0, 1500.0, 1580.0]),
                            st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])), min_size=1, max_size=30)


@settings(max_examples=30, deadline=None)
@given(scores, st.floats(-500, 500))
def test_the_rating_moves_with_the_scale_and_never_falls_when_a_score_rises(results, shift):
    estimate = fit_rating(results)
    shifted = fit_rating([(rung + shift, score) for rung, score in results])
    assert shifted.elo == pytest.approx(estimate.elo + shift, abs=1e-6)
    assert shifted.error == pytest.approx(estimate.error, rel=1e-6)
    lowest = min(range(len(results)), key=lambda i: results[i][1])
    if results[lowest][1] < 1.0:
        better = list(results)
        better[lowest] = (results[lowest][0], results[lowest][1] + 0.25)
        assert fit_rating(better).elo > estimate.elo - 1e-9
    assert estimate.low < estimate.elo < estimate.high


def test_overall_is_the_mean_of_the_games_with_the_error_of_a_mean():
    overall = mean_rating([Estimate(1200, 30, 10), Estimate(1400, 40, 12)])
    assert (overall.elo, overall.error, overall.sets) == (1300, pytest.approx(25.0), 22)


def test_the_nearest_rungs_above_and_below():
    assert [r and r.name for r in neighbours(RUNGS, 1450)] == ["heuristic", "search-fast"]
    assert [r and r.name for r in neighbours(RUNGS, 1400)] == ["heuristic", "search-fast"]
    assert [r and r.name for r in neighbours(RUNGS, 1700)] == ["search-strong", None]
    assert [r and r.name for r in neighbours(RUNGS, 900)] == [None, "random"]


# -- choosing what to play ------------------------------------------------------------------------

def test_opponents_are_the_rungs_that_tell_most_per_second():
    assert choose_rung(RUNGS, None, {}).name == START_RUNG
    assert choose_rung(RUNGS, Estimate(1050, 40, 8), {}).name == "random"
    assert choose_rung(RUNGS, Estimate(1560, 30, 8), {}).name == "search-strong"
    # about as informative, but search-strong's sets take ten times as long
    assert choose_rung(RUNGS, Estimate(1540, 30, 8), {"search-fast": 2.0, "search-strong": 20.0}).name == "search-fast"
    # a certain score tells nothing: a bot far above random is never sent back to it
    cheap_below = {"random": 0.1, "heuristic": 0.1, "search-fast": 20.0, "search-strong": 20.0}
    assert choose_rung(RUNGS, Estimate(1900, 30, 8), cheap_below).name == "search-strong"
    assert choose_rung(RUNGS, Estimate(1600, 30, 8), cheap_below).name == "heuristic"  # 200 Elo: still useful
    assert choose_rung(RUNGS, Estimate(2400, 30, 8), cheap_below).name == "search-strong"  # none useful: the nearest
    # lost every set to heuristic, so the estimate rests on the prior: the next batch goes elsewhere
    # every set lost to heuristic (or won): the estimate rests on the prior, and the bot is surely below (above)
    assert choose_rung(RUNGS, Estimate(1100, 150, 4), {}, swept={"heuristic": 0.0}).name == "random"
    assert choose_rung(RUNGS, Estimate(1700, 150, 4), {}, swept={"heuristic": 1.0}).name == "search-strong"
    assert choose_rung(RUNGS, Estimate(1350, 150, 4), {}, swept={"heuristic": 1.0}).name == "search-fast"
    assert choose_rung(RUNGS, Estimate(900, 150, 4), {}, swept={"random": 0.0}).name == "random"  # nowhere lower
    assert game_with("casino", [(RUNGS[1], 0.0)] * 4 + [(RUNGS[0], 1.0), (RUNGS[0], 0.5)]).swept == {"heuristic": 0.0}


def game_with(name: str, results: list[tuple[Rung, float]]) -> GameStrength:
    game = GameStrength(name, RUNGS, list(results))
    game.seconds = {"heuristic": 1.0}
    return game


def test_play_stops_at_the_target_or_the_cap_after_the_minimum():
    config = StrengthSettings(target=60, min_sets=8, max_sets=16)
    few = game_with("casino", [(RUNGS[1], 0.5)] * 4)
    assert next_game([few], config) is few  # below its minimum
    tight = game_with("casino", [(RUNGS[1], 0.5)] * 12)  # identical scores: ±57 after 12 sets
    assert fit_rating([(1400, 0.5)] * 12).half_width <= 60 and next_game([tight], config) is None
    loose = game_with("cuajo", [(RUNGS[1], 0.0), (RUNGS[1], 1.0)] * 4)
    assert next_game([tight, loose], config) is loose
    capped = game_with("cuajo", [(RUNGS[1], 0.0), (RUNGS[1], 1.0)] * 8)
    assert next_game([tight, capped], config) is tight  # the overall target is not met: the open game plays on
    assert next_game([game_with("casino", [(RUNGS[1], 0.5)] * 16), capped], config) is None


def test_a_set_seats_the_two_bots_alternately_then_exchanged():
    for players in set(PLAYERS.values()):
        for index in range(10):
            base, twin = lineups(players, index)
            assert all({a, b} == {CHALLENGER, BASELINE} for a, b in zip(base, twin))
            assert abs(base.count(CHALLENGER) - base.count(BASELINE)) == players % 2
            neighbours_alike = sum(base[seat] == base[(seat + 1) % players] for seat in range(players))
            assert neighbours_alike == players % 2  # round the table, only an odd one seats a bot beside itself


# -- the shipped scale ---------------------------------------------------------------------------

def test_the_shipped_scale_rates_every_rung_in_every_game_with_random_at_1000():
    scale = load_scale()
    assert scale.measured and scale.commit and scale.command.startswith("python -m tests.bench.ladder_ratings")
    for game in PLAYERS:
        rungs = scale.rungs(game)
        assert [rung.name for rung in rungs] == ["random", "heuristic", "search-fast", "search-strong"]
        assert (rungs[0].elo, rungs[0].low, rungs[0].high) == (1000, 1000, 1000)
        assert all(rung.low <= rung.elo <= rung.high and rung.sets > 0 for rung in rungs[1:])


def test_a_missing_or_malformed_ladder_file_is_one_clear_error(tmp_path):
    with pytest.raises(StrengthError, match="cannot read the ladder's ratings"):
        load_scale(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text('{"games": {"casino": {"random": {"elo": 1000}}}}')
    with pytest.raises(StrengthError, match="cannot read the ladder's ratings"):
        load_scale(tmp_path / "bad.json")


def test_the_text_report_gives_each_game_the_overall_figure_and_the_verdict():
    scale = Scale({"casino": RUNGS, "quitlok": RUNGS}, "2026-12-02", "abcdef1234567890", "python -m ...")
    games = [game_with("casino", [(RUNGS[1], 0.6)] * 8), game_with("quitlok", [(RUNGS[2], 0.5)] * 8)]
    report = StrengthReport("mybot", scale, StrengthSettings(min_elo=1600), games)
    lines = describe_strength(report)
    assert lines[0].startswith("strength on the ladder's scale (random = 1000; rungs measured 2026-12-02 at commit "
                               "abcdef123456)")
    assert lines[1].startswith(f"  casino: {games[0].estimate.elo:.0f} [") and "between heuristic 1400 and " \
        "search-fast 1500" in lines[1] and "heuristic 8 (mean score 0.60)" in lines[1]
    assert lines[3].startswith("  overall (the mean of 2 game(s)): ")
    assert report.below_min_elo and not report.passed
    assert lines[-1] == "  --min-elo 1600: FAIL: the rating is below it with 95% confidence"
    assert strength_verdict(report) == f"FAIL: mybot: its rating {estimate_text(report.overall)} is below --min-elo " \
        "1600 with 95% confidence"


# -- the command ---------------------------------------------------------------------------------

def run_check(tmp_path, bot: str, *options: str):
    junit = tmp_path / f"{bot}.xml"
    result = CliRunner().invoke(check, [str(SAMPLE_BOTS / bot), "--game", "knock-rummy", "--games-per-game", "1",
                                        "--strength-sets", "8", "--json", "--junit", str(junit), *options])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    data = json.loads(result.stdout)
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")
             if case.get("classname", "").endswith(".strength")}
    return result.exit_code, data, cases


def properties(case: ET.Element) -> dict[str, str]:
    return {p.get("name"): p.get("value") for p in case.iter("property")}


@pytest.mark.parametrize(("rung", "min_elo", "exit_code"), [("random", "1400", 1), ("heuristic", "950", 0)])
def test_a_rung_checked_against_the_ladder_gets_its_shipped_rating_back_and_min_elo_decides(
        tmp_path, rung, min_elo, exit_code):
    """Issue 22: `check --strength` on a rung gives back its shipped rating within the interval; --min-elo
    fails a bot below it with confidence (random under 1400) and passes one above (heuristic over 950)."""
    code, data, cases = run_check(tmp_path, rung, "--min-elo", min_elo)
    shipped = {r.name: r for r in load_scale().rungs("knock-rummy")}[rung]
    rating = data["strength"]["games"][0]["rating"]
    assert rating["low"] <= shipped.elo <= rating["high"], (rating, shipped)
    assert data["strength"]["overall"]["elo"] == pytest.approx(rating["elo"])
    assert rating["sets"] >= 8 and all(s["rung"] in ("random", "heuristic", "search-fast", "search-strong")
                                       for s in data["strength"]["games"][0]["sets"])
    assert (code, data["strength"]["below_min_elo"]) == (exit_code, exit_code == 1)
    assert set(cases) == {"knock-rummy", "overall"}
    assert float(properties(cases["knock-rummy"])["elo"]) == pytest.approx(rating["elo"], abs=0.1)
    assert properties(cases["overall"]).get("rung_below") == rating["rung_below"]
    failure = cases["overall"].find("failure")
    assert (failure is not None and failure.get("type") == "min-elo") == (exit_code == 1)


def test_a_bot_that_faults_in_the_check_gets_no_rating(tmp_path):
    bot = tmp_path / "mute"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "mute"\ncommand = ["python3", "-c", "import sys; sys.exit(3)"]\n')
    result = CliRunner().invoke(check, [str(bot), "--game", "casino", "--strength", "--handshake-timeout", "5"])
    assert result.exit_code == 1
    assert "strength: no rating: the bot faulted in the check" in result.output
    result = CliRunner().invoke(check, [str(bot), "--game", "casino", "--min-elo", "1000", "--json",
                                        "--handshake-timeout", "5"])
    assert result.exit_code == 1 and json.loads(result.stdout)["strength"] is None


@pytest.mark.parametrize("options", [["--min-elo"], ["--min-elo", "nan"], ["--min-elo", "strong"],
                                     ["--strength", "--strength-sets", "-1"], ["--strength", "--strength-target", "0"]])
def test_bad_strength_options_are_one_line_usage_errors(options):
    result = CliRunner().invoke(check, [str(SAMPLE_BOTS / "random"), *options])
    assert result.exit_code == 2
    assert "Error:" in result.output and "Traceback" not in result.output
