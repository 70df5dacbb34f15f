"""League-scale benchmark: games per second of whole `cardarena run`s, this checkout against another
(today's main, checked out beside it with its own Python), in the same run, turns interleaved.

Two leagues, each on 2 jobs (issue 25 item 3):
  * 24 bots, Knock Rummy only, `--deals 1`: six copies each of the Python random and heuristic
    bots, the JS random bot and the C random bot, each in a folder of its own (a balanced sample
    of `--max-tables` tables, four seat rotations each: most of its time is bot starts);
  * the wave-2 sample field, pinned (the main job's field has since changed): random, heuristic,
    the JS and C random bots of each checkout, at the wave-2 sample league's tables (Casino 2,
    Knock Rummy 4, Cuajo 4 partnering copies, Quitlok 5; 1,536 games at 32 deals).
A run's time is the whole command's (its start, the games, the ratings it prints), the same for
both checkouts. Not part of the test suite: it takes minutes.

Run: python -m tests.bench.bench_league --against /work/wt/base --against-python /work/venvs/base/bin/python
     [--rounds 1] [--max-tables 200] [--sample-deals 32]
(the other checkout's C bot built and its JS bot's node_modules installed: bash sample_bots/build.sh)
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the bots a 24-bot league is made of: six copies of each, told apart by their seeds
KINDS = ("random", "heuristic", "js", "c")
COPIES = 6
LEAGUE_24 = "24-bot knock-rummy --deals 1"
SAMPLE_FIELD = "wave-2 sample field"


#: the wave-2 sample league's tables, for the yardstick field (a league file, written per checkout)
WAVE2_TABLES = """
[game.casino]
players = 2
[game.knock-rummy]
players = 4
[game.cuajo]
players = 4
partners = "copy"
[game.quitlok]
players = 5
"""


def wave2_league(where: Path, checkout: Path, deals: int) -> Path:
    """A league file of the wave-2 sample field made of `checkout`'s own sample bots."""
    bots = [str(checkout / "sample_bots" / kind) for kind in ("random", "heuristic", "js", "c")]
    path = where / f"wave2-{abs(hash(str(checkout)))}.toml"
    path.write_text(f'name = "wave2"\nbots = {json.dumps(bots)}\ndeals = {deals}\n{WAVE2_TABLES}')  # JSON strings are TOML's
    return path


def league_bots(where: Path, source: Path) -> list[Path]:
    """24 bot folders under `where`, copies of `source`'s sample bots (each checkout plays its own, which
    its SDK runs), each with its own name and seed."""
    folders = []
    for kind in KINDS:
        for copy in range(COPIES):
            folder = where / f"{kind}-{copy}"
            shutil.copytree(source / "sample_bots" / kind, folder, symlinks=False,
                            ignore=shutil.ignore_patterns("__pycache__"))
            manifest = folder / "bot.toml"
            text = manifest.read_text().replace('"--seed", "1"', f'"--seed", "{copy + 1}"')
            lines = [f'name = "{kind}-{copy}"' if line.startswith("name =") else line for line in text.splitlines()]
            manifest.write_text("\n".join(lines) + "\n")
            folders.append(folder)
    where.chmod(0o755)  # as root a bot runs as a uid of its own, which must reach its folder
    return folders


def run_seconds(python: str, checkout: Path, args: list[str], out: Path) -> tuple[int, float, int]:
    """Games played, wall seconds and games with a fault of one `cardarena run` of `checkout` (run
    from its own folder)."""
    started = time.perf_counter()
    done = subprocess.run([python, "-m", "cardarena.cli", "run", *args, "--jobs", "2", "--out", str(out),
                           "--bootstrap", "0"], cwd=checkout, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{checkout}: cardarena run failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    with sqlite3.connect(out) as results:
        games, faulted = results.execute("SELECT COUNT(*), COUNT(NULLIF(faults, '[]')) FROM games").fetchone()
    out.unlink()
    return games, elapsed, faulted


def league_rates(against: Path, against_python: str, rounds: int = 1, max_tables: int = 200,
                 sample_deals: int = 32) -> dict[str, tuple[float, float]]:
    """Per league: the median games per second of this checkout and of `against` (run by
    `against_python`), over `rounds` rounds whose turns alternate; each run is printed as it ends."""
    checkouts = {"this": (sys.executable, ROOT), "main": (against_python, against.resolve())}
    rates: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        where.chmod(0o755)
        league = {}
        for label, (_, checkout) in checkouts.items():
            bots = league_bots(where / f"bots-{label}", checkout)
            league[checkout] = ["--game", "knock-rummy", "--deals", "1", "--max-tables", str(max_tables),
                                *(arg for bot in bots for arg in ("--bot", str(bot)))]
        leagues = {LEAGUE_24: lambda checkout: league[checkout],
                   SAMPLE_FIELD: lambda checkout: [str(wave2_league(where, checkout, sample_deals))]}
        runs = itertools.count()
        for round_number in range(rounds):
            for name, args in leagues.items():
                for label, (python, checkout) in (checkouts.items() if round_number % 2 == 0
                                                  else reversed(checkouts.items())):
                    out = where / f"results-{next(runs)}.sqlite"  # each run's logs apart
                    games, seconds, faulted = run_seconds(python, checkout, args(checkout), out)
                    rates.setdefault((name, label), []).append(games / seconds)
                    print(f"round {round_number + 1}, {name}, {label}: {games} games in {seconds:.1f} s "
                          f"= {games / seconds:.1f} games/s ({faulted} with a fault)", flush=True)
    return {name: (statistics.median(rates[name, "this"]), statistics.median(rates[name, "main"]))
            for name in (LEAGUE_24, SAMPLE_FIELD)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", type=Path, required=True, help="the other checkout (today's main)")
    parser.add_argument("--against-python", required=True, help="the Python with the other checkout installed")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--max-tables", type=int, default=200, help="tables of the 24-bot league (default 200)")
    parser.add_argument("--sample-deals", type=int, default=32, help="deals of the sample field (default 32)")
    options = parser.parse_args()
    rates = league_rates(options.against, options.against_python, options.rounds, options.max_tables,
                         options.sample_deals)
    print("games per second, median of the rounds, 2 jobs:")
    for name, (ours, theirs) in rates.items():
        print(f"    {name:30} this {ours:6.1f}   main {theirs:6.1f}   ratio {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
