"""Cost of sampling a Cuajo deal from one seat's messages, early, mid and late in a hand, in random
and heuristic play (Cuajo has one player count, 4), as ms per sample and as a ratio to dealing a
fresh engine state from a shuffled deck, timed in the same run.

Per position: ms per consistent sample; placements per sample (deals built inside `propose`, each
kept with chance 1 / its placement paths, cuajo.md § Sampling hidden cards); replays per sample
(proposals that `replay` checked, so 1 / the acceptance rate of proposals). A position where another
seat is purro is marked P: a hidden hand seen purro is dealt first and checked by the proposal
itself, by rejection; a position that finds no sample within the budget (or whose proposal gives up,
SamplingError) prints "over budget".

Run: python tests/bench/bench_sampling_cuajo.py [games] [seconds per position]
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "sample_bots" / "heuristic")]

from cardarena.games import get_game  # noqa: E402
from cardarena.protocol.actions import random_action  # noqa: E402
from cardarena.search import cuajo as sampler_module  # noqa: E402
from cardarena.search.knowledge import SamplingError, replay  # noqa: E402
from heuristic_bot import cuajo as heuristic  # noqa: E402
from tests.search_support_cuajo import play_recorded, positions  # noqa: E402

GAME = get_game("cuajo")
POLICIES = {
    "random": lambda state, seat, legal, rng: random_action(legal, rng),
    "heuristic": lambda state, seat, legal, rng: heuristic.decide(state.view(seat), legal, rng),
}


def baseline_seconds(rounds: int = 300) -> float:
    """Seconds to shuffle a deck and deal an engine state from it."""
    rng = random.Random(0)
    deck = GAME.deck(4)
    started = time.perf_counter()
    for _ in range(rounds):
        rng.shuffle(deck)
        GAME.new_state(4, {"dealer": 0}, deck=deck)
    return (time.perf_counter() - started) / rounds


def measure(transcript, budget: float) -> tuple[int, float, int, int]:
    """(samples, seconds, placements, replays) for as many samples as fit in `budget` seconds (at most 20)."""
    placements = 0
    original = sampler_module._placed

    def counted(*args):
        nonlocal placements
        placements += 1
        return original(*args)

    sampler_module._placed = counted
    try:
        rng = random.Random(1)
        actions = sampler_module.SAMPLER.actions(transcript)
        samples = replays = 0
        started = time.perf_counter()
        while samples < 20 and time.perf_counter() - started < budget:
            try:
                proposal = sampler_module.SAMPLER.propose(transcript, rng)
            except SamplingError:
                break
            replays += 1
            if replay(GAME, transcript, proposal, actions) is not None:
                samples += 1
        return samples, time.perf_counter() - started, placements, replays
    finally:
        sampler_module._placed = original


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
    base = baseline_seconds()
    print(f"baseline: deal a shuffled deck {base * 1e3:.3f} ms; 4 players (Cuajo's only count)")
    print(f"{'play':10} {'game':>4} {'stage':6} {'decision':>8} {'ms/sample':>10} {'x base':>8} "
          f"{'placements':>11} {'replays':>8}")
    for name, policy in POLICIES.items():
        for seed in range(games):
            played = play_recorded("cuajo", 4, {}, seed, policy)
            stops = list(positions(played.transcripts[1]))[:-1]
            for stage, index in (("early", 2), ("mid", len(stops) // 2), ("late", len(stops) - 1)):
                transcript = stops[min(index, len(stops) - 1)]
                purro = "P" if any(flag for other, flag in enumerate(transcript.current_view()["purro"]) if other != 1) else ""
                samples, seconds, placements, replays = measure(transcript, budget)
                if not samples:
                    print(f"{name:10} {seed:>4} {stage:6} {len(transcript.decisions):>8}{purro:1} over budget "
                          f"({placements} placements, {replays} replays in {seconds:.1f} s)")
                    continue
                per = seconds / samples
                print(f"{name:10} {seed:>4} {stage:6} {len(transcript.decisions):>8}{purro:1} {per * 1e3:>10.1f} "
                      f"{per / base:>8.0f} {placements / samples:>11.1f} {replays / samples:>8.2f}")


if __name__ == "__main__":
    main()
