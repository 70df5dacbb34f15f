"""What this tree costs against another commit, in one run: bot starts and referee decisions.

    python -m tests.bench.bench_against REF [rounds]

Checks REF out beside this tree (a temporary git worktree, its C bot built), then alternates the
two trees round by round (the machine is shared and noisy, so both meet the same load), each
round in a fresh process per tree that imports that tree's own code. Prints medians, and this
tree's figure as a ratio to REF's, for: start to hello of the Python random and heuristic bots and the C bot, and
the referee's cost per decision in Knock Rummy games between two copies of each, under bubblewrap
and under none. Older trees that install as `runner` are measured as they are.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODES = ("bwrap", "none")

#: one round in one tree: runs in a fresh interpreter, with argv = [tree, starts, games]
MEASURE = r'''
import importlib.util, json, statistics, sys, time
from pathlib import Path

tree, starts, games = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
if (tree / "runner" / "moved").is_dir():  # the cardarena layout: import this tree's code, not the installed one
    for name, folder in (("cardarena", tree / "runner"), ("cardarena.protocol", tree / "protocol")):
        spec = importlib.util.spec_from_file_location(name, folder / "__init__.py", submodule_search_locations=[str(folder)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    sys.modules["cardarena"].protocol = sys.modules["cardarena.protocol"]
sys.path.insert(0, str(tree))
from tests.bench import bench_sandbox as bench

figures = {}
for label, folder in (("python", "random"), ("heuristic", "heuristic"), ("c", "c")):
    spec = bench.load_manifest(tree / "sample_bots" / folder).spec
    for mode in ("bwrap", "none"):
        figures[f"{label} start {mode}"] = statistics.median(bench.start_seconds(spec, mode) for _ in range(starts))
        match = bench.Match([spec, spec], bench.limits(mode))
        try:
            match.play(bench.GAME, seed=0)  # the bots start before the clock runs
            costs = []
            for seed in range(1, games + 1):
                record = match.play(bench.GAME, seed=seed)
                costs.append(record.duration / len(record.actions))
        finally:
            match.close()
        figures[f"{label} decision {mode}"] = statistics.median(costs)
print(json.dumps(figures))
'''


def checkout(ref: str, folder: Path) -> Path:
    """REF as a worktree in `folder`, with its C bot built."""
    tree = folder / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), ref], check=True)
    subprocess.run(["make", "-s", "-C", str(tree / "sample_bots" / "c")], check=True, stdout=subprocess.DEVNULL)
    return tree


def without_bytecode(tree: Path) -> None:
    """`tree`'s sample bots without the bytecode earlier runs left beside them (git-ignored): a sandboxed
    bot cannot write it, so a fresh clone's bots compile their modules at every start."""
    for cache in (tree / "sample_bots").rglob("__pycache__"):
        shutil.rmtree(cache)


def measure(tree: Path, starts: int, games: int) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", MEASURE, str(tree), str(starts), str(games)], cwd=tree,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"measuring {tree} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ref, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # as `play` and each worker do
    with tempfile.TemporaryDirectory(prefix="cardarena-bench-") as folder:
        os.chmod(folder, 0o755)  # the sandboxed bots (uid nobody, as root) must reach REF's bot folders
        base = checkout(ref, Path(folder))
        for tree in (base, ROOT):
            without_bytecode(tree)
        try:
            samples: dict[str, dict[str, list[float]]] = {"base": {}, "this": {}}
            for _ in range(rounds):
                for name, tree in (("base", base), ("this", ROOT)):
                    for key, value in measure(tree, starts=10, games=10).items():
                        samples[name].setdefault(key, []).append(value)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    print(f"this tree ({ROOT.name}) against {ref}, medians of {rounds} alternating rounds "
          "(each: 10 starts, 10 Knock Rummy games per bot and mode):")
    for key in samples["this"]:
        this, base_value = (statistics.median(samples[name][key]) for name in ("this", "base"))
        unit, scale = ("ms", 1e3) if "start" in key else ("us", 1e6)
        print(f"  {key:22s} {base_value * scale:8.1f} {unit} -> {this * scale:8.1f} {unit}  (ratio {this / base_value:.2f})")


if __name__ == "__main__":
    main()
