"""Cost of Cuajo hand evaluation per call, cold and warm cache, as ratios to sorting the hand.

"empty cache" clears the memo before every call; "cold cache" starts one pass of all hands from
an empty memo; "warm cache" repeats that pass.

Run: python tests/bench/bench_cuajo.py [hands]. The baseline (sorting a 16-card list) is timed in
the same run, so the ratios compare across machines and loads.
"""

from __future__ import annotations

import random
import sys
import time

from cardarena.games import cuajo
from cardarena.games.cuajo import COPIES, TYPES, completing_cards, counts_of, is_complete

CACHED = (cuajo._rank_splits, cuajo._middle_complete, cuajo._high_complete)


def random_hands(count: int, size: int, seed: int = 5) -> list[list[int]]:
    """`count` hands of `size` cards dealt from shuffled 112-card decks, as 28 counts."""
    rng = random.Random(seed)
    deck = [t for t in range(TYPES) for _ in range(COPIES)]
    hands = []
    for _ in range(count):
        rng.shuffle(deck)
        hands.append(counts_of(deck[:size]))
    return hands


def clear_caches() -> None:
    """Forget every memoised group result."""
    for cached in CACHED:
        cached.cache_clear()


def per_call(function, inputs, *, clear: bool = False) -> float:
    """Mean seconds per call of `function` over `inputs` (caches cleared first when `clear`)."""
    if clear:
        clear_caches()
    start = time.perf_counter()
    for item in inputs:
        function(item)
    return (time.perf_counter() - start) / len(inputs)


def per_call_always_cold(function, inputs) -> float:
    """Mean seconds per call with the caches cleared before every call (clearing time excluded)."""
    total = 0.0
    for item in inputs:
        clear_caches()
        start = time.perf_counter()
        function(item)
        total += time.perf_counter() - start
    return total / len(inputs)


def main(count: int = 20_000) -> None:
    """Print the cost of the baseline, of `is_complete` (16 cards) and `completing_cards` (15)."""
    full, short = random_hands(count, 16), random_hands(count, 15, seed=6)
    card_lists = [[t for t in range(TYPES) for _ in range(hand[t])][::-1] for hand in full]
    baseline = per_call(sorted, card_lists)
    rows = [
        ("sort a 16-card list (baseline)", baseline),
        ("is_complete, empty cache", per_call_always_cold(is_complete, full[:2000])),
        ("is_complete, cold cache", per_call(is_complete, full, clear=True)),
        ("is_complete, warm cache", per_call(is_complete, full)),
        ("completing_cards, empty cache", per_call_always_cold(completing_cards, short[:2000])),
        ("completing_cards, cold cache", per_call(completing_cards, short, clear=True)),
        ("completing_cards, warm cache", per_call(completing_cards, short)),
    ]
    print(f"{count} random hands per row")
    for label, seconds in rows:
        print(f"{label:32} {seconds * 1e6:8.2f} us/call  {seconds / baseline:6.1f} x baseline")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
