"""The seam between scheduling and execution: an `Executor` plays planned matches and streams games.

The scheduler hands over `PlannedMatch`es and gets back each game as it finishes; how matches
are spread over cores or machines is the executor's business. `LocalExecutor` runs them in a
pool of worker processes on this machine; a distributed engine implements the same interface.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import queue
import signal
import sys
import traceback
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from runner.cores import pin_to_core, usable_cores
from runner.games import get_game
from runner.referee.match import Match
from runner.referee.process import BotSpec, Limits
from runner.tournament.schedule import PlannedMatch

_POLL_SECONDS = 0.5  # how often the parent checks that its workers are still alive


class ExecutionError(RuntimeError):
    """A worker failed outside any bot's control (a bug or a killed worker), not a bot fault."""


@dataclass(frozen=True)
class FinishedGame:
    """A game played to its end: the match and game ids, and the `GameRecord.to_dict()` data."""

    match_id: str
    game_id: str
    record: dict[str, Any]


@dataclass(frozen=True)
class FinishedMatch:
    """A match whose bots were shut down, with any faults of bots that did not exit cleanly."""

    match_id: str
    shutdown_faults: list[dict[str, Any]]


class Executor(ABC):
    """Plays planned matches and reports every game, then every match, as it finishes."""

    @abstractmethod
    def run(self, matches: Sequence[PlannedMatch], bots: Mapping[str, BotSpec],
            limits: Limits) -> Iterator[FinishedGame | FinishedMatch]:
        """Play `matches` (bots by name); closing the iterator early stops the work and its bots."""


def play_match(match: PlannedMatch, bots: Mapping[str, BotSpec], limits: Limits,
               log_root: Path | None = None) -> Iterator[FinishedGame | FinishedMatch]:
    """Play one match's games with one process per seat of its lineup, yielding each game.

    No bot process plays a deal twice: the games go rotation by rotation (every deal of rotation
    0, then of rotation 1 ...) and the table's bots are shut down, to start afresh, before a deal
    comes round again, so what a `game_end` revealed cannot help with the same cards from another
    seat. That costs one start per rotation, not per game. Bot stderr goes to one log per bot under
    `log_root`, shared by every match of the run, so its cap holds for the whole tournament; each
    start's header names the match portion.
    """
    game = get_game(match.game)
    if log_root is not None:
        log_root.mkdir(parents=True, exist_ok=True)
    with Match([bots[name] for name in match.lineup], limits, log_dir=log_root,
               log_label=f"match {match.match_id} from deal {match.games[0].deal}") as table:
        seen: set[int] = set()  # deals the running processes have played
        for planned in sorted(match.games, key=lambda planned: (planned.rotation, planned.deal)):
            if planned.deal in seen:
                table.close()
                seen.clear()
            seen.add(planned.deal)
            record = table.play(game, planned.seed, match.options, planned.seating, planned.game_id)
            yield FinishedGame(match.match_id, planned.game_id, record.to_dict())
    yield FinishedMatch(match.match_id, [fault.to_dict() for fault in table.shutdown_faults])


PORTIONS_PER_WORKER = 4  # enough to even out the load at the end of a run, few enough to start bots rarely
MIN_PORTION_GAMES = 24  # below this, starting a portion's bots costs more than the games it spreads


def portions(matches: Sequence[PlannedMatch], jobs: int) -> list[PlannedMatch]:
    """Split matches into portions of whole duplicate sets so that `jobs` workers stay busy to the end.

    A tournament may have fewer tables than workers (three bots make one four-seat Knock Rummy
    table), or tables of very different lengths; a portion is a match over part of a table's
    deals, with its own bot processes. Portions are cut only as fine as needed to give every
    worker about PORTIONS_PER_WORKER of them, and never below MIN_PORTION_GAMES games, since each
    one starts its bots afresh.
    """
    if jobs <= 1:
        return list(matches)
    target = max(MIN_PORTION_GAMES, math.ceil(sum(len(m.games) for m in matches) / (jobs * PORTIONS_PER_WORKER)))
    cut: list[PlannedMatch] = []
    for match in matches:
        chunk: list[Any] = []
        for index, planned in enumerate(match.games):
            chunk.append(planned)
            set_ends = index + 1 == len(match.games) or match.games[index + 1].cluster != planned.cluster
            if set_ends and len(chunk) >= target:
                cut.append(replace(match, games=tuple(chunk)))
                chunk = []
        if chunk:
            cut.append(replace(match, games=tuple(chunk)))
    return cut


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    """Turn SIGTERM into SystemExit so `with Match` shuts the worker's bots down on the way out."""
    sys.exit(128 + signum)


def _worker(index: int, pin_cores: bool, tasks: Any, results: Any, bots: Mapping[str, BotSpec],
            limits: Limits, parent: int, log_root: Path | None) -> None:
    """Worker process: take matches until told to stop, sending each finished game to the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    if pin_cores:
        pin_to_core(index)  # bots spawned later inherit the core; where it cannot, the command said so
    try:
        while (match := tasks.get()) is not None:
            for finished in play_match(match, bots, limits, log_root):
                if os.getppid() != parent:
                    results.cancel_join_thread()  # nobody reads the queue any more: do not wait to flush it
                    return  # the runner was killed: nobody will store this work
                results.put(finished)
    except Exception:  # noqa: BLE001 - reported to the parent, which raises it as ExecutionError
        results.put(("error", f"worker {index}: {traceback.format_exc()}"))
    results.put(("done", index))


class LocalExecutor(Executor):
    """Runs matches in `jobs` worker processes, each optionally pinned to one core with its bots;
    bots' stderr is logged under `log_root` when given."""

    def __init__(self, jobs: int | None = None, pin_cores: bool = True, log_root: Path | None = None):
        self.jobs = jobs or usable_cores()
        self.pin_cores = pin_cores
        self.log_root = log_root

    def run(self, matches: Sequence[PlannedMatch], bots: Mapping[str, BotSpec],
            limits: Limits) -> Iterator[FinishedGame | FinishedMatch]:
        if not matches:
            return
        context = multiprocessing.get_context("fork")
        tasks, results = context.Queue(), context.Queue()
        matches = portions(matches, self.jobs)
        jobs = min(self.jobs, len(matches))
        for match in matches:
            tasks.put(match)
        for _ in range(jobs):
            tasks.put(None)
        workers = [context.Process(target=_worker, name=f"cardarena-worker-{index}",
                                   args=(index, self.pin_cores, tasks, results, bots, limits, os.getpid(),
                                         self.log_root))
                   for index in range(jobs)]
        for worker in workers:
            worker.start()
        try:
            running = jobs
            while running:
                try:
                    message = results.get(timeout=_POLL_SECONDS)
                except queue.Empty:
                    dead = [w for w in workers if w.exitcode not in (None, 0)]
                    if dead:
                        raise ExecutionError(f"{dead[0].name} died with exit code {dead[0].exitcode}") from None
                    continue
                if isinstance(message, tuple):
                    kind, detail = message
                    if kind == "error":
                        raise ExecutionError(detail)
                    running -= 1
                else:
                    yield message
        finally:
            for worker in workers:
                if worker.is_alive():
                    worker.terminate()
            for worker in workers:
                worker.join(timeout=limits.shutdown_grace * 4 + 1)
                if worker.is_alive():
                    worker.kill()
                    worker.join()
            tasks.cancel_join_thread()
            results.cancel_join_thread()
