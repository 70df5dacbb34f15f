"""Time and size of `cardarena report` for a 10,000-game tournament, against `leaderboard` on
the same file, in the same run.

The results file is made fast: the engines play random legal actions (no bot processes), five
bots at four-seat Knock Rummy tables (a random player knocks within a few turns: small games),
and one game in fifty records a fault. Run: python -m tests.bench.bench_report [GAMES]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from cardarena.cli import main
from cardarena.html.report import replay_folder
from tests.random_results import write_random_results

BOTS = ["alpha", "beta", "gamma", "delta", "epsilon"]


def timed(args: list[str]) -> float:
    """Seconds one `cardarena` command takes (it must succeed)."""
    started = time.perf_counter()
    result = CliRunner().invoke(main, args)
    elapsed = time.perf_counter() - started
    if result.exit_code != 0:
        raise SystemExit(f"cardarena {' '.join(args)} failed: {result.output}")
    return elapsed


def folder_size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.iterdir())


def main_bench(games: int) -> None:
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        results = folder / "bench.sqlite"
        started = time.perf_counter()
        write_random_results(results, BOTS, {"knock-rummy": games}, {"knock-rummy": 4}, fault_every=50)
        print(f"{games} random games written in {time.perf_counter() - started:.1f} s")
        leaderboard = timed(["leaderboard", str(results)])
        plain = timed(["report", str(results), "-o", str(folder / "plain.html"), "--no-replays"])
        full = timed(["report", str(results), "-o", str(folder / "report.html")])
        page = (folder / "report.html").stat().st_size
        replays = folder_size(replay_folder(folder / "report.html"))
        print(f"leaderboard               {leaderboard:7.2f} s   (baseline)")
        print(f"report --no-replays       {plain:7.2f} s   {plain / leaderboard:5.1f} x leaderboard")
        print(f"report (with replays)     {full:7.2f} s   {full / leaderboard:5.1f} x leaderboard, "
              f"{(full - plain) / games * 1000:.1f} ms per replay")
        print(f"report page               {page / 1e6:7.2f} MB  ({page / games:.0f} bytes per game; target 5 MB)")
        print(f"replay folder             {replays / 1e6:7.2f} MB  ({replays / games / 1e3:.1f} kB per game)")


if __name__ == "__main__":
    main_bench(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
