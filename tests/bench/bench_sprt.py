"""The SPRT's error rates and lengths, measured on synthetic duplicate sets of known Elo difference.

A synthetic set is `comparisons` seat comparisons of challenger against baseline, each a win,
draw (probability `draws`) or loss, independent, with the expected score of the true Elo
difference; its score is their mean, as `duplicate_score` makes it. For each true difference
(0, elo0, elo1, 2 × elo1) many SPRTs run to a decision through `SequentialTest`; the share
accepting H1 is the false-positive rate alpha at elo0 (and below), and the share accepting H0
is the false-negative rate beta at elo1 (and above). The average number of sets is the cost.

Run: python tests/bench/bench_sprt.py [--runs 2000] [--elo0 0 --elo1 10] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tabulate import tabulate  # noqa: E402

from cardarena.ratings import expected_score  # noqa: E402
from cardarena.tournament.planning.sprt import H0, H1, SequentialTest, SprtSettings  # noqa: E402

CHUNK = 512  # set scores drawn per call of random.choices


def set_score_distribution(elo: float, comparisons: int, draws: float) -> tuple[list[float], list[float]]:
    """The possible scores of one synthetic set and their cumulative probabilities.

    The score is the mean of `comparisons` independent results worth 1, ½ or 0, with a draw
    probability `draws` and an expected result of `expected_score(elo)`.
    """
    score = expected_score(elo)
    win, loss = score - draws / 2, 1 - score - draws / 2
    if min(win, loss) < 0:
        raise ValueError(f"a draw rate of {draws} cannot give an expected score of {score:.3f}")
    # probabilities of the number of half points, convolved one comparison at a time
    halves = [1.0]
    for _ in range(comparisons):
        step = [0.0] * (len(halves) + 2)
        for count, probability in enumerate(halves):
            step[count] += probability * loss
            step[count + 1] += probability * draws
            step[count + 2] += probability * win
        halves = step
    values = [count / (2 * comparisons) for count in range(len(halves))]
    cumulative, running = [], 0.0
    for probability in halves:
        running += probability
        cumulative.append(running)
    return values, cumulative


@dataclass
class Point:
    """The outcome of many SPRTs at one true Elo difference."""

    elo: float
    runs: int
    accepted_h1: int
    accepted_h0: int
    sets: int  # summed over the runs

    @property
    def undecided(self) -> int:
        return self.runs - self.accepted_h1 - self.accepted_h0

    @property
    def mean_sets(self) -> float:
        return self.sets / self.runs


def simulate(settings: SprtSettings, elo: float, runs: int, comparisons: int, draws: float, seed: int,
             max_sets: int = 1_000_000) -> Point:
    """Run `runs` SPRTs on synthetic sets of true Elo difference `elo`, each to a decision or `max_sets`."""
    rng = random.Random(seed)
    values, cumulative = set_score_distribution(elo, comparisons, draws)
    accepted = {H0: 0, H1: 0}
    total_sets = 0
    for _ in range(runs):
        test = SequentialTest(settings)
        while test.decision is None and test.sets < max_sets:
            start = test.sets
            for offset, score in enumerate(rng.choices(values, cum_weights=cumulative, k=CHUNK)):
                test.record(start + offset, score)
                if test.decision is not None or test.sets >= max_sets:
                    break
        total_sets += test.sets
        if test.decision is not None:
            accepted[test.decision] += 1
    return Point(elo, runs, accepted[H1], accepted[H0], total_sets)


def binomial_margin(rate: float, runs: int) -> float:
    """Three standard errors of a rate measured over `runs` trials."""
    return 3 * math.sqrt(rate * (1 - rate) / runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="SPRTs per true Elo difference")
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=10.0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    settings = SprtSettings(args.elo0, args.elo1, args.alpha, args.beta)
    # set shapes: a two-seat game pair with no draws; eight comparisons with a third drawn (a
    # four-seat game's set); thirty with half drawn (a five-seat banking game's set)
    shapes = [(2, 0.0), (8, 1 / 3), (30, 0.5)]
    rows = []
    for comparisons, draws in shapes:
        for elo in sorted({0.0, settings.elo0, settings.elo1, 2 * settings.elo1}):
            started = time.perf_counter()
            point = simulate(settings, elo, args.runs, comparisons, draws, args.seed)
            seconds = time.perf_counter() - started
            if elo <= settings.elo0:
                error, nominal, wrong = point.accepted_h1 / point.runs, settings.alpha, "H1 (alpha)"
            else:
                error, nominal, wrong = point.accepted_h0 / point.runs, settings.beta, "H0 (beta)"
            limit = nominal + binomial_margin(nominal, point.runs) if elo in (settings.elo0, settings.elo1) else nominal
            verdict = "ok" if error <= limit else "HIGH"
            rows.append([f"{comparisons} cmp, {draws:.2f} draws", f"{elo:g}", point.runs, wrong,
                         f"{100 * error:.2f}%", f"{100 * nominal:.0f}%", verdict, f"{point.mean_sets:.0f}",
                         point.undecided, f"{seconds:.1f}"])
    print(f"SPRT {settings}: bounds {settings.lower:.3f} .. {settings.upper:.3f}")
    print(tabulate(rows, headers=["set shape", "true elo", "runs", "wrong accept", "rate", "nominal",
                                  "within 3 se", "mean sets", "undecided", "seconds"]))


if __name__ == "__main__":
    main()
