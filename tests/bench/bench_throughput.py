"""Issue 25's bench in one run: bot starts, the decision loop against its floor, and whole leagues
against another checkout, each figure beside its target.

Prints, from one run on this machine:
  (1) start to hello per bot kind (the Python random and heuristic bots, the JS and C random bots
      where built) and mode (bubblewrap, none, unconfined), the kinds and modes taking turns start
      by start, beside the floors the issue names (`python -S -c pass`, `python -c "import
      msgpack"`, each in a clean environment, and the launch chain around /bin/true);
  (2) the referee's cost per decision, two C random bots in Knock Rummy on one core, against the
      floor (a plain pipe to a C child answering each decision frame with a small action frame)
      plus the engine's own work: the average over whole games, and its least-squares split into a
      part per game and a part per decision (`bench_referee`);
  (3) games per second of the 24-bot Knock Rummy league at `--deals 1` and of the wave-2 sample
      field, this checkout against another (today's main, checked out beside it with its own
      Python), the two taking turns (`bench_league`);
then issue 25's targets, each with this run's figure and whether it was met.

Run: python -m tests.bench.bench_throughput --against ../base --against-python ../venv/bin/python
     [--starts 20] [--seconds 3] [--rounds 1] [--no-leagues]
(both checkouts' C bots built and JS bots' node_modules installed: bash sample_bots/build.sh)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cardarena.manifest import load_manifest
from cardarena.referee.sandbox import bwrap_problem
from tests.bench import bench_league, bench_referee, bench_sandbox

ROOT = Path(__file__).resolve().parents[2]
#: the bot kinds whose starts are timed: label -> sample bot folder
KINDS = {"Python random": "random", "Python heuristic": "heuristic", "JS random": "js", "C random": "c"}
ALL_CPUS = os.sched_getaffinity(0)


def built(folder: Path) -> str | None:
    """Why the sample bot in `folder` cannot start here (not built), or None when it can."""
    if folder.name == "c" and not (folder / "bot").exists():
        return "not built (bash sample_bots/build.sh)"
    if folder.name == "js" and (shutil.which("node") is None or not (folder / "node_modules").is_dir()):
        return "needs node and its node_modules (bash sample_bots/build.sh)"
    return None


def command_seconds(command: list[str], rounds: int) -> float:
    """Median seconds to run `command` to its end, in a clean environment (as a bot gets one)."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        subprocess.run(command, env={"PATH": "/usr/bin:/bin"}, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def start_floors(modes: tuple[str, ...], rounds: int) -> dict[str, float]:
    """The floors of a start, in seconds: Python's own, Python with msgpack, the launch chain."""
    floors = {"python -S -c pass": command_seconds([sys.executable, "-S", "-c", "pass"], rounds),
              "python -c 'import msgpack'": command_seconds([sys.executable, "-c", "import msgpack"], rounds),
              "/bin/true": command_seconds(["/bin/true"], rounds)}
    for mode in modes:
        if mode != "unconfined":
            floors[f"the launch chain around /bin/true, {mode}"] = bench_sandbox.chain_seconds(mode, rounds)
    return floors


def start_times(modes: tuple[str, ...], rounds: int) -> dict[tuple[str, str], float]:
    """Median seconds from spawn to hello per (bot kind, mode), the kinds and modes taking turns."""
    specs = {}
    for label, name in KINDS.items():
        problem = built(ROOT / "sample_bots" / name)
        if problem is None:
            specs[label] = load_manifest(ROOT / "sample_bots" / name).spec
        else:
            print(f"    ({label}: {problem})")
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for label, spec in specs.items():
            for mode in modes:
                times.setdefault((label, mode), []).append(bench_sandbox.start_seconds(spec, mode))
    return {key: statistics.median(values) for key, values in times.items()}


def decision_loop(seconds: float) -> dict[str, float]:
    """Seconds per decision on one core: the floor, the engine's work, and two C bots' games (on
    average, and split per game and per decision)."""
    same_core = bench_referee.PLACEMENTS["same core"]
    with tempfile.TemporaryDirectory() as directory:
        floor = bench_referee.floor_round_trip(bench_referee.build_answer_child(directory), same_core, seconds)
    engine = bench_referee.engine_cost(seconds)
    average, per_game, per_decision = bench_referee.referee_cost(bench_referee.C_BOTS, same_core, seconds)
    return {"floor": floor, "engine": engine, "average": average, "per game": per_game, "per decision": per_decision}


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", type=Path, help="the other checkout (today's main), for the leagues")
    parser.add_argument("--against-python", help="the Python with the other checkout installed")
    parser.add_argument("--starts", type=int, default=20, help="starts per bot kind and mode (default 20)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per decision-loop measurement (default 3)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of each league (default 1)")
    parser.add_argument("--no-leagues", action="store_true", help="leave the leagues out (minutes each)")
    options = parser.parse_args()
    if not options.no_leagues and (options.against is None or options.against_python is None):
        parser.error("the leagues need --against and --against-python (or --no-leagues)")
    if len(ALL_CPUS) < 2:
        sys.exit("this benchmark places the referee and its bots on CPUs of their own and needs two")
    if not (ROOT / "sample_bots" / "c" / "bot").exists():
        sys.exit("the decision loop is measured with the C bots: bash sample_bots/build.sh")
    problem = bwrap_problem()
    modes = ("bwrap", "none", "unconfined") if problem is None else ("none", "unconfined")
    if problem is not None:
        print(f"(bubblewrap cannot run here: {problem}; its starts are left out)")

    os.sched_setaffinity(0, {min(ALL_CPUS)})  # a table and its bots share one core, as each worker's do
    try:
        print(f"(1) start to hello, median of {options.starts} per bot kind and mode:")
        for name, seconds in start_floors(modes, options.starts).items():
            print(f"    floor: {name:44} {seconds * 1e3:7.1f} ms")
        starts = start_times(modes, options.starts)
        for (label, mode), seconds in starts.items():
            print(f"    {label:17} {mode:11} {seconds * 1e3:7.1f} ms")
    finally:
        os.sched_setaffinity(0, ALL_CPUS)

    loop = decision_loop(options.seconds)
    whole_floor = loop["floor"] + loop["engine"]
    print("(2) the referee's cost per decision, two C random bots, Knock Rummy, one core:")
    print(f"    floor (plain pipe, C child): {loop['floor'] * 1e6:.1f} us; the engine's work: {loop['engine'] * 1e6:.1f} us; "
          f"together {whole_floor * 1e6:.1f} us")
    print(f"    whole games: {loop['average'] * 1e6:.1f} us per decision on average = {loop['average'] / loop['floor']:.1f}x "
          f"the floor, {loop['average'] / whole_floor:.2f}x the floor plus the engine")
    print(f"    split over the games' lengths: {loop['per game'] * 1e6:.0f} us per game + {loop['per decision'] * 1e6:.1f} us "
          f"per decision ({loop['per decision'] / whole_floor:.2f}x the floor plus the engine)")

    rates = {}
    if not options.no_leagues:
        print(f"(3) games per second on 2 jobs, this checkout against {options.against}:")
        rates = bench_league.league_rates(options.against, options.against_python, options.rounds)
        for name, (ours, theirs) in rates.items():
            print(f"    {name:30} this {ours:6.1f}   main {theirs:6.1f}   ratio {ours / theirs:.2f}")

    print("issue 25's targets in this run:")
    targets = []
    if ("Python random", "bwrap") in starts:
        python = starts["Python random", "bwrap"]
        targets.append((f"Python bot start to hello under bubblewrap: {python * 1e3:.1f} ms", "at most 35 ms",
                        python <= 0.035))
    if ("C random", "bwrap") in starts:
        c_start = starts["C random", "bwrap"]
        targets.append((f"C bot start to hello under bubblewrap: {c_start * 1e3:.1f} ms", "at most 6 ms", c_start <= 0.006))
    targets.append((f"referee cost per decision, C bots: {loop['average'] * 1e6:.1f} us, "
                    f"{loop['average'] / whole_floor:.2f}x the floor plus the engine",
                    "at most 2x and 60 us", loop["average"] <= 2 * whole_floor and loop["average"] <= 60e-6))
    for name, target in ((bench_league.LEAGUE_24, 1.6), (bench_league.SAMPLE_FIELD, 1.35)):
        if name in rates:
            ours, theirs = rates[name]
            targets.append((f"{name}: {ours / theirs:.2f}x main's games per second", f"at least {target}x",
                            ours / theirs >= target))
    for figure, target, met in targets:
        print(f"    {figure:75} target {target:22} {verdict(met)}")


if __name__ == "__main__":
    main()
