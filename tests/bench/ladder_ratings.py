"""The reference run that fixes the ladder's Elo scale, shipped as runner/ladder_ratings.json.

    python -m tests.bench.ladder_ratings [--jobs 2] [--sets N] [--game NAME ...] [--dry-run]

Each rung plays `--sets` duplicate sets against the rung below it, in every game, with the
ladder's own pieces (tests/bench/ladder.py's `play_set`: in-process games, the same tables and
seatings as `check --strength`). The scale is a chain from random = 1000: each rung's rating is
the one below plus its maximum-likelihood gap, fitted by `cardarena.strength.fit_rating` (the very
estimator `check --strength` uses, so a rung checked against the ladder gives its own rating back),
and its standard error adds the gap's to the one below's (independent sets). Where a rung wins
every set (heuristic over random in Casino and Cuajo) the gap is set by the fit's prior and grows
with the sets played: it is a floor, and says nothing about bots between the two.

The file records the date, the commit and this command. Cost, measured on an idle machine (3
December 2026): about 1.6 s of one core per set on average across the four games and three rungs
(the search-strong sets in Casino and Quitlok make most of it), so `--sets 40` took 6.4 minutes
and `--sets 160` 25.2 minutes with 2 jobs.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import multiprocessing
import subprocess
import sys
import time

from cardarena.ratings import Z95
from cardarena.strength import LADDER_FILE, PLAYERS, RUNG_FOLDERS, Rung, fit_rating
from tests.bench.ladder import ROOT, Job, play_set

RUNGS = tuple(RUNG_FOLDERS)
ANCHOR = 1000.0


def chain(game: str, scores: dict[str, list[float]]) -> dict[str, Rung]:
    """The rungs' ratings in one game from each rung's set scores against the one below."""
    rungs = {RUNGS[0]: Rung(RUNGS[0], ANCHOR, ANCHOR, ANCHOR, 0)}
    error = 0.0
    for lower, upper in zip(RUNGS, RUNGS[1:]):
        below = rungs[lower]
        gap = fit_rating([(below.elo, score) for score in scores[upper]])
        error = math.sqrt(error ** 2 + gap.error ** 2)
        rungs[upper] = Rung(upper, gap.elo, gap.elo - Z95 * error, gap.elo + Z95 * error, gap.sets)
    return rungs


def commit() -> str:
    """The commit the rungs were measured at (`+changes` when the bots' code differed from it)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()
    head = git("rev-parse", "HEAD") or "unknown"
    return head + ("+changes" if git("status", "--porcelain", "--", "sample_bots", ":!*.md") else "")


def measure(games: list[str], sets: int, jobs: int) -> dict[str, dict[str, list[float]]]:
    """Every game's set scores of each rung against the one below, played over `jobs` processes."""
    work = [Job(game, upper, lower, index) for lower, upper in zip(RUNGS, RUNGS[1:]) for game in games
            for index in range(sets)]
    work.reverse()  # the search rungs' long sets first, so the workers finish together
    scores: dict[tuple[str, str], dict[int, float]] = {}
    started = time.monotonic()
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for done, (job, (index, score, _)) in enumerate(
                zip(work, pool.imap(play_set, work, chunksize=1)), 1):
            scores.setdefault((job.game, job.upper), {})[index] = score
            if done % 8 == 0 or done == len(work):
                print(f"  {done}/{len(work)} sets after {(time.monotonic() - started) / 60:.1f} min",
                      file=sys.stderr, flush=True)
    return {game: {upper: [scores[game, upper][i] for i in range(sets)] for upper in RUNGS[1:]} for game in games}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", type=int, default=40, help="sets per rung and game (default 40)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--game", action="append", choices=sorted(PLAYERS),
                        help="only this game (repeatable); the others keep their ratings in the file")
    parser.add_argument("--dry-run", action="store_true", help="print the ratings, do not rewrite the file")
    args = parser.parse_args()
    if args.sets < 1 or args.jobs < 1:
        parser.error("--sets and --jobs must be 1 or more")
    games = args.game or sorted(PLAYERS)
    started = time.monotonic()
    measured = measure(games, args.sets, args.jobs)
    data = json.loads(LADDER_FILE.read_text()) if LADDER_FILE.is_file() else {"games": {}}
    print("| game | rung | Elo [95%] | sets against the rung below | mean set score |\n|---|---|---|---:|---:|")
    for game in games:
        rungs = chain(game, measured[game])
        data["games"][game] = {name: {"elo": round(r.elo, 1), "low": round(r.low, 1), "high": round(r.high, 1),
                                      "sets": r.sets} for name, r in rungs.items()}
        for name, rung in rungs.items():
            mean = "" if name == RUNGS[0] else f"{sum(measured[game][name]) / args.sets:.3f}"
            print(f"| {game} | {name} | {rung.elo:.0f} [{rung.low:.0f}, {rung.high:.0f}] | {rung.sets} | {mean} |")
    data.update({
        "scale": "Elo on the logistic 400 scale, random = 1000 in every game; each rung fitted against the one below "
                 "(tests/bench/ladder_ratings.py)",
        "measured": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "commit": commit(), "command": "python -m tests.bench.ladder_ratings " + " ".join(sys.argv[1:]),
    })
    print(f"{(time.monotonic() - started) / 60:.1f} min with {args.jobs} jobs", flush=True)
    if not args.dry_run:
        LADDER_FILE.write_text(json.dumps(data, indent=1) + "\n")
        print(f"wrote {LADDER_FILE}")


if __name__ == "__main__":
    main()
