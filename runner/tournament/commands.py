"""The tournament commands: `cardarena run`, `cardarena leaderboard`, `cardarena replay` and `cardarena salvage`.

Every expected failure (a bad league file, an unknown game, a results file that is not ours,
a resume with other settings) ends in one clear line and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import shlex
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Iterable, Sequence

import click

from cardarena.protocol.actions import find_legal
from cardarena.console import (RESULTS_DIR, ArgumentError, Seconds, check_writable_file, describe, pass_env_option,
                               require_own_views, require_sandbox, sandbox_option)
from cardarena.cores import PINNING_UNAVAILABLE, can_pin
from cardarena.games import get_game
from cardarena.games.base import GameError, OptionError, score_to_wire
from cardarena.html.replay import write_replay_page
from cardarena.fault_list import fault_counts, summary_lines
from cardarena.referee.faults import BotFault, Fault, printable, telling_lines
from cardarena.config import BotSpec, Limits
from cardarena.referee.process import BotProcess
from cardarena.ratings import RatingError
from cardarena.report import FORMATS, leaderboards, render
from cardarena.tournament.execute import (ExecutionError, Executor, FinishedGame, FinishedMatch, LocalExecutor, Lost,
                                       WorkerLost, supervised)
from cardarena.tournament.league import SAMPLE_LEAGUE, League, LeagueError, build_league, read_league_file
from cardarena.tournament.progress import Progress
from cardarena.tournament.schedule import (FORMATS as SCHEDULE_FORMATS, GAUNTLET, PlannedMatch, ScheduleError,
                                        schedule, sprt_schedule)
from cardarena.tournament.sprt import H0, H1, DuplicateSets, SequentialTest, SprtError, parse_sprt
from cardarena.tournament.store import ResultStore, StoreError, StoredGame, merged_games, salvage as salvage_store

EXECUTORS = ("local", "dask")
MAX_JOBS = 256  # worker processes, each with a table of bots
MAX_BOOTSTRAP = 10_000  # resamples for the rating intervals: beyond it the intervals barely move


def _parse_anchor(text: str | None) -> tuple[str, float] | None:
    """`BOT=RATING` from the command line."""
    if text is None:
        return None
    bot, sep, value = text.partition("=")
    try:
        rating = float(value)
        if not sep or not bot.strip() or not math.isfinite(rating):
            raise ValueError(text)
        return bot.strip(), rating
    except ValueError:
        raise click.BadParameter(f"expected BOT=RATING with a finite rating, got {text!r}",
                                 param_hint="--anchor") from None


def _check_anchor(anchor: tuple[str, float] | None, bots: Iterable[str], where: str) -> None:
    """Refuse an anchor on a bot that is not there (it would silently anchor nothing)."""
    names = sorted(set(bots))
    if anchor is not None and anchor[0] not in names:
        raise click.BadParameter(f"no bot {anchor[0]!r} {where} (bots: {', '.join(names) or 'none'})",
                                 param_hint="--anchor")


def _league_data(league_file: Path | None, bots: tuple[str, ...], games: tuple[str, ...],
                 players: tuple[str, ...], overrides: dict[str, Any]) -> tuple[dict[str, Any], Path, str]:
    """League-file data with command-line overrides applied, its base folder, and its name for messages."""
    if league_file is None and not bots:
        league_file = SAMPLE_LEAGUE
    if league_file is not None:
        data, base, source = read_league_file(league_file), league_file.parent, str(league_file)
    else:
        data, base, source = {}, Path.cwd(), "command line"
    if bots:
        data["bots"] = list(bots)  # resolved in the current directory (build_league's bots_base)
    try:
        if games:
            data["games"] = [get_game(name).spec.name for text in games  # repeated or comma-separated, as in check
                             for name in filter(None, (part.strip() for part in text.split(",")))]
        for text in players:
            game, sep, count = text.partition("=")
            if not sep or not count.strip().isdigit():
                raise LeagueError(f"--players takes GAME=N, got {text!r}")
            _table(_table(data, "game", source), get_game(game.strip()).spec.name, source)["players"] = int(count)
    except GameError as error:
        raise LeagueError(f"command line: {error}") from None
    for key, value in overrides.items():
        if value is not None and value != ():
            if key in ("decision_timeout", "handshake_timeout", "pass_env"):
                _table(data, "limits", source)[key] = list(value) if isinstance(value, tuple) else value
            else:
                data[key] = list(value) if isinstance(value, tuple) else value
    if overrides.get("challengers") and overrides.get("format") is None:
        data["format"] = GAUNTLET  # --challenger implies a gauntlet
    return data, base, source


def _table(data: dict[str, Any], key: str, source: str) -> dict[str, Any]:
    """The TOML table `data[key]`, made when absent, to put a command-line override in."""
    table = data.setdefault(key, {})
    if not isinstance(table, dict):
        raise LeagueError(f"{source}: {key} must be a table, got {table!r}")
    return table


def _results_path(league: League, out: Path | None, resume: bool) -> Path:
    """Where results go: --out, the league's `out`, or results/<name>.sqlite (-2, -3 ... when taken;
    with --resume, the latest of those)."""
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


def _preflight(league: League) -> League:
    """Start every bot once and take its hello; a bot that cannot leaves this run with a warning,
    rather than losing every game it was scheduled for (an unbuilt sample bot, say)."""
    ready = []
    for entrant in league.entrants:
        try:
            fault = supervised(partial(_start_once, entrant.spec, league.limits), league.limits)
        except Lost as lost:
            click.echo(f"warning: {entrant.name} left out of this run: the referee's process was {lost.reason} "
                       "while it started", err=True)
            continue
        if fault is None:
            ready.append(entrant)
        else:
            stderr = " | ".join(telling_lines(fault.stderr_tail))
            click.echo(printable(f"warning: {entrant.name} left out of this run: it failed to start "
                                 f"({fault.kind}: {fault.detail}){'; stderr: ' + stderr if stderr else ''}; "
                                 "if it needs building, build it (sample bots: bash sample_bots/build.sh), "
                                 "then add it with --resume"), err=True)
    if len(ready) < 2:
        raise LeagueError(f"only {len(ready)} of {len(league.entrants)} bots could start; a tournament needs two")
    return replace(league, entrants=tuple(ready))


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


def _open_results(path: Path, league: League, resume: bool) -> tuple[ResultStore, str]:
    """The results store for this run (new, or an existing one being resumed or extended), and the
    key every deal seed derives from: the store's secret, or the league's explicit deal seed."""
    if path.exists() and not resume:
        raise StoreError(f"{path}: already holds results; pass --resume to continue it, or another --out")
    if resume and not path.exists():
        raise StoreError(f"{path}: nothing to resume (no such results file)")
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
                                  {"folder": entrant.spec.folder,
                                   "cwd": entrant.spec.cwd or str(Path.cwd())})
        deal_key = store.deal_secret() if league.deal_seed is None else str(league.deal_seed)
    except StoreError:
        store.close()
        raise
    return store, deal_key


def _set_aside_stale_logs(logs: Path) -> None:
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
    click.echo(f"note: {logs} held the bot logs of an earlier results file that is gone: moved to {aside}",
               err=True)


def _echo_boards(games: Iterable[StoredGame], fmt: str, anchor: tuple[str, float] | None, bootstrap: int,
                 superiority: bool, crosstable: bool = False) -> None:
    """Print the leaderboards of `games`."""
    boards = leaderboards(games, anchor=anchor, bootstrap=bootstrap)
    if not boards:
        click.echo("no games recorded yet")
        return
    click.echo(render(boards, fmt, superiority, crosstable).rstrip("\n"))


@click.command()
@click.argument("league_file", metavar="[LEAGUE]", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--bot", "bots", multiple=True, metavar="FOLDER|NAME=CMD",
              help="A bot folder (with bot.toml) or NAME=CMD; repeat. Replaces the league's bots.")
@click.option("--game", "games", multiple=True, metavar="GAME[,GAME]",
              help="Play only these games, repeated or comma-separated (default: the league's, else every game).")
@click.option("--players", multiple=True, metavar="GAME=N", help="Table size of a game; repeatable.")
@click.option("--deals", type=click.IntRange(min=1), help="Deals per table (each played in every seat rotation).")
@click.option("--seed", type=int, help="Schedule seed: which tables a large league samples. The deals come "
              "from a secret drawn for the results file (--resume reuses it).")
@click.option("--deal-seed", type=int, help="Deal every game from this seed instead of the results file's secret: "
              "for demos and tests, since anyone who knows it can compute every deal.")
@click.option("--format", "form", type=click.Choice(SCHEDULE_FORMATS), help="round-robin (default) or gauntlet.")
@click.option("--challenger", "challengers", multiple=True, metavar="BOT",
              help="A gauntlet challenger (implies --format gauntlet); repeatable.")
@click.option("--max-tables", type=click.IntRange(min=1), help="Above this many tables per game, a balanced sample.")
@click.option("--timeout", type=Seconds(), help="Seconds a bot has for each decision.")
@click.option("--handshake-timeout", type=Seconds(), help="Seconds a bot has to start and say hello.")
@click.option("--jobs", "-j", type=click.IntRange(min=1, max=MAX_JOBS), help="Worker processes [default: number of CPUs].")
@click.option("--pin-cores/--no-pin-cores", default=None, help="Pin each worker and its bots to one core.")
@click.option("--scheduler", metavar="tcp://HOST:PORT", help="Play on the Dask cluster of this scheduler "
              "(pip install 'cardarena[dask]'); implies --executor dask.")
@click.option("--executor", "executor_kind", type=click.Choice(EXECUTORS),
              help="local: worker processes on this machine (default); dask: a Dask cluster, a local one of "
              "--jobs workers unless --scheduler names one.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Results database to write.")
@click.option("--resume", is_flag=True, help="Continue an interrupted tournament (or add bots to it).")
@click.option("--anchor", metavar="BOT=RATING", help="Anchor the ratings on one bot instead of a mean of 1500.")
@click.option("--bootstrap", type=click.IntRange(min=0, max=MAX_BOOTSTRAP), default=200, show_default=True,
              help="Bootstrap resamples for the intervals.")
@click.option("--strict", is_flag=True, help="Exit with status 1 when any bot faulted (for CI).")
@click.option("--baseline", metavar="BOT", help="With --sprt: the bot the one --challenger is tested against.")
@click.option("--sprt", "sprt_text", metavar="elo0=0,elo1=10[,alpha=0.05,beta=0.05]",
              help="Test the challenger against the baseline on duplicate sets until the SPRT decides; exit "
                   "status 0 when H1 (at least elo1 stronger) is accepted, 1 for H0, 3 when --max-games is reached.")
@click.option("--max-games", type=click.IntRange(min=1), help="With --sprt: stop undecided after this many games "
              "(whole rounds of sets) [default: 20000].")
@sandbox_option(None)
@pass_env_option()
def run(league_file: Path | None, bots: tuple[str, ...], games: tuple[str, ...], players: tuple[str, ...],
        deals: int | None, seed: int | None, deal_seed: int | None, form: str | None, challengers: tuple[str, ...],
        max_tables: int | None, timeout: float | None, handshake_timeout: float | None, jobs: int | None,
        pin_cores: bool | None, scheduler: str | None, executor_kind: str | None, out: Path | None,
        resume: bool, anchor: str | None, bootstrap: int, strict: bool, baseline: str | None, sprt_text: str | None,
        max_games: int | None, sandbox_mode: str | None, pass_env: tuple[str, ...]) -> None:
    """Play a tournament (default: the sample bots across every game) and print the leaderboards.

    LEAGUE is a league file (TOML); command-line options override it. With --sprt it is a
    sequential test of one challenger against a baseline instead (see --sprt).
    """
    anchor_pair = _parse_anchor(anchor)
    try:
        sprt_table = None if sprt_text is None else parse_sprt(sprt_text).to_dict()
    except SprtError as error:
        raise click.BadParameter(str(error).removeprefix("--sprt: "), param_hint="--sprt") from None
    try:
        overrides = {"deals": deals, "seed": seed, "deal_seed": deal_seed, "format": form,
                     "challengers": challengers, "max_tables": max_tables, "decision_timeout": timeout,
                     "handshake_timeout": handshake_timeout,
                     "pin_cores": pin_cores, "baseline": baseline, "sprt": sprt_table, "max_games": max_games,
                     "sandbox": sandbox_mode, "pass_env": pass_env,
                     "scheduler": scheduler}
        data, base, source = _league_data(league_file, bots, games, players, overrides)
        league = build_league(data, base, source, bots_base=Path.cwd() if bots else None)
        executor_kind = _executor_kind(league, executor_kind, scheduler, jobs)
    except LeagueError as error:
        raise ArgumentError(str(error)) from None
    _check_anchor(anchor_pair, (entrant.name for entrant in league.entrants), "among this run's bots")
    if out or league.out:
        check_writable_file(out or league.out, "--out" if out else f"{source}: out", make_folders=True)
    try:
        path = _results_path(league, out, resume)
    except StoreError as error:
        raise click.ClickException(str(error)) from None
    require_own_views([entrant.spec for entrant in league.entrants], league.limits.sandbox,
                      [("the results file", path), ("the bot logs", path.with_suffix(".logs")),
                       ("the league file", league_file)])
    require_sandbox(league.limits.sandbox)
    try:
        league = _sprt_bots_started(_preflight(league))
        executor = _executor(league, executor_kind, jobs, pin_cores, path.with_suffix(".logs"))
    except (LeagueError, StoreError, ExecutionError) as error:
        raise click.ClickException(str(error)) from None
    try:
        preflight = executor.preflight(league.limits)  # before the results file: a refusal leaves nothing
    except ExecutionError as error:
        executor.close()
        raise click.ClickException(str(error)) from None
    try:
        if not resume and not path.exists():
            _set_aside_stale_logs(path.with_suffix(".logs"))
        store, deal_key = _open_results(path, league, resume)
    except StoreError as error:
        executor.close()
        raise click.ClickException(str(error)) from None
    if league.deal_seed is not None:
        click.echo(f"note: the deals come from deal seed {league.deal_seed}: anyone who knows it can compute "
                   "every deal (leave it out for deals from a secret kept in the results file)", err=True)

    with store, contextlib.closing(executor):
        sets = None
        if league.sprt is None:
            plans = schedule({e.name: e.games for e in league.entrants}, league.games, league.seed,
                             league.challengers, league.max_tables, deal_key=deal_key)
        else:
            plans, sets = _sprt_plan(league, deal_key, store)
        finished = store.finished_ids()
        remaining = [replace(plan, games=tuple(g for g in plan.games if g.game_id not in finished))
                     for plan in plans if any(g.game_id not in finished for g in plan.games)]
        planned = {g.game_id: (plan.match_id, g) for plan in remaining for g in plan.games}
        total = sum(len(plan.games) for plan in plans)
        shape = (f"{len(plans)} table{'' if len(plans) == 1 else 's'}," if sets is None else
                 f"SPRT of {league.challengers[0]} against {league.baseline}, up to")
        click.echo(f"{league.name}: {len(league.entrants)} bots, {shape} {total} games "
                   f"({total - len(planned)} already played) -> {path} (bot stderr: {path.with_suffix('.logs')})",
                   err=True)
        if executor_kind == "local" and (league.pin_cores if pin_cores is None else pin_cores) and not can_pin():
            click.echo(PINNING_UNAVAILABLE, err=True)
        try:
            place = executor.where()
        except ExecutionError as error:
            raise click.ClickException(str(error)) from None
        if place is not None:
            click.echo(f"playing {place}", err=True)
        _echo_warnings(preflight)
        bots_by_name = {entrant.name: entrant.spec for entrant in league.entrants}
        progress = Progress(total, total - len(planned), extra=None if sets is None else partial(_llr_text, sets.test))
        if sets is not None and sets.test.decision is not None:
            remaining = []  # decided by the games already recorded
        stream = executor.run(remaining, bots_by_name, league.limits, disqualified=store.disqualified())
        try:
            with contextlib.closing(stream):
                for item in stream:
                    if isinstance(item, FinishedGame):
                        match_id, game = planned[item.game_id]
                        record = item.record.to_dict()
                        store.add_game(record, match_id, game.deal, game.rotation, game.cluster)
                        if sets is not None:
                            sets.add(item.game_id, record["seats"], record["ranks"])
                        progress.game(record)
                        if sets is not None and sets.test.decision is not None:
                            break  # closing the stream stops the work in flight
                    elif isinstance(item, FinishedMatch):
                        store.add_match_faults(item.match_id, [fault.to_dict() for fault in item.shutdown_faults])
                        for fault in item.shutdown_faults:
                            progress.write(printable(f"warning: {fault.bot}: {fault.kind} at the shutdown after game "
                                                     f"{fault.game_id}: {fault.detail}"))
                    else:
                        _report_lost(item, store, progress.write)
        except KeyboardInterrupt:
            progress.close()
            _echo_warnings(executor.warnings)
            saved = len(store.finished_ids())
            click.echo(f"interrupted: {saved} of {total} games saved in {path}; "
                       "run the same command with --resume to finish", err=True)
            raise SystemExit(130) from None
        except (StoreError, ExecutionError) as error:
            progress.close()
            raise click.ClickException(f"{error} ({len(store.finished_ids())} of {total} games saved in {path}; "
                                       "--resume finishes the run)") from None
        progress.close()
        _echo_warnings(executor.warnings)
        try:
            _echo_boards(store.games(), "table", anchor_pair, bootstrap, superiority=False)
            counts = fault_counts(store.games(), store.match_faults())
        except (RatingError, StoreError) as error:
            raise click.ClickException(str(error)) from None
        _echo_fault_summary(counts, path)
        if sets is not None:
            click.echo(_sprt_report(league, sets, len(store.finished_ids())))
        if strict and counts:
            raise SystemExit(1)
        if sets is not None and sets.test.decision != H1:
            raise SystemExit(1 if sets.test.decision == H0 else 3)


def _echo_warnings(warnings: Sequence[str]) -> None:
    """Each warning on a line of its own, on stderr."""
    for warning in warnings:
        click.echo(printable(f"warning: {warning}"), err=True)


def _echo_fault_summary(counts: dict[str, Any], path: Path) -> None:
    """The recorded faults per bot (in games and at shutdown), and the command that lists them, after the boards."""
    if not counts:
        click.echo("faults: none")
        return
    click.echo("faults (one in a game lost that game; one at a match's shutdown changed no result; every one "
               f"with its evidence: cardarena faults {shlex.quote(str(path))}):")
    for line in summary_lines(counts):
        click.echo(f"  {line}")


def _sprt_bots_started(league: League) -> League:
    """The league, unless the challenger or the baseline of its SPRT could not start."""
    if league.sprt is not None:
        missing = [name for name in (league.challengers[0], league.baseline)
                   if name not in {entrant.name for entrant in league.entrants}]
        if missing:
            raise LeagueError(f"the SPRT cannot run without {' and '.join(missing)}")
    return league


def _sprt_plan(league: League, deal_key: str, store: ResultStore) -> tuple[list[PlannedMatch], DuplicateSets]:
    """The matches of the league's SPRT, and its test brought up to date with the games already recorded."""
    challenger, baseline = league.challengers[0], league.baseline
    try:
        plan = sprt_schedule({e.name: e.games for e in league.entrants}, league.games, league.seed, challenger,
                             baseline, league.max_games, league.max_tables, deal_key=deal_key)
    except ScheduleError as error:
        raise click.ClickException(str(error)) from None
    sets = DuplicateSets(plan.set_of, challenger, baseline, SequentialTest(league.sprt))
    for game in store.games():
        if game.game_id in plan.set_of:
            sets.add(game.game_id, game.seats, game.ranks)
    return list(plan.matches), sets


def _llr_text(test: SequentialTest) -> str:
    """The test's state for progress lines."""
    return f"LLR {test.llr:.2f} ({test.settings.lower:.2f}, {test.settings.upper:.2f}), {test.sets} sets"


def _sprt_report(league: League, sets: DuplicateSets, played: int) -> str:
    """The SPRT's outcome: the decision, the LLR and its bounds, the Elo difference, the games."""
    test, settings = sets.test, league.sprt
    challenger, baseline = league.challengers[0], league.baseline
    verdict = {H1: f"H1 accepted ({challenger} at least {settings.elo1:g} Elo stronger than {baseline})",
               H0: f"H0 accepted ({challenger} at most {settings.elo0:g} Elo stronger than {baseline})",
               None: f"undecided after {played} games (the cap, --max-games, is {league.max_games})"}
    estimate = test.estimate()
    elo = ("no duplicate set finished" if estimate is None else
           f"Elo difference {estimate.elo:+.1f} (95% interval {estimate.low:+.1f} to {estimate.high:+.1f})")
    return (f"SPRT {challenger} vs {baseline} ({settings}): {verdict[test.decision]}\n"
            f"LLR {test.llr:.3f} (bounds {settings.lower:.3f}, {settings.upper:.3f}) after {test.sets} duplicate "
            f"sets ({sets.games_counted} games); {elo}; {played} games played")


def lost_worker_line(lost: WorkerLost) -> str:
    """One line about a lost worker: how it ended, the bot it waited on, and what it cost."""
    who = f" while it waited on {lost.name}" if lost.name else ""
    cost = f"game {lost.game_id} is played again" if lost.game_id else "no game was in flight"
    return f"warning: the referee's worker process was {lost.reason}{who} ({lost.match_id}): {cost}"


def _report_lost(lost: WorkerLost, store: ResultStore, write: Any) -> None:
    """Report a lost worker, and record a disqualification it caused so that --resume keeps it."""
    write(lost_worker_line(lost))
    if lost.disqualified is not None:
        store.add_disqualified(lost.bot, lost.disqualified)
        write(f"warning: {lost.name} disqualified: {lost.disqualified}")


def _executor_kind(league: League, kind: str | None, scheduler: str | None, jobs: int | None) -> str:
    """Which executor plays the run: --executor, else dask when a scheduler is named, else local."""
    if kind == "local" and scheduler is not None:
        raise LeagueError("--scheduler names a Dask cluster, and --executor local plays on this machine: choose one")
    kind = kind or ("dask" if league.scheduler else "local")
    if kind == "dask" and league.scheduler is not None and jobs is not None:
        raise LeagueError("--jobs sets the workers of a local run; a Dask cluster has as many as its workers' threads")
    return kind


def _executor(league: League, kind: str, jobs: int | None, pin_cores: bool | None, log_root: Path) -> Executor:
    """The executor of a run: local worker processes, or a Dask cluster (connected to at once, so an
    unreachable scheduler is reported before the results file is made)."""
    pin = league.pin_cores if pin_cores is None else pin_cores
    if kind == "local":
        return LocalExecutor(jobs, pin, log_root=log_root)
    try:
        from cardarena.tournament.dask_executor import DaskExecutor
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
    return DaskExecutor(league.scheduler if kind == "dask" else None, jobs, pin, log_root)


@click.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="How to print the boards: aligned text, Markdown tables, CSV or JSON.")
@click.option("--anchor", metavar="BOT=RATING", help="Anchor the ratings on one bot instead of a mean of 1500.")
@click.option("--bootstrap", type=click.IntRange(min=0, max=MAX_BOOTSTRAP), default=200, show_default=True,
              help="Bootstrap resamples for the intervals.")
@click.option("--superiority", is_flag=True, help="Also show the likelihood of superiority between bots.")
@click.option("--crosstable", is_flag=True,
              help="Also show every pair head to head: games, W-D-L, score, Elo difference, likelihood of "
                   "superiority (in CSV: instead of the leaderboard rows).")
def leaderboard(results: tuple[Path, ...], fmt: str, anchor: str | None, bootstrap: int, superiority: bool,
                crosstable: bool) -> None:
    """Print the Elo leaderboards (per game and overall) of one or more RESULTS databases, rated together.

    Several files are pooled game by game (same rules versions only); a game found in two of
    them is refused.
    """
    anchor_pair = _parse_anchor(anchor)
    try:
        games = merged_games(results)
        _check_anchor(anchor_pair, (name for game in games for name in game.seats), "played in these results")
        _echo_boards(games, fmt, anchor_pair, bootstrap, superiority, crosstable)
    except (StoreError, RatingError) as error:
        raise click.ClickException(str(error)) from None


@click.command()
@click.argument("broken", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
def salvage(broken: Path, out: Path) -> None:
    """Copy every readable game (with the settings and bots) of a damaged BROKEN results file into
    a new results file OUT, which leaderboard, replay and run --resume then take."""
    try:
        report = salvage_store(broken, out)
    except StoreError as error:
        raise click.ClickException(str(error)) from None
    lost = "; ".join(f"{table}: {count} damaged stretch(es) skipped" for table, count in report.unreadable.items())
    shutdown = f", {report.match_faults} fault(s) at shutdown" if report.match_faults else ""
    click.echo(f"{out}: salvaged {report.games} games{shutdown} and {report.entrants} bots from {broken}"
               + (f" ({lost})" if lost else ""))
    if report.incomplete_games:
        click.echo(f"warning: {report.incomplete_games} game(s) had their row or their actions unreadable and "
                   "were left out; --resume plays them again", err=True)
    if not report.settings:
        click.echo("warning: the tournament settings or deal secret were unreadable: use the salvaged file "
                   "for leaderboards and replays, not --resume (its new games would be dealt differently)",
                   err=True)


@click.command()
@click.argument("results", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("game_id", metavar="[GAME]", required=False)
@click.option("--quiet", is_flag=True, help="Only check the game, without printing every move.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the game's replay viewer here: one self-contained HTML page.")
def replay(results: Path, game_id: str | None, quiet: bool, html_path: Path | None) -> None:
    """Replay a recorded game move by move, checking it against the engine.

    RESULTS is a tournament database (then GAME is the game's id, e.g. casino/a+b/d0/r1) or the
    JSON record written by `cardarena play --record` (then GAME is not needed).
    """
    if html_path is not None:
        check_writable_file(html_path, "--html")
    try:
        if results.suffix == ".json":
            record = _read_json_record(results)
        else:
            record = _read_stored_record(results, game_id)
        game = get_game(record["game"])
    except (StoreError, GameError) as error:
        raise click.ClickException(str(error)) from None
    _replay(game, record, quiet)
    if html_path is not None:
        try:
            write_replay_page(record, html_path)
        except (GameError, OSError) as error:
            raise click.ClickException(f"{html_path}: {error}") from None
        click.echo(f"wrote the replay viewer to {html_path}")


def _read_json_record(path: Path) -> dict[str, Any]:
    """A `play --record` file: the game, rules version, options, seed, seats, actions and scores."""
    try:
        data = json.loads(path.read_text())
        if not all(isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int) and isinstance(pair[1], dict)
                   for pair in data["actions"]):
            raise ValueError("actions must be [seat, action] pairs")
        return {"game_id": data["game_id"], "game": data["game"], "rules_version": data["rules_version"],
                "options": data["options"], "seed": data["seed"], "seats": data["seats"],
                "actions": [(seat, action) for seat, action in data["actions"]],
                "scores": data["result"]["scores"], "ranks": data["ranks"], "faults": data.get("faults", [])}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise StoreError(f"{path}: not a game record written by 'cardarena play --record' ({error})") from None
    except RecursionError:  # json descends once per level of nesting
        raise StoreError(f"{path}: not a game record written by 'cardarena play --record' (nested too deeply "
                         "to read)") from None


def _read_stored_record(path: Path, game_id: str | None) -> dict[str, Any]:
    """One game of a tournament database, in the same shape as a JSON record."""
    if game_id is None:
        raise ArgumentError(f"{path}: name the game to replay (ids look like casino/alice+bob/d0/r1)")
    with ResultStore(path) as store:
        stored = next(store.games(game_id), None)
        if stored is None:
            raise StoreError(f"{path}: no game {game_id!r} (game ids look like "
                             "casino/alice+bob/d0/r1: game/lineup/deal/rotation)")
        return {"game_id": game_id, "game": stored.game, "rules_version": stored.rules_version,
                "options": stored.options, "seed": stored.seed, "seats": stored.seats,
                "actions": store.actions(game_id), "scores": stored.scores, "ranks": stored.ranks,
                "faults": stored.faults}


def _replay(game: Any, record: dict[str, Any], quiet: bool) -> None:
    """Apply the record's actions through the engine, failing at the first one it does not allow."""
    if game.spec.rules_version != record["rules_version"]:
        raise click.ClickException(f"{record['game_id']} was played under rules v{record['rules_version']}; "
                                   f"this engine implements v{game.spec.rules_version}")
    seats, actions = record["seats"], record["actions"]
    try:
        state = game.new_state(len(seats), record["options"], record["seed"])
    except (OptionError, TypeError) as error:
        raise click.ClickException(f"{record['game_id']}: the record's table cannot be set up: {error}") from None
    click.echo(f"{record['game_id']}: {game.spec.title}, seed {record['seed']}, seats {', '.join(seats)}")
    for number, (seat, action) in enumerate(actions, 1):
        if state.is_over() or state.to_move() != seat or find_legal(state.legal_actions(), action) is None:
            raise click.ClickException(f"decision {number}: the record has seat {seat} play {describe(action)}, "
                                       "which the engine does not allow: the record does not match the engine")
        events = state.apply(action)
        if not quiet:
            click.echo(f"{number:>4}  seat {seat} {seats[seat]}: {describe(action)}")
            for event in events:
                click.echo(f"        {describe(event)}")
    if not state.is_over():
        raise click.ClickException(f"the record ends after {len(actions)} decisions but the game is not over")
    scores = [score_to_wire(score) for score in state.result().scores]
    if scores != record["scores"]:
        raise click.ClickException(f"the engine scores {scores}, the record {record['scores']}: they do not match")
    click.echo(f"replay matches the record: {len(actions)} decisions, scores {scores}, ranks {record['ranks']}")
