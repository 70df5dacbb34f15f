"""Cost of sampling a Cuajo deal from one seat's messages, early, mid and late in a hand, in random
and heuristic play (Cuajo has one player count, 4), as ms per sample and as a ratio to dealing a
fresh engine state from a shuffled deck, timed in the same run.

Per position: ms per consistent sample; placements per sample (deals built inside `propose`, each
kept with chance 1 / its placement paths, cuajo.md § Sampling hidden cards); replays per sample
(proposals that `replay` checked, so 1 / the acceptance rate of proposals). A position where another
seat is purro is marked P: a hidden hand seen purro is dealt purro by construction (its walks are
counted in the position's first sample: cuajo.md § Sampling hidden cards, A hand seen purro, dealt
purro). In heuristic play, the stages purro1, purro2 and purro3 are the first decision of a seat
(the lowest seat that has one) after 1, 2 or 3 other seats were announced purro. A position that finds no sample within the budget (the proposal is
stopped there) or whose proposal gives up (SamplingError) prints "over budget", with the deals it
built.

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


class OverBudget(Exception):
    """The budget ran out inside a proposal (one may build up to MAX_PLACEMENTS deals, 5-10 s)."""


def purro_seats(transcript) -> int:
    """How many other seats were announced purro so far (each counted once)."""
    return len({event["seat"] for event in transcript.events()
                if event["type"] == "purro" and event["purro"] and event["seat"] != transcript.seat})


def measure(transcript, budget: float) -> tuple[int, float, int, int]:
    """(samples, seconds, placements, replays) for as many samples as fit in `budget` seconds (at most 20)."""
    placements = 0
    original = sampler_module._placed
    deadline = time.perf_counter() + budget

    def counted(*args):
        nonlocal placements
        placements += 1
        if placements % 1000 == 0 and time.perf_counter() > deadline:
            raise OverBudget
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
            except (SamplingError, OverBudget):
                break
            replays += 1
            if replay(GAME, transcript, proposal, actions) is not None:
                samples += 1
        return samples, time.perf_counter() - started, placements, replays
    finally:
        sampler_module._placed = original


def stops(name: str, played) -> list[tuple[str, object]]:
    """The positions measured in one hand: seat 1 early, mid and late, and in heuristic play the
    first decision of a seat after 1, 2 and 3 other seats were announced purro (if the hand has one)."""
    decisions = list(positions(played.transcripts[1]))[:-1]
    found = [(stage, decisions[min(index, len(decisions) - 1)])
             for stage, index in (("early", 2), ("mid", len(decisions) // 2), ("late", len(decisions) - 1))]
    if name == "heuristic":
        for count in (1, 2, 3):
            first = next((position for transcript in played.transcripts for position in positions(transcript)
                          if position.game_end is None and purro_seats(position) == count), None)
            if first is not None:
                found.append((f"purro{count}", first))
    return found


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
    base = baseline_seconds()
    print(f"baseline: deal a shuffled deck {base * 1e3:.3f} ms; 4 players (Cuajo's only count)")
    print(f"{'play':10} {'game':>4} {'stage':6} {'seat':>4} {'decision':>8} {'ms/sample':>10} {'x base':>8} "
          f"{'placements':>11} {'replays':>8}")
    for name, policy in POLICIES.items():
        for seed in range(games):
            played = play_recorded("cuajo", 4, {}, seed, policy)
            for stage, transcript in stops(name, played):
                purro = "P" if any(flag for other, flag in enumerate(transcript.current_view()["purro"])
                                   if other != transcript.seat) else ""
                samples, seconds, placements, replays = measure(transcript, budget)
                where = f"{name:10} {seed:>4} {stage:6} {transcript.seat:>4} {len(transcript.decisions):>8}{purro:1}"
                if not samples:
                    print(f"{where} over budget ({placements} placements, {replays} replays in {seconds:.1f} s)")
                    continue
                per = seconds / samples
                print(f"{where} {per * 1e3:>10.1f} {per / base:>8.0f} {placements / samples:>11.1f} "
                      f"{replays / samples:>8.2f}")


if __name__ == "__main__":
    main()
