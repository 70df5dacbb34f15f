"""Leaderboards that explain themselves: intervals as low to high, a perfect (or zero) score as a
one-sided bound and never ±0, a legend under each table, and equal ratings sharing a rank."""

from __future__ import annotations

import json
import re

from cardarena.report import LEGEND, leaderboards, render
from cardarena.games.base import Result
from cardarena.record import GameRecord, Placement


def game(number: int, seats: list[str], ranks: list[int], name: str = "casino") -> GameRecord:
    """A stored game with what the leaderboards read: one duplicate set per number."""
    return GameRecord(f"{name}/{'+'.join(seats)}/d{number}/r0", name, "2", {}, number, seats,
                      result=Result.from_scores([0] * len(seats)), ranks=ranks, duration=0.1,
                      placement=Placement("m", number, 0, f"{name}/d{number}"))


def test_a_perfect_score_is_a_one_sided_bound_never_plus_minus_zero():
    games = [game(n, ["winner", "loser"], [0, 1]) for n in range(64)]
    [board] = leaderboards(games, bootstrap=50)
    winner, loser = board.rows
    assert (winner.bound, loser.bound) == ("lower", "upper")
    text = render([board])
    assert "±" not in text
    assert re.search(r"winner\s+\d+\s+≥\d+ \(perfect score\)\s+64\s+100\s+64-0-0", text), text
    assert re.search(r"loser\s+\d+\s+≤\d+ \(no point scored\)", text), text
    assert json.loads(render([board], "json"))[0]["rows"][0]["bound"] == "lower"  # a field added, none renamed


def test_an_interval_is_written_low_to_high_and_a_legend_follows_each_table():
    results = [[0, 1], [1, 0], [0, 1], [0, 1], [1, 0], [0, 1], [0, 1], [0, 1]]
    games = [game(n, ["a", "b"], ranks) for n, ranks in enumerate(results)]
    games += [game(n, ["a", "b"], [0, 1], name="cuajo") for n in range(3)]
    boards = leaderboards(games, bootstrap=100)
    text = render(boards)
    row = next(row for row in boards[0].rows if row.bot == "a")
    assert f"{round(row.low)} to {round(row.high)}" in text and row.bound is None
    flat = " ".join(text.split())
    assert flat.count(" ".join(LEGEND.split())) == len(boards) == 3  # casino, cuajo, overall
    assert "rules vN: the version of the game's rules" in flat and "pairwise results" in flat
    assert render(boards, "markdown").count(LEGEND) == 3


def test_equal_ratings_share_a_rank():
    games = [game(n, ["a", "c"], [0, 1]) for n in range(4)] + [game(10 + n, ["b", "c"], [0, 1]) for n in range(4)]
    games += [game(20 + n, ["a", "c"], [1, 0]) for n in range(2)] + [game(30 + n, ["b", "c"], [1, 0]) for n in range(2)]
    [board] = leaderboards(games, bootstrap=0)
    ranks = {row.bot: row.rank for row in board.rows}
    assert round(board.ratings.rating["a"]) == round(board.ratings.rating["b"])
    assert ranks == {"a": 1, "b": 1, "c": 3}
