"""Dask benchmark: games per second of the same run on LocalExecutor --jobs 2 and on a Dask cluster of
two one-thread workers (a real `dask scheduler` and `dask worker`s on 127.0.0.1), and where the
difference goes.

The sample league's bots play the same schedule (every game, the same deals) both ways, each game
written to SQLite as it arrives. Reported: each rate, their ratio (target: Dask within 15% of local),
and the parts of Dask's overhead one can see from the organiser: packing the bots, the wait for the
first game (shipping and unpacking the bots, the first task's start), and the run's tail.
Run: python -m tests.bench.bench_dask [deals-per-table]
"""

from __future__ import annotations

import secrets
import sys
import tempfile
import time
from pathlib import Path

from runner.referee.process import Limits
from runner.tournament.dask_executor import DaskExecutor
from runner.tournament.execute import Executor, FinishedGame, LocalExecutor
from runner.tournament.league import SAMPLE_LEAGUE, build_league, read_league_file
from runner.tournament.schedule import schedule
from runner.tournament.shipping import pack_folder
from runner.tournament.store import ResultStore
from tests.test_dask import start_cluster


def timed_run(executor: Executor, plans: list, bots: dict, folder: Path) -> dict[str, float]:
    """Play `plans` on `executor`, storing each game: games, seconds, and when the first and last games came."""
    planned = {g.game_id: g for plan in plans for g in plan.games}
    played, first, last = 0, 0.0, 0.0
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


def main() -> None:
    deals = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    league = build_league(read_league_file(SAMPLE_LEAGUE) | {"deals": deals}, SAMPLE_LEAGUE.parent, str(SAMPLE_LEAGUE))
    plans = schedule({e.name: e.games for e in league.entrants}, league.games, league.seed,
                     deal_key=secrets.token_hex(32))
    bots = {entrant.name: entrant.spec for entrant in league.entrants}
    started = time.perf_counter()
    for spec in bots.values():
        if spec.folder is not None:
            pack_folder(Path(spec.folder), Path(spec.cwd))
    packing = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        (scratch / "local").mkdir()
        local = timed_run(LocalExecutor(2, pin_cores=True), plans, bots, scratch / "local")
        cluster = start_cluster(scratch / "cluster")
        try:
            executor = DaskExecutor(cluster.address, pin_cores=True)
            try:
                (scratch / "dask").mkdir()
                dask = timed_run(executor, plans, bots, scratch / "dask")
            finally:
                executor.close()
        finally:
            cluster.stop()
    local_rate, dask_rate = local["games"] / local["seconds"], dask["games"] / dask["seconds"]
    print(f"sample league ({', '.join(sorted(bots))}), every game, {deals} deals per table: "
          f"{local['games']} games each way")
    print(f"{'executor':<28} {'games/s':>8} {'seconds':>8} {'first game':>11} {'tail':>6}")
    print(f"{'LocalExecutor --jobs 2':<28} {local_rate:>8.1f} {local['seconds']:>8.2f} {local['first']:>10.2f}s "
          f"{local['tail']:>5.2f}s")
    print(f"{'Dask, 2 workers x 1 thread':<28} {dask_rate:>8.1f} {dask['seconds']:>8.2f} {dask['first']:>10.2f}s "
          f"{dask['tail']:>5.2f}s")
    print(f"Dask / local games per second: {dask_rate / local_rate:.2f} "
          f"(overhead {100 * (1 - dask_rate / local_rate):+.1f}%; target within 15%)")
    print(f"where it goes: packing the bots {packing:.2f}s on the organiser (once per run); first game after "
          f"{dask['first'] - local['first']:+.2f}s more than locally (shipping, unpacking, task start); "
          f"tail {dask['tail'] - local['tail']:+.2f}s; the rest is per-portion scheduling and event latency")


if __name__ == "__main__":
    main()
