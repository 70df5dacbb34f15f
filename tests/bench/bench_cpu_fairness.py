"""CPU fairness benchmark: how much a bot spinning 8 threads slows an honest opponent on one core.

Two bots pinned to one core (as `play` and each tournament worker pin a table): the zoo's
`cpu_hog.py` (answers legally while 8 threads burn CPU) against `fixed_work.py` (the same
computation at every decision, timing itself). Prints the honest bot's median decision time
against a quiet opponent (`patient.py`), then against the hog with and without per-bot cgroups
of the cpu controller, the configurations taking turns game by game, and the ratios, all from
the same run. The kernel's autogroup (where enabled) already groups each bot's session, so the
threads hog is tamed either way; the sessions hog starts sessions of its own and is not. Run: python -m tests.bench.bench_cpu_fairness [games]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from cardarena.games import get_game
from cardarena.referee import sandbox
from cardarena.referee.match import Match, log_file_name
from cardarena.referee.process import BotSpec, Limits
from tests.conftest import zoo_bot

GAME = get_game("knock-rummy")
HONEST = BotSpec(name="honest", command=(sys.executable, str(Path(__file__).with_name("fixed_work.py"))),
                 folder=str(Path(__file__).parent), cwd=str(Path(__file__).parent))
LIMITS = Limits(decision_timeout=60.0)
#: configuration name: (opponent, whether bots get cpu cgroups)
CONFIGURATIONS = {"quiet opponent": (zoo_bot("patient.py", after=10**9), True)}
for mode in ("threads", "sessions"):
    hog = zoo_bot("cpu_hog.py", after=0)
    hog = replace(hog, command=(*hog.command, "--mode", mode))
    CONFIGURATIONS[f"{mode} hog, no cpu cgroups"] = (hog, False)
    CONFIGURATIONS[f"{mode} hog, cpu cgroups"] = (hog, True)


@contextmanager
def cpu_cgroups(enabled: bool):
    """Bots started inside get their own cpu cgroup only when `enabled` (the other controllers stay)."""
    every = sandbox._cgroup_parents
    if not enabled:
        sandbox._cgroup_parents = lambda: {name: path for name, path in every().items() if name != "cpu"}
    try:
        yield
    finally:
        sandbox._cgroup_parents = every


def honest_times(log: Path, skip: int) -> list[float]:
    """The honest bot's decision times in its stderr log, after the first `skip`."""
    times = [float(line.split()[1]) for line in log.read_text().splitlines() if line.startswith("decision ")]
    return times[skip:]


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if "cpu" not in sandbox._cgroup_parents():
        sys.exit("no cpu cgroup can be made here (cgroup v1 cpu controller, writable): nothing to compare")
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # as `play` and each worker do
    times: dict[str, list[float]] = {name: [] for name in CONFIGURATIONS}
    with tempfile.TemporaryDirectory() as scratch:
        for seed in range(games):
            for name, (opponent, enabled) in CONFIGURATIONS.items():
                log_dir = Path(scratch) / f"{name}-{seed}"
                log_dir.mkdir()
                with cpu_cgroups(enabled):
                    match = Match([HONEST, opponent], LIMITS, log_dir=log_dir)
                    try:
                        match.play(GAME, seed=seed)
                    finally:
                        match.close()
                # the hog starts spinning at its first decision: skip the honest bot's first two
                times[name] += honest_times(log_dir / log_file_name("honest"), skip=2)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"honest bot's median decision time, one core, {games} Knock Rummy game(s) per configuration:")
    for name, median in medians.items():
        print(f"  {name:30} {median * 1e3:8.1f} ms  ({len(times[name])} decisions)")
    quiet = medians["quiet opponent"]
    for mode in ("threads", "sessions"):
        without, with_ = medians[f"{mode} hog, no cpu cgroups"], medians[f"{mode} hog, cpu cgroups"]
        print(f"{mode} hog slows the honest bot {without / quiet:.1f}x without cpu cgroups, {with_ / quiet:.1f}x "
              f"with them: cpu cgroups make its decisions {without / with_:.1f}x faster")


if __name__ == "__main__":
    main()
