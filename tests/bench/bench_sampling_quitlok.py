"""Quitlok deal sampling, before and after the exact count of hidden cards: ms per sample and the
proposals' acceptance at early, mid, late and deep positions for 5, 7 and 10 players, both
samplers measured in the same run on the same positions.

    python -m tests.bench.bench_sampling_quitlok
    python -m tests.bench.bench_sampling_quitlok --count   # the count's speed against COUNT_BEFORE

"Before" is the sampler of commit BEFORE (labelled-copy proposals, everything else left to
replay's rejection), loaded from git; "after" is the current one. Early is the seat's first
decision, mid its first after the first reshuffle, late its first after the third, deep its
first after the eighth (a session holds dozens). For "after", `count` is the time to trace the
transcript and count its hidden cards (once per decision), `ms/sample` the time per accepted
sample afterwards, and `x replay` that time over one replay of the game so far (the floor of any
sample: replay checks every proposal). A position where no deal is found in ATTEMPTS proposals
prints its acceptance as below 1/ATTEMPTS.

With --count it compares the current count with the one of commit COUNT_BEFORE (before it was
memoised), loaded from git likewise, at the same stages and at the positions of
tests/test_search_quitlok.py's consistency test: CPU ms (process time, so the machine's other
load counts little) to count once and per sample after it, each position measured with both in
turn, and the ratio before/now of their sums.
"""

from __future__ import annotations

import gc
import importlib.util
import random
import subprocess
import sys
import time
from pathlib import Path

from cardarena.games.quitlok import GAME
from cardarena.search import replay
from cardarena.search.quitlok import QuitlokSampler
from tests.search_support_quitlok import POLICIES, at_decision, play_game

BEFORE = "c27d5c3"  # main before the exact count: the labelled-copy sampler
COUNT_BEFORE = "be1139f"  # main before the count was memoised (same samples for the same rng)
ATTEMPTS = 2000
SAMPLES = {"before": 5, "after": 20}
GAMES = 3


def sampler_before(commit=BEFORE):
    """The QuitlokSampler class of `commit`, imported from its source in git."""
    root = Path(__file__).resolve().parents[2]
    source = subprocess.run(["git", "show", f"{commit}:runner/search/quitlok.py"], cwd=root,
                            capture_output=True, text=True, check=True).stdout
    spec = importlib.util.spec_from_loader(f"quitlok_sampler_{commit}", loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    exec(compile(source, f"{commit}:runner/search/quitlok.py", "exec"), module.__dict__)
    return module.QuitlokSampler


def stage_positions(transcript):
    """The seat's decision counts at the early, mid, late and deep positions (None when the game has none)."""
    reshuffles = []
    seen = 0
    for count, message in enumerate(transcript.decisions, start=1):
        seen += sum(event["type"] == "reshuffle" for event in message["events"])
        reshuffles.append(seen)
    first_after = {need: next((count for count, told in enumerate(reshuffles, start=1) if told >= need), None)
                   for need in (1, 3, 8)}
    return {"early": 1, "mid": first_after[1], "late": first_after[3], "deep": first_after[8]}


def measure(sampler, transcript, rng, samples):
    """(ms to count, ms per sample, proposals tried, samples found) for up to `samples` samples."""
    start = time.perf_counter()
    if isinstance(sampler, QuitlokSampler):
        sampler.hidden_cards(transcript)
    counted = time.perf_counter()
    actions = sampler.actions(transcript)
    tried = found = 0
    for _ in range(samples):
        for _ in range(ATTEMPTS):
            tried += 1
            if replay(GAME, transcript, sampler.propose(transcript, rng), actions) is not None:
                found += 1
                break
        else:
            break
    done = time.perf_counter()
    return (counted - start) * 1000, (done - counted) * 1000 / max(found, 1), tried, found


def replay_ms(transcript):
    """One replay of the true deal's actions, as the floor: the engine's work for the game so far."""
    state = GAME.new_state(transcript.players, transcript.options, seed=int(transcript.game_start["game_id"][1:]))
    actions = QuitlokSampler().actions(transcript)
    start = time.perf_counter()
    for _, action in actions:
        state.apply(action)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    samplers = {"before": sampler_before()(), "after": QuitlokSampler()}
    print(f"{'players':>7} {'stage':>6} {'sampler':>7} {'count ms':>9} {'ms/sample':>10} {'accept':>9} {'x replay':>9}")
    for players in (5, 7, 10):
        for stage in ("early", "mid", "late", "deep"):
            prefixes = []
            for game in range(GAMES):
                transcript, _, _, _ = play_game(players, {}, 900 + game, game % players, POLICIES["heuristic"])
                count = stage_positions(transcript)[stage]
                if count is not None:
                    prefixes.append(at_decision(transcript, count))
            floors = [replay_ms(prefix) for prefix in prefixes]
            floor = sum(floors) / len(floors) if floors else float("nan")
            for name, sampler in samplers.items():
                rng = random.Random(0)
                counts, times, tried, found = [], [], 0, 0
                for prefix in prefixes:
                    count_ms, ms, attempts, samples = measure(sampler, prefix, rng, SAMPLES[name])
                    tried += attempts
                    found += samples
                    counts.append(count_ms)
                    if samples:
                        times.append(ms)
                accept = f"{found / tried:.4f}" if found else f"<{1 / ATTEMPTS:.4f}"
                ms = sum(times) / len(times) if times else float("nan")
                count_ms = sum(counts) / len(counts) if name == "after" and counts else float("nan")
                print(f"{players:>7} {stage:>6} {name:>7} {count_ms:>9.1f} {ms:>10.2f} {accept:>9} {ms / floor:>9.1f}",
                      flush=True)


def count_cpu_ms(sampler_class, transcript, samples):
    """(CPU ms to count, CPU ms per sample after it) for a fresh sampler of `sampler_class`."""
    sampler = sampler_class()
    rng = random.Random(0)
    gc.collect()  # the other sampler's garbage is not this one's time
    start = time.process_time()
    sampler.hidden_cards(transcript)
    counted = time.process_time()
    for _ in range(samples):
        sampler.propose(transcript, rng)
    return (counted - start) * 1000, (time.process_time() - counted) * 1000 / samples


def test_positions():
    """(label, prefix) at the positions of tests/test_search_quitlok.py's consistency test."""
    from tests.test_search_quitlok import consistency_positions
    return [(f"test {players}p", prefix) for players, prefix, _, _ in consistency_positions()]


def stage_prefixes():
    """(label, prefix) at the bench's stages, GAMES heuristic games per player count."""
    found = []
    for players in (5, 7, 10):
        for game in range(GAMES):
            transcript, _, _, _ = play_game(players, {}, 900 + game, game % players, POLICIES["heuristic"])
            for stage, count in stage_positions(transcript).items():
                if count is not None:
                    found.append((f"{players}p {stage}", at_decision(transcript, count)))
    return found


def compare_counts(samples=3) -> None:
    """CPU ms of the count and per sample, COUNT_BEFORE's and now, summed per label, with ratios;
    the last row leaves out the position whose samples took longest (the consistency test's
    redrawn one: its cost is a lottery on the rng, up to 20,000 redraws and a count again)."""
    before = sampler_before(COUNT_BEFORE)
    rows: list[tuple[str, list[float]]] = []
    for label, prefix in stage_prefixes() + test_positions():
        measured = [*count_cpu_ms(before, prefix, samples), *count_cpu_ms(QuitlokSampler, prefix, samples), 1]
        rows.append((label, measured))
    print(f"{'positions':>12} {'n':>4} {'count ms before':>15} {'now':>9} {'ratio':>6} "
          f"{'ms/sample before':>16} {'now':>7} {'ratio':>6}")
    slowest = max(range(len(rows)), key=lambda row: rows[row][1][1] + rows[row][1][3])
    sums: dict[str, list[float]] = {}
    for label, measured in rows + [("all", row) for _, row in rows] + [
            ("all but 1", row) for number, (_, row) in enumerate(rows) if number != slowest]:
        sums[label] = [total + value for total, value in zip(sums.get(label, [0.0] * 5), measured)]
    for label, row in sums.items():
        print(f"{label:>12} {int(row[4]):>4} {row[0]:>15.1f} {row[2]:>9.1f} {row[0] / row[2]:>6.2f} "
              f"{row[1]:>16.2f} {row[3]:>7.2f} {row[1] / row[3]:>6.2f}", flush=True)


if __name__ == "__main__":
    compare_counts() if "--count" in sys.argv[1:] else main()
