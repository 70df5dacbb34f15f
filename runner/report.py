"""Leaderboards from stored games: per game (and rules version) and overall, as text, Markdown, CSV or JSON.

Each row: rank (equal Elo, equal rank), bot, Elo, 95% interval (a one-sided bound after a perfect
or a zero score), games, score %, W-D-L and faults, and a legend under each table says so. W-D-L
and score % count the pairwise results the ratings are fitted on (a five-player game gives each
bot four), so they explain the Elo directly. A crosstable adds every pair's head-to-head: the games both
bots sat in (compared), their pairwise W-D-L, score, the Elo difference that score implies with
a 95% interval, and the likelihood that the first bot is the stronger (`Pairing`).
"""

from __future__ import annotations

import csv
import io
import json
import math
import textwrap
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from tabulate import tabulate

from cardarena.ratings import Ratings, comparisons_from_ranks, elo_of_score, rate, score_interval, score_superiority
from cardarena.referee.faults import counted, printable
from cardarena.record import GameRecord

FORMATS = ("table", "markdown", "csv", "json")
CSV_FIELDS = ["rank", "bot", "elo", "low", "high", "games", "score_percent", "wins", "draws", "losses", "faults",
              "group", "bound"]
HEADERS = ["rank", "bot", "elo", "95% interval", "games", "score %", "W-D-L", "faults"]
LEGEND_WIDTH = 100  # characters per line of the legend under a text table
#: what a leaderboard's columns mean, printed under each table
LEGEND = ("games: games played. W-D-L, score %: pairwise results (one per other bot or team at the table: a "
          "five-player game counts four), on which the Elo is fitted. 95% interval: low to high, resampling whole "
          "duplicate sets; ≥ marks a perfect score (the rating could be any higher: the Elo shown rests on two "
          "virtual draws per pair), ≤ a score of zero; n/a: fewer than two duplicate sets that differ. "
          "rules vN: the version of the game's rules (runner/games/<game>.md); versions are never pooled. "
          "Equal Elo, equal rank. faults: the bot's faults in its games (each lost it that game); faults at a "
          "match's shutdown change no result and are not counted here (cardarena faults lists them).")
CROSSTABLE_FIELDS = ["bot", "opponent", "games", "wins", "draws", "losses", "score_percent", "elo", "low", "high",
                     "superiority"]
CROSSTABLE_HEADERS = ["bot", "opponent", "games", "W-D-L", "score %", "Elo diff", "95% interval", "LOS %"]


@dataclass
class Row:
    """One bot's line on a leaderboard."""

    rank: int
    bot: str
    elo: float
    low: float | None  # None: no interval (fewer than two duplicate sets that differ)
    high: float | None
    games: int
    wins: int
    draws: int
    losses: int
    faults: int
    group: int

    @property
    def score(self) -> float:
        """Share of pairwise points won, in percent."""
        played = self.wins + self.draws + self.losses
        return 100.0 * (self.wins + self.draws / 2) / played if played else 0.0

    @property
    def bound(self) -> str | None:
        """"lower" after a perfect score (every pairwise result a win), "upper" after a score of
        zero: the rating is then only bounded on one side, whatever its interval says."""
        if self.wins and not self.draws and not self.losses:
            return "lower"
        if self.losses and not self.wins and not self.draws:
            return "upper"
        return None

    def interval_text(self) -> str:
        """The interval for people: `1420 to 1580` (as the crosstable writes its), or the one-sided bound of a perfect (or zero) score."""
        if self.bound == "lower":
            return f"≥{round(self.elo if self.low is None else min(self.low, self.elo))} (perfect score)"
        if self.bound == "upper":
            return f"≤{round(self.elo if self.high is None else max(self.high, self.elo))} (no point scored)"
        return "n/a" if self.low is None else f"{round(self.low)} to {round(self.high)}"

    def cells(self) -> list[Any]:
        """The row as leaderboard cells."""
        return [self.rank, self.bot, round(self.elo), self.interval_text(), self.games, f"{self.score:.1f}",
                f"{self.wins}-{self.draws}-{self.losses}", self.faults]

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "bot": self.bot, "elo": round(self.elo, 1),
                "low": None if self.low is None else round(self.low, 1),
                "high": None if self.high is None else round(self.high, 1),
                "games": self.games, "score_percent": round(self.score, 2),
                "wins": self.wins, "draws": self.draws, "losses": self.losses, "faults": self.faults,
                "group": self.group, "bound": self.bound}


def _signed(elo: float | None) -> str:
    """An Elo difference for people: signed and rounded, ±inf when a score was perfect."""
    if elo is None:
        return "n/a"
    return f"{elo:+.0f}" if math.isfinite(elo) else ("+inf" if elo > 0 else "-inf")


def _finite(value: float | None, digits: int) -> float | None:
    """A number for JSON and CSV: rounded, None when unbounded (JSON has no infinity)."""
    return None if value is None or not math.isfinite(value) else round(value, digits)


@dataclass
class Pairing:
    """Two bots head to head: the games they were compared in and their pairwise results, from `bot`'s side.

    The Elo difference is the one the head-to-head score implies on the logistic scale; its
    interval and the likelihood of superiority come from the score's standard error, estimated
    over whole duplicate sets (the games of one set are not independent).
    """

    bot: str
    opponent: str
    games: int
    wins: int
    draws: int
    losses: int
    elo: float  # ±inf after a perfect score
    low: float | None  # None: fewer than two duplicate sets
    high: float | None
    superiority: float | None  # likelihood that `bot` is the stronger, 0..1

    @property
    def score(self) -> float:
        """Share of the pairwise points `bot` won, in percent."""
        return 100.0 * (self.wins + self.draws / 2) / (self.wins + self.draws + self.losses)

    def cells(self) -> list[Any]:
        interval = "n/a" if self.low is None else f"{_signed(self.low)} to {_signed(self.high)}"
        superiority = "n/a" if self.superiority is None else f"{100 * self.superiority:.0f}"
        return [self.bot, self.opponent, self.games, f"{self.wins}-{self.draws}-{self.losses}", f"{self.score:.1f}",
                _signed(self.elo), interval, superiority]

    def to_dict(self) -> dict[str, Any]:
        """Plain data; an unbounded Elo (after a perfect score) is None."""
        return {"bot": self.bot, "opponent": self.opponent, "games": self.games, "wins": self.wins,
                "draws": self.draws, "losses": self.losses, "score_percent": round(self.score, 2),
                "elo": _finite(self.elo, 1), "low": _finite(self.low, 1), "high": _finite(self.high, 1),
                "superiority": _finite(self.superiority, 4)}


def head_to_head(rated: Sequence[tuple[str, Sequence[tuple[str, str, float]]]],
                 order: Sequence[str]) -> list[Pairing]:
    """Every pair of bots compared in `rated` (duplicate set, pairwise comparisons) per game, the pair's
    better-placed bot (first in `order`) first, pairs in `order`."""
    place = {bot: index for index, bot in enumerate(order)}
    games: Counter = Counter()
    outcome: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    #: pair -> duplicate set -> [points of the pair's first bot, comparisons]
    clusters: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(dict)
    for cluster, comparisons in rated:
        met = set()
        for a, b, score in comparisons:
            pair, points = ((a, b), score) if place[a] < place[b] else ((b, a), 1.0 - score)
            met.add(pair)
            outcome[pair][0 if points == 1 else 1 if points == 0.5 else 2] += 1
            entry = clusters[pair].setdefault(cluster, [0.0, 0])
            entry[0] += points
            entry[1] += 1
        games.update(met)
    pairings = []
    for pair in sorted(outcome, key=lambda pair: (place[pair[0]], place[pair[1]])):
        wins, draws, losses = outcome[pair]
        sets = clusters[pair].values()
        count = wins + draws + losses
        score = (wins + draws / 2) / count
        low = high = superiority = None
        if len(sets) >= 2:
            # the ratio estimator's variance over duplicate sets, with the small-sample factor n/(n-1)
            spread = sum((points - score * n) ** 2 for points, n in sets) * len(sets) / (len(sets) - 1)
            error = math.sqrt(spread) / count
            low, high = map(elo_of_score, score_interval(score, error, len(sets)))
            superiority = score_superiority(score, error, len(sets))
        pairings.append(Pairing(*pair, games[pair], wins, draws, losses, elo_of_score(score), low, high,
                                superiority))
    return pairings


@dataclass
class Board:
    """A leaderboard: its title, rows best first, connected groups, the fitted ratings, and the crosstable."""

    title: str
    rows: list[Row]
    ratings: Ratings
    games: int
    notes: list[str] = field(default_factory=list)
    crosstable: list[Pairing] = field(default_factory=list)


def board(title: str, games: Sequence[GameRecord], prior: float, anchor: tuple[str, float] | None,
          bootstrap: int, seed: int) -> Board:
    """Fit the ratings of `games` and tabulate them with each bot's counts."""
    played: Counter = Counter()
    faults: Counter = Counter()
    outcome: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    rated: list[tuple[str, list[tuple[str, str, float]]]] = []
    for game in games:
        comparisons = comparisons_from_ranks(game.seats, game.ranks, game.teams)
        # a duplicate set is one deal at one table: its seed tells sets of merged results files apart
        rated.append((f"{game.game}|{game.placement.cluster}|{game.seed}", comparisons))
        for bot in set(game.seats):
            played[bot] += 1
        for fault in game.faults:
            faults[fault.bot] += 1
        for a, b, score in comparisons:
            index = 0 if score == 1 else 1 if score == 0.5 else 2
            outcome[a][index] += 1
            outcome[b][2 - index] += 1
    if anchor is not None and anchor[0] not in played:
        anchor = None  # the anchor bot does not play this game; its board is centred instead
    ratings = rate(rated, prior=prior, anchor=anchor, bootstrap=bootstrap, seed=seed)
    order = sorted(ratings.rating, key=lambda bot: (ratings.group_of(bot), -ratings.rating[bot], bot))
    rows = []
    for position, bot in enumerate(order, 1):
        low, high = ratings.interval[bot] or (None, None)
        above = rows[-1] if rows else None
        tied = above is not None and (above.group, round(above.elo)) == (ratings.group_of(bot), round(ratings.rating[bot]))
        rows.append(Row(above.rank if tied else position, bot, ratings.rating[bot], low, high, played[bot],
                        *outcome[bot], faults[bot], ratings.group_of(bot)))
    notes = []
    if len(ratings.groups) > 1:
        parts = "; ".join(f"group {i + 1}: {', '.join(group)}" for i, group in enumerate(ratings.groups))
        notes.append(f"the bots form {len(ratings.groups)} groups that never met, rated separately "
                     f"(each centred on its own; compare ratings only within a group): {parts}")
    return Board(title, rows, ratings, len(games), notes, head_to_head(rated, order))


def leaderboards(games: Iterable[GameRecord], prior: float = 2.0, anchor: tuple[str, float] | None = None,
                 bootstrap: int = 200, seed: int = 0) -> list[Board]:
    """A board per game and rules version (versions are never pooled), then the overall board."""
    by_game: dict[tuple[str, str], list[GameRecord]] = defaultdict(list)
    for game in games:
        by_game[(game.game, game.rules_version)].append(game)
    boards = [board(f"{name} (rules v{version})", by_game[(name, version)], prior, anchor, bootstrap, seed)
              for name, version in sorted(by_game)]
    versions = Counter(name for name, _ in by_game)
    if len(boards) > 1 and all(count == 1 for count in versions.values()):
        overall = [game for key in sorted(by_game) for game in by_game[key]]
        boards.append(board("overall", overall, prior, anchor, bootstrap, seed))
    return boards


def superiority_table(ratings: Ratings, bots: Sequence[str]) -> list[list[Any]]:
    """Rows of the likelihood of superiority (row bot over column bot), in percent."""
    rows = []
    for a in bots:
        cells: list[Any] = [a]
        for b in bots:
            value = None if a == b else ratings.superiority(a, b)
            cells.append("" if value is None else f"{100 * value:.0f}")
        rows.append(cells)
    return rows


def render(boards: Sequence[Board], fmt: str = "table", superiority: bool = False, crosstable: bool = False) -> str:
    """All boards in one output format: "table", "markdown", "csv" or "json".

    With `crosstable`, each board is followed by its head-to-head table; in CSV, which holds one
    table, the crosstable's rows replace the leaderboard's.
    """
    if fmt == "json":
        return json.dumps([{"title": b.title, "games": b.games, "notes": b.notes,
                            "rows": [row.to_dict() for row in b.rows],
                            **({"superiority": {a.bot: {c.bot: b.ratings.superiority(a.bot, c.bot)
                                                        for c in b.rows if c.bot != a.bot} for a in b.rows}}
                               if superiority else {}),
                            **({"crosstable": [pairing.to_dict() for pairing in b.crosstable]} if crosstable else {})}
                           for b in boards], indent=1)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        fields = CROSSTABLE_FIELDS if crosstable else CSV_FIELDS
        writer.writerow(["board", *fields])
        for b in boards:
            for item in (b.crosstable if crosstable else b.rows):
                values = item.to_dict()
                writer.writerow([b.title, *(values[name] for name in fields)])
        return buffer.getvalue()
    style = "github" if fmt == "markdown" else "simple"
    parts = []
    for b in boards:
        heading = f"## {b.title}" if fmt == "markdown" else f"{b.title}: {counted(b.games, 'game')}"
        if fmt == "markdown":
            heading += f"\n\n{counted(b.games, 'game')}"
        parts.append(heading)
        parts.append(tabulate([row.cells() for row in b.rows], headers=HEADERS, tablefmt=style,
                              colalign=("right", "left", "right", "left", "right", "right", "left", "right")))
        parts.extend(f"note: {note}" for note in b.notes)
        parts.append("\n" + LEGEND if fmt == "markdown" else textwrap.fill(LEGEND, LEGEND_WIDTH))
        if superiority:
            names = [row.bot for row in b.rows]
            parts.append("likelihood of superiority, % (row over column):")
            parts.append(tabulate(superiority_table(b.ratings, names), headers=["", *names], tablefmt=style))
        if crosstable:
            if fmt == "markdown":
                parts.append("")  # a line right under a Markdown table would join it as a row
            parts.append("head to head (games both bots were compared in; W-D-L, score, Elo from the first bot's "
                         "side; LOS: likelihood it is the stronger):" + ("\n" if fmt == "markdown" else ""))
            parts.append(tabulate([pairing.cells() for pairing in b.crosstable], headers=CROSSTABLE_HEADERS,
                                  tablefmt=style, disable_numparse=True,
                                  colalign=("left", "left", "right", "left", "right", "right", "left", "right")))
            if fmt == "markdown":
                parts.append("")
        parts.append("")
    # Bot names come from manifests and command lines: no control character reaches a terminal.
    return "\n".join(printable(line) for line in "\n".join(parts).split("\n"))
