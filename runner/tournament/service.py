"""A tournament run as a service: options in, games recorded, an outcome out.

`RunOptions` holds what a run is asked to do, parsed once (from the command line, or by a league
server); `set_up` turns them into a `RunSetup` (the league, where its results go, which executor
plays it), and `RunSession.play` drives it to its end; the session owns the executor, the
results store and the progress display for the run's length, whatever ends it. The plan
(`planning.plan`) says what is played and when it is done, so a full schedule and an SPRT are
driven by the same loop. What people should hear along the way goes to `say`, a line at a time.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

from cardarena.cores import PINNING_UNAVAILABLE, can_pin
from cardarena.errors import CardarenaError
from cardarena.referee.faults import BotFault, Fault, printable, telling_lines
from cardarena.config import BotSpec, Limits
from cardarena.referee.process import BotProcess
from cardarena.tournament.execution.events import EventSink, FinishedGame, FinishedMatch, WorkerLost, drive
from cardarena.tournament.execution.execute import ExecutionError, Executor, LocalExecutor, Lost, supervised
from cardarena.tournament.execution.progress import Progress
from cardarena.tournament.planning.league import (SAMPLE_LEAGUE, League, LeagueError, LeagueOverrides, build_league,
                                                  read_league_file)
from cardarena.tournament.planning.plan import RunPlan, plan_of
from cardarena.record import GameRecord
from cardarena.tournament.store import ResultStore, StoreError, StoredMatchFault

EXECUTORS = ("local", "dask")
#: where a run writes results by default (results/<name>.sqlite and its logs), relative to the current directory
RESULTS_DIR = Path("results")

Say = Callable[[str], None]


class RunFailed(CardarenaError):
    """A run that stopped before its end; the message says why and what is saved."""


@dataclass(frozen=True)
class RunOptions:
    """What a run is asked to do, each setting parsed once: the league file (None: the sample league,
    unless bots are given), the settings over it, and how the run is played and kept."""

    league_file: Path | None = None
    league: LeagueOverrides = LeagueOverrides()
    jobs: int | None = None
    executor: str | None = None  # "local" or "dask"; None: dask where the league names a scheduler
    out: Path | None = None
    resume: bool = False
    strict: bool = False  # a run in which any bot faulted exits with status 1


@dataclass(frozen=True)
class RunSetup:
    """A run ready to start: its league, its results file, and which executor plays it."""

    options: RunOptions
    league: League
    source: str  # where the league came from, for messages
    path: Path
    executor: str

    @property
    def logs(self) -> Path:
        """The folder of the bots' stderr logs, beside the results file."""
        return self.path.with_suffix(".logs")


@dataclass(frozen=True)
class RunOutcome:
    """What a run recorded: its games and faults at shutdown, what its plan reports, its exit status."""

    path: Path
    games: list[GameRecord]
    match_faults: list[StoredMatchFault]
    report: str | None
    status: int


def set_up(options: RunOptions) -> RunSetup:
    """The league of `options` (the league file's, with the options over it), where its results go,
    and its executor's kind; LeagueError or StoreError when they cannot be."""
    league_file = options.league_file
    if league_file is None and not options.league.bots:
        league_file = SAMPLE_LEAGUE
    if league_file is None:
        league, source = build_league({}, Path.cwd(), "command line", options.league), "command line"
    else:
        source = str(league_file)
        league = build_league(read_league_file(league_file), league_file.parent, source, options.league)
    kind = _executor_kind(league, options)
    return RunSetup(options, league, source, results_path(league, options.out, options.resume), kind)


def _executor_kind(league: League, options: RunOptions) -> str:
    """Which executor plays the run: the one asked for, else dask when a scheduler is named, else local."""
    if options.executor == "local" and options.league.scheduler is not None:
        raise LeagueError("--scheduler names a Dask cluster, and --executor local plays on this machine: choose one")
    kind = options.executor or ("dask" if league.scheduler else "local")
    if kind == "dask" and league.scheduler is not None and options.jobs is not None:
        raise LeagueError("--jobs sets the workers of a local run; a Dask cluster has as many as its workers' threads")
    return kind


def results_path(league: League, out: Path | None, resume: bool) -> Path:
    """Where results go: `out`, the league's `out`, or results/<name>.sqlite (-2, -3 ... when taken;
    when resuming, the latest of those)."""
    if out is not None or league.out is not None:
        return out or league.out
    candidates = [RESULTS_DIR / f"{league.name}.sqlite"]
    while candidates[-1].exists():
        candidates.append(RESULTS_DIR / f"{league.name}-{len(candidates) + 1}.sqlite")
    if resume:
        if len(candidates) == 1:
            raise StoreError(f"{candidates[0]}: nothing to resume (no such results file)")
        return candidates[-2]
    return candidates[-1]


# -- before the results file: the bots start, the executor is reachable -------------------------

def start_bots(setup: RunSetup, say: Say) -> RunSetup:
    """Start every bot once and take its hello; a bot that cannot leaves this run with a warning,
    rather than losing every game it was scheduled for (an unbuilt sample bot, say)."""
    league, ready = setup.league, []
    for entrant in league.entrants:
        try:
            fault = supervised(partial(_start_once, entrant.spec, league.limits), league.limits)
        except Lost as lost:
            say(f"warning: {entrant.name} left out of this run: the referee's process was {lost.reason} "
                "while it started")
            continue
        if fault is None:
            ready.append(entrant)
        else:
            stderr = " | ".join(telling_lines(fault.stderr_tail))
            say(printable(f"warning: {entrant.name} left out of this run: it failed to start "
                          f"({fault.kind}: {fault.detail}){'; stderr: ' + stderr if stderr else ''}; "
                          "if it needs building, build it (sample bots: bash sample_bots/build.sh), "
                          "then add it with --resume"))
    if len(ready) < 2:
        raise RunFailed(f"only {len(ready)} of {len(league.entrants)} bots could start; a tournament needs two")
    missing = [name for name in league.indispensable() if name not in {entrant.name for entrant in ready}]
    if missing:
        raise RunFailed(f"the SPRT cannot run without {' and '.join(missing)}")
    return replace(setup, league=replace(league, entrants=tuple(ready)))


def _start_once(spec: BotSpec, limits: Limits) -> Fault | None:
    """Start a bot, take its hello and stop it: the fault that kept it from starting, or None."""
    process = BotProcess(spec, limits)
    try:
        process.start()
    except BotFault as error:
        return error.fault
    finally:
        process.stop()
    return None


def make_executor(setup: RunSetup) -> Executor:
    """The executor of a run: local worker processes, or a Dask cluster (connected to at once, so an
    unreachable scheduler is reported before the results file is made)."""
    if setup.executor == "local":
        return LocalExecutor(setup.options.jobs, setup.league.pin_cores, log_root=setup.logs)
    try:
        from cardarena.tournament.execution.dask_executor import DaskExecutor
    except ModuleNotFoundError as error:
        if error.name not in ("dask", "distributed"):
            raise
        raise ExecutionError("the Dask executor needs Dask: pip install 'cardarena[dask]'") from None
    # Dask's client logs its troubles (a lost scheduler: an error line and two tracebacks) on stderr;
    # run reports each failure in a line of its own, with the games saved, so only critical ones pass
    for name in ("distributed", *(name for name in logging.root.manager.loggerDict if name.startswith("distributed."))):
        logging.getLogger(name).setLevel(logging.CRITICAL)
        for handler in logging.getLogger(name).handlers:
            handler.setLevel(logging.CRITICAL)  # children's records reach it whatever its logger's level
    return DaskExecutor(setup.league.scheduler, setup.options.jobs, setup.league.pin_cores, setup.logs)


# -- the results file ---------------------------------------------------------------------------

def open_results(setup: RunSetup, say: Say) -> tuple[ResultStore, str]:
    """The results store of the run (new, or an existing one being resumed or extended), and the key
    every deal seed derives from: the store's secret, or the league's explicit deal seed."""
    path, league, resume = setup.path, setup.league, setup.options.resume
    _require_results_path(path, resume)
    if not resume:
        set_aside_stale_logs(setup.logs, say)
    store = ResultStore(path, create=True)
    try:
        if store.settings() is None:
            store.save_settings(league.settings_fingerprint())
        else:
            _check_resume(store, league)
        known = store.entrants()
        for entrant in league.entrants:
            if entrant.name not in known:
                store.add_entrant(entrant.name, entrant.manifest_hash, list(entrant.spec.command),
                                  list(entrant.games), dict(entrant.identity.files),
                                  {"folder": entrant.spec.folder, "cwd": entrant.spec.cwd or str(Path.cwd())})
        deal_key = store.deal_secret() if league.deal_seed is None else str(league.deal_seed)
    except StoreError:
        store.close()
        raise
    return store, deal_key


def check_results_file(setup: RunSetup) -> None:
    """Refuse, before any bot starts (and before the machine's warnings, so that a refusal is the
    command's one line), a results file the run cannot take: one that holds results without
    --resume, none to resume, or one to resume that is damaged or was recorded with other settings
    or bots. `open_results` checks again when it opens the file for the run."""
    _require_results_path(setup.path, setup.options.resume)
    if setup.options.resume:
        with ResultStore(setup.path) as store:
            _check_resume(store, setup.league)


def _require_results_path(path: Path, resume: bool) -> None:
    """StoreError unless the results file exists exactly when the run resumes one."""
    if path.exists() and not resume:
        raise StoreError(f"{path}: already holds results; pass --resume to continue it, or another --out")
    if resume and not path.exists():
        raise StoreError(f"{path}: nothing to resume (no such results file)")


def _check_resume(store: ResultStore, league: League) -> None:
    """Refuse to continue a tournament under other settings or with a changed bot."""
    recorded = store.settings()
    current = league.settings_fingerprint()
    if recorded != current:
        differing = sorted(key for key in set(recorded) | set(current) if recorded.get(key) != current.get(key))
        raise StoreError(f"{store.path}: recorded with other settings ({', '.join(differing)} differ); "
                         "use the same settings, or --out for a new results file")
    entrants = {entrant.name: entrant for entrant in league.entrants}
    for name, stored in store.entrants().items():
        if name not in entrants:
            raise StoreError(f"{store.path}: bot {name!r} played in this tournament but is not entered now")
        identity = entrants[name].identity
        if identity.digest != stored["manifest_hash"]:
            changed = identity.changes(stored["files"]) if stored["files"] else []
            named = ", ".join(repr(path) for path in changed[:5])
            named += f" and {len(changed) - 5} more" if len(changed) > 5 else ""
            raise StoreError(f"{store.path}: bot {name!r} changed since its games were recorded "
                             f"({'changed: ' + named if changed else 'its files differ'}); "
                             "use --out for a new results file")


def set_aside_stale_logs(logs: Path, say: Say) -> None:
    """A new results file starts with empty bot logs. Logs left by an earlier results file of the
    same name, since deleted, would count toward this run's cap on each bot's stderr: they are
    moved aside, with a note saying where (StoreError when they cannot be)."""
    if not logs.is_dir() or not any(logs.iterdir()):
        return
    aside = logs.with_name(f"{logs.name}.old-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        logs.rename(aside)
    except OSError as error:
        raise StoreError(f"{logs}: holds the bot logs of an earlier results file; cannot move them aside "
                         f"({error.strerror}): move or delete them") from None
    say(f"note: {logs} held the bot logs of an earlier results file that is gone: moved to {aside}")


# -- the run ------------------------------------------------------------------------------------

class RunSession(contextlib.ExitStack):
    """One run from its executor's first contact to its last game: it owns the executor, the results
    store and the progress display, and lets go of each however the run ends."""

    def __init__(self, setup: RunSetup, say: Say):
        super().__init__()
        self.setup, self.say = setup, say

    def __enter__(self) -> RunSession:
        super().__enter__()
        try:
            self.executor = self.enter_context(contextlib.closing(make_executor(self.setup)))
            self.warnings = self.executor.preflight(self.setup.league.limits)  # a refusal leaves no results file
            self.store, deal_key = open_results(self.setup, self.say)
            self.enter_context(self.store)
            self.plan = plan_of(self.setup.league, deal_key, self.store.games())
        except BaseException:
            self.close()
            raise
        return self

    def play(self) -> RunOutcome:
        """Play what the plan has left, recording each game, then the outcome."""
        league, path = self.setup.league, self.setup.path
        if league.deal_seed is not None:
            self.say(f"note: the deals come from deal seed {league.deal_seed}: anyone who knows it can compute "
                     "every deal (leave it out for deals from a secret kept in the results file)")
        remaining = self.plan.unplayed(self.store.finished_ids())
        left = sum(len(match.games) for match in remaining)
        total = self.plan.total
        self.say(f"{league.name}: {len(league.entrants)} bots, {self.plan.shape(league)} {total} games "
                 f"({total - left} already played) -> {path} (bot stderr: {self.setup.logs})")
        if self.setup.executor == "local" and league.pin_cores and not can_pin():
            self.say(PINNING_UNAVAILABLE)
        if (place := self.executor.where()) is not None:
            self.say(f"playing {place}")
        for warning in self.warnings:
            self.say(printable(f"warning: {warning}"))
        progress = self.enter_context(Progress(total, total - left, extra=self.plan.progress_extra()))
        events = self.executor.run([] if self.plan.decided else remaining,
                                   {entrant.name: entrant.spec for entrant in league.entrants}, league.limits,
                                   disqualified=self.store.disqualified())
        try:
            drive(events, _Recorder(self.store, self.plan, progress, remaining))
        except KeyboardInterrupt:
            progress.close()
            self._say_warnings()
            self.say(f"interrupted: {len(self.store.finished_ids())} of {total} games saved in {path}; "
                     "run the same command with --resume to finish")
            raise
        except (StoreError, ExecutionError) as error:
            progress.close()
            raise RunFailed(f"{error} ({len(self.store.finished_ids())} of {total} games saved in {path}; "
                            "--resume finishes the run)") from None
        progress.close()
        self._say_warnings()
        return self._outcome()

    def _say_warnings(self) -> None:
        for warning in self.executor.warnings:
            self.say(printable(f"warning: {warning}"))

    def _outcome(self) -> RunOutcome:
        games, match_faults = list(self.store.games()), self.store.match_faults()
        faulted = any(game.faults for game in games) or bool(match_faults)
        status = 1 if self.setup.options.strict and faulted else self.plan.exit_status()
        return RunOutcome(self.setup.path, games, match_faults, self.plan.report(len(games)), status)


class _Recorder(EventSink):
    """Stores each event of a run, tells its plan and its progress, and stops the run once the plan is decided."""

    def __init__(self, store: ResultStore, plan: RunPlan, progress: Progress, remaining: Sequence[Any]):
        self.store, self.plan, self.progress = store, plan, progress
        self.planned = {game.game_id: (match.match_id, game) for match in remaining for game in match.games}

    def game_finished(self, event: FinishedGame) -> bool:
        match_id, game = self.planned[event.game_id]
        record = event.record.to_dict()
        self.store.add_game(record, match_id, game.deal, game.rotation, game.cluster)
        self.plan.record(event.game_id, record["seats"], record["ranks"])
        self.progress.game(record)
        return self.plan.decided  # closing the stream stops the work in flight

    def match_finished(self, event: FinishedMatch) -> None:
        self.store.add_match_faults(event.match_id, [fault.to_dict() for fault in event.shutdown_faults])
        for fault in event.shutdown_faults:
            self.progress.write(printable(f"warning: {fault.bot}: {fault.kind} at the shutdown after game "
                                          f"{fault.game_id}: {fault.detail}"))

    def worker_lost(self, event: WorkerLost) -> None:
        """Report a lost worker, and record a disqualification it caused so that a resumed run keeps it."""
        self.progress.write(event.line())
        if event.disqualified is not None:
            self.store.add_disqualified(event.bot, event.disqualified)
            self.progress.write(f"warning: {event.name} disqualified: {event.disqualified}")

