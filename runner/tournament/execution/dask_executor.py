"""The Executor seam on a Dask cluster: portions of the schedule run as tasks on Dask workers.

The organiser (this process) keeps the results file and the schedule; workers are expendable.
Each portion is one task. Its games stream back as they finish, in batches (one Dask event on a
topic of the run's own at most BATCH_SECONDS after a batch's first game: an event per game costs
the worker, the scheduler and the organiser a wake-up each), and the task's result carries them
all again, with its bots' stderr, so a game whose batch was not sent or was lost is still stored
(a record is some 6 KB: sending it twice costs next to nothing; the organiser unpickles it once).
When a worker dies, Dask runs its tasks again elsewhere from the start of the portion, with the
same bots and deals: the games already received are dropped, so none is stored twice, and the
rest are those a local run would have played. Within a task the portion is played as locally, by
a portion host (`host`: a process of its own beside the worker thread, started by exec, not
forked from the worker) in a supervised process, so a bot that kills its referee costs what it
costs locally and never the Dask worker. Items travel from the host to the organiser pickled, as
the host made them: the worker only passes them on.

Bots travel without a shared filesystem: each bot folder is packed once (`shipping`), sent as a
Dask task result of its own that workers fetch when a portion needs it, and unpacked into the
worker machine's cache by content hash. A NAME=COMMAND bot has no folder: its command must work
as it is on every worker.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import queue
import socket
import tempfile
import threading
import time
import uuid
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import dask
import distributed
from distributed.worker import thread_state

from cardarena.cores import can_pin, usable_cores
from cardarena.config import AUTO, BWRAP, NONE, BotSpec, Limits
from cardarena.referee.pipes import append_capped
from cardarena.referee import sandbox
from cardarena.referee.sandbox import sweep_folders
from cardarena.referee.system import process_tag
from cardarena.referee.match import Observer
from cardarena.tournament.execution.events import FinishedGame, RunEvent
from cardarena.tournament.execution.execute import ExecutionError, Executor, portions
from cardarena.tournament.execution.host import PortionHost, thread_cores
from cardarena.tournament.planning.schedule import PlannedMatch
from cardarena.tournament.execution.shipping import BotPack, PackError, cache_root, pack_folder, unpack

CONNECT_SECONDS = 10.0  # how long to try reaching a scheduler before giving up
WORKER_WAIT_SECONDS = 60.0  # how long to wait for a cluster's first worker, or for one after all have left
_WORKER_LOOK_SECONDS = 1.0  # how often a run that hears nothing looks whether the cluster still has workers
BATCH_SECONDS = 0.2  # how long a finished game may wait on a worker for others to travel with it
#: What DASK.md's worker command sets (as DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False), and so the
#: local cluster too: the statistical profiler samples the thread running a task every 10 ms, and
#: this thread only waits for its portion host
WORKER_CONFIG = {"distributed.worker.profile.enabled": False}
LOGS_PREFIX = "cardarena-logs-"  # a portion's bot logs on a worker, in the temporary folder: <prefix><worker's process tag>-...
_POLL_SECONDS = 0.2  # how often the organiser looks up from waiting (so Ctrl-C is felt at once)
_claimed_core: list[Any] = []  # this worker process's core lock (an open file), once claimed
#: each task thread's portion host: the thread owns it (and the host dies with the thread). Not a
#: WorkerPlugin: registering one replaces a plugin of the same name, so a second organiser on a
#: shared cluster would close the hosts of the first one's running portions.
_thread = threading.local()


class ClusterError(ExecutionError):
    """The Dask cluster cannot be reached or used; the message says which and why."""


def worker_bwrap_problem() -> str | None:
    """Why bubblewrap cannot run on this worker (None when it can), as the sandbox module answers it
    at call time: a function shipped to workers by name must look it up there, not bind it here."""
    return sandbox.bwrap_problem()


class DaskExecutor(Executor):
    """Runs portions as tasks on the Dask cluster at `address`, or on a local cluster of `jobs`
    one-thread worker processes when `address` is None; bots with a folder are shipped to the
    workers; bots' stderr is appended to the logs under `log_root`."""

    def __init__(self, address: str | None, jobs: int | None = None, pin_cores: bool = True,
                 log_root: Path | None = None):
        self.pin_cores = pin_cores
        self.log_root = log_root
        self.cluster = None
        try:
            if address is None:
                with dask.config.set(WORKER_CONFIG):
                    self.cluster = distributed.LocalCluster(
                        n_workers=jobs or usable_cores(), threads_per_worker=1, processes=True, memory_limit=0,
                        host="127.0.0.1", dashboard_address=None,
                        # no dashboard, and its HTTP server (health checks) on a free port of this machine only
                        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
                address = self.cluster.scheduler_address
            else:
                _check_reachable(address)
            self.client = distributed.Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as error:
            self.close()
            raise ClusterError(f"cannot reach the Dask scheduler at {address}: {error}") from None
        self.address = address
        self.warnings: list[str] = []  # what went wrong after the games were safe, for the user to hear
        self._unsandboxed: set[str] = set()  # workers named already for running bots without bubblewrap
        self._packs: dict[str, tuple[BotPack, Any]] = {}  # bot name -> its pack and the task holding it

    def close(self) -> None:
        """Disconnect from the cluster (and stop it, when this executor started it)."""
        if getattr(self, "client", None) is not None:
            self.client.close()
            self.client = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None

    def where(self) -> str:
        cluster = "a local Dask cluster" if self.cluster is not None else "the Dask cluster"
        threads = self.workers()
        return f"on {cluster} at {self.address} ({threads} worker thread{'' if threads == 1 else 's'})"

    def workers(self) -> int:
        """Threads of the cluster's workers (its parallelism), waiting a while for a first worker."""
        try:
            self.client.wait_for_workers(1, timeout=WORKER_WAIT_SECONDS)
        except TimeoutError:
            raise ClusterError(f"the Dask scheduler at {self.address} has no worker "
                               f"(waited {WORKER_WAIT_SECONDS:g} s): start some with {self._worker_command()}") from None
        return sum(self.client.nthreads().values())

    def preflight(self, limits: Limits) -> list[str]:
        """Wait for a first worker, then ask every worker whether it can run bubblewrap, as the
        organiser asked its own machine: under `auto` a worker that cannot is a warning (its bots
        run without a sandbox), under `bwrap` a ClusterError naming it. A worker that joins later
        answers with each portion it plays, and the run ends with a warning naming it."""
        self.workers()  # wait for a first worker (ClusterError after a while without one)
        if limits.sandbox.mode == NONE:
            return []
        lacking = {}  # worker -> why it cannot
        for worker, answer in sorted(self.client.run(worker_bwrap_problem, on_error="return").items()):
            if isinstance(answer, BaseException):
                answer = f"cannot tell whether bubblewrap runs there ({type(answer).__name__}: {answer})"
            if answer is not None:
                lacking[worker] = answer
        if lacking and limits.sandbox.mode == BWRAP:
            raise ClusterError("--sandbox bwrap: " + "; ".join(f"Dask worker {worker}: {problem}"
                                                               for worker, problem in lacking.items()))
        self._unsandboxed.update(lacking)
        return [_unsandboxed_warning(worker, problem, "run") for worker, problem in lacking.items()]

    def _worker_command(self) -> str:
        """DASK.md's command that starts workers for this cluster."""
        return (f"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False dask worker {self.address} "
                "--nworkers N --nthreads 1 --memory-limit 0")

    def run(self, matches: Sequence[PlannedMatch], bots: Mapping[str, BotSpec], limits: Limits,
            disqualified: Mapping[str, str] | None = None,
            observer: Observer | None = None) -> Iterator[RunEvent]:
        if observer is not None:
            raise ExecutionError("the Dask executor does not stream each decision to an observer")
        cut = portions(matches, self.workers())
        if not cut:
            return
        shipped = self._ship({name for match in cut for name in match.lineup}, bots)
        topic = f"cardarena-{uuid.uuid4().hex}"
        inbox: queue.Queue[_Batch | _PortionEnded] = queue.Queue()
        self.client.subscribe_topic(topic, lambda event: inbox.put(_Batch.from_event(event[1])))
        futures = {}
        for index, match in enumerate(cut):
            packs = {name: shipped[name] for name in set(match.lineup) if name in shipped}
            futures[index] = future = self.client.submit(
                play_portion, match, dict(bots), packs, limits, dict(disqualified or {}), self.pin_cores, topic,
                key=f"{topic}-{index}", pure=False)
            future.add_done_callback(lambda _, index=index: inbox.put(_PortionEnded(index)))
        seen: set[Any] = set()  # the items already passed on: (attempt, number), and each game's id
        alone_since: float | None = None  # since when the cluster has had no worker
        looked = time.monotonic()  # when the worker count was last looked at
        try:
            while futures:
                try:
                    message = inbox.get(timeout=_POLL_SECONDS)
                except queue.Empty:
                    if time.monotonic() - looked >= _WORKER_LOOK_SECONDS:
                        looked = time.monotonic()
                        alone_since = self._without_workers(alone_since)
                    continue
                if isinstance(message, _Batch):
                    yield from _new_items(seen, message.attempt, message.first, message.items)
                    continue
                future = futures.pop(message.index)
                outcome = self._outcome(future, cut[message.index])
                future.release()
                yield from _new_items(seen, outcome["attempt"], 0, outcome["items"])
                self._append_logs(outcome["logs"], limits)
                if outcome["unsandboxed"] is not None and outcome["worker"] not in self._unsandboxed:
                    self._unsandboxed.add(outcome["worker"])  # one that joined after the preflight
                    self.warnings.append(_unsandboxed_warning(outcome["worker"], outcome["unsandboxed"], "ran"))
        finally:
            self.client.unsubscribe_topic(topic)
            if futures:
                self.client.cancel(list(futures.values()), force=True)
            self._forget_events(topic)

    def _without_workers(self, since: float | None) -> float | None:
        """Since when the cluster has had no worker (None while it has some, or nobody can tell);
        ClusterError once it has had none for WORKER_WAIT_SECONDS: its tasks would wait for ever."""
        threads = self.client.scheduler_info(n_workers=0).get("total_threads")  # no worker list: cheap
        if threads != 0:
            return None  # a lost scheduler shows as no count at all: the tasks' futures report that
        since = since or time.monotonic()
        if time.monotonic() - since > WORKER_WAIT_SECONDS:
            raise ClusterError(f"every worker of the Dask cluster at {self.address} has left and none joined "
                               f"within {WORKER_WAIT_SECONDS:g} s: start some with {self._worker_command()}")
        return since

    def _forget_events(self, topic: str) -> None:
        """Drop the run's batches of games from the scheduler, which keeps the last 1,000 events of
        every topic for as long as it runs (tens of MB per run); a scheduler that refuses is a warning.
        Not asked once the connection to the scheduler is lost (the run fails on that): a dead scheduler
        keeps nothing, and the call would first wait out the client's reconnection (CONNECT_SECONDS)
        before the user hears why the run ended."""
        if self.client.status != "running":
            return
        def truncate(topic: str, dask_scheduler: Any = None) -> None:
            # Local, so that it travels by value: the scheduler's machine need not have cardarena.
            # Dask has no public call for this; its own cleanup of a departed client's topic is this one.
            dask_scheduler._broker.truncate(topic)  # noqa: SLF001

        try:
            self.client.run_on_scheduler(truncate, topic)
        except Exception as error:  # noqa: BLE001 - the games are stored: failing to tidy up only warns
            self.warnings.append(f"the Dask scheduler at {self.address} keeps this run's games in its event log "
                                 f"(its last 1,000 batches, until it restarts): could not clear them: "
                                 f"{type(error).__name__}: {error}")

    def _ship(self, names: set[str], bots: Mapping[str, BotSpec]) -> dict[str, tuple[str, str, Any]]:
        """Pack each bot folder of `names` once and hand the pack to the cluster as the result of a
        task of its own, so that workers fetch it only when they need it and Dask makes it again if
        the worker holding it dies: bot name -> (pack name, working folder within it, its future)."""
        shipped = {}
        for name in sorted(names):
            if bots[name].folder is None:
                continue
            if name not in self._packs:
                try:
                    pack = pack_folder(Path(bots[name].folder), None if bots[name].cwd is None else Path(bots[name].cwd))
                except PackError as error:
                    raise ExecutionError(f"bot {name}: {error}") from None
                with warnings.catch_warnings():  # a large bot is meant to be in the graph: it is shipped once
                    warnings.simplefilter("ignore", UserWarning)
                    future = self.client.submit(_pack_bytes, pack.data, key=f"cardarena-bot-{pack.digest}", pure=False)
                self._packs[name] = (pack, future)
            pack, future = self._packs[name]
            shipped[name] = (pack.digest, pack.workdir, future)
        return shipped

    def _outcome(self, future: Any, match: PlannedMatch) -> dict[str, Any]:
        """A finished task's result; ExecutionError when it failed, its workers kept dying, or the
        scheduler went away."""
        try:
            if future.status == "finished":
                return future.result()
            error = future.exception() if future.status == "error" else None
        except OSError as lost:  # the connection closed while the result was fetched (Dask's CommClosedError)
            raise ExecutionError(f"portion {match.match_id}: the Dask scheduler at {self.address} went away "
                                 f"({type(lost).__name__}); is the scheduler still running?") from None
        if error is not None:
            if isinstance(error, distributed.KilledWorker):
                raise ExecutionError(f"portion {match.match_id} from deal {match.games[0].deal}: every Dask "
                                     f"worker that ran it died ({error}); a bot may be killing its worker")
            raise ExecutionError(f"portion {match.match_id} from deal {match.games[0].deal} failed on a Dask "
                                 f"worker: {type(error).__name__}: {error}")
        raise ExecutionError(f"portion {match.match_id}: the Dask scheduler at {self.address} dropped it "
                             f"({future.status}); is the scheduler still running?")

    def _append_logs(self, logs: Mapping[str, bytes], limits: Limits) -> None:
        """Append a portion's stderr logs (one chunk per bot) to the run's logs, within their cap."""
        if self.log_root is None:
            return
        self.log_root.mkdir(parents=True, exist_ok=True)
        for name, data in logs.items():
            log = os.open(self.log_root / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                append_capped(log, data, limits.stderr_cap)
            finally:
                os.close(log)


def _unsandboxed_warning(worker: str, problem: str, tense: str) -> str:
    """What the user hears of a worker that cannot run bubblewrap under --sandbox auto."""
    return (f"Dask worker {worker}: {problem}; its bots {tense} without a sandbox (clean environment and caps "
            "only); --sandbox none silences this")


def _check_reachable(address: str) -> None:
    """Fail at once (OSError) when nothing listens at a tcp:// address, rather than after Dask's
    connection retries have used up their timeout."""
    protocol, _, location = address.partition("://")
    if protocol == "tcp":
        host, _, port = location.rpartition(":")
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS):
            pass


def _pack_bytes(data: bytes) -> bytes:
    """A bot pack as a task result: workers fetch it from whichever worker holds it."""
    return data


@dataclass(frozen=True)
class _Batch:
    """Run events of one attempt at a portion (pickled), as a worker sent them in one Dask event,
    numbered from `first` within the attempt."""

    attempt: str
    first: int
    items: list[bytes]

    @classmethod
    def from_event(cls, message: Mapping[str, Any]) -> _Batch:
        """The batch a worker logged, from the event as the scheduler passes it on: the scheduler
        adds keys of its own to a worker's message (distributed 2026.8 adds `worker`, its address)."""
        return cls(message["attempt"], message["first"], message["items"])


@dataclass(frozen=True)
class _PortionEnded:
    """The task of the `index`-th portion ended (its result, or its failure, waits in its future)."""

    index: int


def _new_items(seen: set[Any], attempt: str, first: int, items: Sequence[bytes]) -> Iterator[RunEvent]:
    """The `items` (pickled, numbered from `first` within their task's `attempt`) not passed on already:
    streamed and then in the task's result, or a game played again after its worker died. An item
    is unpickled only when its number within the attempt is new."""
    for number, data in enumerate(items, first):
        if (attempt, number) in seen:
            continue
        seen.add((attempt, number))
        item = pickle.loads(data)
        if isinstance(item, FinishedGame):
            if item.game_id in seen:
                continue
            seen.add(item.game_id)
        yield item


class _Batches:
    """A task's items (pickled) on their way to the organiser, sent in batches: `send` gets one message
    per batch, `later(BATCH_SECONDS, flush)` is asked to flush each batch that soon after its first
    item. Items still waiting when the task ends are not sent (`close`): its result carries every item."""

    def __init__(self, attempt: str, send: Callable[[dict[str, Any]], None],
                 later: Callable[[float, Callable[[], None]], None]):
        self.attempt, self._send, self._later = attempt, send, later
        self._lock = threading.Lock()
        self._waiting: list[bytes] = []
        self._sent = 0  # items sent or dropped at close: the number of the first waiting item
        self._closed = False

    def add(self, item: bytes) -> None:
        with self._lock:
            self._waiting.append(item)
            if len(self._waiting) > 1 or self._closed:
                return  # a flush is due already
        self._later(BATCH_SECONDS, self.flush)

    def flush(self) -> None:
        with self._lock:
            batch, first = self._waiting, self._sent
            self._waiting, self._sent = [], first + len(batch)
            if self._closed or not batch:
                return
            message = {"attempt": self.attempt, "first": first, "items": batch}
        self._send(message)

    def close(self) -> None:
        with self._lock:
            self._closed = True


def play_portion(match: PlannedMatch, bots: Mapping[str, BotSpec], packs: Mapping[str, tuple[str, str, bytes]],
                 limits: Limits, disqualified: Mapping[str, str], pin_cores: bool, topic: str) -> dict[str, Any]:
    """A Dask task: play one portion on this worker, sending each item to the organiser as it comes.

    The portion is played as locally, by this thread's portion host (a process of its own, see
    `cardarena.tournament.execution.host`) in a supervised worker process, so a bot that kills or stops its
    referee costs what it costs locally (its games played again, then its disqualification), not
    the Dask worker. Shipped bots (`packs`: bot -> pack name, working
    folder, bytes) run from this machine's cache. A bot whose pack cannot be unpacked here still
    gets its seat, and fails to start there: a start fault naming this worker, like a bot that
    cannot start here for any other reason (every fault names the worker). Stops between games once
    the organiser cancels the task (Ctrl-C) or goes away.
    """
    worker = distributed.get_worker()
    key = thread_state.key
    attempt = uuid.uuid4().hex  # this run of the task: Dask may run it again after a worker dies
    where = f"Dask worker {worker.address} on {socket.gethostname()}"
    if pin_cores and can_pin():
        _pin_to_free_core()  # the host started from this thread, its worker and their bots inherit its core
    elif can_pin():  # undo an earlier run's pin: the worker's main thread (its event loop) is never pinned
        os.sched_setaffinity(0, os.sched_getaffinity(os.getpid()))
    specs, problems = dict(bots), {}
    for name, (digest, workdir, data) in packs.items():
        try:
            folder = unpack(digest, data)
        except PackError as error:
            folder, problems[bots[name].name] = cache_root() / digest, f"; its folder could not be unpacked there: {error}"
        specs[name] = replace(bots[name], cwd=str(folder / workdir), folder=str(folder))
    items: list[bytes] = []  # each pickled by the host: this thread passes them on unopened
    batches = _Batches(attempt, lambda message: worker.log_event(topic, message),
                       lambda delay, flush: worker.loop.add_callback(worker.loop.call_later, delay, flush))
    sweep_folders(LOGS_PREFIX)  # those of worker processes killed in mid-portion
    with tempfile.TemporaryDirectory(prefix=f"{LOGS_PREFIX}{process_tag()}-") as logs:
        play = _thread_host().play(match, specs, limits, disqualified, Path(logs), where, problems)
        for item in play:
            batches.add(item)
            items.append(item)
            task = worker.state.tasks.get(key)
            if task is None or task.state != "executing":
                play.close()  # cancelled: the organiser stores nothing more of it, so stop its bots now
                break
        batches.close()
        chunks = {path.name: path.read_bytes() for path in Path(logs).iterdir()}
    sweep_folders(LOGS_PREFIX)  # again: a worker killed while this portion played left its logs meanwhile
    unsandboxed = worker_bwrap_problem() if limits.sandbox.mode == AUTO else None  # its hosts' bots ran without one
    return {"attempt": attempt, "items": items, "logs": chunks, "worker": worker.address, "unsandboxed": unsandboxed}


def _thread_host() -> PortionHost:
    """This task thread's portion host, started on its first task, and again when the last one ended
    or was started on other cores (it keeps the cores it started on)."""
    host: PortionHost | None = getattr(_thread, "host", None)
    if host is None or not host.alive() or host.cores != thread_cores():
        if host is not None:
            host.close()
        _thread.host = host = PortionHost(host_environment())
    return host


def host_environment() -> dict[str, str]:
    """This worker's environment without what a Dask nanny sets for its worker process alone
    (`distributed.nanny.pre-spawn-environ`), so that the referees and bots run in the environment
    they have locally: MALLOC_TRIM_THRESHOLD_=65536 has glibc hand memory back at every turn."""
    tuning = dask.config.get("distributed.nanny.pre-spawn-environ", {})
    return {name: value for name, value in os.environ.items()
            if name not in tuning or value != str(tuning[name])}


def _pin_to_free_core() -> None:
    """Pin this worker's task thread, and so the bots it starts, to a core no other cardarena worker
    on this machine holds: each core is claimed by a lock file held for the process's life. With
    every core taken (more workers than cores), the thread stays unpinned."""
    if not _claimed_core:
        folder = Path(tempfile.gettempdir()) / f"cardarena-cores-{os.getuid()}"
        folder.mkdir(exist_ok=True)
        for core in sorted(os.sched_getaffinity(0)):
            lock = open(folder / f"core-{core}.lock", "w")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                lock.close()
                continue
            _claimed_core.append((lock, core))
            break
        else:
            _claimed_core.append((None, None))
    core = _claimed_core[0][1]
    if core is not None:
        os.sched_setaffinity(0, {core})
