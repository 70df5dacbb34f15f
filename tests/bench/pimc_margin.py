"""How clearly the search example (sample_bots/search/pimc, protocol/SEARCH.md) beats random play,
per game, in duplicate format (tests/bot_harness.duplicate_gains): each seat of each deal is played
by PIMC and by a random bot against the same random opponents. Prints the pairs where PIMC did
better and worse, the one-sided sign test's p, the mean gain in payoff, and the time taken.

Run: python -m tests.bench.pimc_margin [deals] [determinizations]   (default 10 deals, 8)
"""

from __future__ import annotations

import statistics
import sys
import time

from tabulate import tabulate

from cardarena.games import get_game
from tests.bot_harness import duplicate_gains, load_pimc, sign_test_p
from tests.test_search_bot import SHORT


def main() -> None:
    deals = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    determinizations = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    pimc = load_pimc()
    rows = []
    for name, (players, options) in sorted(SHORT.items()):
        started = time.process_time()
        gains = duplicate_gains(get_game(name), lambda deal: pimc(seed=deal, determinizations=determinizations,
                                                                  seconds=None), players, options, deals)
        better, worse = sum(gain > 0 for gain in gains), sum(gain < 0 for gain in gains)
        rows.append([name, f"{players}, {options or 'defaults'}", len(gains), better, worse,
                     f"{sign_test_p(better, worse):.2g}", f"{statistics.mean(gains):+.2f}",
                     f"{time.process_time() - started:.0f} s"])
    print(f"PIMC ({determinizations} deals sampled per decision) against random play, {deals} deals per game:")
    print(tabulate(rows, headers=["game", "players, options", "pairs", "better", "worse", "sign test p",
                                  "mean gain", "CPU"]))


if __name__ == "__main__":
    main()
