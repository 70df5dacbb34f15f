"""Leaderboards from stored games: per game (and rules version) and overall, as text, Markdown, CSV or JSON.

Each row: rank, bot, Elo, 95% interval, games, score %, W-D-L and faults. W-D-L and score %
count the pairwise results the ratings are fitted on (a five-player game gives each bot four),
so they explain the Elo directly.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from tabulate import tabulate

from runner.ratings import Ratings, comparisons_from_ranks, rate
from runner.referee.faults import printable
from runner.tournament.store import StoredGame

FORMATS = ("table", "markdown", "csv", "json")
CSV_FIELDS = ["rank", "bot", "elo", "low", "high", "games", "score_percent", "wins", "draws", "losses", "faults",
              "group"]
HEADERS = ["rank", "bot", "elo", "±95%", "games", "score %", "W-D-L", "faults"]


@dataclass
class Row:
    """One bot's line on a leaderboard."""

    rank: int
    bot: str
    elo: float
    low: float | None  # None: no interval (too few duplicate sets)
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

    def cells(self) -> list[Any]:
        """The row as leaderboard cells (interval as the larger distance from the Elo)."""
        margin = "n/a" if self.low is None else f"±{round(max(self.elo - self.low, self.high - self.elo))}"
        return [self.rank, self.bot, round(self.elo), margin, self.games, f"{self.score:.1f}",
                f"{self.wins}-{self.draws}-{self.losses}", self.faults]

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "bot": self.bot, "elo": round(self.elo, 1),
                "low": None if self.low is None else round(self.low, 1),
                "high": None if self.high is None else round(self.high, 1),
                "games": self.games, "score_percent": round(self.score, 2),
                "wins": self.wins, "draws": self.draws, "losses": self.losses, "faults": self.faults,
                "group": self.group}


@dataclass
class Board:
    """A leaderboard: its title, rows best first, connected groups, and the fitted ratings."""

    title: str
    rows: list[Row]
    ratings: Ratings
    games: int
    notes: list[str] = field(default_factory=list)


def board(title: str, games: Sequence[StoredGame], prior: float, anchor: tuple[str, float] | None,
          bootstrap: int, seed: int) -> Board:
    """Fit the ratings of `games` and tabulate them with each bot's counts."""
    played: Counter = Counter()
    faults: Counter = Counter()
    outcome: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    rated: list[tuple[str, list[tuple[str, str, float]]]] = []
    for game in games:
        comparisons = comparisons_from_ranks(game.seats, game.ranks, game.teams)
        rated.append((f"{game.game}|{game.cluster}", comparisons))
        for bot in set(game.seats):
            played[bot] += 1
        for fault in game.faults:
            faults[fault["bot"]] += 1
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
        rows.append(Row(position, bot, ratings.rating[bot], low, high, played[bot], *outcome[bot], faults[bot],
                        ratings.group_of(bot)))
    notes = []
    if len(ratings.groups) > 1:
        parts = "; ".join(f"group {i + 1}: {', '.join(group)}" for i, group in enumerate(ratings.groups))
        notes.append(f"the bots form {len(ratings.groups)} groups that never met, rated separately "
                     f"(each centred on its own; compare ratings only within a group): {parts}")
    return Board(title, rows, ratings, len(games), notes)


def leaderboards(games: Iterable[StoredGame], prior: float = 2.0, anchor: tuple[str, float] | None = None,
                 bootstrap: int = 200, seed: int = 0) -> list[Board]:
    """A board per game and rules version (versions are never pooled), then the overall board."""
    by_game: dict[tuple[str, str], list[StoredGame]] = defaultdict(list)
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


def render(boards: Sequence[Board], fmt: str = "table", superiority: bool = False) -> str:
    """All boards in one output format: "table", "markdown", "csv" or "json"."""
    if fmt == "json":
        return json.dumps([{"title": b.title, "games": b.games, "notes": b.notes,
                            "rows": [row.to_dict() for row in b.rows],
                            **({"superiority": {a.bot: {c.bot: b.ratings.superiority(a.bot, c.bot)
                                                        for c in b.rows if c.bot != a.bot} for a in b.rows}}
                               if superiority else {})}
                           for b in boards], indent=1)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["board", *CSV_FIELDS])
        for b in boards:
            for row in b.rows:
                values = row.to_dict()
                writer.writerow([b.title, *(values[name] for name in CSV_FIELDS)])
        return buffer.getvalue()
    style = "github" if fmt == "markdown" else "simple"
    parts = []
    for b in boards:
        heading = f"## {b.title}" if fmt == "markdown" else f"{b.title}: {b.games} games"
        if fmt == "markdown":
            heading += f"\n\n{b.games} games"
        parts.append(heading)
        parts.append(tabulate([row.cells() for row in b.rows], headers=HEADERS, tablefmt=style,
                              colalign=("right", "left", "right", "left", "right", "right", "left", "right")))
        parts.extend(f"note: {note}" for note in b.notes)
        if superiority:
            names = [row.bot for row in b.rows]
            parts.append("likelihood of superiority, % (row over column):")
            parts.append(tabulate(superiority_table(b.ratings, names), headers=["", *names], tablefmt=style))
        parts.append("")
    # Bot names come from manifests and command lines: no control character reaches a terminal.
    return "\n".join(printable(line) for line in "\n".join(parts).split("\n"))

