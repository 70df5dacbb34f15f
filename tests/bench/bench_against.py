"""Cost of a change to the referee: this working tree against a git revision, in one run.

Exports the revision (`git archive`) and, round by round, runs the same measurement under each
tree in a fresh interpreter, taking turns (the machine is shared and noisy): the median time from
spawn to hello of the Python random bot and the C bot, and the referee's cost per decision in Knock
Rummy games between two copies of each, under `--sandbox none` and `bwrap` (where it runs), pinned
to one core as `play` and each worker are. Prints each tree's medians and their ratios.
Run: python -m tests.bench.bench_against [REVISION] [rounds]   (default: main, 5 rounds)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: what one round measures under one tree (its `cardarena` first on the path); prints one JSON line
MEASURE = r"""
import json, os, statistics, sys, time
from cardarena.games import get_game
from cardarena.manifest import load_manifest
from cardarena.referee.match import Match
from cardarena.referee.process import BotProcess, Limits
from cardarena.referee.sandbox import SandboxSettings, bwrap_problem

root, starts, games = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
bots = {"python": load_manifest(f"{root}/sample_bots/random").spec, "C": load_manifest(f"{root}/sample_bots/c").spec}
results = {}
for mode in ["none"] + ([] if bwrap_problem() else ["bwrap"]):
    limits = Limits(sandbox=SandboxSettings(mode=mode))
    for label, spec in bots.items():
        times = []
        for _ in range(starts):
            process = BotProcess(spec, limits)
            started = time.perf_counter()
            process.start()
            times.append(time.perf_counter() - started)
            process.stop()
        results[f"{label} start, {mode}"] = statistics.median(times)
        with Match([spec, spec], limits) as match:
            match.play(get_game("knock-rummy"), seed=0)  # the bots start before the clock runs
            per_decision = []
            for seed in range(1, games + 1):
                record = match.play(get_game("knock-rummy"), seed=seed)
                per_decision.append(record.duration / len(record.actions))
        results[f"{label} decision, {mode}"] = statistics.median(per_decision)
print(json.dumps(results))
"""


def import_root(tree: Path, folder: Path) -> Path:
    """A folder whose `cardarena` package is `tree`'s (runner/, with protocol/ inside), as the
    editable install maps it."""
    package = folder / "cardarena"
    package.mkdir(parents=True)
    for entry in (tree / "runner").iterdir():
        (package / entry.name).symlink_to(entry)
    (package / "protocol").symlink_to(tree / "protocol")
    return folder


def measure(path: Path, starts: int, games: int) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", MEASURE, str(ROOT), str(starts), str(games)], cwd="/",
                          env={**os.environ, "PYTHONPATH": str(path)}, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    revision = sys.argv[1] if len(sys.argv) > 1 else "main"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as scratch:
        scratch_path = Path(scratch)
        scratch_path.chmod(0o755)  # readable by the bots, which run as nobody where the organiser is root
        base = scratch_path / "base"
        base.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        trees = {revision: import_root(base, scratch_path / "base-path"), "this tree": import_root(ROOT, scratch_path / "tree-path")}
        samples: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
        for number in range(rounds):
            for name in (list(trees) if number % 2 == 0 else list(reversed(trees))):
                for key, value in measure(trees[name], starts=5, games=10).items():
                    samples[name].setdefault(key, []).append(value)
    print(f"this tree against {revision}, medians of {rounds} rounds (5 starts, 10 Knock Rummy games each), one core:")
    for key in samples[revision]:
        old, new = (statistics.median(samples[name][key]) for name in trees)
        unit, scale = ("ms", 1e3) if "start" in key else ("us", 1e6)
        print(f"  {key:22} {revision} {old * scale:8.1f} {unit}, this tree {new * scale:8.1f} {unit}: "
              f"ratio {new / old:.2f} ({(new - old) * scale:+.1f} {unit})")


if __name__ == "__main__":
    main()
