"""The tournament commands: `cardarena run`, `cardarena leaderboard`, `cardarena replay` and `cardarena salvage`.

Each is a thin adapter: it parses its command line and hands over to the library (`service` plays
a run). Every expected failure ends in one clear line and a non-zero exit, never a traceback: the
library raises `CardarenaError`s, and `cli` prints them.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Iterable

import click

from cardarena.protocol.actions import find_legal
from cardarena.console import (MAX_BOOTSTRAP, Seconds, check_writable_file, describe, parse_anchor, pass_env_option,
                               require_own_views, require_sandbox, sandbox_option, time_bank_option)
from cardarena.errors import CardarenaError, UsageError
from cardarena.games import get_game
from cardarena.games.base import GameError, OptionError, score_to_wire
from cardarena.html.replay import write_replay_page
from cardarena.fault_report import fault_counts, summary_lines
from cardarena.referee.faults import counted
from cardarena.report import FORMATS, leaderboards, render
from cardarena.tournament.planning.league import LeagueOverrides, command_line_games, command_line_players
from cardarena.tournament.planning.schedule import FORMATS as SCHEDULE_FORMATS
from cardarena.tournament.planning.sprt import SprtError, parse_sprt
from cardarena.tournament.service import (EXECUTORS, RunOptions, RunOutcome, RunSession, RunSetup,
                                          check_results_file, set_up, start_bots)
from cardarena.record import GameRecord
from cardarena.tournament.store import ResultStore, StoreError, merged_games, salvage as salvage_store

MAX_JOBS = 256  # worker processes, each with a table of bots


def _check_anchor(anchor: tuple[str, float] | None, bots: Iterable[str], where: str) -> None:
    """Refuse an anchor on a bot that is not there (it would silently anchor nothing)."""
    names = sorted(set(bots))
    if anchor is not None and anchor[0] not in names:
        raise click.BadParameter(f"no bot {anchor[0]!r} {where} (bots: {', '.join(names) or 'none'})",
                                 param_hint="--anchor")


def _echo_boards(games: Iterable[GameRecord], fmt: str, anchor: tuple[str, float] | None, bootstrap: int,
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
@time_bank_option(None)
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
        max_tables: int | None, timeout: float | None, time_bank: float | None, handshake_timeout: float | None,
        jobs: int | None,
        pin_cores: bool | None, scheduler: str | None, executor_kind: str | None, out: Path | None,
        resume: bool, anchor: str | None, bootstrap: int, strict: bool, baseline: str | None, sprt_text: str | None,
        max_games: int | None, sandbox_mode: str | None, pass_env: tuple[str, ...]) -> None:
    """Play a tournament (default: the sample bots across every game) and print the leaderboards.

    LEAGUE is a league file (TOML); command-line options override it. With --sprt it is a
    sequential test of one challenger against a baseline instead (see --sprt).
    """
    anchor_pair = parse_anchor(anchor)
    try:
        sprt = None if sprt_text is None else parse_sprt(sprt_text)
    except SprtError as error:
        raise click.BadParameter(str(error).removeprefix("--sprt: "), param_hint="--sprt") from None
    league = LeagueOverrides(
        bots=bots, games=command_line_games(games), players=command_line_players(players), deals=deals, seed=seed,
        deal_seed=deal_seed, format=form, challengers=challengers, max_tables=max_tables, pin_cores=pin_cores,
        sandbox=sandbox_mode, scheduler=scheduler, sprt=sprt, baseline=baseline, max_games=max_games,
        decision_timeout=timeout, time_bank=time_bank, handshake_timeout=handshake_timeout, pass_env=pass_env)
    options = RunOptions(league_file, league, jobs, executor_kind, out, resume, strict)
    setup = set_up(options)
    _check_run(setup, anchor_pair)
    outcome = _play(start_bots(setup, _say))
    _echo_boards(outcome.games, "table", anchor_pair, bootstrap, superiority=False)
    _echo_fault_summary(fault_counts(outcome.games, outcome.match_faults), outcome.path)
    if outcome.report is not None:
        click.echo(outcome.report)
    if outcome.status:
        raise SystemExit(outcome.status)


def _check_run(setup: RunSetup, anchor: tuple[str, float] | None) -> None:
    """What the command line names must do before any bot starts: the anchor is a bot of the run, the
    results file can be written and taken (check_results_file), no bot would see another's files or
    the results, the sandbox runs."""
    league, options = setup.league, setup.options
    _check_anchor(anchor, (entrant.name for entrant in league.entrants), "among this run's bots")
    if options.out or league.out:
        check_writable_file(options.out or league.out, "--out" if options.out else f"{setup.source}: out",
                            make_folders=True)
    require_own_views([entrant.spec for entrant in league.entrants], league.limits.sandbox,
                      [("the results file", setup.path), ("the bot logs", setup.logs),
                       ("the league file", options.league_file)])
    check_results_file(setup)
    require_sandbox(league.limits.sandbox)


def _play(setup: RunSetup) -> RunOutcome:
    """Play the run, Ctrl-C ending it with status 130 and a line saying what was saved."""
    try:
        with RunSession(setup, _say) as session:
            return session.play()
    except KeyboardInterrupt:
        raise SystemExit(130) from None


def _say(line: str) -> None:
    """A line for people, on stderr."""
    click.echo(line, err=True)



def _echo_fault_summary(counts: dict[str, Any], path: Path) -> None:
    """The recorded faults per bot (in games and at shutdown), and the command that lists them, after the boards."""
    if not counts:
        click.echo("faults: none")
        return
    click.echo("faults (one in a game lost that game; one at a match's shutdown changed no result; every one "
               f"with its evidence: cardarena faults {shlex.quote(str(path))}):")
    for line in summary_lines(counts):
        click.echo(f"  {line}")


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
    anchor_pair = parse_anchor(anchor)
    games = merged_games(results)
    _check_anchor(anchor_pair, (name for game in games for name in game.seats), "played in these results")
    _echo_boards(games, fmt, anchor_pair, bootstrap, superiority, crosstable)


@click.command()
@click.argument("broken", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
def salvage(broken: Path, out: Path) -> None:
    """Copy every readable game (with the settings and bots) of a damaged BROKEN results file into
    a new results file OUT, which leaderboard, replay and run --resume then take."""
    report = salvage_store(broken, out)
    lost = "; ".join(f"{table}: {count} damaged stretch(es) skipped" for table, count in report.unreadable.items())
    shutdown = f", {report.match_faults} fault(s) at shutdown" if report.match_faults else ""
    click.echo(f"{out}: salvaged {counted(report.games, 'game')}{shutdown} and {report.entrants} bots from {broken}"
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
    if results.suffix == ".json":
        record = GameRecord.read_json(results)
    else:
        record = _read_stored_record(results, game_id)
    _replay(_engine_of(record), record, quiet)
    if html_path is not None:
        try:
            write_replay_page(record, html_path)
        except (GameError, OSError) as error:
            raise CardarenaError(f"{html_path}: {error}") from None
        click.echo(f"wrote the replay viewer to {html_path}")


def _read_stored_record(path: Path, game_id: str | None) -> GameRecord:
    """One game of a tournament database, with its actions."""
    if game_id is None:
        raise UsageError(f"{path}: name the game to replay (ids look like casino/alice+bob/d0/r1)")
    with ResultStore(path) as store:
        stored = next(store.games(game_id, actions=True), None)
        if stored is None:
            raise StoreError(f"{path}: no game {game_id!r} (game ids look like "
                             "casino/alice+bob/d0/r1: game/lineup/deal/rotation)")
        return stored


def _engine_of(record: GameRecord) -> Any:
    """The engine of the game a record names (StoreError when this cardarena has none)."""
    try:
        return get_game(record.game)
    except OptionError as error:
        raise StoreError(f"{record.game_id}: {error}") from None


def _replay(game: Any, record: GameRecord, quiet: bool) -> None:
    """Apply the record's actions through the engine, failing at the first one it does not allow."""
    if game.spec.rules_version != record.rules_version:
        raise CardarenaError(f"{record.game_id} was played under rules v{record.rules_version}; "
                                   f"this engine implements v{game.spec.rules_version}")
    seats, actions = record.seats, record.actions
    try:
        state = game.new_state(len(seats), record.options, record.seed)
    except (OptionError, TypeError) as error:
        raise CardarenaError(f"{record.game_id}: the record's table cannot be set up: {error}") from None
    click.echo(f"{record.game_id}: {game.spec.title}, seed {record.seed}, seats {', '.join(seats)}")
    for number, (seat, action) in enumerate(actions, 1):
        if state.is_over() or state.to_move() != seat or find_legal(state.legal_actions(), action) is None:
            raise CardarenaError(f"decision {number}: the record has seat {seat} play {describe(action)}, "
                                       "which the engine does not allow: the record does not match the engine")
        events = state.apply(action)
        if not quiet:
            click.echo(f"{number:>4}  seat {seat} {seats[seat]}: {describe(action)}")
            for event in events:
                click.echo(f"        {describe(event)}")
    if not state.is_over():
        raise CardarenaError(f"the record ends after {len(actions)} decisions but the game is not over")
    scores = [score_to_wire(score) for score in state.result().scores]
    if scores != record.scores:
        raise CardarenaError(f"the engine scores {scores}, the record {record.scores}: they do not match")
    click.echo(f"replay matches the record: {len(actions)} decisions, scores {scores}, ranks {record.ranks}")
