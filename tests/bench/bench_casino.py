"""Benchmark of Casino move enumeration: typical play and the most crowded tables we can build.

Run `python tests/bench/bench_casino.py`. Every figure is also given as a ratio to one `view()`
call measured in the same run on the same position, so numbers from different machines compare.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from runner.cards import parse  # noqa: E402
from runner.games import casino  # noqa: E402
from runner.games.base import random_action  # noqa: E402
from runner.games.casino import GAME, Build  # noqa: E402

SMALL_CARDS = [f"{rank}{suit}" for rank in ("A", "2", "3", "4", "5") for suit in "CDHS"]

#: crowded positions: (label, options, hand, loose cards, builds as (value, cards))
CROWDED = [
    ("16 loose A-4, hand 10 9 8 7", {}, ["10C", "9C", "8C", "7C"], SMALL_CARDS[:16], []),
    ("same, lenient_builds", {"lenient_builds": True}, ["10C", "9C", "8C", "7C"], SMALL_CARDS[:16], []),
    ("12 loose A-3 + 6, 3 builds, hand 10 9 8 7", {}, ["10C", "9C", "8C", "7C"],
     SMALL_CARDS[:12] + ["6C", "6D"], [(4, ["4C"]), (5, ["4D"]), (5, ["5C"])]),
    ("20 loose A-5, hand 10 10 9 9 (worst found)", {}, ["10C", "10D", "9C", "9D"], SMALL_CARDS, []),
]


def seconds_per_call(call, minimum_seconds=0.3):
    """Mean wall time of `call()`, repeated until `minimum_seconds` have passed."""
    calls, start = 0, time.perf_counter()
    while True:
        call()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= minimum_seconds:
            return elapsed / calls


def crowded_state(options, hand, loose, builds):
    """A 2-player state whose mover holds `hand` facing `loose` cards and others' `builds`."""
    state = GAME.new_state(2, options, seed=0)
    state.hands[state.turn] = sorted(map(parse, hand))
    state.loose = sorted(map(parse, loose))
    state.builds = [
        Build(number, value, sum(parse(c) // 4 + 1 for c in cards) == value, state.turn ^ 1, list(map(parse, cards)))
        for number, (value, cards) in enumerate(builds, start=1)
    ]
    return state


def fresh_legal_actions(state):
    """legal_actions without the per-position memo (the value-multiset cache stays warm)."""
    state._legal = None
    return state.legal_actions()


def bench_crowded():
    print("crowded tables (per legal_actions call; cache of value multisets warm unless said)")
    for label, options, hand, loose, builds in CROWDED:
        state = crowded_state(options, hand, loose, builds)
        view_cost = seconds_per_call(lambda: state.view(state.turn))
        casino._partitionable.cache_clear()
        start = time.perf_counter()
        count = len(fresh_legal_actions(state))
        cold = time.perf_counter() - start
        warm = seconds_per_call(lambda: fresh_legal_actions(state), minimum_seconds=1.0)
        print(f"  {label}: {count} actions, {warm * 1e3:.1f} ms warm ({warm / view_cost:,.0f} views), "
              f"{cold * 1e3:.1f} ms cold, {warm / count * 1e6:.2f} us per action; one view {view_cost * 1e6:.1f} us")


def bench_typical(games=40):
    """Random play of whole games: mean cost of legal_actions and of view per decision."""
    print(f"typical play ({games} random games per setting)")
    for players, options in ((2, {}), (3, {}), (4, {"partnerships": True}), (2, {"lenient_builds": True})):
        legal_time = view_time = 0.0
        decisions = actions = most = 0
        for seed in range(games):
            state = GAME.new_state(players, options, seed)
            rng = random.Random(seed)
            while not state.is_over():
                start = time.perf_counter()
                legal = state.legal_actions()
                middle = time.perf_counter()
                state.view(state.turn)
                view_time += time.perf_counter() - middle
                legal_time += middle - start
                decisions += 1
                actions += len(legal)
                most = max(most, len(legal))
                state.apply(random_action(legal, rng))
        print(f"  {players}p {options or 'default'}: {decisions} decisions, {actions / decisions:.1f} actions mean, "
              f"{most} most; legal_actions {legal_time / decisions * 1e6:.1f} us "
              f"= {legal_time / view_time:.2f} views; view {view_time / decisions * 1e6:.1f} us")


if __name__ == "__main__":
    bench_typical()
    bench_crowded()
