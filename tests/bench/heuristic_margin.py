"""How clearly the heuristic sample bot beats the random one: win rate, scores and an Elo margin per game.

Plays seeded games between real bot subprocesses through `cardarena.referee.match.Match`. Every seed is
played twice, with the seats swapped (heuristic in the even seats, then in the odd ones), so both
bots get the same deals. In 4- and 5-player games the seats alternate heuristic and random, which
puts the two bots in opposite Cuajo partnerships. Each game scores the heuristic by the pairwise
comparisons of its seats with random's seats (1 for a better rank, 1/2 for a tie); the mean score p
gives the margin 400·log10(p/(1-p)), and the spread of the per-game scores a rough 95% interval.

Run: python tests/bench/heuristic_margin.py [--games N] [--seed S] [--game NAME ...]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tabulate import tabulate

from cardarena.games import get_game
from cardarena.record import GameRecord
from cardarena.referee.match import Match
from cardarena.config import BotSpec

ROOT = Path(__file__).resolve().parents[2]
HEURISTIC = ROOT / "sample_bots" / "heuristic" / "bot.py"
RANDOM = ROOT / "sample_bots" / "random" / "bot.py"
#: the table size benchmarked for each game (its smallest, except that Quitlok starts at 5)
PLAYERS = {"knock-rummy": 2, "casino": 2, "cuajo": 4, "quitlok": 5}


@dataclass
class Tally:
    """The heuristic's results over the games of one game type."""

    game_scores: list[float] = field(default_factory=list)  # pairwise score per game, 0..1
    wins: int = 0  # pairwise comparisons won outright
    ties: int = 0
    pairs: int = 0
    heuristic_points: list[float] = field(default_factory=list)  # game score per heuristic seat
    random_points: list[float] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)

    def add(self, record: GameRecord, heuristic_seats: list[int]) -> None:
        """Count one finished game in which the heuristic held `heuristic_seats`."""
        random_seats = [seat for seat in range(len(record.ranks)) if seat not in heuristic_seats]
        points = 0.0
        for mine in heuristic_seats:
            for theirs in random_seats:
                if record.ranks[mine] < record.ranks[theirs]:
                    self.wins += 1
                    points += 1.0
                elif record.ranks[mine] == record.ranks[theirs]:
                    self.ties += 1
                    points += 0.5
                self.pairs += 1
        self.game_scores.append(points / (len(heuristic_seats) * len(random_seats)))
        self.heuristic_points += [float(record.result.scores[seat]) for seat in heuristic_seats]
        self.random_points += [float(record.result.scores[seat]) for seat in random_seats]
        self.faults += [fault.summary() for fault in record.faults]


def elo(score: float) -> float:
    """The Elo difference that predicts the pairwise score `score` (0 < score < 1)."""
    return 400.0 * math.log10(score / (1.0 - score))


def margin(scores: list[float]) -> tuple[float, float, float]:
    """The Elo margin of the mean per-game score and a rough 95% interval from its standard error.

    Scores at 0 or 1 are pulled in by half a game so that a clean sweep gives a finite margin.
    """
    n = len(scores)
    edge = 0.5 / n

    def clipped(p: float) -> float:
        return min(1.0 - edge, max(edge, p))

    mean = statistics.fmean(scores)
    spread = 1.96 * statistics.stdev(scores) / math.sqrt(n) if n > 1 else 0.0
    return elo(clipped(mean)), elo(clipped(mean - spread)), elo(clipped(mean + spread))


def seat_bots(players: int, heuristic_first: bool) -> tuple[list[BotSpec], list[int]]:
    """The bots in seat order, alternating heuristic and random, and the heuristic's seats."""
    specs, heuristic_seats = [], []
    for seat in range(players):
        if (seat % 2 == 0) == heuristic_first:
            specs.append(BotSpec(f"heuristic-{seat}", (sys.executable, str(HEURISTIC), "--seed", str(seat))))
            heuristic_seats.append(seat)
        else:
            specs.append(BotSpec(f"random-{seat}", (sys.executable, str(RANDOM), "--seed", str(seat))))
    return specs, heuristic_seats


def bench(game_name: str, games: int, first_seed: int) -> Tally:
    """Play `games` games (half the seeds each way round) and tally the heuristic's results."""
    game = get_game(game_name)
    tally = Tally()
    seeds = range(first_seed, first_seed + (games + 1) // 2)
    for heuristic_first in (True, False):
        specs, heuristic_seats = seat_bots(PLAYERS[game_name], heuristic_first)
        with Match(specs) as match:
            for seed in seeds:
                tally.add(match.play(game, seed), heuristic_seats)
        tally.faults += [fault.summary() for fault in match.shutdown_faults]
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=200, help="games per game type (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    parser.add_argument("--game", action="append", choices=sorted(PLAYERS), help="only this game (repeatable)")
    args = parser.parse_args()
    rows = []
    for game_name in args.game or sorted(PLAYERS):
        started = time.monotonic()
        tally = bench(game_name, args.games, args.seed)
        low_high = margin(tally.game_scores)
        rows.append([
            game_name, PLAYERS[game_name], len(tally.game_scores),
            f"{tally.wins / tally.pairs:.1%}", f"{tally.ties / tally.pairs:.1%}",
            f"{statistics.fmean(tally.game_scores):.3f}",
            f"{statistics.fmean(tally.heuristic_points):+.1f}", f"{statistics.fmean(tally.random_points):+.1f}",
            f"{low_high[0]:+.0f} [{low_high[1]:+.0f}, {low_high[2]:+.0f}]",
            len(tally.faults), f"{time.monotonic() - started:.0f} s",
        ])
        for fault in tally.faults:
            print(f"FAULT {fault}", file=sys.stderr)
    print(f"heuristic against random, seeds {args.seed}..{args.seed + (args.games + 1) // 2 - 1}, "
          f"each played with the seats both ways")
    print(tabulate(rows, headers=["game", "players", "games", "pair wins", "pair ties", "score p",
                                  "heuristic pts", "random pts", "Elo margin [95%]", "faults", "time"]))


if __name__ == "__main__":
    main()
