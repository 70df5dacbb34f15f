"""Quitlok deal sampling: ms per sample and the proposals' acceptance rate at early, mid and late
positions for 5, 7 and 10 players, and the ratio to one replay of the game so far (the floor of
any sample, measured in the same run).

    python -m tests.bench.bench_sampling_quitlok

Early is the seat's first decision, mid its first decision after the first reshuffle, late its
first after the third, deep its first after the eighth (a session holds dozens). A position where no deal is found in ATTEMPTS proposals prints its
acceptance as below 1/ATTEMPTS.
"""

from __future__ import annotations

import random
import time

from cardarena.games.quitlok import GAME
from cardarena.search import replay
from cardarena.search.quitlok import SAMPLER
from tests.search_support_quitlok import POLICIES, at_decision, play_game

ATTEMPTS = 2000
SAMPLES = 20
GAMES = 3


def stage_positions(transcript):
    """The seat's decision counts at the early, mid and late positions (None when the game has none)."""
    reshuffles = []
    seen = 0
    for count, message in enumerate(transcript.decisions, start=1):
        seen += sum(event["type"] == "reshuffle" for event in message["events"])
        reshuffles.append(seen)
    first_after = {need: next((count for count, told in enumerate(reshuffles, start=1) if told >= need), None)
                   for need in (1, 3, 8)}
    return {"early": 1, "mid": first_after[1], "late": first_after[3], "deep": first_after[8]}


def measure(transcript, rng):
    """(ms per sample, proposals tried, samples found) for up to SAMPLES samples."""
    actions = SAMPLER.actions(transcript)
    tried = found = 0
    start = time.perf_counter()
    for _ in range(SAMPLES):
        for _ in range(ATTEMPTS):
            tried += 1
            if replay(GAME, transcript, SAMPLER.propose(transcript, rng), actions) is not None:
                found += 1
                break
        else:
            break
    return (time.perf_counter() - start) * 1000 / max(found, 1), tried, found


def replay_ms(transcript):
    """One replay of the true deal's actions, as the floor: the engine's work for the game so far."""
    state = GAME.new_state(transcript.players, transcript.options, seed=int(transcript.game_start["game_id"][1:]))
    actions = SAMPLER.actions(transcript)
    start = time.perf_counter()
    for _, action in actions:
        state.apply(action)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    rng = random.Random(0)
    print(f"{'players':>7} {'stage':>6} {'ms/sample':>10} {'accept':>9} {'x replay':>9}")
    for players in (5, 7, 10):
        for stage in ("early", "mid", "late", "deep"):
            times, tried, found, floors = [], 0, 0, []
            for game in range(GAMES):
                transcript, _, _, _ = play_game(players, {}, 900 + game, game % players, POLICIES["heuristic"])
                count = stage_positions(transcript)[stage]
                if count is None:
                    continue
                prefix = at_decision(transcript, count)
                ms, attempts, samples = measure(prefix, rng)
                tried += attempts
                found += samples
                if samples:
                    times.append(ms)
                    floors.append(replay_ms(prefix))
            accept = f"{found / tried:.4f}" if found else f"<{1 / ATTEMPTS:.4f}"
            ms = sum(times) / len(times) if times else float("nan")
            ratio = ms / (sum(floors) / len(floors)) if floors else float("nan")
            print(f"{players:>7} {stage:>6} {ms:>10.2f} {accept:>9} {ratio:>9.1f}")


if __name__ == "__main__":
    main()
