"""Sandbox benchmark: what bubblewrap adds per bot start and per decision, against --sandbox none.

Prints, from the same run, with the two modes interleaved round by round (the machine is shared
and noisy): (1) the median time from spawn to hello for the Python random bot and the C bot;
(2) the referee's cost per decision in Knock Rummy games between two copies of each bot; and,
for context, a start with no confinement at all (no clean environment, caps or cgroups), a start
under bubblewrap without the kernel isolation of issue 20 (no seccomp filter, /proc's machine-wide
counters not covered), and the bare launch chain around /bin/true. Targets (issue 11): at most
30 ms added per start, at most 5% per decision.
Run: python -m tests.bench.bench_sandbox [rounds]
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from unittest import mock

from cardarena.games import get_game
from cardarena.manifest import load_manifest
from cardarena.referee.match import Match
from cardarena.config import BotSpec, Limits, SandboxSettings
from cardarena.referee.process import BotProcess
from cardarena.referee.sandbox import bwrap_problem, prepare

ROOT = Path(__file__).resolve().parents[2]
GAME = get_game("knock-rummy")
MODES = ("none", "bwrap")


def limits(mode: str) -> Limits:
    return Limits(sandbox=SandboxSettings(mode=mode))


def without_kernel_isolation() -> contextlib.ExitStack:
    """bubblewrap as before issue 20: no seccomp filter, and /proc's machine-wide counters as they are."""
    stack = contextlib.ExitStack()
    stack.enter_context(mock.patch("cardarena.referee.seccomp.filter_program", return_value=None))
    stack.enter_context(mock.patch("cardarena.referee.hostview.constant_files", return_value={}))
    stack.enter_context(mock.patch("cardarena.referee.hostview.empty_folders", return_value=[]))
    return stack


def start_seconds(spec: BotSpec, mode: str) -> float:
    """Seconds from spawn to a complete hello, for one start (mode "unconfined": as a human seat is;
    "bwrap-bare": bubblewrap without the kernel isolation)."""
    context = without_kernel_isolation() if mode == "bwrap-bare" else contextlib.nullcontext()
    if mode == "unconfined":
        spec, mode = replace(spec, confined=False), "none"
    with context:
        process = BotProcess(spec, limits(mode.removesuffix("-bare")))
        started = time.perf_counter()
        process.start()
        elapsed = time.perf_counter() - started
    process.stop()
    return elapsed


def decision_seconds(spec: BotSpec, games: int) -> dict[str, float]:
    """Median seconds per decision of each mode, over `games` Knock Rummy games between two copies
    of the bot, one table per mode kept alive throughout and the modes taking turns game by game
    (so that the machine's other load falls on both alike)."""
    tables = {mode: Match([spec, spec], limits(mode.removesuffix("-bare"))) for mode in (*MODES, "bwrap-bare")}
    per_decision: dict[str, list[float]] = {mode: [] for mode in tables}
    try:
        for mode, match in tables.items():
            with without_kernel_isolation() if mode == "bwrap-bare" else contextlib.nullcontext():
                match.play(GAME, seed=0)  # starts the bots before the clock runs
        for seed in range(1, games + 1):
            for mode, match in tables.items():
                record = match.play(GAME, seed=seed)
                per_decision[mode].append(record.duration / len(record.actions))
    finally:
        for match in tables.values():
            match.close()
    return {mode: statistics.median(times) for mode, times in per_decision.items()}


def chain_seconds(mode: str, rounds: int) -> float:
    """Median seconds to run /bin/true through the launch chain alone (no bot, no handshake)."""
    times = []
    for _ in range(rounds):
        confinement = prepare(["/bin/true"], None, None, (), (), SandboxSettings(mode=mode))
        started = time.perf_counter()
        subprocess.run(confinement.argv, env=confinement.env, cwd=confinement.cwd, pass_fds=confinement.fds, check=True)
        times.append(time.perf_counter() - started)
        confinement.release()
    return statistics.median(times)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    problem = bwrap_problem()
    if problem is not None:
        sys.exit(f"bubblewrap cannot run here ({problem}): nothing to compare")
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # as `play` and each worker do
    bots = {"python random": load_manifest(ROOT / "sample_bots" / "random").spec}
    if (ROOT / "sample_bots" / "c" / "bot").exists():
        bots["C random"] = load_manifest(ROOT / "sample_bots" / "c").spec
    else:
        print("(the C bot is not built: bash sample_bots/build.sh)")

    bare = []
    for _ in range(rounds):
        started = time.perf_counter()
        subprocess.run(["/bin/true"], check=True)
        bare.append(time.perf_counter() - started)
    print(f"launch chain around /bin/true, median of {rounds}: bare {statistics.median(bare) * 1e3:.1f} ms, "
          + ", ".join(f"{mode} {chain_seconds(mode, rounds) * 1e3:.1f} ms" for mode in MODES))

    for label, spec in bots.items():
        starts: dict[str, list[float]] = {mode: [] for mode in ("unconfined", *MODES, "bwrap-bare")}
        for _ in range(rounds):
            for mode in starts:
                starts[mode].append(start_seconds(spec, mode))
        unconfined, none, bwrap, bare_bwrap = (statistics.median(times) for times in starts.values())
        print(f"{label}: start to hello, median of {rounds}: none {none * 1e3:.1f} ms, bwrap {bwrap * 1e3:.1f} ms "
              f"(+{(bwrap - none) * 1e3:.1f} ms per start, ratio {bwrap / none:.2f}); "
              f"unconfined {unconfined * 1e3:.1f} ms; bwrap without the kernel isolation {bare_bwrap * 1e3:.1f} ms "
              f"(the isolation: +{(bwrap - bare_bwrap) * 1e3:.1f} ms, ratio {bwrap / bare_bwrap:.2f})")
        costs = decision_seconds(spec, games=rounds * 5)
        print(f"{label}: referee cost per decision, median of {rounds * 5} games each: none {costs['none'] * 1e6:.0f} us, "
              f"bwrap {costs['bwrap'] * 1e6:.0f} us (ratio {costs['bwrap'] / costs['none']:.3f}); bwrap without the "
              f"kernel isolation {costs['bwrap-bare'] * 1e6:.0f} us (ratio {costs['bwrap'] / costs['bwrap-bare']:.3f})")


if __name__ == "__main__":
    main()
