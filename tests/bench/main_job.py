"""The main job: `cardarena run` with no arguments, timed, with each game's score per bot.

Each round plays the sample league (sample_bots/league.toml) as the README's set-up command does,
with the default jobs, in an empty folder, and prints its wall and CPU time (the CPU time of
cardarena and every bot it started: on a machine other work loads, the wall time swells but the
CPU time much less), then each game's score % per bot, the leaderboard's column. A bot at 100% or
0% of a game's score means that game does not separate the bots: the script says so and exits 1,
as it does when any game had a fault. With --against, another league file (say the previous
sample league, from `git show REV:sample_bots/league.toml`, saved beside this one so its bot paths
resolve) is played in alternate rounds, and the medians of the two are compared as ratios.

Run: python -m tests.bench.main_job [--rounds 3] [--deal-seed 1] [--against OLD_LEAGUE.toml] [--deals N]
(--deal-seed deals every round alike, for comparisons; without it each round deals from a secret,
as the main job does).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CARDARENA = [sys.executable, "-m", "cardarena.cli"]


def children_cpu() -> float:
    """CPU seconds (user and system) of every child process waited for so far, and of theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def play(league: Path | None, extra: list[str], folder: Path) -> tuple[float, float, Path]:
    """Wall and CPU seconds of one `cardarena run` (of `league`, else the main job; `extra` options
    over it) in `folder`, and its results file."""
    out = folder / "results" / "bench.sqlite"
    out.unlink(missing_ok=True)
    args = [*([str(league)] if league else []), *extra]
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run([*CARDARENA, "run", *args, "--out", str(out)], cwd=folder, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"cardarena run failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return wall, children_cpu() - cpu, out


def scores(out: Path) -> list[tuple[str, int, dict[str, float]]]:
    """Each leaderboard of `out` (the games', then the overall one): its title, games and score % per bot."""
    done = subprocess.run([*CARDARENA, "leaderboard", str(out), "--format", "json", "--bootstrap", "0"],
                          capture_output=True, text=True, check=True)
    return [(board["title"], board["games"], {row["bot"]: row["score_percent"] for row in board["rows"]})
            for board in json.loads(done.stdout)]


def faulted_games(out: Path) -> int:
    """Games of `out` in which some bot faulted."""
    with sqlite3.connect(out) as results:
        return results.execute("SELECT COUNT(NULLIF(faults, '[]')) FROM games").fetchone()[0]


def report(out: Path) -> list[str]:
    """Print each game's score % per bot; the problems found: a game that does not separate the bots
    (a bot at 100% or 0%), games with a fault."""
    problems = []
    for title, games, board in scores(out):
        print(f"    {title:24} {games:5} games  " + "  ".join(f"{bot} {score:5.1f}%" for bot, score in board.items()))
        problems += [f"{title}: {bot} scored {score:g}%" for bot, score in board.items() if score in (0, 100)]
    faulted = faulted_games(out)
    print(f"    games with a fault: {faulted}")
    return problems + [f"{faulted} game(s) with a fault"] * (faulted > 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=1, help="runs of each league (default 1)")
    parser.add_argument("--deal-seed", type=int, help="deal every run from this seed (default: a secret each)")
    parser.add_argument("--against", type=Path, help="another league file, played in alternate rounds")
    parser.add_argument("--deals", type=int, help="deals per table instead of the leagues' (a quick try)")
    options = parser.parse_args()
    extra = [*(["--deal-seed", str(options.deal_seed)] if options.deal_seed is not None else []),
             *(["--deals", str(options.deals)] if options.deals else [])]
    leagues: dict[str, Path | None] = {"main job": None}
    if options.against:
        leagues["against"] = options.against.resolve()
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in leagues}
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        Path(folder).chmod(0o755)  # as root a bot runs as a uid of its own
        for round_number in range(options.rounds):
            order = list(leagues.items()) if round_number % 2 == 0 else list(reversed(leagues.items()))
            for name, league in order:
                wall, cpu, out = play(league, extra, Path(folder))
                times[name].append((wall, cpu))
                print(f"round {round_number + 1}, {name}: {wall:.1f} s wall, {cpu:.1f} s CPU, "
                      f"load average {os.getloadavg()[0]:.1f}", flush=True)
                problems += [f"{name}: {problem}" for problem in report(out)] if league is None else []
    for name, measured in times.items():
        print(f"{name}: median {statistics.median(w for w, _ in measured):.1f} s wall, "
              f"{statistics.median(c for _, c in measured):.1f} s CPU over {len(measured)} run(s)")
    if options.against:
        (wall, cpu), (old_wall, old_cpu) = ((statistics.median(w for w, _ in times[n]),
                                             statistics.median(c for _, c in times[n])) for n in leagues)
        print(f"main job / against: wall {wall / old_wall:.2f}, CPU {cpu / old_cpu:.2f}")
    if problems:
        sys.exit("\n".join(problems))


if __name__ == "__main__":
    main()
