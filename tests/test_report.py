"""Crosstables (head to head per pair, every format) and leaderboards of several results files rated together."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardarena.cli import main
from cardarena.ratings import Z95, elo_of_score, expected_score, score_interval, score_superiority
from cardarena.report import head_to_head, leaderboards, render
from cardarena.tournament.store import ResultStore


def record(game_id: str, seats: list[str], ranks: list[int], seed: int, game: str = "casino",
           version: str = "2") -> dict:
    """A finished game as the referee records it, with only what the leaderboards read filled in."""
    return {"game_id": game_id, "game": game, "rules_version": version, "options": {}, "seed": seed,
            "seats": seats, "actions": [], "result": {"scores": [0] * len(seats), "teams": None},
            "ranks": ranks, "faults": [], "duration": 0.1}


def write_results(path: Path, sets: list[tuple[int, int]], seed: int = 0, version: str = "2") -> Path:
    """A results file of two-seat games between x and y: per deal, (ranks of x in rotation 0, in rotation 1)."""
    with ResultStore(path, create=True) as store:
        for deal, (first, second) in enumerate(sets):
            for rotation, seats, x_rank in ((0, ["x", "y"], first), (1, ["y", "x"], second)):
                ranks = [x_rank, 1 - x_rank] if seats[0] == "x" else [1 - x_rank, x_rank]
                game_id = f"casino/x+y/d{deal}/r{rotation}"
                store.add_game(record(game_id, seats, ranks, seed + deal, version=version), "casino/x+y", deal,
                               rotation, f"casino/x+y/d{deal}")
    return path


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_head_to_head_counts_each_pair_from_the_better_placed_bots_side():
    rated = [("s1", [("a", "b", 1.0)]), ("s1", [("b", "a", 0.0)]),  # a wins both games of set 1
             ("s2", [("a", "b", 1.0)]), ("s2", [("a", "b", 0.0)]),  # one each in set 2
             ("s2", [("c", "a", 0.5)])]
    pairings = head_to_head(rated, ["a", "b", "c"])
    assert [(p.bot, p.opponent) for p in pairings] == [("a", "b"), ("a", "c")]
    ab = pairings[0]
    assert (ab.games, ab.wins, ab.draws, ab.losses, ab.score) == (4, 3, 0, 1, 75.0)
    assert ab.elo == pytest.approx(elo_of_score(0.75))
    # set totals (2 of 2, 1 of 2) around the mean 0.75: spread 0.5, times 2/(2-1), over 4 comparisons
    error = math.sqrt((0.5 ** 2 + 0.5 ** 2) * 2) / 4
    low, high = score_interval(0.75, error, 2)
    assert (ab.low, ab.high) == (pytest.approx(elo_of_score(low)), pytest.approx(elo_of_score(high)))
    assert ab.superiority == pytest.approx(score_superiority(0.75, error, 2))
    ac = pairings[1]
    assert (ac.games, ac.wins, ac.draws, ac.losses, ac.elo) == (1, 0, 1, 0, 0.0)
    assert ac.low is None and ac.superiority is None  # one duplicate set says nothing of the spread


def test_score_interval_is_wilsons_on_the_effective_size():
    # a large sample: close to the normal interval
    low, high = score_interval(0.6, 0.01, 10)
    assert low == pytest.approx(0.6 - Z95 * 0.01, abs=3e-4) and high == pytest.approx(0.6 + Z95 * 0.01, abs=3e-4)
    # a perfect score over 6 sets: Wilson's lower bound n / (n + z²), the upper bound 1
    assert score_interval(1.0, 0.0, 6) == (pytest.approx(6 / (6 + Z95 ** 2)), 1.0)
    assert score_interval(0.0, 0.0, 6) == (pytest.approx(0.0, abs=1e-12), pytest.approx(1 - 6 / (6 + Z95 ** 2)))


@pytest.mark.parametrize("score, error", [(0.58, 0.04), (0.9, 0.03), (1.0, 0.0)])
def test_superiority_passes_97_5_percent_exactly_when_the_interval_leaves_out_even(score, error):
    low, _ = score_interval(score, error, 5)
    assert (score_superiority(score, error, 5) > 0.975) == (low > 0.5)
    assert score_superiority(0.5, 0.1, 5) == 0.5
    assert score_superiority(1 - score, error, 5) == pytest.approx(1 - score_superiority(score, error, 5))


def test_expected_score_of_elo():
    assert expected_score(0) == 0.5 and expected_score(400) == pytest.approx(10 / 11)


def test_crosstable_in_every_format(tmp_path):
    path = write_results(tmp_path / "r.sqlite", [(0, 0), (0, 1), (1, 1), (0, 0)])  # x: 2-1 wins of pairs, a split
    with ResultStore(path) as store:
        boards = leaderboards(store.games(), bootstrap=20)
    (pairing,) = boards[0].crosstable
    assert (pairing.bot, pairing.opponent, pairing.wins, pairing.losses, pairing.games) == ("x", "y", 5, 3, 8)

    table = render(boards, "table", crosstable=True)
    assert "head to head" in table and any(line.split()[:4] == ["x", "y", "8", "5-0-3"] for line in table.splitlines())
    markdown = render(boards, "markdown", crosstable=True)
    assert "\n\n| bot " in markdown  # the crosstable is its own Markdown table, not rows of the leaderboard
    rows = list(csv.DictReader(io.StringIO(render(boards, "csv", crosstable=True))))
    assert [(r["board"], r["bot"], r["opponent"], r["wins"], r["score_percent"]) for r in rows] == [
        ("casino (rules v2)", "x", "y", "5", "62.5")]
    data = json.loads(render(boards, "json", crosstable=True))
    assert data[0]["crosstable"][0]["elo"] == round(elo_of_score(0.625), 1)
    assert "crosstable" not in json.loads(render(boards, "json"))


def test_a_perfect_head_to_head_score_is_unbounded_above_and_null_in_json(tmp_path):
    path = write_results(tmp_path / "r.sqlite", [(0, 0)] * 3)
    with ResultStore(path) as store:
        (pairing,) = leaderboards(store.games(), bootstrap=5)[0].crosstable
    assert pairing.elo == pairing.high == math.inf and math.isfinite(pairing.low)
    assert pairing.cells()[5:7] == ["+inf", f"{elo_of_score(3 / (3 + Z95 ** 2)):+.0f} to +inf"]
    assert pairing.to_dict()["elo"] is None and pairing.to_dict()["high"] is None


def test_leaderboard_rates_several_files_together(tmp_path):
    first = write_results(tmp_path / "a.sqlite", [(0, 0), (0, 1)], seed=100)
    second = write_results(tmp_path / "b.sqlite", [(1, 1), (0, 0)], seed=200)  # the same game ids, other deals
    result = invoke("leaderboard", str(first), str(second), "--format", "json", "--crosstable", "--bootstrap", "20")
    assert result.exit_code == 0, result.output
    (board,) = json.loads(result.output)
    assert board["games"] == 8
    assert board["crosstable"][0] == {**board["crosstable"][0], "bot": "x", "wins": 5, "losses": 3, "games": 8}


def test_leaderboard_refuses_a_game_found_twice(tmp_path):
    first = write_results(tmp_path / "a.sqlite", [(0, 0), (0, 1)])
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(first.read_bytes())
    result = invoke("leaderboard", str(first), str(copy))
    assert result.exit_code == 1
    assert result.output.strip() == (f"Error: {copy}: game casino/x+y/d0/r0 is also in {first} (same deal); "
                                     "a game is rated once, so leave one of the two files out")
    again = invoke("leaderboard", str(first), str(tmp_path / "." / "a.sqlite"))
    assert again.exit_code == 1 and again.output.strip().endswith("given twice; a game is rated once")


def test_leaderboard_refuses_to_pool_rules_versions(tmp_path):
    old = write_results(tmp_path / "old.sqlite", [(0, 0)], version="1")
    new = write_results(tmp_path / "new.sqlite", [(0, 0)], seed=9)
    result = invoke("leaderboard", str(old), str(new))
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1
    assert f"{new}: casino was played under rules v2, in {old} under v1" in result.output
