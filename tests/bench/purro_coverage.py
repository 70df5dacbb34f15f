"""How many Cuajo positions after a purro announcement sample, and how fast (cuajo.md § Sampling
hidden cards, Measured across the options). Heuristic hands `first`..`last - 1` in each of the four
option sets of tests/test_search_cuajo.py; for each seat, every `every`-th decision after another
seat was announced purro; per position the first consistent deal with its walks (the walk cache
emptied first, so no position rides on another's), within `deadline` seconds. Prints each position
(option set, hand, seat, decision, hands seen purro, whether one of them was announced purro across
several prefixes, the outcome, seconds), then per kind how many sampled, and the median, 90th
percentile and total time of those that did. A position that gives none is tried again with
exactness waived (`exact=False`, its own deadline): outcome "exact=False" when that samples.

Run: python -m tests.bench.purro_coverage [first] [last] [every] [deadline]   (defaults 0 6 4 10)
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "sample_bots" / "heuristic")]

from cardarena.search.cuajo import SAMPLER, Plan  # noqa: E402
from cardarena.search.cuajo_purro import shared_group_walk  # noqa: E402
from cardarena.search.knowledge import SamplingError, first_consistent  # noqa: E402
from tests.search_support_cuajo import play_recorded, positions  # noqa: E402
from tests.test_search_cuajo import (GAME, OPTION_SETS, assert_consistent, hands_seen_purro, heuristic_policy,  # noqa: E402
                                     other_purro_flags)


def main(first: int, last: int, every: int, deadline: float) -> None:
    outcomes: Counter = Counter()
    seconds: list[float] = []
    rng = random.Random(1)
    for options in OPTION_SETS:
        for seed in range(first, last):
            played = play_recorded("cuajo", 4, options, seed, heuristic_policy)
            for transcript in played.transcripts:
                after = [p for p in positions(transcript) if p.game_end is None and other_purro_flags(p)]
                for position in after[::every]:
                    hands, across = hands_seen_purro(Plan(position))
                    shared_group_walk.cache_clear()
                    start = time.monotonic()
                    try:
                        assert_consistent(position, *first_consistent(GAME, position, SAMPLER, rng, 10**6,
                                                                      deadline=start + deadline))
                        outcome = "sampled"
                        seconds.append(time.monotonic() - start)
                    except SamplingError:  # then with exactness waived, from a fresh deadline
                        start = time.monotonic()
                        try:
                            assert_consistent(position, *first_consistent(GAME, position, SAMPLER, rng, 10**6,
                                                                          deadline=start + deadline, exact=False))
                            outcome = "exact=False"
                        except SamplingError:
                            outcome = "none"
                    outcomes[(hands, across, outcome)] += 1
                    print(options, seed, transcript.seat, len(position.decisions), hands, across, outcome,
                          f"{time.monotonic() - start:.2f}", flush=True)
    print("\nhands seen purro, one across several prefixes, outcome: positions")
    for key, count in sorted(outcomes.items()):
        print(*key, count, sep="\t")
    ordered = sorted(seconds)
    print(f"sampled {len(seconds)} of {sum(outcomes.values())}: median {statistics.median(ordered):.2f} s, "
          f"90th percentile {ordered[int(0.9 * len(ordered))]:.2f} s, {sum(ordered):.0f} s in all")


if __name__ == "__main__":
    arguments = [float(value) for value in sys.argv[1:]]
    defaults = [0, 6, 4, 10]
    first, last, every, deadline = arguments + defaults[len(arguments):]
    main(int(first), int(last), int(every), deadline)
