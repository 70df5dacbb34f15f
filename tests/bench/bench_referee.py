"""Referee benchmark: what one decision costs, against the bare pipe round trip, in one run.

Prints, from the same run, every figure also as a ratio to the floor (1):
  (1) the physical floor: the same decision frames over a plain pipe to a C child that answers
      each with a small action frame (no sandbox, no encoding or decoding in the timing);
  (2) the referee's whole cost per decision in Knock Rummy games between two random bots;
  (3) the Knock Rummy engine alone, in decisions per second, beside OpenSpiel's gin_rummy;
each for two CPU placements: everything on one core, and the referee and its children on
different cores. Run: python tests/bench/bench_referee.py [seconds-per-measurement]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cardarena.games import get_game
from cardarena.referee.match import Match
from cardarena.config import BotSpec, Limits
from cardarena.protocol.framing import encode
from tests.bench.engine_rate import knock_rummy_rate, openspiel_gin_rummy_rate

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
GAME = get_game("knock-rummy")
ALL_CPUS = os.sched_getaffinity(0)
PLACEMENTS = {"same core": ({0}, {0}), "different cores": ({0}, {1})}  # (referee, children)


def decision_messages(count: int = 200) -> list[dict]:
    """Decision requests exactly as the referee builds them, from seeded random playouts."""
    import random
    from cardarena.protocol.actions import random_action

    rng, messages, seed = random.Random(0), [], 0
    while len(messages) < count:
        state = GAME.new_state(2, {}, seed)
        while not state.is_over() and len(messages) < count:
            seat = state.to_move()
            legal = state.legal_actions()
            messages.append({"type": "decision", "game_id": f"g{seed}", "decision": len(messages),
                             "seat": seat, "view": state.view(seat), "events": [], "legal": legal,
                             "time_ms": 1000})
            state.apply(random_action(legal, rng))
        seed += 1
    return messages


def floor_round_trip(command: list[str], placement: tuple[set, set], seconds: float) -> float:
    """Median seconds for one decision frame to reach the answering child over a plain pipe and its
    small action frame to come back: the physical floor (no sandbox, no encoding, no decoding)."""
    referee_cpus, child_cpus = placement
    os.sched_setaffinity(0, child_cpus)
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    os.sched_setaffinity(0, referee_cpus)
    frames = [encode(message) for message in decision_messages()]
    write, read = child.stdin.fileno(), child.stdout.fileno()
    times = []
    try:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            for frame in frames:
                start = time.perf_counter()
                os.write(write, frame)
                got = 0
                while got < len(ANSWER):
                    got += len(os.read(read, len(ANSWER) - got))
                times.append(time.perf_counter() - start)
    finally:
        child.kill()
        child.wait()
        os.sched_setaffinity(0, ALL_CPUS)
    return statistics.median(times)


#: what a bot answers a decision with, as the floor's child sends it
ANSWER = encode({"type": "action", "game_id": "g0", "decision": 0, "action": {"kind": "draw", "from": "stock"}})
PYTHON_BOTS = [BotSpec("a", (sys.executable, str(ROOT / "sample_bots/random/bot.py"), "--seed", "1")),
               BotSpec("b", (sys.executable, str(ROOT / "sample_bots/random/bot.py"), "--seed", "2"))]
C_BOT = ROOT / "sample_bots" / "c" / "bot"
C_BOTS = [BotSpec("a", (str(C_BOT), "--seed", "1")), BotSpec("b", (str(C_BOT), "--seed", "2"))]


def referee_cost(bots: list[BotSpec], placement: tuple[set, set] | None, seconds: float) -> tuple[float, float, float]:
    """Seconds of wall time per decision of whole Knock Rummy games between two random bots; and
    those games' seconds split, by least squares over their lengths, into a part per game and a
    part per decision (random bots end a game in about 4 decisions, so the part per game, its deal,
    game_start, result, reveal and game_end, weighs on the first figure)."""
    if placement is not None:
        os.sched_setaffinity(0, placement[1])
    decisions = elapsed = 0.0
    games: list[tuple[int, float]] = []
    try:
        with Match(bots, Limits(decision_timeout=5.0)) as match:
            match.play(GAME, seed=0)  # starts the processes (their affinity is inherited)
            if placement is not None:
                os.sched_setaffinity(0, placement[0])
            seed = 1
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                start = time.perf_counter()
                record = match.play(GAME, seed=seed)
                took = time.perf_counter() - start
                elapsed += took
                decisions += len(record.actions)
                games.append((len(record.actions), took))
                assert not record.faults, record.faults
                seed += 1
    finally:
        os.sched_setaffinity(0, ALL_CPUS)
    return (elapsed / decisions, *per_game_and_decision(games))


def per_game_and_decision(games: list[tuple[int, float]]) -> tuple[float, float]:
    """The least-squares line through (decisions, seconds) of each game: (seconds per game, per decision)."""
    lengths, times = [length for length, _ in games], [took for _, took in games]
    slope = statistics.covariance(lengths, times) / statistics.variance(lengths)
    return statistics.fmean(times) - slope * statistics.fmean(lengths), slope


def engine_cost(seconds: float) -> float:
    """Seconds per decision of the engine work the referee does in-process: view, legal actions, apply."""
    import random
    from cardarena.protocol.actions import random_action

    rng, decisions, seed = random.Random(0), 0, 0
    end = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < end:
        state = GAME.new_state(2, {}, seed)
        while not state.is_over():
            state.view(state.to_move())
            state.apply(random_action(state.legal_actions(), rng))
            decisions += 1
        state.result()
        state.reveal()
        seed += 1
    return (time.perf_counter() - start) / decisions


def build_answer_child(directory: str) -> list[str]:
    """Compile the floor's C child (answer.c) and its command line."""
    if shutil.which("gcc") is None:
        sys.exit("this benchmark measures its floor with a C child and needs gcc")
    binary = os.path.join(directory, "answer")
    subprocess.run(["gcc", "-O2", "-o", binary, str(HERE / "answer.c")], check=True)
    return [binary, ANSWER.hex()]


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    if len(ALL_CPUS) < 2:
        sys.exit("this benchmark compares CPU placements and needs two CPUs")
    with tempfile.TemporaryDirectory() as directory:
        child = build_answer_child(directory)
        print(f"(1) the floor: a {len(ANSWER)}-byte action frame answering each decision frame "
              "over a plain pipe, C child, no sandbox (median):")
        floor = {}
        for placement, cpus in PLACEMENTS.items():
            floor[placement] = floor_round_trip(child, cpus, seconds)
            print(f"    {placement:16} {floor[placement] * 1e6:8.1f} µs")
    engine = engine_cost(seconds)
    print(f"(2) the engine's share of a decision (view, legal actions, apply; in-process): {engine * 1e6:.1f} µs "
          f"= {engine / floor['same core']:.2f}x the floor")
    bot_kinds = {"python": PYTHON_BOTS}
    if C_BOT.exists():
        bot_kinds["C"] = C_BOTS
    else:
        print("    (C bots not built: bash sample_bots/build.sh to compare them too)")
    for kind, bots in bot_kinds.items():
        print(f"(2) referee's whole cost per decision, Knock Rummy, two random {kind} bots, default sandbox:")
        cost, split = {}, {}
        for placement, cpus in [*PLACEMENTS.items(), ("unpinned", None)]:
            cost[placement], *split[placement] = referee_cost(bots, cpus, seconds)
            versus = floor.get(placement, floor["same core"])
            print(f"    {placement:16} {cost[placement] * 1e6:8.1f} µs/decision   = {cost[placement] / versus:.2f}x the "
                  f"floor{'' if placement in floor else ' (same core)'}")
        print(f"    same core vs different cores: {cost['different cores'] / cost['same core']:.2f}x faster on one core")
        whole_floor = floor["same core"] + engine
        print(f"    same core against the floor plus the engine's work ({whole_floor * 1e6:.1f} µs): "
              f"{cost['same core'] / whole_floor:.2f}x (issue 25's target: at most 2x)")
        per_game, per_decision = split["same core"]
        print(f"    same core, split over the games' lengths: {per_game * 1e6:.0f} µs per game + {per_decision * 1e6:.1f} µs "
              f"per decision = {per_decision / whole_floor:.2f}x the floor plus the engine's work")
        beyond = cost["same core"] - engine - floor["same core"]
        print(f"    same core, less the engine's work and the floor: {beyond * 1e6:.1f} µs "
              f"= {beyond / floor['same core']:.2f}x the floor (framing, validation, freezer, the bot's own work)")
    print("(3) engine alone, random legal playouts in-process:")
    ours = knock_rummy_rate(seconds)
    print(f"    knock-rummy           {ours:12,.0f} decisions/s")
    theirs = openspiel_gin_rummy_rate(seconds)
    if theirs is None:
        print("    open_spiel gin_rummy: not installed (pip install -e '.[bench]')")
    else:
        print(f"    open_spiel gin_rummy  {theirs:12,.0f} decisions/s   ratio {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
