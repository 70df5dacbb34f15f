"""Ratings as a league goes on: the running tally that decides the gauntlet, and each bot's rating history.

The gauntlet asks after every round which new versions still need it. Re-rating every game for
that (a bootstrap of the whole board, as the last version of the server did) costs time in
proportion to the games played, so a long league would slow down between rounds. The play process
keeps a running tally instead, added to as each game finishes: the pairwise totals of all the games
(a fit of them costs the same however many games they hold: it depends on the number of bots) and
the duplicate sets of each version still young (fewer than GAUNTLET_GAMES games). A young version's
interval is a bootstrap of its own duplicate sets, its rating fitted against the field's ratings held
where the fit of all the games puts them. That leaves out the field's own uncertainty, which rests on
many more games than the newcomer's; the cost is bounded by the young versions' games, whatever the
league's length (tests/bench/bench_server.py measures it).

The history is recomputed from the results file rather than stored: the file is what survives a
SIGKILL (a stored series could lag its games or hold a game the file lost), the points are by
construction what `cardarena leaderboard` says of the same games, and a recomputation is one pass
over the games plus one fit per plotted point (HISTORY_POINTS at most per board), which the server
caches and does in a process of its own.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter, defaultdict
from typing import Any, Callable, Iterable, Mapping, Sequence

from cardarena.ratings import DEFAULT_MEAN, ELO_PER_NAT, RatingError, Tally, comparisons_from_ranks, fit, tally
from cardarena.record import GameRecord

#: a new version plays the gauntlet (only tables with it and the field) until its 95% rating interval
#: is at most this many Elo wide (±75: its place among bots 150 Elo apart is known) ...
GAUNTLET_INTERVAL = 150.0
#: ... or until it has played this many games (a bot whose interval cannot narrow: a perfect score)
GAUNTLET_GAMES = 200
RATING_RESAMPLES = 100  # bootstrap resamples behind a young version's interval
PRIOR = 2.0  # virtual draws per pair that met, as `cardarena leaderboard` fits
HISTORY_POINTS = 120  # points of a bot's rating history per board at most (rounds are thinned past it)
SEARCH_ELO = 4000.0  # a young version's rating is looked for this far either side of the field's


def cluster_of(game: str, cluster: str, seed: int) -> str:
    """A game's duplicate set, as the leaderboard names it (report.board): its deal at its table."""
    return f"{game}|{cluster}|{seed}"


class RunningTally:
    """The league's pairwise totals, its bots' game counts, and the duplicate sets of its young bots,
    kept up to date game by game."""

    def __init__(self) -> None:
        self.totals: Tally = {}
        self.played: Counter[str] = Counter()
        #: bot under GAUNTLET_GAMES games -> duplicate set -> opponent -> [its points, comparisons]
        self.young: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(dict)

    @classmethod
    def of(cls, games: Iterable[GameRecord]) -> "RunningTally":
        """The tally of stored games (the play process reads its results file once, when it starts)."""
        running = cls()
        for game in games:
            running.add(cluster_of(game.game, game.placement.cluster, game.seed), game.seats, comparisons_from_ranks(game.seats, game.ranks, game.teams))
        return running

    def add(self, cluster: str, seats: Sequence[str], comparisons: Sequence[tuple[str, str, float]]) -> None:
        """Count one finished game: its duplicate set, its seats, its pairwise results."""
        self.played.update(set(seats))
        for pair, (points, count) in tally(comparisons).items():
            entry = self.totals.setdefault(pair, [0.0, 0])
            entry[0] += points
            entry[1] += count
        for a, b, score in comparisons:
            for bot, opponent, points in ((a, b, score), (b, a, 1.0 - score)):
                if self.played[bot] < GAUNTLET_GAMES:
                    entry = self.young[bot].setdefault(cluster, {}).setdefault(opponent, [0.0, 0])
                    entry[0] += points
                    entry[1] += 1
        for bot in set(seats):
            if self.played[bot] >= GAUNTLET_GAMES:
                self.young.pop(bot, None)  # out of the gauntlet for good: its sets are not needed

    def gauntlet(self, bots: Iterable[str]) -> list[str]:
        """The `bots` whose rating is not known well enough yet for balanced play: fewer than
        GAUNTLET_GAMES games and a 95% interval wider than GAUNTLET_INTERVAL (or none yet)."""
        waiting = sorted(bot for bot in bots if self.played[bot] < GAUNTLET_GAMES)
        if not waiting:
            return []
        try:
            field, _ = fit(self.totals, (), PRIOR)
        except RatingError:
            return waiting
        still = []
        for bot in waiting:
            sets = self.young.get(bot, {})
            points = sum(won for per in sets.values() for won, _ in per.values())
            count = sum(compared for per in sets.values() for _, compared in per.values())
            # after a perfect score (or none) the rating is bounded on one side only, however narrow
            # its bootstrap: it stays until GAUNTLET_GAMES
            interval = own_interval(sets, field) if 0 < points < count else None
            if interval is None or interval[1] - interval[0] > GAUNTLET_INTERVAL:
                still.append(bot)
        return still


def own_interval(sets: Mapping[str, Mapping[str, list[float]]], field: Mapping[str, float],
                 resamples: int = RATING_RESAMPLES, seed: int = 0) -> tuple[float, float] | None:
    """A bot's 95% interval from a bootstrap of its duplicate `sets` (opponent -> [points, comparisons]),
    its rating fitted against the `field`'s ratings held fixed; None when fewer than two sets differ
    (as `cardarena leaderboard`: redrawing one set says nothing of the uncertainty)."""
    signatures = [tuple(sorted((opponent, points, count) for opponent, (points, count) in per.items()
                               if opponent in field)) for per in sets.values()]
    if len(set(signatures)) < 2:
        return None
    rng = random.Random(seed)
    values = []
    for _ in range(resamples):
        drawn: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
        for index in rng.choices(range(len(signatures)), k=len(signatures)):
            for opponent, points, count in signatures[index]:
                drawn[opponent][0] += points
                drawn[opponent][1] += count
        values.append(rating_against(drawn, field))
    cuts = statistics.quantiles(values, n=40, method="inclusive")  # 2.5% steps, interpolated as ratings does
    return cuts[0], cuts[-1]


def rating_against(results: Mapping[str, list[float]], field: Mapping[str, float]) -> float:
    """The Elo that makes a bot's `results` (opponent -> [points, comparisons]) most likely against
    opponents rated `field`, with PRIOR virtual draws per opponent: the root of a decreasing function,
    found by bisection (it always has one with a prior)."""
    terms = [((points + PRIOR / 2), (count + PRIOR), field[opponent]) for opponent, (points, count) in results.items()]
    if not terms:
        return 0.0
    low, high = min(t[2] for t in terms) - SEARCH_ELO, max(t[2] for t in terms) + SEARCH_ELO
    for _ in range(60):
        middle = (low + high) / 2
        surplus = sum(points - count / (1.0 + math.exp((rating - middle) / ELO_PER_NAT))
                      for points, count, rating in terms)
        low, high = (middle, high) if surplus > 0 else (low, middle)
    return (low + high) / 2


# -- the rating history ----------------------------------------------------------------------------

def rating_history(games: Iterable[GameRecord], round_of: Callable[[GameRecord], int],
                   points: int = HISTORY_POINTS) -> list[dict[str, Any]]:
    """Every board's ratings after each round (`round_of` a game), as the leaderboard would have fitted
    them on the games until then: per board (one per game and rules version, then the overall board
    when there are several games), its title, its games, and per bot [[games of the board so far, round,
    Elo], ...]. Past `points` rounds, evenly spaced rounds are kept, and always the last."""
    by_game: dict[tuple[str, str], list[GameRecord]] = defaultdict(list)
    for game in games:
        by_game[(game.game, game.rules_version)].append(game)
    boards = [(f"{name} (rules v{version})", by_game[(name, version)]) for name, version in sorted(by_game)]
    if len(boards) > 1 and len({name for name, _ in by_game}) == len(by_game):
        boards.append(("overall", [game for _, board_games in boards for game in board_games]))
    return [_history(title, board_games, round_of, points) for title, board_games in boards]


def _history(title: str, games: list[GameRecord], round_of: Callable[[GameRecord], int], points: int) -> dict[str, Any]:
    """One board's rating history (see `rating_history`)."""
    rounds: dict[int, list[GameRecord]] = defaultdict(list)
    for game in games:
        rounds[round_of(game)].append(game)
    order = sorted(rounds)
    step = max(1, math.ceil(len(order) / points))
    kept = set(order[step - 1::step]) | {order[-1]}
    totals: Tally = {}
    seen = 0
    series: dict[str, list[list[float]]] = defaultdict(list)
    for number in order:
        for game in rounds[number]:
            for pair, (won, count) in tally(comparisons_from_ranks(game.seats, game.ranks, game.teams)).items():
                entry = totals.setdefault(pair, [0.0, 0])
                entry[0] += won
                entry[1] += count
        seen += len(rounds[number])
        if number not in kept or not totals:
            continue
        try:
            ratings, _ = fit(totals, (), PRIOR)
        except RatingError:  # the fit did not converge on these games; a later round may
            continue
        for bot, value in ratings.items():
            series[bot].append([seen, number, round(value + DEFAULT_MEAN, 1)])
    return {"title": title, "games": len(games), "series": dict(series)}
