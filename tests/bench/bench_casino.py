"""Benchmark of Casino's legal lists under the step protocol: typical play and the most crowded tables.

Moves are made in steps (runner/games/casino.md § Actions on the wire), so every decision lists
few entries; this measures how few and how fast, at first decisions and at selection steps. Under
rules version 1 (one entry per complete move) the 20-loose-card position listed 1.07 million moves
(1.5 s, about 236,000 views), a trail-only round reached 9.9 million (50 s) and later 10^8 to 10^9.
Run `python tests/bench/bench_casino.py`.
Every time is also given as a ratio to one `view()` call measured in the same run, so numbers
from different machines compare.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cardarena.cards import parse  # noqa: E402
from cardarena.games import casino  # noqa: E402
from cardarena.protocol.actions import random_action  # noqa: E402
from cardarena.games.casino import GAME, Build  # noqa: E402

SMALL_CARDS = [f"{rank}{suit}" for rank in ("A", "2", "3", "4", "5") for suit in "CDHS"]

#: crowded positions: (label, options, hand, loose cards, builds as (value, cards))
CROWDED = [
    ("16 loose A-4, hand 10 9 8 7", {}, ["10C", "9C", "8C", "7C"], SMALL_CARDS[:16], []),
    ("same, lenient_builds", {"lenient_builds": True}, ["10C", "9C", "8C", "7C"], SMALL_CARDS[:16], []),
    ("12 loose A-3 + 6, 3 builds, hand 10 9 8 7", {}, ["10C", "9C", "8C", "7C"],
     SMALL_CARDS[:12] + ["6C", "6D"], [(4, ["4C"]), (5, ["4D"]), (5, ["5C"])]),
    ("20 loose A-5, hand 10 10 9 9 (1.07 million one-shot moves)", {}, ["10C", "10D", "9C", "9D"], SMALL_CARDS, []),
]


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
    """legal_actions without the per-position memo (the memoised feasibility checks stay warm)."""
    state._legal = None
    return state.legal_actions()


class Tally:
    """Sizes and times of legal_actions calls, split into first decisions and selection steps."""

    def __init__(self):
        self.calls = {"first": 0, "step": 0}
        self.actions = {"first": 0, "step": 0}
        self.most = {"first": 0, "step": 0}
        self.seconds = {"first": 0.0, "step": 0.0}
        self.slowest = 0.0
        self.view_seconds = 0.0
        self.views = 0

    def measure(self, state):
        """Time one fresh legal_actions call and one view of `state`; return the legal list."""
        phase = "first" if state.move is None else "step"
        start = time.perf_counter()
        legal = fresh_legal_actions(state)
        middle = time.perf_counter()
        state.view(state.turn)
        self.view_seconds += time.perf_counter() - middle
        self.views += 1
        self.calls[phase] += 1
        self.actions[phase] += len(legal)
        self.most[phase] = max(self.most[phase], len(legal))
        self.seconds[phase] += middle - start
        self.slowest = max(self.slowest, middle - start)
        return legal

    def report(self, label):
        """Print the sizes and mean times per phase, and the slowest call, against one view."""
        view = self.view_seconds / self.views
        print(f"  {label}:")
        for phase in ("first", "step"):
            if self.calls[phase]:
                mean = self.seconds[phase] / self.calls[phase]
                print(f"    {phase:5}: {self.calls[phase]} calls, "
                      f"{self.actions[phase] / self.calls[phase]:.1f} actions mean, {self.most[phase]} most; "
                      f"{mean * 1e6:.1f} us mean = {mean / view:.2f} views")
        print(f"    slowest call {self.slowest * 1e3:.2f} ms = {self.slowest / view:.1f} views; "
              f"one view {view * 1e6:.1f} us")


def walk_moves(state, tally, rng, paths):
    """From a first decision, follow `paths` random step paths of every start to the end of the move."""
    for start in tally.measure(state):
        for _ in range(paths):
            child = state.clone()
            child.apply(start)
            while child.move is not None:
                child.apply(rng.choice(tally.measure(child)))


def bench_crowded(paths=30):
    print(f"crowded tables (every start, {paths} random step paths each; feasibility memo cold at first)")
    casino._completable.cache_clear()
    for label, options, hand, loose, builds in CROWDED:
        tally = Tally()
        started = time.perf_counter()
        walk_moves(crowded_state(options, hand, loose, builds), tally, random.Random(1), paths)
        tally.report(f"{label} ({time.perf_counter() - started:.2f} s in all)")


def bench_trailing_round(games=5):
    """2-player rounds where both players only trail: the tables that grew the one-shot list to 10^9."""
    print(f"trail-only rounds ({games} seeds; at every first decision, one random step path of every start)")
    tally = Tally()
    for seed in range(games):
        state = GAME.new_state(2, None, seed)
        rng = random.Random(seed)
        while state.round == 1:
            walk_moves(state, tally, rng, 1)
            state.apply(next(a for a in state.legal_actions() if a["type"] == "trail"))
    tally.report("trail only, 2p")


def bench_typical(games=40):
    """Random play of whole games: cost and size of legal_actions against view, per decision."""
    print(f"typical play ({games} random games per setting)")
    for players, options in ((2, {}), (3, {}), (4, {"partnerships": True}), (2, {"lenient_builds": True})):
        tally = Tally()
        for seed in range(games):
            state = GAME.new_state(players, options, seed)
            rng = random.Random(seed)
            while not state.is_over():
                state.apply(random_action(tally.measure(state), rng))
        tally.report(f"{players}p {options or 'default'}")


if __name__ == "__main__":
    bench_typical()
    bench_trailing_round()
    bench_crowded()
