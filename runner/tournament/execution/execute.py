"""The seam between scheduling and execution: an `Executor` plays planned matches and streams games.

The scheduler hands over `PlannedMatch`es and gets back each game as it finishes; how matches
are spread over cores or machines is the executor's business. `LocalExecutor` runs them in
supervised worker processes on this machine; a distributed engine implements the same interface.

A worker is expendable: a bot may kill or stop its parent, the worker. The supervisor (the
process that owns the results) notices a worker that died, or that stopped or made no progress
within the limits, kills it and its bots, and plays its unfinished games again in a new worker;
a bot that is waited on when that happens twice in one game is disqualified (`sabotage`).
"""

from __future__ import annotations

import ctypes
import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import time
import traceback
from abc import ABC, abstractmethod
from collections import Counter, deque
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from cardarena.cores import pin_to_core, usable_cores
from cardarena.errors import CardarenaError
from cardarena.games import get_game
from cardarena.referee.faults import Fault
from cardarena.referee.match import Match, Observer
from cardarena.config import BotSpec, Limits
from cardarena.referee.cgroups import release_dead_referees
from cardarena.referee.sandbox import prepare_shared
from cardarena.tournament.execution.events import (Channel, FinishedGame, FinishedMatch, GameBegun, Observed,
                                                   Returned, RunEvent, WorkDone, WorkerLost, WorkFailed)
from cardarena.tournament.planning.schedule import PlannedMatch

_POLL_SECONDS = 0.1  # how often the supervisor looks at its workers' state and progress
STALL_MARGIN = 5.0  # seconds beyond its longest bounded wait before a silent worker is taken for stuck
_UNBLAMED_LOSSES = 3  # losses of one game while waiting on no bot before it is taken for the referee's bug


class ExecutionError(CardarenaError, RuntimeError):
    """A worker failed outside any bot's control (a bug in the referee), not a bot fault."""


class Executor(ABC):
    """Plays planned matches and reports every game, then every match, as it finishes."""

    @abstractmethod
    def run(self, matches: Sequence[PlannedMatch], bots: Mapping[str, BotSpec], limits: Limits,
            disqualified: Mapping[str, str] | None = None,
            observer: Observer | None = None) -> Iterator[RunEvent]:
        """Play `matches` (bots by key in `bots`); closing the iterator early stops the work and its bots.

        `disqualified` maps bots already disqualified to their fault detail: they are not started,
        and their seats are played by the fallback. `observer` hears every game's decisions.
        """

    #: what went wrong after a run's games were safe (tidying up after it), for the user to hear
    warnings: Sequence[str] = ()

    def where(self) -> str | None:
        """Where the games are played, said when a run starts, unless on this machine's own workers (None)."""
        return None

    def preflight(self, limits: Limits) -> list[str]:
        """Warnings about playing under `limits` where the games go, said before the run starts;
        ExecutionError when they cannot be played there at all. Nothing for this machine, whose own
        process already checked (the sandbox's `require_sandbox`)."""
        return []

    def close(self) -> None:
        """Let go of what the executor holds between runs (a cluster connection); nothing by default."""


def play_match(match: PlannedMatch, bots: Mapping[str, BotSpec], limits: Limits,
               log_root: Path | None = None, **hooks: Any) -> Iterator[RunEvent]:
    """Play one match's games with one process per seat of its lineup, yielding each game; `hooks`
    go to `Match` (observer, heartbeat, barred).

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
               log_label=f"match {match.match_id} from deal {match.games[0].deal}", **hooks) as table:
        seen: set[int] = set()  # deals the running processes have played
        for planned in sorted(match.games, key=lambda planned: (planned.rotation, planned.deal)):
            if planned.deal in seen:
                table.close()
                seen.clear()
            seen.add(planned.deal)
            record = table.play(game, planned.seed, match.options, planned.seating, planned.game_id)
            yield FinishedGame(match.match_id, planned.game_id, record)
    yield FinishedMatch(match.match_id, list(table.shutdown_faults))


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


# -- supervised worker processes ----------------------------------------------------------------

_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER, _PR_GET_CHILD_SUBREAPER = 1, 36, 37
_libc = ctypes.CDLL(None, use_errno=True)
#: Linux lets a supervisor adopt and kill a dead worker's bots (prctl) and see a stopped worker
#: (/proc); elsewhere (macOS) a dead worker's bots exit at the end of their input, and a stopped
#: worker is found by its silence (`stall_limit`)
_LINUX = hasattr(_libc, "prctl") and os.path.isdir("/proc")
T = TypeVar("T")


class Lost(CardarenaError):
    """A supervised worker ended without finishing: `reason` says how ("killed by signal 9 (SIGKILL)")."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _Orphaned(Exception):
    """The supervisor is gone: nobody will use this worker's work."""


@dataclass(frozen=True)
class _Ended:
    """The supervisor's own mark after a worker's messages: its pipe closed and it was reaped."""


def stall_limit(limits: Limits, bots: Iterable[BotSpec] = ()) -> float:
    """Seconds a worker may go without a heartbeat before it is taken for stuck: its longest bounded
    wait on a bot (a handshake, a decision with the whole time bank, a bot's own decision limit with
    it, a shutdown), plus a margin for killing and reaping a bot."""
    own_limits = [spec.decision_timeout for spec in bots if spec.decision_timeout]
    longest_decision = max([limits.decision_timeout, *own_limits]) + limits.time_bank
    return max(limits.handshake_timeout, longest_decision, 2 * limits.shutdown_grace) + STALL_MARGIN


def _prctl(option: int, value: int) -> None:
    if not _LINUX:
        return
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"prctl({option}): {os.strerror(error)}")


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    """Turn SIGTERM into SystemExit so `with Match` shuts the worker's bots down on the way out."""
    sys.exit(128 + signum)


def become_worker(supervisor: int) -> bool:
    """Set this process up as a worker of the process `supervisor`: Ctrl-C is the supervisor's to
    handle, SIGTERM unwinds (so `with Match` shuts bots down), and the worker dies with its
    supervisor even when stopped. False when the supervisor died already."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    return os.getppid() == supervisor  # it may have died before the line above


def _worker_main(body: Callable[[Callable[[Any], None], Callable[[int | None], None]], None], writer: int,
                 beats: Any, core: int | None, supervisor: int, inherited: list[int]) -> None:
    """A worker process: run `body(send, heartbeat)`, sending its messages up the pipe, then `WorkDone`;
    pinned to the `core`-th usable core when given."""
    if not become_worker(supervisor):
        return
    for fd in inherited:
        os.close(fd)  # other workers' pipes: holding them would hide those workers' ends
    if core is not None:
        pin_to_core(core)  # bots spawned later inherit the core; where it cannot, the command said so

    channel = Channel(writer=writer)

    def send(message: Any) -> None:
        if os.getppid() != supervisor:
            raise _Orphaned
        channel.send(message)

    def heartbeat(index: int | None) -> None:
        beats[1] = -1 if index is None else index
        beats[0] += 1

    try:
        body(send, heartbeat)
        send(WorkDone())
    except _Orphaned:
        return
    except Exception:  # noqa: BLE001 - reported to the supervisor, which raises it as ExecutionError
        try:
            send(WorkFailed(traceback.format_exc()))
        except (OSError, _Orphaned):
            return  # the supervisor is gone: there is nobody left to tell


def describe_exit(code: int | None) -> str:
    """How a worker ended, from its exit code."""
    if code is not None and code < 0:
        try:
            return f"killed by signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def _process_table() -> dict[int, tuple[str, int, int]]:
    """Every process on the machine: pid -> (state, parent pid, process group)."""
    table: dict[int, tuple[str, int, int]] = {}
    for entry in os.listdir("/proc") if _LINUX else ():
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue  # it exited meanwhile
            table[int(entry)] = (fields[0].decode(), int(fields[1]), int(fields[2]))
    return table


def _process_state(pid: int) -> str:
    """The state letter of one process (R, S, T ...), or "" when it is gone (or there is no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return ""


class _Worker:
    """The supervisor's handle on one worker process: its pipe, its heartbeat, and how it ended."""

    def __init__(self, context: Any, body: Callable[..., None], core: int | None, others: list[int], task: Any):
        self.task = task
        self.beats = context.RawArray("q", [0, -1])  # heartbeats, index of the bot waited on (-1: none)
        reader, writer = os.pipe()
        self.process = context.Process(target=_worker_main, name="cardarena-worker",
                                       args=(body, writer, self.beats, core, os.getpid(), [reader, *others]))
        self.process.start()
        os.close(writer)
        os.set_blocking(reader, False)
        self.fd = reader
        self.channel = Channel(reader=reader)
        self.received: set[str] = set()  # ids of the games it sent
        self.playing: str | None = None  # id of the game it began last
        self.done = False
        self.reason: str | None = None  # why the supervisor killed it
        self._progress = (0, time.monotonic())  # heartbeats last seen, and when they changed
        self._stopped_polls = 0

    @property
    def waiting(self) -> int | None:
        """The index of the bot the worker is waiting on, if any."""
        return None if self.beats[1] < 0 else self.beats[1]

    def stuck(self, now: float, limit: float) -> str | None:
        """Why the worker counts as stuck (stopped, or no heartbeat within `limit`), or None."""
        beats = self.beats[0]
        if beats != self._progress[0]:
            self._progress = (beats, now)
        # Stopped (by SIGSTOP, or traced) at two polls running: not a passing Ctrl-Z of the whole job.
        self._stopped_polls = self._stopped_polls + 1 if _process_state(self.process.pid) in ("T", "t") else 0
        if self._stopped_polls >= 2:
            return "stopped"
        if now - self._progress[1] > limit:
            return f"stuck (no progress for {limit:g} s)"
        return None

    def excuse(self, now: float) -> None:
        """Restart the progress clock: the supervisor itself was not running (suspended, say)."""
        self._progress = (self.beats[0], now)

    def reap(self) -> str:
        """Wait for the ended worker and close its pipe; how it ended."""
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        os.close(self.fd)
        return self.reason or describe_exit(self.process.exitcode)


class _Supervisor:
    """Starts worker processes and watches them: their messages, their ends, and whether they are stuck.

    While it runs, this process is the reaper of its descendants' orphans, so that the bots of a
    worker that died (and their children) become its children and are killed, not left running.
    """

    def __init__(self, limits: Limits, stall: float):
        self.context = multiprocessing.get_context("fork")
        self.limits = limits
        self.stall = stall
        self.workers: list[_Worker] = []
        self._last_poll = time.monotonic()

    def __enter__(self) -> "_Supervisor":
        self._was_reaper = ctypes.c_int(0)
        if _LINUX and _libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(self._was_reaper), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_GET_CHILD_SUBREAPER) failed")
        self._children_before = self._children()
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        for worker in self.workers:
            if worker.process.is_alive():
                worker.process.terminate()  # its Match shuts its bots down
        for worker in self.workers:
            worker.process.join(timeout=self.limits.shutdown_grace * 4 + 1)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            os.close(worker.fd)
        self.workers.clear()
        self._kill_orphans()
        _prctl(_PR_SET_CHILD_SUBREAPER, self._was_reaper.value)

    def start(self, body: Callable[..., None], core: int | None = None, task: Any = None) -> _Worker:
        """A new worker running `body(send, heartbeat)`."""
        worker = _Worker(self.context, body, core, [other.fd for other in self.workers], task)
        self.workers.append(worker)
        return worker

    def events(self) -> list[tuple[_Worker, Any]]:
        """Wait a moment for messages: (worker, message) as they arrived, then (worker, `_Ended()`)
        for each worker that ended (it is reaped and its orphaned bots killed by then). A worker
        found stopped or stuck is killed, and ends by a later call."""
        multiprocessing.connection.wait([worker.fd for worker in self.workers], _POLL_SECONDS)
        now = time.monotonic()
        if now - self._last_poll > 1.0:  # this process was not running: nobody's progress was measured
            for worker in self.workers:
                worker.excuse(now)
        self._last_poll = now
        events = []
        for worker in list(self.workers):
            events += [(worker, message) for message in worker.channel.arrived()]
            if worker.channel.ended:
                self.workers.remove(worker)
                worker.reason = worker.reap()
                self._kill_orphans()
                events.append((worker, _Ended()))
            elif worker.reason is None and (reason := worker.stuck(now, self.stall)) is not None:
                worker.reason = reason
                worker.process.kill()
        return events

    def _children(self) -> set[int]:
        me = os.getpid()
        return {pid for pid, (_, parent, _) in _process_table().items() if parent == me}

    def _kill_orphans(self) -> None:
        """Kill (with their process groups) and reap the processes orphaned to this one since it began."""
        table = _process_table()
        me, own_group = os.getpid(), os.getpgrp()
        live = {worker.process.pid for worker in self.workers}
        orphans = [pid for pid, (_, parent, _) in table.items()
                   if parent == me and pid not in live and pid not in self._children_before]
        for pid in orphans:
            group = table[pid][2]
            try:
                if group != own_group:
                    os.killpg(group, signal.SIGKILL)
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # it is gone already (it is still reaped below)
        release_dead_referees()  # a dead worker's bots frozen between turns die only once thawed
        deadline = time.monotonic() + 2.0
        while orphans and time.monotonic() < deadline:
            orphans = [pid for pid in orphans if not self._reaped(pid)]
            if orphans:
                time.sleep(0.01)

    @staticmethod
    def _reaped(pid: int) -> bool:
        try:
            return os.waitpid(pid, os.WNOHANG)[0] == pid
        except ChildProcessError:
            return True  # reaped elsewhere


def supervised(work: Callable[[], T], limits: Limits) -> T:
    """`work()` run in a supervised worker process, for work that starts a bot: its result, or `Lost`
    when the worker was killed or stopped (by that bot) before returning."""
    result: list[T] = []
    prepare_shared(limits.sandbox)  # here, not again in each worker (a league checks every bot in one)
    with _Supervisor(limits, stall_limit(limits)) as supervisor:
        supervisor.start(lambda send, heartbeat: send(Returned(work())))
        while supervisor.workers:
            for worker, message in supervisor.events():
                match message:
                    case Returned(value):
                        result.append(value)
                    case WorkDone():
                        worker.done = True
                    case _Ended():
                        if not worker.done:
                            raise Lost(worker.reason or "lost")
                    case WorkFailed(detail):
                        raise ExecutionError(detail)
                    case _:
                        raise ExecutionError(f"a supervised worker sent {message!r}")
    return result[0]


class LocalExecutor(Executor):
    """Runs matches in `jobs` supervised worker processes, each optionally pinned to one core with
    its bots; bots' stderr is logged under `log_root` when given."""

    def __init__(self, jobs: int | None = None, pin_cores: bool = True, log_root: Path | None = None):
        self.jobs = jobs or usable_cores()
        self.pin_cores = pin_cores
        self.log_root = log_root

    def run(self, matches: Sequence[PlannedMatch], bots: Mapping[str, BotSpec], limits: Limits,
            disqualified: Mapping[str, str] | None = None,
            observer: Observer | None = None) -> Iterator[RunEvent]:
        pending = deque(portions(matches, self.jobs))
        if not pending:
            return
        prepare_shared(limits.sandbox)  # once here, not again in each match's worker
        barred = dict(disqualified or {})
        strikes: Counter[tuple[str, frozenset[str]]] = Counter()  # losses per (bot waited on, games left)
        unblamed: Counter[frozenset[str]] = Counter()  # losses per games left, while waiting on no bot
        slots: list[_Worker | None] = [None] * min(self.jobs, len(pending))
        with _Supervisor(limits, stall_limit(limits, bots.values())) as supervisor:
            while pending or any(slots):
                for slot, worker in enumerate(slots):
                    if worker is None and pending:
                        match = pending.popleft()
                        body = partial(self._play, match, bots, limits, dict(barred), observer)
                        slots[slot] = supervisor.start(body, slot if self.pin_cores else None,
                                                       task=match)
                for worker, message in supervisor.events():
                    match message:
                        case FinishedGame(game_id=game_id):
                            worker.received.add(game_id)
                            yield message
                        case FinishedMatch():
                            yield message
                        case GameBegun(game_id):
                            worker.playing = game_id
                        case Observed(kind, data):
                            if observer is not None:
                                observer(kind, data)
                        case WorkDone():
                            worker.done = True
                        case _Ended():
                            slots[slots.index(worker)] = None
                            if not worker.done:
                                yield from self._lost(worker, bots, barred, strikes, unblamed, pending)
                        case WorkFailed(detail):
                            raise ExecutionError(detail)
                        case _:
                            raise ExecutionError(f"a worker sent {message!r}")

    def _play(self, match: PlannedMatch, bots: Mapping[str, BotSpec], limits: Limits, barred: Mapping[str, str],
              observer: Observer | None, send: Callable[[Any], None], heartbeat: Callable[[int | None], None]) -> None:
        """A worker's body: play one match, sending each game; disqualified bots sit out."""
        hooks: dict[str, Any] = {"heartbeat": heartbeat, "barred": {
            index: Fault("sabotage", bots[key].name, barred[key])
            for index, key in enumerate(match.lineup) if key in barred}}

        def observe(kind: str, data: dict[str, Any]) -> None:
            if kind == "game_start":
                send(GameBegun(data["game_id"]))
            if observer is not None:
                send(Observed(kind, data))

        for item in play_match(match, bots, limits, self.log_root, observer=observe, **hooks):
            send(item)

    @staticmethod
    def _lost(worker: _Worker, bots: Mapping[str, BotSpec], barred: dict[str, str],
              strikes: Counter[tuple[str, frozenset[str]]], unblamed: Counter[frozenset[str]],
              pending: deque[PlannedMatch]) -> Iterator[WorkerLost]:
        """Account for a lost worker: blame the bot it waited on, disqualify it at its second loss at the
        same point, and put the games it did not finish back at the head of the queue."""
        match: PlannedMatch = worker.task
        unfinished = tuple(game for game in match.games if game.game_id not in worker.received)
        game_id = worker.playing if worker.playing not in worker.received else None
        key = None if worker.waiting is None else match.lineup[worker.waiting]
        reason = worker.reason or "lost"
        detail = None
        # Losses are counted per point of no progress (the same games left): the same bot waited on
        # twice there is deterministic sabotage; no bot waited on, time after time, is the referee's bug.
        point = frozenset(game.game_id for game in unfinished)
        if key is None and unfinished:
            unblamed[point] += 1
            if unblamed[point] >= _UNBLAMED_LOSSES:
                raise ExecutionError(f"the worker playing {game_id or match.match_id} was lost {unblamed[point]} "
                                     f"times while it waited on no bot (last: {reason}): a failure of the referee, "
                                     "not of a bot")
        elif key is not None and unfinished:
            strikes[key, point] += 1
            if strikes[key, point] >= 2 and key not in barred:
                detail = barred[key] = (f"left out of the rest of the run: twice in one game, the referee's worker "
                                        f"process was {reason} while it waited on this bot")
        yield WorkerLost(match.match_id, game_id, key, None if key is None else bots[key].name, reason, detail)
        if unfinished:
            pending.appendleft(replace(match, games=unfinished))
