"""Start benchmark: a bot's start to hello per bot kind and sandbox mode, this checkout against another
(today's main, checked out beside it with its own Python), in one run, the two taking turns batch by
batch (the machine is shared and noisy). Targets (issue 25): under bubblewrap, the Python random bot
at most 35 ms, the C bot at most 6 ms.

Where a start's time went before issue 25, measured link by link around /bin/true and the Python
random bot on the loaded 2-core development machine (load 7-9; medians; each figure moves by a
third from run to run, the ratios less):

| link of the launch chain | cost per start | what changed |
|---|---|---|
| fork and exec from the referee (bare `/bin/true`) | 0.8-1.7 ms | nothing |
| `sh` joining the bot's four cgroups (`cgroup.procs`) | 11-15 ms | one RCU grace period: `tasks` now, 1-2 ms |
| `prlimit` | < 0.5 ms | nothing |
| bubblewrap: namespaces, `--proc`, `--dev` | 5-9 ms | nothing (each is a promise) |
| bubblewrap: ~40 read-only binds (2 mounts each), 3 tmpfs | 8-12 ms | the SDK's 7 binds are now 1 |
| bubblewrap: the 23 constant `/proc` copies, 4 empty folders | 6-8 ms | nothing (one mount per path is the floor) |
| `setpriv` and `env` (as root) | 2-3 ms | nothing |
| Python: `site` with this machine's `.pth` files (two editable installs' finders, certifi) | 20-50 ms | not the referee's: a wheel install has no finder |
| Python: the SDK compiled afresh at every start (a read-only mount keeps no bytecode) | 5-10 ms | compiled once per referee, `views.sdk_copy` |
| removing the bot's cgroups at its stop (a fixed 5 ms wait for exiting tasks) | 5-11 ms | looks again after 0.2 ms, doubling |

Run: python -m tests.bench.bench_starts --against /work/wt/base --against-python /work/venvs/base/bin/python
     [--rounds 20] [--batch 5]
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODES = ("unconfined", "none", "bwrap")
TARGETS_MS = {("python random", "bwrap"): 35.0, ("C random", "bwrap"): 6.0}


def measure(rounds: int) -> dict:
    """Seconds from spawn to a complete hello of each bot kind in each mode, `rounds` starts each, modes
    interleaved; run inside the checkout measured (uses only what every version of cardarena has)."""
    import os
    import time
    from dataclasses import replace
    from pathlib import Path

    from cardarena.config import Limits, SandboxSettings
    from cardarena.manifest import load_manifest
    from cardarena.referee.process import BotProcess

    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # as `play` and each worker do
    bots = {"python random": load_manifest(Path("sample_bots/random").resolve()).spec,
            "C random": load_manifest(Path("sample_bots/c").resolve()).spec}
    times: dict = {}
    for round_number in range(rounds + 1):  # the first round warms what a referee makes once (not counted)
        for label, spec in bots.items():
            for mode in ("unconfined", "none", "bwrap"):
                confined = replace(spec, confined=False) if mode == "unconfined" else spec
                process = BotProcess(confined, Limits(sandbox=SandboxSettings(mode="none" if mode == "unconfined" else mode)))
                started = time.perf_counter()
                process.start()
                if round_number:
                    times.setdefault(f"{label}|{mode}", []).append(time.perf_counter() - started)
                process.stop()
    return times


def measure_in(python: str, checkout: Path, rounds: int) -> dict:
    """`measure` run by `python` in `checkout`."""
    source = f"import json\n{inspect.getsource(measure)}\nprint(json.dumps(measure({rounds})))\n"
    done = subprocess.run([python, "-c", source], cwd=checkout, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def comparison_parser(doc: str, rounds: int) -> argparse.ArgumentParser:
    """The command line of a bench that compares this checkout with another in one run."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--against", type=Path, required=True, help="the other checkout (today's main)")
    parser.add_argument("--against-python", required=True, help="the Python with the other checkout installed")
    parser.add_argument("--rounds", type=int, default=rounds)
    return parser


def main() -> None:
    parser = comparison_parser(__doc__, rounds=20)
    parser.add_argument("--batch", type=int, default=5, help="starts of each kind and mode per turn")
    options = parser.parse_args()
    if not (ROOT / "sample_bots" / "c" / "bot").exists() or not (options.against / "sample_bots" / "c" / "bot").exists():
        sys.exit("build the C bot in both checkouts first: bash sample_bots/build.sh")
    checkouts = {"this": (sys.executable, ROOT), "main": (options.against_python, options.against.resolve())}
    times: dict[str, dict[str, list[float]]] = {label: {} for label in checkouts}
    for _ in range(max(1, options.rounds // options.batch)):
        for label, (python, checkout) in checkouts.items():
            for key, values in measure_in(python, checkout, options.batch).items():
                times[label].setdefault(key, []).extend(values)
    print(f"start to hello, median of {options.rounds} starts each, this checkout against main, in one run:")
    for key in times["this"]:
        bot, mode = key.split("|")
        ours, theirs = statistics.median(times["this"][key]) * 1e3, statistics.median(times["main"][key]) * 1e3
        target = TARGETS_MS.get((bot, mode))
        aim = f"   target {target:.0f} ms: {ours / target:.2f}x of it" if target else ""
        print(f"    {bot:14} {mode:10} this {ours:6.1f} ms   main {theirs:6.1f} ms   ratio {ours / theirs:.2f}{aim}")


if __name__ == "__main__":
    main()
