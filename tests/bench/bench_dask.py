"""Dask benchmark: games per second of the same run on LocalExecutor --jobs 2 and on a Dask cluster of
two one-thread workers (a real `dask scheduler` and `dask worker`s on 127.0.0.1, started as
runner/tournament/DASK.md says), and where the difference goes.

The sample league's bots play the same schedule (every game, the same deals) both ways, each game
written to SQLite as it arrives, in rounds that alternate the two (this machine is noisy; the
cluster is started once, as a league's would be). Reported per round: each rate, and their ratio
(target: Dask within 15% of local). Then where the time goes, as CPU milliseconds per game of each
kind of process, measured around the last round: locally the organiser and its workers (referees
and bots); on Dask the organiser, the scheduler, the nannies, the worker processes, and the
portion hosts below them (referees and bots, as locally). The first game's delay (shipping the
bots, starting a host) and the run's tail are wall-clock costs shown apart.
Run: python -m tests.bench.bench_dask [deals-per-table] [rounds]
"""

from __future__ import annotations

import os
import resource
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from cardarena.config import Limits
from cardarena.tournament.execution.dask_executor import DaskExecutor
from cardarena.tournament.execution.events import FinishedGame
from cardarena.tournament.execution.execute import Executor, LocalExecutor
from cardarena.tournament.planning.league import SAMPLE_LEAGUE, build_league, read_league_file
from cardarena.tournament.planning.schedule import schedule
from cardarena.tournament.store import ResultStore
from tests.test_dask import Cluster, children, start_cluster

_TICKS = os.sysconf("SC_CLK_TCK")


def timed_run(executor: Executor, plans: list, bots: dict, folder: Path) -> dict[str, float]:
    """Play `plans` on `executor`, storing each game: games, seconds, and when the first and last games came."""
    planned = {g.game_id: g for plan in plans for g in plan.games}
    played, first, last = 0, 0.0, 0.0
    folder.mkdir()
    with ResultStore(folder / "bench.sqlite", create=True) as store:
        started = time.perf_counter()
        for item in executor.run(plans, bots, Limits(decision_timeout=5.0)):
            if isinstance(item, FinishedGame):
                game = planned[item.game_id]
                store.add_game(item.record.to_dict(), item.match_id, game.deal, game.rotation, game.cluster)
                played += 1
                first = first or time.perf_counter() - started
                last = time.perf_counter() - started
        elapsed = time.perf_counter() - started
    return {"games": played, "seconds": elapsed, "first": first, "tail": elapsed - last}


def cpu_seconds(pid: int) -> tuple[float, float]:
    """A process's own CPU seconds, and those of its children it has reaped."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS, (int(fields[13]) + int(fields[14])) / _TICKS


def own_cpu() -> tuple[float, float]:
    """This process's CPU seconds, and its reaped children's."""
    me, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, reaped.ru_utime + reaped.ru_stime


def cluster_cpu(cluster: Cluster) -> Callable[[], dict[str, float]]:
    """A probe of CPU seconds so far by kind of cluster process: scheduler, nannies, worker processes
    (their own), and portion hosts (with the referees and bots they reaped)."""
    nannies = [worker.pid for worker in cluster.workers]
    workers = [pid for nanny in nannies for pid in children(nanny)]  # the worker and a resource tracker

    def probe() -> dict[str, float]:
        hosts = [pid for worker in workers for pid in children(worker)]
        return {"scheduler": cpu_seconds(cluster.scheduler.pid)[0],
                "nannies": sum(cpu_seconds(pid)[0] for pid in nannies),
                "worker processes": sum(cpu_seconds(pid)[0] for pid in workers),
                "portion hosts, referees, bots": sum(cpu_seconds(pid)[1] for pid in workers) +
                sum(sum(cpu_seconds(pid)) for pid in hosts)}
    return probe


def main() -> None:
    deals = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    league = build_league(read_league_file(SAMPLE_LEAGUE) | {"deals": deals}, SAMPLE_LEAGUE.parent, str(SAMPLE_LEAGUE))
    plans = schedule({e.name: e.games for e in league.entrants}, league.games, league.seed,
                     deal_key=secrets.token_hex(32))
    bots = {entrant.name: entrant.spec for entrant in league.entrants}
    ratios = []
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        cluster = start_cluster(scratch / "cluster")
        try:
            executor = DaskExecutor(cluster.address, pin_cores=True)
            probe = cluster_cpu(cluster)
            try:
                print(f"sample league ({', '.join(sorted(bots))}), every game, {deals} deals per table, "
                      f"{sum(len(plan.games) for plan in plans)} games each way, {rounds} rounds")
                print(f"{'round':<6} {'executor':<28} {'games/s':>8} {'seconds':>8} {'first game':>11} {'tail':>6}")
                for number in range(1, rounds + 1):
                    before_local = own_cpu()
                    local = timed_run(LocalExecutor(2, pin_cores=True), plans, bots, scratch / f"local-{number}")
                    after_local, before_dask, cluster_before = own_cpu(), own_cpu(), probe()
                    dask = timed_run(executor, plans, bots, scratch / f"dask-{number}")
                    after_dask, cluster_after = own_cpu(), probe()
                    for name, run in (("LocalExecutor --jobs 2", local), ("Dask, 2 workers x 1 thread", dask)):
                        print(f"{number:<6} {name:<28} {run['games'] / run['seconds']:>8.1f} {run['seconds']:>8.2f} "
                              f"{run['first']:>10.2f}s {run['tail']:>5.2f}s")
                    ratios.append((dask["games"] / dask["seconds"]) / (local["games"] / local["seconds"]))
                    print(f"{number:<6} Dask / local games per second: {ratios[-1]:.2f}")
            finally:
                executor.close()
        finally:
            cluster.stop()
    print(f"Dask / local games per second, median of {rounds} rounds: {statistics.median(ratios):.2f} "
          f"(overhead {100 * (1 - statistics.median(ratios)):+.1f}%; target within 15%)")
    games = local["games"]
    local_cpu = {"organiser": after_local[0] - before_local[0], "referees, bots": after_local[1] - before_local[1]}
    dask_cpu = {"organiser": after_dask[0] - before_dask[0],
                **{name: cluster_after[name] - cluster_before[name] for name in cluster_after}}
    print(f"where it goes (last round), CPU ms per game: "
          f"local {1000 * sum(local_cpu.values()) / games:.2f} = "
          + " + ".join(f"{name} {1000 * value / games:.2f}" for name, value in local_cpu.items()))
    print(f"  Dask {1000 * sum(dask_cpu.values()) / games:.2f} = "
          + " + ".join(f"{name} {1000 * value / games:.2f}" for name, value in dask_cpu.items()))
    print(f"  wall (last round): first game {dask['first'] - local['first']:+.2f}s later than locally, "
          f"tail {dask['tail'] - local['tail']:+.2f}s; the first round's first game also waits for the bots "
          "to be shipped and unpacked and the portion hosts to start")


if __name__ == "__main__":
    main()
