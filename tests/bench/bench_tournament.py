"""Tournament benchmark: games per second of each game with the sample bots at --jobs 1 and 2, and rating speed.

For each registered game, the sample bots play the round-robin schedule of that game through
the real executor (worker processes pinned to cores, each game written to SQLite as it ends),
once with one worker and once with two; the scaling ratio is the second rate over the first.
Then 100,000 synthetic four-player games are rated: the fit alone, and with the bootstrap
intervals a leaderboard prints. Run: python tests/bench/bench_tournament.py [deals-per-table]
"""

from __future__ import annotations

import math
import random
import secrets
import sys
import tempfile
import time
from pathlib import Path

from cardarena.games import all_games
from cardarena.ratings import comparisons_from_ranks, rate
from cardarena.config import Limits
from cardarena.tournament.execution.events import FinishedGame
from cardarena.tournament.execution.execute import LocalExecutor
from cardarena.tournament.planning.league import SAMPLE_LEAGUE, build_league, read_league_file
from cardarena.tournament.planning.schedule import schedule
from cardarena.tournament.store import ResultStore

RATED_GAMES = 100_000


def games_per_second(game: str, jobs: int, deals: int) -> tuple[int, float, int]:
    """Games played, games per second and faults for one game's sample-league schedule at `jobs` workers."""
    data = read_league_file(SAMPLE_LEAGUE) | {"games": [game], "deals": deals}
    league = build_league(data, SAMPLE_LEAGUE.parent, str(SAMPLE_LEAGUE))
    plans = schedule({e.name: e.games for e in league.entrants}, league.games, league.seed,
                     deal_key=secrets.token_hex(32))
    bots = {entrant.name: entrant.spec for entrant in league.entrants}
    planned = {g.game_id: g for plan in plans for g in plan.games}
    played = faults = 0
    with tempfile.TemporaryDirectory() as folder, ResultStore(Path(folder) / "bench.sqlite", create=True) as store:
        started = time.perf_counter()
        for item in LocalExecutor(jobs, pin_cores=True).run(plans, bots, Limits(decision_timeout=5.0)):
            if isinstance(item, FinishedGame):
                game_plan = planned[item.game_id]
                record = item.record.to_dict()
                store.add_game(record, item.match_id, game_plan.deal, game_plan.rotation, game_plan.cluster)
                played += 1
                faults += len(record["faults"])
        elapsed = time.perf_counter() - started
    return played, played / elapsed, faults


def synthetic_games(count: int, bots: int = 8, seats: int = 4) -> list[tuple[str, list[tuple[str, str, float]]]]:
    """`count` four-player games of bots with spread-out strengths, in duplicate sets of `seats` rotations."""
    rng = random.Random(7)
    strength = {f"bot{i}": rng.gauss(0, 1) for i in range(bots)}
    games = []
    for deal in range(count // seats):
        table = rng.sample(sorted(strength), seats)
        for rotation in range(seats):
            lineup = table[rotation:] + table[:rotation]
            performance = [strength[bot] - math.log(-math.log(rng.random())) for bot in lineup]
            ranks = [sum(other > mine for other in performance) for mine in performance]
            games.append((f"deal{deal}", comparisons_from_ranks(lineup, ranks)))
    return games


def main() -> None:
    deals = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    print(f"sample league, {deals} deals per table, games per second (faults):")
    print(f"{'game':<12} {'games':>6} {'jobs 1':>8} {'jobs 2':>8} {'scaling':>8}")
    for game in all_games():
        played, one, faults_one = games_per_second(game, 1, deals)
        _, two, faults_two = games_per_second(game, 2, deals)
        print(f"{game:<12} {played:>6} {one:>8.1f} {two:>8.1f} {two / one:>7.2f}x"
              + (f"  ({faults_one}/{faults_two} faults)" if faults_one or faults_two else ""))
    games = synthetic_games(RATED_GAMES)
    started = time.perf_counter()
    rate(games, bootstrap=0)
    fitted = time.perf_counter() - started
    started = time.perf_counter()
    rate(games, bootstrap=200)
    with_bootstrap = time.perf_counter() - started
    print(f"rating {len(games):,} four-player games (8 bots): fit {fitted:.2f} s, "
          f"with 200 bootstrap resamples {with_bootstrap:.2f} s")


if __name__ == "__main__":
    main()
