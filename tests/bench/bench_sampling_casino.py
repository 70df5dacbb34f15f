"""Benchmark of Casino's deal sampling (cardarena.search.casino): milliseconds per sampled state at
early, mid and late positions of whole games (random play, default options), per player count,
with the share of proposals that `replay` accepts.

A sample replays the game from the start of the last round seen (a checkpoint replayed once per
position, with the first sample); the baseline, measured in the same run, is one replay of the
same deal from the game's start, which is what every sample would cost without the checkpoint.
Run `python tests/bench/bench_sampling_casino.py`.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cardarena.games import get_game  # noqa: E402
from cardarena.search import replay  # noqa: E402
from cardarena.search.casino import SAMPLER, LaterDecks  # noqa: E402
from cardarena.search.knowledge import DealSampler, Proposal  # noqa: E402
from tests.search_support_casino import knowledge_of, random_policy, record_game, sampling_casino_with  # noqa: E402

GAME = get_game("casino")
SAMPLES = 40


class Counting(DealSampler):
    """Casino's sampler, counting its proposals."""

    def __init__(self):
        self.proposals = 0

    def actions(self, transcript):
        return SAMPLER.actions(transcript)

    def propose(self, transcript, rng):
        self.proposals += 1
        return SAMPLER.propose(transcript, rng)


def full_replay_ms(transcript, rng) -> float:
    """One replay from the game's start of a proposed deal (no checkpoint), in ms."""
    proposal = SAMPLER.propose(transcript, rng)
    whole = Proposal(proposal.deck, seed=proposal.seed, rng=LaterDecks(proposal.rng.decks))
    actions = SAMPLER.actions(transcript)
    started = time.perf_counter()
    assert replay(GAME, transcript, whole, actions) is not None
    return (time.perf_counter() - started) * 1000


def main() -> None:
    print(f"{'players':>7} {'position':>8} {'round':>5} {'actions':>7} {'first ms':>9} {'ms/sample':>9} "
          f"{'full replay ms':>14} {'ratio':>6} {'accepted':>8}")
    for players in (2, 3, 4):
        recorded = record_game(GAME, players, {}, 3, random_policy)
        decisions = len(recorded.transcripts[0].decisions)
        for label, count in (("early", 2), ("mid", decisions // 2), ("late", decisions)):
            transcript = recorded.position(0, count)
            counting = Counting()
            knowledge = knowledge_of(transcript)
            rng = random.Random(1)
            with sampling_casino_with(counting):
                started = time.perf_counter()
                knowledge.sample(rng)
                first = (time.perf_counter() - started) * 1000
                started = time.perf_counter()
                for _ in range(SAMPLES):
                    knowledge.sample(rng)
                per_sample = (time.perf_counter() - started) * 1000 / SAMPLES
            baseline = min(full_replay_ms(transcript, rng) for _ in range(5))
            print(f"{players:>7} {label:>8} {transcript.current_view()['round']:>5} "
                  f"{len(recorded.actions_before(transcript)):>7} {first:>9.2f} {per_sample:>9.2f} "
                  f"{baseline:>14.2f} {per_sample / baseline:>6.2f} {(SAMPLES + 1) / counting.proposals:>8.0%}")


if __name__ == "__main__":
    main()
