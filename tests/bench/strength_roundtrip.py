"""Each rung of the ladder checked against the ladder: does `check --strength` give back its shipped rating?

    python -m tests.bench.strength_roundtrip [--rung NAME ...] [--game NAME ...] [--target ELO]

Runs `cardarena check RUNG_FOLDER --strength --games-per-game 1 --json` for each rung as a real
subprocess (the rung's own bot in the check's default sandbox, the rungs as its opponents, exactly
as a bot author's check), then prints, per rung and game, the rating `check` measured with its 95%
interval beside the rating shipped in runner/ladder_ratings.json, and whether the shipped one lies
inside the interval, as a Markdown table with each check's wall time. Exits 1 when a shipped rating
falls outside its interval or a check fails. The suite's test_strength does the same for random
and heuristic in one game; the search rungs take minutes each, hence this script.

With 95% intervals, one miss in twenty rung-and-game pairs is expected even when the scale is
right: rerun a miss before reading it as a wrong scale.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

from cardarena.strength import PLAYERS, RUNG_FOLDERS, load_scale

CARDARENA = [sys.executable, "-m", "cardarena.cli"]


def check_strength(rung: str, games: list[str], target: float) -> tuple[dict, float]:
    """The `strength` part of `check --json` on the rung's folder, and the check's wall time in seconds."""
    command = [*CARDARENA, "check", str(RUNG_FOLDERS[rung]), "--strength", "--games-per-game", "1", "--json",
               "--strength-target", str(target), *(option for game in games for option in ("--game", game))]
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        result = subprocess.run(command, capture_output=True, text=True, cwd=folder)
    seconds = time.monotonic() - started
    try:
        strength = json.loads(result.stdout)["strength"]
    except (json.JSONDecodeError, KeyError) as error:
        raise SystemExit(f"{rung}: check gave no strength report ({error}); exit {result.returncode}:\n"
                         f"{result.stdout[-2000:]}{result.stderr[-2000:]}") from None
    if result.returncode != 0 or strength is None:
        raise SystemExit(f"{rung}: check failed, exit {result.returncode}:\n{result.stderr[-2000:]}")
    return strength, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rung", action="append", choices=list(RUNG_FOLDERS), help="only this rung (repeatable)")
    parser.add_argument("--game", action="append", choices=list(PLAYERS), help="only this game (repeatable)")
    parser.add_argument("--target", type=float, default=60.0, help="--strength-target of each check (default 60)")
    args = parser.parse_args()
    scale = load_scale()
    misses = 0
    print("| rung | game | check's Elo [95%] | shipped | inside | sets | check's wall time |")
    print("|---|---|---|---:|---|---:|---:|")
    for rung in args.rung or list(RUNG_FOLDERS):
        strength, seconds = check_strength(rung, args.game or [], args.target)
        for game in strength["games"]:
            rating = game["rating"]
            shipped = {r.name: r for r in scale.rungs(game["game"])}[rung].elo
            inside = rating["low"] <= shipped <= rating["high"]
            misses += not inside
            print(f"| {rung} | {game['game']} | {rating['elo']:.0f} [{rating['low']:.0f}, {rating['high']:.0f}] | "
                  f"{shipped:.0f} | {'yes' if inside else '**no**'} | {rating['sets']} | {seconds:.0f} s |",
                  flush=True)
    sys.exit(1 if misses else 0)


if __name__ == "__main__":
    main()
