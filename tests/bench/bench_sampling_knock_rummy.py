"""Knock Rummy's deal sampler: milliseconds per sampled state at early, mid and late positions per
player count, as a ratio to one replay of the true deal, and the share of proposals replay accepts.

Positions are seat 0's first, middle and last decisions in games of low-knock random play (so
that games run long), and the state after game_end. A sample is `SeatKnowledge.sample`; the
baseline, timed in the same run, replays the recorded actions from the true deal through the
same `replay`, so the ratio says what sampling adds to the check every sample needs anyway.
After game_end each hand's deadwood must match too (the proposals place the revealed hands, so
they do): there the acceptance is measured over ATTEMPTS_AT_END proposals per position, and
samples are timed only at the positions ("found") where one of those was accepted.

Run: python tests/bench/bench_sampling_knock_rummy.py [games per player count]
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cardarena.cards import NAME  # noqa: E402
from cardarena.games.knock_rummy import GAME  # noqa: E402
from cardarena.search import Proposal, Transcript, replay  # noqa: E402
from cardarena.search.knock_rummy import SAMPLER  # noqa: E402
from tests.search_support_knock_rummy import fed_knowledge, play_recorded, random_policy  # noqa: E402

ATTEMPTS_AT_END = 2000
REPEATS = 10  # samples (and baseline replays) timed per position
STAGES = ("early", "mid", "late", "game_end")


def staged_positions(players: int, games: int) -> dict[str, list[tuple[Transcript, list[str]]]]:
    """Seat 0's transcripts at each stage, each with the true deck, from `games` seeded games."""
    rng = random.Random(players)
    staged: dict[str, list[tuple[Transcript, list[str]]]] = {stage: [] for stage in STAGES}
    for _ in range(games):
        deck = list(NAME)
        rng.shuffle(deck)
        positions = play_recorded(players, {}, deck, random_policy(0.02), rng).positions(0)
        decisions = positions[:-1]
        if not decisions:
            continue
        for stage, transcript in zip(STAGES, (decisions[0], decisions[len(decisions) // 2], decisions[-1], positions[-1])):
            staged[stage].append((transcript, deck))
    return staged


def measure(positions: list[tuple[Transcript, list[str]]]) -> tuple[float, float, float | None, int]:
    """(acceptance, ms per replay of the true deal, ms per sample over the positions where a
    proposal was accepted (None if none was), how many those are), REPEATS of each per position."""
    rng = random.Random(1)
    accepted = proposed = found = 0
    replay_seconds = sample_seconds = 0.0
    for transcript, deck in positions:
        actions = SAMPLER.actions(transcript)
        true_deal = Proposal(deck, {"dealer": transcript.decisions[0]["view"]["dealer"]})
        start = time.perf_counter()
        for _ in range(REPEATS):
            replay(GAME, transcript, true_deal, actions)
        replay_seconds += time.perf_counter() - start
        attempts = ATTEMPTS_AT_END if transcript.game_end is not None else REPEATS
        tried = [replay(GAME, transcript, SAMPLER.propose(transcript, rng), actions) is not None
                 for _ in range(attempts)]
        accepted, proposed = accepted + sum(tried), proposed + len(tried)
        if any(tried):
            found += 1
            knowledge = fed_knowledge(transcript)
            start = time.perf_counter()
            for _ in range(REPEATS):
                knowledge.sample(rng)
            sample_seconds += time.perf_counter() - start
    per_call = 1000 / REPEATS
    return (accepted / proposed, replay_seconds / len(positions) * per_call,
            sample_seconds / found * per_call if found else None, found)


def main(games: int = 10) -> None:
    fed_knowledge(staged_positions(2, 1)["mid"][0][0]).sample(random.Random(0))  # imports and first calls
    print(f"{'players':>7} {'stage':>8} {'positions':>9} {'found':>5} {'acceptance':>10} {'replay ms':>9} "
          f"{'sample ms':>9} {'ratio':>6}")
    for players in range(2, 6):
        for stage, positions in staged_positions(players, games).items():
            acceptance, replay_ms, sample_ms, found = measure(positions)
            sample = "-" if sample_ms is None else f"{sample_ms:.2f}"
            ratio = "-" if sample_ms is None else f"{sample_ms / replay_ms:.2f}"
            print(f"{players:>7} {stage:>8} {len(positions):>9} {found:>5} {acceptance:>10.4f} {replay_ms:>9.2f} "
                  f"{sample:>9} {ratio:>6}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
