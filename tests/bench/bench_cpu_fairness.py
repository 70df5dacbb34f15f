"""CPU fairness benchmark: how much an opponent that spins outside its turn slows an honest bot.

Two bots pinned to one core (as `play` and each tournament worker pin a table): `fixed_work.py`
(the same computation at every decision, 2,500,000 loop iterations: some 100 ms of an idle core,
300 ms on the loaded development machine; timing itself) against a quiet
opponent (the zoo's `patient.py`), against `spinning_child.py` (forks one `while True: pass`
child, issue 20 item 4) and against `cpu_hog.py --mode sessions` (8 processes in sessions of their
own), each hog with the other bots of a table frozen while one decides (the freezer cgroup) and
without (each bot still in its own cpu cgroup, as before the freezer). The configurations take
turns game by game, all in one run, under the default decision limit of 1 s. Prints the honest
bot's median and worst decision time per configuration, its timeout faults, and the ratios to
the quiet opponent (target: within 1.1x with the freezer, and no timeout); then what freezing
costs per decision between two C bots (CPU time of the whole table), with and without it.
Run: python -m tests.bench.bench_cpu_fairness [games] [iterations]
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from cardarena.games import get_game
from cardarena.manifest import load_manifest
from cardarena.referee import cgroups, sandbox
from cardarena.referee.match import Match, log_file_name
from cardarena.config import BotSpec, Limits
from tests.conftest import zoo_bot

GAME = get_game("knock-rummy")
LIMITS = Limits()  # the default decision limit: a timeout is the fault the freezer must prevent
QUIET = zoo_bot("patient.py", after=10**9)
SPINNER = zoo_bot("spinning_child.py", after=0)
HOG = replace(zoo_bot("cpu_hog.py", after=0), command=(*zoo_bot("cpu_hog.py", after=0).command, "--mode", "sessions"))
#: configuration name: (opponent, whether bots get freezer cgroups)
CONFIGURATIONS = {
    "quiet opponent": (QUIET, True),
    "spinning child, no freezer": (SPINNER, False),
    "spinning child, freezer": (SPINNER, True),
    "8-session hog, no freezer": (HOG, False),
    "8-session hog, freezer": (HOG, True),
}


def honest_bot(iterations: int) -> BotSpec:
    folder = str(Path(__file__).parent)
    return BotSpec(name="honest", command=(sys.executable, "fixed_work.py", "--iterations", str(iterations)),
                   folder=folder, cwd=folder)


@contextmanager
def freezer(enabled: bool):
    """Bots started inside get a freezer cgroup only when `enabled` (the other controllers stay)."""
    every = cgroups.bot_cgroup_parents
    if not enabled:
        cgroups.bot_cgroup_parents = lambda confined: {name: path for name, path in every(confined).items()
                                                       if name != "freezer"}
    try:
        yield
    finally:
        cgroups.bot_cgroup_parents = every


def honest_times(log: Path, skip: int) -> list[float]:
    """The honest bot's decision times in its stderr log, after the first `skip`."""
    times = [float(line.split()[1]) for line in log.read_text().splitlines() if line.startswith("decision ")]
    return times[skip:]


def turn_cost(games: int, rounds: int = 5) -> dict[bool, float]:
    """The CPU time per decision of a table of two C random bots (referee, bots and their launch
    chains together: the wake-ups that freezing and thawing cause land in the bots' processes),
    with and without the freezer, over `rounds` matches of `games` Knock Rummy games each, taking
    turns match by match. CPU time, unlike wall time, does not depend on the machine's other load."""
    c_bot = load_manifest(Path(__file__).parents[2] / "sample_bots" / "c").spec
    cpu: dict[bool, float] = {True: 0.0, False: 0.0}
    decisions: dict[bool, int] = {True: 0, False: 0}
    for _ in range(rounds):
        for enabled in (True, False):
            before = cpu_seconds()
            with freezer(enabled), Match([c_bot, c_bot], LIMITS) as match:
                decisions[enabled] += sum(len(match.play(GAME, seed=seed).actions) for seed in range(games))
            cpu[enabled] += cpu_seconds() - before  # the bots are reaped at the match's close
    return {enabled: cpu[enabled] / decisions[enabled] for enabled in cpu}


def cpu_seconds() -> float:
    """CPU time of this process and of every descendant it has reaped (directly or not), in seconds."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 2_500_000
    if not cgroups.freezes_bots(confined=True):
        sys.exit(f"{sandbox.turn_isolation(confined=True)}: nothing to compare")
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # as `play` and each worker do
    honest = honest_bot(iterations)
    times: dict[str, list[float]] = {name: [] for name in CONFIGURATIONS}
    timeouts = dict.fromkeys(CONFIGURATIONS, 0)
    with tempfile.TemporaryDirectory() as scratch:
        for seed in range(games):
            for name, (opponent, enabled) in CONFIGURATIONS.items():
                log_dir = Path(scratch) / f"{name}-{seed}"
                log_dir.mkdir()
                with freezer(enabled), Match([honest, opponent], LIMITS, log_dir=log_dir) as match:
                    record = match.play(GAME, seed=seed)
                timeouts[name] += sum(1 for fault in record.faults if fault.bot == "honest" and fault.kind == "timeout")
                # the hog starts spinning at its first decision: skip the honest bot's first two
                times[name] += honest_times(log_dir / log_file_name("honest"), skip=2)
    if not all(times.values()):
        sys.exit(f"no decision of the honest bot timed in {[name for name, values in times.items() if not values]}: "
                 "fewer iterations?")
    medians = {name: statistics.median(values) for name, values in times.items()}
    quiet = medians["quiet opponent"]
    print(f"honest bot's decision time, one core, {games} Knock Rummy game(s) per configuration, "
          f"{iterations:,} iterations per decision, limit {LIMITS.decision_timeout:g} s:")
    for name, median in medians.items():
        print(f"  {name:28} median {median * 1e3:7.1f} ms ({median / quiet:4.2f}x quiet), worst "
              f"{max(times[name]) * 1e3:7.1f} ms, {timeouts[name]} timeout(s), {len(times[name])} decisions")
    cost = turn_cost(games * 20)
    print(f"CPU per decision of a table of two C bots (referee and bots), {games * 100} games each: with the "
          f"freezer {cost[True] * 1e6:.0f} us, without {cost[False] * 1e6:.0f} us (ratio {cost[True] / cost[False]:.3f})")


if __name__ == "__main__":
    main()
