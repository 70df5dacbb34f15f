"""Engine speed, now against a baseline commit's engines measured in the same run (issue 21, item 5).

For every game, three figures, each for the baseline's engines and this tree's, with their ratio:
  - decisions per second of seeded random legal playouts in-process (new game, random legal
    actions until it ends, again), as a search's rollouts drive them;
  - the time of one `clone()`, over states taken from the middle of seeded games;
  - the sampling primitive: `new_state(players, options, deck=...)`, then replaying a recorded
    game's actions up to one of seat 0's decisions, comparing legal lists, views and events as
    `cardarena.search.knowledge.replay` does (the very function, given each engine in turn).
Then Knock Rummy's playout rate beside OpenSpiel's gin_rummy (when pyspiel is installed).

The baseline is the tree at a git revision (default: the commit that added
tests/test_engine_golden.py, made before the engines were rewritten for speed), laid out in a
temporary folder and imported as `cardarena_baseline`. Measurements alternate between the two
engines in short rounds and report the median, and time is the process's CPU time, so that other
work on a shared machine disturbs both alike and as little as it can.
Run: python -m tests.bench.bench_engines [seconds-per-round] [--rounds N] [--baseline REV] [--games NAME...]
"""

from __future__ import annotations

import argparse
import importlib
import io
import random
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from cardarena.search.knowledge import Proposal, Transcript, replay
from tests.bench.engine_rate import openspiel_gin_rummy_rate, playout_rate

ROOT = Path(__file__).resolve().parents[2]
#: the file whose first commit records the engines as they were before the speed work
GOLDEN_TEST = "tests/test_engine_golden.py"
#: game, players, options of the measured games
CASES = [("knock-rummy", 2, {}), ("casino", 2, {}), ("cuajo", 4, {}), ("quitlok", 5, {})]
CLONE_STATES = 200
SAMPLED_GAMES = 40
#: seeds apart of two rounds' games: more than a round plays, so no round replays another's games
NEW_SEEDS = 10_000_000


class Engines:
    """One tree's game registry and random-action helper, under its own import name."""

    def __init__(self, label: str, package: str):
        self.label = label
        self.games = importlib.import_module(f"{package}.games")
        self.random_action = importlib.import_module(f"{package}.protocol.actions").random_action

    def game(self, name: str) -> Any:
        return self.games.get_game(name)


def speed_work_baseline() -> str:
    """The commit that added the golden digest test: the engines as they were before the speed work."""
    return subprocess.run(["git", "-C", str(ROOT), "log", "--diff-filter=A", "--format=%h", "--", GOLDEN_TEST],
                          check=True, capture_output=True, text=True).stdout.split()[-1]


def load_baseline(revision: str, folder: Path) -> str:
    """Lay out `revision`'s runner/ and protocol/ as the package `cardarena_baseline` in `folder`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "runner", "protocol"],
                             check=True, capture_output=True).stdout
    package = folder / "cardarena_baseline"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.endswith(".py"):
                continue
            top, _, rest = member.name.partition("/")
            target = package / rest if top == "runner" else package / "protocol" / rest
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member).read().decode()
            target.write_text(re.sub(r"\bcardarena\b(?=[. ])", "cardarena_baseline", source))
    sys.path.insert(0, str(folder))
    return "cardarena_baseline"


def playouts(engines: Engines, name: str, players: int, options: dict, seconds: float, first_seed: int) -> float:
    """Decisions per CPU second of seeded random legal playouts of one game with one tree's engines."""
    return playout_rate(engines.game(name), players, options, seconds, engines.random_action, first_seed)


def middle_states(engines: Engines, name: str, players: int, options: dict) -> list[Any]:
    """States from the middle of seeded random games, one per game."""
    game, random_action = engines.game(name), engines.random_action
    states = []
    for seed in range(CLONE_STATES):
        lengths = []
        for stop in (None, "middle"):  # once to count the decisions, once to stop halfway
            rng = random.Random(seed)
            state = game.new_state(players, options, seed)
            decisions = 0
            while not state.is_over() and (stop is None or decisions < lengths[0] // 2):
                state.apply(random_action(state.legal_actions(), rng))
                decisions += 1
            lengths.append(decisions)
        states.append(state)
    return states


def clone_seconds(states: list[Any], seconds: float) -> float:
    """Mean CPU seconds of one clone() over `states`."""
    clones = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        for state in states:
            state.clone()
        clones += len(states)
    return (time.process_time() - start) / clones


Recorded = tuple[Transcript, Proposal, list]


def recorded_games(engines: Engines, name: str, players: int, options: dict, first_seed: int) -> list[Recorded]:
    """Seeded games dealt from a given deck, recorded as seat 0's transcript up to one of its
    decisions in the middle of the game, with the deck and every action played before it."""
    game, random_action = engines.game(name), engines.random_action
    recorded = []
    for seed in range(first_seed, first_seed + SAMPLED_GAMES):
        rng = random.Random(seed)
        deck = game.deck(players, options)
        rng.shuffle(deck)
        state = game.new_state(players, options, deck=deck)
        transcript = Transcript(game_start={"seat": 0, "players": players, "options": options, "game": name})
        actions, pending, cuts = [], [], []
        while not state.is_over():
            seat, legal = state.to_move(), state.legal_actions()
            action = random_action(legal, rng)
            if seat == 0:
                transcript.decisions.append({"events": pending, "view": state.view(0), "legal": legal})
                cuts.append(len(actions))
                pending = []
            actions.append((seat, action))
            pending = pending + state.apply(action)
        if not cuts:
            continue
        middle = len(cuts) // 2
        transcript.decisions = transcript.decisions[:middle + 1]
        transcript.answers = [actions[cut][1] for cut in cuts[:middle]]
        recorded.append((transcript, Proposal(deck), actions[:cuts[middle]]))
    return recorded


def sampling_seconds(engines: Engines, name: str, recorded: list[Recorded], seconds: float) -> float:
    """Mean CPU seconds of one replay of a recorded game from its deal (it must be consistent)."""
    game = engines.game(name)
    replays = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        for transcript, proposal, actions in recorded:
            if replay(game, transcript, proposal, actions) is None:
                raise AssertionError(f"{engines.label} {name}: a recorded game did not replay consistently")
        replays += len(recorded)
    return (time.process_time() - start) / replays


def alternating(rounds: int, measure: Callable[[Engines, int], float], engines: list[Engines]) -> list[float]:
    """The median of `rounds` measurements of each engine, taken in turn; `measure` is given the
    round's number, so that each round can deal new games (memos warm only as in real play)."""
    samples: list[list[float]] = [[] for _ in engines]
    for number in range(rounds):
        for index, tree in enumerate(engines):
            samples[index].append(measure(tree, number))
    return [statistics.median(values) for values in samples]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seconds", nargs="?", type=float, default=0.5, help="seconds per measurement round")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds per figure (median kept)")
    parser.add_argument("--baseline", help="git revision of the baseline engines (default: see above)")
    parser.add_argument("--games", nargs="+", default=[name for name, _, _ in CASES], help="games to measure")
    args = parser.parse_args()
    args.baseline = args.baseline or speed_work_baseline()
    with tempfile.TemporaryDirectory() as folder:
        old = Engines(f"baseline {args.baseline}", load_baseline(args.baseline, Path(folder)))
        new = Engines("this tree", "cardarena")
        trees = [old, new]
        print(f"baseline {args.baseline} vs this tree; medians of {args.rounds} alternating rounds of "
              f"{args.seconds:g} s")
        print(f"{'game':12} {'figure':24} {'baseline':>14} {'now':>14} {'speed-up':>9}")
        for name, players, options in CASES:
            if name not in args.games:
                continue
            figures = {
                "playouts (decisions/s)": alternating(args.rounds, lambda tree, number: playouts(
                    tree, name, players, options, args.seconds, NEW_SEEDS * number), trees),
            }
            states = {tree.label: middle_states(tree, name, players, options) for tree in trees}
            figures["clone (µs)"] = [1e6 * seconds for seconds in alternating(
                args.rounds, lambda tree, _: clone_seconds(states[tree.label], args.seconds), trees)]
            recorded = [recorded_games(new, name, players, options, NEW_SEEDS * number) for number in range(args.rounds)]
            figures["sampling replay (µs)"] = [1e6 * seconds for seconds in alternating(args.rounds, lambda tree, number: (
                sampling_seconds(tree, name, recorded[number], args.seconds)), trees)]
            for figure, (before, after) in figures.items():
                speed_up = after / before if "/s" in figure else before / after
                print(f"{name:12} {figure:24} {before:14,.1f} {after:14,.1f} {speed_up:8.2f}x")
        print("Knock Rummy beside OpenSpiel's gin_rummy, random legal playouts in-process:")
        if openspiel_gin_rummy_rate(0.01) is None:
            print("    open_spiel is not installed (pip install -e '.[bench]')")
            return
        rates: dict[str, list[float]] = {"gin_rummy": [], old.label: [], new.label: []}
        for number in range(args.rounds):
            rates["gin_rummy"].append(openspiel_gin_rummy_rate(args.seconds))
            for tree in trees:
                rates[tree.label].append(playouts(tree, "knock-rummy", 2, {}, args.seconds, NEW_SEEDS * number))
        theirs = statistics.median(rates["gin_rummy"])
        print(f"    {'open_spiel gin_rummy:':32} {theirs:10,.0f} decisions/s")
        for tree in trees:
            ours = statistics.median(rates[tree.label])
            label = f"knock-rummy, {tree.label}:"
            print(f"    {label:32} {ours:10,.0f} decisions/s   ratio {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
