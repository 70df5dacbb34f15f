"""Deals that deal a hidden Cuajo hand purro by construction against deals checked by rejection
alone (cuajo.md § Sampling hidden cards, A hand seen purro, dealt purro): both samplers are exact,
so at a position where rejection alone is fast enough to measure (one other seat announced purro),
the purro hand's dealt cards must follow one law. Per position, `samples` consistent deals from
each, and a two-sample chi-square test (homogeneity) on how many aces, kings and 3-4-5s the purro
hand's 15 dealt cards hold, apart and jointly. Slow by design: rejection takes 0.15-0.4 s a sample.

The positions: heuristic hands (seed, seat) at the seat's first decision after one other seat was
announced purro and then did what the construction must follow: "broken" (its later discards may
lie in its prefix), "four" (a face-down secret: six choices of its card), "sowee" (a sowee secret:
27 choices, above MOST_PURRO_COUNTS, raised here so that the construction runs), "still" (still
purro).

With `two`, the joint coins instead (`conditioned_fills`): at positions after two other seats were
announced purro, both hands dealt purro against only the first dealt purro and the second checked
by rejection (exact too, some 20 times slower), compared on the second hand's dealt cards.

Run: python -m tests.bench.purro_exactness [samples per sampler] [two] [seed: only that position]
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "sample_bots" / "heuristic")]

from cardarena.games import get_game  # noqa: E402
from cardarena.games.cuajo import parse_card  # noqa: E402
from cardarena.search import cuajo as sampler_module  # noqa: E402
from cardarena.search.knowledge import first_consistent  # noqa: E402
from heuristic_bot import cuajo as heuristic  # noqa: E402
from tests.chi_square import upper_regularized_gamma  # noqa: E402
from tests.search_support_cuajo import play_recorded, positions  # noqa: E402
from tests.test_search_cuajo import other_purro_flags, purro_edge  # noqa: E402

GAME = get_game("cuajo")
CASES = ((0, 3, "broken"), (2, 3, "four"), (47, 1, "sowee"), (8, 0, "still"))
#: heuristic hands (seed, seat) at the seat's first decision after two other seats were announced purro
TWO_CASES = ((3, 1, "two"), (5, 2, "two"))


def policy(state, seat, legal, rng):
    return heuristic.decide(state.view(seat), legal, rng)


class OneDealt(sampler_module.CuajoSampler):
    """The sampler with only the first hand seen purro dealt purro; the others by rejection alone."""

    def plan(self, transcript):
        plan = super().plan(transcript)
        if "purro_deals" not in plan.__dict__:
            first = min(plan.purro_checked)
            plan.purro_deals = {cards: {other: hand for other, hand in hands.items() if other == first}
                                for cards, hands in plan.purro_deals.items()}
        return plan


def position_of(seed: int, seat: int, edge: str):
    played = play_recorded("cuajo", 4, {}, seed, policy)
    if edge == "two":
        return next(p for p in positions(played.transcripts[seat])
                    if p.game_end is None and len({e["seat"] for e in p.events() if e["type"] == "purro" and e["purro"]
                                                   and e["seat"] != seat}) == 2)
    if edge == "still":
        return next(p for p in positions(played.transcripts[seat]) if other_purro_flags(p) == 1 and p.game_end is None)
    return next(p for p in positions(played.transcripts[seat]) if p.game_end is None and purro_edge(p) == edge)


def packet_shape(deck: list[str], chain: list[int]) -> tuple[int, int, int]:
    """How many aces (up to 4), kings (up to 3) and 3-4-5s (3 to 9) the hand's dealt cards hold."""
    cards = [parse_card(deck[position]) for position in chain[:15]]
    return (min(sum(card < 4 for card in cards), 4), min(sum(card >= 24 for card in cards), 3),
            min(max(sum(4 <= card < 16 for card in cards), 3), 9))


def homogeneity_p_value(first: Counter, second: Counter) -> tuple[float, int]:
    """The two-sample chi-square test's p-value, cells seen fewer than 10 times in all pooled."""
    cells, pooled = [], [0, 0]
    for key in set(first) | set(second):
        if first[key] + second[key] < 10:
            pooled = [pooled[0] + first[key], pooled[1] + second[key]]
        else:
            cells.append((first[key], second[key]))
    if sum(pooled):
        cells.append(tuple(pooled))
    totals = sum(first.values()), sum(second.values())
    statistic = 0.0
    for row in cells:
        for seen, total in zip(row, totals):
            wanted = sum(row) * total / sum(totals)
            statistic += (seen - wanted) ** 2 / wanted
    return upper_regularized_gamma((len(cells) - 1) / 2, statistic / 2), len(cells)


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    two = len(sys.argv) > 2 and sys.argv[2] == "two"
    sampler_module.MOST_PURRO_COUNTS = 40
    print(f"{'position':22} {'choices':>7} {'dealt s':>8} {'reject s':>9}  p (aces, kings, 3-4-5s, joint)")
    only = int(sys.argv[3]) if len(sys.argv) > 3 else None
    for seed, seat, edge in TWO_CASES if two else CASES:
        if only is not None and seed != only:
            continue
        position = position_of(seed, seat, edge)
        plan = sampler_module.Plan(position)
        hand = max(plan.purro_checked) if two else min(plan.purro_checked)
        assert all(hand in hands for hands in plan.purro_deals.values()), "the construction does not run here"
        shapes, seconds = {}, {}
        for deals in (True, False):
            sampler = (sampler_module.CuajoSampler() if deals else OneDealt()) if two else sampler_module.CuajoSampler(deals)
            started = time.perf_counter()
            shapes[deals] = Counter(packet_shape(first_consistent(GAME, position, sampler, random.Random(index))[0].deck,
                                                 plan.chains[hand]) for index in range(samples))
            seconds[deals] = time.perf_counter() - started
        values = []
        for index in (0, 1, 2, None):
            pick = (lambda shape: shape) if index is None else (lambda shape, index=index: shape[index])
            apart = [Counter() for _ in range(2)]
            for side, deals in enumerate((True, False)):
                for shape, count in shapes[deals].items():
                    apart[side][pick(shape)] += count
            values.append(homogeneity_p_value(*apart)[0])
        print(f"{seed:>3} {seat} {edge:16} {len(plan.choices):>7} {seconds[True]:>8.0f} {seconds[False]:>9.0f}  "
              + ", ".join(f"{value:.3f}" for value in values))


if __name__ == "__main__":
    main()
