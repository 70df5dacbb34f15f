"""A portion host: a fresh Python process that plays the portions sent to it, as the organiser's own
process plays them in a local run, and streams back what they yield.

A Dask worker should not fork its referees from its own process. It is multi-threaded, so a
fork copies locks that other threads may hold at that moment. It is daemonic, so multiprocessing
refuses it children. It also runs with its nanny's malloc tuning, which a fork keeps: a fixed
MALLOC_TRIM_THRESHOLD_ switches off glibc's adaptive mmap threshold, so every 256 KiB msgpack
buffer becomes an mmap, a munmap and page faults. That cost the referee 15% more CPU than locally.
A host is started by exec, with the worker's environment minus that tuning. Each portion sent to it
runs in a `LocalExecutor` of one supervised worker. The host is kept for the next portion, so the
interpreter starts once per worker thread, not once per portion.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Iterator, Mapping

from cardarena.games import all_games
from cardarena.referee.match import GameRecord
from cardarena.config import BotSpec, Limits
from cardarena.referee.cgroups import freezes_bots, release_dead_referees
from cardarena.tournament.execution.events import Channel, FinishedGame, PortionJob, Shipped, WorkDone, WorkFailed
from cardarena.tournament.execution.execute import ExecutionError, LocalExecutor, become_worker, describe_exit
from cardarena.tournament.planning.schedule import PlannedMatch

#: The host's command line: the parent's pid, then the parent's import path, which the host takes as
#: its own (as multiprocessing's spawn does), so it imports the same cardarena however that was found.
_BOOT = ("import sys; sys.path[:] = sys.argv[2:]; "
         "from cardarena.tournament.execution.host import serve; serve(int(sys.argv[1]))")
#: how long a host's owner waits for the referee of a host that died to follow it (its death signal
#: takes milliseconds), before leaving its frozen bots to the next referee's sweep
RELEASE_SECONDS = 2.0
STOP_SECONDS = 30.0  # how long a stopped host may take to shut its portion's bots down before it is killed


class PortionHost:
    """A host process of this thread: `play` sends it a portion and yields its items as they come.

    The host dies with the thread that started it (its parent-death signal), and with it its
    portion's worker and bots. `environment` is the whole environment it runs with.
    """

    def __init__(self, environment: Mapping[str, str]):
        self.cores = thread_cores()  # the host keeps the cores it was started on
        self.process = subprocess.Popen([sys.executable, "-c", _BOOT, str(os.getpid()), *sys.path],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(environment))
        self.channel = Channel(reader=self.process.stdout.fileno(), writer=self.process.stdin.fileno())

    def alive(self) -> bool:
        """Whether the host is still running (a host that ended is replaced, not reused)."""
        return self.process.poll() is None

    def play(self, match: PlannedMatch, bots: Mapping[str, BotSpec], limits: Limits, disqualified: Mapping[str, str],
             log_root: Path, place: str | None = None, problems: Mapping[str, str] | None = None) -> Iterator[bytes]:
        """Play `match` on the host, yielding each run event (`FinishedGame`, `FinishedMatch`, `WorkerLost`)
        pickled, as the host sent it: a process that only passes events on need not unpickle them.
        Each fault's detail names `place`, when given, and adds `problems[bot]`, what went wrong there
        with the bot beforehand. Closing the iterator before its end stops the host and the
        portion's bots. ExecutionError when the portion failed or the host died."""
        finished = False
        try:
            try:
                self.channel.send(PortionJob(match, dict(bots), limits, dict(disqualified), str(log_root), place,
                                             dict(problems or {})))
            except BrokenPipeError:
                raise ExecutionError(self._ended()) from None
            while True:
                try:
                    message = self.channel.receive()
                except EOFError:
                    message = None
                match message:
                    case Shipped(data):
                        yield data
                        continue
                    case WorkDone():
                        finished = True
                        return
                    case WorkFailed(detail):
                        finished = True
                        raise ExecutionError(detail)
                    case _:
                        raise ExecutionError(self._ended())
        finally:
            if not finished:
                self.close()

    def close(self) -> None:
        """Stop the host: SIGTERM lets it shut its portion's bots down, and SIGKILL follows if it takes
        more than STOP_SECONDS."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdin.close()
        self.process.stdout.close()
        release_dead_referees()

    def _ended(self) -> str:
        """Why the host can play no more: how it ended."""
        try:
            code = self.process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        _release_its_referees_bots()
        return f"the portion host (pid {self.process.pid}) ended in mid-portion: {describe_exit(code)}"


def _release_its_referees_bots() -> None:
    """After a host died in mid-portion: its referee dies of the host's death a moment later, and
    the bots it had frozen between turns can die only once thawed; wait (at most RELEASE_SECONDS)
    until that referee is gone and its bots' cgroups are released."""
    deadline = time.monotonic() + RELEASE_SECONDS
    while freezes_bots(confined=True) and not release_dead_referees() and time.monotonic() < deadline:
        time.sleep(0.05)


def thread_cores() -> frozenset[int] | None:
    """The cores this thread may run on (None where that cannot be known)."""
    return frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None


def serve(parent: int) -> None:
    """The host's main loop: play each portion read from stdin, writing its items to stdout, until
    stdin ends (the parent is done with it) or the parent dies."""
    if not become_worker(parent):
        return
    channel = Channel(reader=sys.stdin.fileno(), writer=os.dup(1))
    os.dup2(2, 1)  # a stray print goes to the worker's log, not into the results
    all_games()  # import every game once here, not again in each forked worker
    while (job := channel.receive()) is not None:
        try:
            for event in LocalExecutor(1, pin_cores=False, log_root=Path(job.log_root)).run(
                    [job.match], job.bots, job.limits, job.disqualified):
                if job.place is not None and isinstance(event, FinishedGame):
                    event = replace(event, record=_placed(event.record, job.place, job.problems))
                channel.send(Shipped(pickle.dumps(event, pickle.HIGHEST_PROTOCOL)))
            outcome: WorkDone | WorkFailed = WorkDone()
        except ExecutionError as error:
            outcome = WorkFailed(str(error))
        except Exception:  # noqa: BLE001 - a bug of the referee's: its parent raises it as ExecutionError
            outcome = WorkFailed(traceback.format_exc())
        channel.send(outcome)


def _placed(record: GameRecord, place: str, problems: Mapping[str, str]) -> GameRecord:
    """The record with each fault saying where it happened (a bot that cannot start on one machine,
    or is slow there, is that machine's problem), and what went wrong there with the bot before."""
    if not record.faults:
        return record
    return replace(record, faults=[replace(fault, detail=f"{fault.detail} (on {place}{problems.get(fault.bot, '')})")
                                   for fault in record.faults])
