"""Where the league server meets the tournament machinery: the league file, the check of an upload,
the continuous play, the leaderboards and the replays; every call from the server into the
tournament, the checks and the referee is in this module. Play uses what `cardarena run` uses: the
run service's executor (`service.make_executor`, local or Dask) driven by `drive` into an
EventSink; what a run does not do, rounds planned afresh among versions that come and go, is here.

Checks and play each run in a process of their own (`spawn`ed, dying with the server): the local
executor's supervisor makes its process the reaper of its workers' orphans and kills those it did
not start, so two supervisors (a check and the play) must never share a process, and the web
server's threads must not be forked.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import multiprocessing
import os
import signal
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from cardarena.checking import check_bot, describe_verdict, opponents
from cardarena.console import require_own_views
from cardarena.errors import UsageError
from cardarena.fault_report import stored_entries, text_lines
from cardarena.games import get_game
from cardarena.html.replay import replay_data, replay_page
from cardarena.manifest import Entrant, ManifestError, load_manifest
from cardarena.ratings import RatingError, comparisons_from_ranks
from cardarena.referee.faults import printable
from cardarena.referee.match import log_file_name
from cardarena.report import leaderboards
from cardarena.server.accounts import Accounts
from cardarena.server.standings import RunningTally, cluster_of, rating_history
from cardarena.tournament.execution.events import EventSink, FinishedGame, FinishedMatch, WorkerLost, drive
from cardarena.tournament.execution.execute import ExecutionError, Executor
from cardarena.tournament.planning.league import League, LeagueError, build_league, read_league_file
from cardarena.tournament.planning.schedule import PlannedMatch, schedule
from cardarena.tournament.service import RESULTS_DIR, RunOptions, RunSetup
from cardarena.tournament import service
from cardarena.tournament.store import ResultStore, StoreError

#: league-file keys that describe one fixed tournament, not a league that participants join (its `bots`
#: are house bots: they play in the league beside the participants' versions)
NOT_FOR_A_SERVER = ("format", "challengers", "baseline", "sprt", "max_games", "deal_seed", "deals")
#: a round plays about this many games by default (serve --round-games): enough that starting every
#: table's bots afresh costs little, few enough that a new version waits seconds, not hours, to play
ROUND_GAMES = 256
ROUND_DEALS = 32  # deals of one table in a round at most (a league of two bots plays 64 games a round)
BACKGROUND_NICENESS = 10  # how much lower the check and play processes' priority is than the web server's
IDLE_SECONDS = 1.0  # how often the play loop looks for work when there is none (paused, or too few bots)


class ServerLeagueError(UsageError):
    """A league file the server cannot run; one line (exit status 2, as any bad league file)."""


@dataclass(frozen=True)
class ServerLeague:
    """A league file's settings for the server: its games, limits, sandbox, table sampling, results
    file, and its house bots (the file's `bots`: they play beside the participants' versions, with no
    participant; the organiser's, so they are not checked, and they keep their bot.toml names)."""

    source: Path
    league: League  # built with the house bots and two placeholders; its settings and house bots are used
    results: Path
    house: tuple[Entrant, ...] = ()

    @property
    def name(self) -> str:
        return self.league.name

    def games_of(self, entrant: Entrant) -> tuple[str, ...]:
        """The league's games that the bot plays."""
        return tuple(game.name for game in self.league.games if game.name in entrant.games)

    def settings(self) -> dict[str, Any]:
        """What the results file records: a restart with other settings is refused (the house bots,
        entrants, may change)."""
        return {**self.league.settings_fingerprint(), "league_server": self.name}


def read_server_league(path: Path) -> ServerLeague:
    """The league file at `path`, validated for the server (ServerLeagueError with the reason)."""
    try:
        data = read_league_file(path)
        given = sorted(key for key in NOT_FOR_A_SERVER if key in data)
        given += [f"[game.{name}] deals" for name, table in data.get("game", {}).items()
                  if isinstance(table, dict) and "deals" in table]
        if given:
            raise LeagueError(f"{path}: {', '.join(given)}: a league server plays its bots continuously, in rounds "
                              "it sizes itself; leave these keys out")
        # build_league validates games, limits, sandbox and house bots the way `run` does; it wants two bots
        placeholders = {"server-placeholder-1", "server-placeholder-2"}
        bots = data.get("bots", [])
        if not isinstance(bots, list):
            raise LeagueError(f"{path}: bots must be a list of bot folders or NAME=CMD, got {bots!r}")
        league = build_league({**data, "bots": bots + [f"{name}=true" for name in sorted(placeholders)]},
                              path.parent, str(path))
    except LeagueError as error:
        raise ServerLeagueError(str(error)) from None
    results = league.out if league.out is not None else RESULTS_DIR / f"{league.name}.sqlite"
    return ServerLeague(path, league, results, tuple(e for e in league.entrants if e.name not in placeholders))


# -- the processes ------------------------------------------------------------------------------

def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when the server dies (a killed server leaves no orphans playing)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C is for the server, which stops us in order


def background(role: str) -> None:
    """Set up a check, board or play process: it dies with the server, and yields the CPU to it (nice),
    so that pages and uploads are answered promptly however many games and checks are under way. It is
    named `cardarena-<role>` (what `ps -o comm` and `top` show), so an organiser sees what uses the CPU."""
    die_with_parent()
    os.nice(BACKGROUND_NICENESS)
    with contextlib.suppress(OSError):  # no /proc: the name is only a label, the process works without it
        Path("/proc/self/comm").write_text(f"cardarena-{role}"[:15])


def process_context() -> Any:
    return multiprocessing.get_context("spawn")


# -- checking an upload ---------------------------------------------------------------------------

def load_version(folder: Path, bot: str) -> Entrant:
    """The bot of an unpacked upload, named `bot` (PARTICIPANT-vN) whatever its bot.toml says."""
    entrant = load_manifest(folder)
    return replace(entrant, spec=replace(entrant.spec, name=bot))


def check_upload(league_file: Path, folder: str, bot: str, games_per_game: int | None) -> dict[str, Any]:
    """Run `cardarena check` on an unpacked upload in the league's sandbox, limits and games (in a
    check process): {"passed", "text" (the report's lines), "report" (check's JSON, or None)}."""
    server = read_server_league(league_file)
    try:
        entrant = load_version(Path(folder), bot)
        games = server.games_of(entrant)
        if not games:
            raise ManifestError(f"bot.toml: the bot plays none of this league's games "
                                f"({', '.join(g.name for g in server.league.games)})")
        limits = server.league.limits
        require_own_views([entrant.spec], limits.sandbox, [("the results file", server.results)],
                          trusted=opponents(entrant.name, 1))
    except (ManifestError, UsageError, LeagueError) as error:
        text = printable(str(error)).replace(str(Path(folder)) + "/", "")  # the server's layout is not theirs
        return {"passed": False, "text": [f"FAIL: {text}"], "report": None}
    lines: list[str] = []
    report = check_bot(entrant, games, limits, games_per_game, progress=lines.extend)
    lines += describe_verdict(report)
    return {"passed": report.passed, "text": lines, "report": report.to_dict()}


# -- playing continuously --------------------------------------------------------------------------

def play_forever(league_file: Path, accounts_path: Path, jobs: int | None,
                 round_games: int = ROUND_GAMES, scheduler: str | None = None) -> None:
    """The play loop (the play process's body): round after round among the current versions, each
    finished game committed to the results file as it arrives, until the server stops it (SIGTERM:
    the games in flight are abandoned, their bots stopped) or dies. The games are played on this
    machine, or on the Dask cluster of `scheduler` (else the league file's), by the run service's
    executor, the bots' stderr logs beside the results file as a run's are."""
    signal.signal(signal.SIGTERM, _leave)
    server = read_server_league(league_file)
    accounts = Accounts(accounts_path)
    executor = make_executor(server, jobs, scheduler or server.league.scheduler)
    with open_results(server) as store, contextlib.closing(executor):
        deal_key = store.deal_secret()
        running = RunningTally.of(store.games())  # read once; each game is added as it finishes
        loaded: dict[str, Entrant] = {entrant.name: entrant for entrant in server.house}
        for entrant in server.house:
            record_entrant(store, entrant)
        established: set[str] = set()  # bots out of their gauntlet: a version never changes, so they stay out
        while True:
            entrants = {} if accounts.flag("paused") else playing(server, accounts, store, loaded)
            if len(entrants) < 2:
                time.sleep(IDLE_SECONDS)
                continue
            gauntlet = running.gauntlet(entrants) if set(entrants) - established else []
            established |= set(entrants) - set(gauntlet)
            matches = plan_round(server, entrants, gauntlet, accounts.next_round(), deal_key, round_games)
            if not matches:  # the bots share no game of the league
                time.sleep(IDLE_SECONDS)
                continue
            play_round(executor, matches, entrants, server, store, running)


def playing(server: ServerLeague, accounts: Accounts, store: ResultStore, loaded: dict[str, Entrant]) -> dict[str, Entrant]:
    """The bots of the next round: the house bots and the participants' current versions (each loaded
    and entered in the results file the first time), less the disqualified."""
    current = {version.bot: version for version in accounts.versions(current_only=True)}
    for bot, version in current.items():
        if bot not in loaded:
            loaded[bot] = load_version(Path(version.folder), bot)
            record_entrant(store, loaded[bot])
    disqualified = store.disqualified()
    return {bot: loaded[bot] for bot in [*(entrant.name for entrant in server.house), *current]
            if bot not in disqualified}


def play_process(league_file: Path, accounts_path: Path, jobs: int | None, round_games: int,
                 scheduler: str | None) -> None:
    """The play process: `play_forever` in the background; a failure (an unreachable cluster, a results
    file of other settings) is one line on stderr, the server's, which starts the process again."""
    background("play")
    try:
        play_forever(league_file, accounts_path, jobs, round_games, scheduler)
    except (ExecutionError, StoreError) as error:
        print(printable(f"error: the play process stopped: {error}"), file=sys.stderr)
        sys.exit(1)


def make_executor(server: ServerLeague, jobs: int | None, scheduler: str | None) -> Executor:
    """The run service's executor for the league: local worker processes, or the Dask cluster at
    `scheduler` (ExecutionError when it cannot be used; its warnings, a worker without bubblewrap
    say, on stderr). The bots' stderr logs go beside the results file, as a run's do."""
    kind = "local" if scheduler is None else "dask"
    setup = RunSetup(RunOptions(jobs=jobs if kind == "local" else None), replace(server.league, scheduler=scheduler),
                     str(server.source), server.results, kind)
    executor = service.make_executor(setup)
    try:
        for warning in executor.preflight(server.league.limits):
            print(printable(f"warning: {warning}"), file=sys.stderr)
    except ExecutionError:
        executor.close()
        raise
    return executor


def _leave(signum: int, frame: Any) -> None:
    raise SystemExit(0)  # unwinds the executor, which stops its workers and their bots


def open_results(server: ServerLeague) -> ResultStore:
    """The league's results file, made on the first start; a restart with other settings is refused."""
    store = ResultStore(server.results, create=True)
    recorded = store.settings()
    if recorded is None:
        store.save_settings(server.settings())
    elif recorded != server.settings():
        store.close()
        differing = sorted(key for key in set(recorded) | set(server.settings())
                           if recorded.get(key) != server.settings().get(key))
        raise StoreError(f"{server.results}: recorded with other league settings ({', '.join(differing)} differ); "
                         "restore them, or give the league another name or out file")
    return store


def changed_house_bots(server: ServerLeague) -> list[str]:
    """The house bots whose files differ from those their recorded games were played with: under the
    same name their new games would be rated with the old ones, so the server refuses to start."""
    if not server.results.exists() or not server.house:
        return []
    with ResultStore(server.results) as store:
        recorded = store.entrants()
    return [entrant.name for entrant in server.house
            if entrant.name in recorded and recorded[entrant.name]["manifest_hash"] != entrant.manifest_hash]


def record_entrant(store: ResultStore, entrant: Entrant) -> None:
    """Enter a version in the results file (once), with its folder, so that `faults` can say how to rerun it."""
    if entrant.name not in store.entrants():
        store.add_entrant(entrant.name, entrant.manifest_hash, list(entrant.spec.command), list(entrant.games),
                          dict(entrant.identity.files), {"folder": entrant.spec.folder, "cwd": entrant.spec.cwd})


def plan_round(server: ServerLeague, entrants: Mapping[str, Entrant], gauntlet: list[str], number: int,
               deal_key: str, round_games: int = ROUND_GAMES) -> list[PlannedMatch]:
    """Round `number`: about `round_games` games. While some versions are new (and others are not), the
    tables are their gauntlet against the field; else the balanced round robin of every current
    version. Every table plays the same deals, each in every seat rotation: as many as fit
    (ROUND_DEALS at most); when one deal at every table is already too many, a balanced sample of the
    tables, drawn afresh each round. Deals are numbered on from round to round (round r holds deals
    r*ROUND_DEALS onwards) and dealt from the results file's secret and the round."""
    challengers = gauntlet if 0 < len(gauntlet) < len(entrants) else []
    plays = {bot: server.games_of(entrant) for bot, entrant in entrants.items()}

    def tables(deals: int, max_tables: int) -> list[PlannedMatch]:
        games = [replace(settings, deals=deals) for settings in server.league.games]
        return schedule(plays, games, server.league.seed + number, challengers, max_tables,
                        deal_key=f"{deal_key}/round {number}")

    matches = tables(1, server.league.max_tables)
    per_deal = sum(len(match.games) for match in matches)
    if per_deal > round_games:
        matches = tables(1, max(1, server.league.max_tables * round_games // per_deal))
    elif per_deal:
        matches = tables(min(ROUND_DEALS, round_games // per_deal), server.league.max_tables)
    first = number * ROUND_DEALS
    return [replace(match, games=tuple(
        replace(game, game_id=f"{match.match_id}/d{first + game.deal}/r{game.rotation}", deal=first + game.deal)
        for game in match.games)) for match in matches]


def play_round(executor: Executor, matches: list[PlannedMatch], entrants: Mapping[str, Entrant],
               server: ServerLeague, store: ResultStore, running: RunningTally) -> int:
    """Play a round's matches, committing each game as it finishes (and counting it in `running`); the
    games stored."""
    recorder = RoundRecorder(store, matches, running)
    specs = {bot: entrant.spec for bot, entrant in entrants.items()}
    drive(executor.run(matches, specs, server.league.limits, disqualified=store.disqualified()), recorder)
    return recorder.stored


class RoundRecorder(EventSink):
    """Stores each event of a round as it arrives: a game, a match's shutdown faults, a disqualification."""

    def __init__(self, store: ResultStore, matches: list[PlannedMatch], running: RunningTally):
        self.store, self.stored, self.running = store, 0, running
        self.planned = {game.game_id: (match.match_id, game) for match in matches for game in match.games}

    def game_finished(self, event: FinishedGame) -> bool:
        match_id, game = self.planned[event.game_id]
        record = event.record
        self.store.add_game(record.to_dict(), match_id, game.deal, game.rotation, game.cluster)
        self.stored += 1
        self.running.add(cluster_of(record.game, game.cluster, record.seed), record.seats,
                         comparisons_from_ranks(record.seats, record.ranks, record.teams))
        return False

    def match_finished(self, event: FinishedMatch) -> None:
        self.store.add_match_faults(event.match_id, [fault.to_dict() for fault in event.shutdown_faults])

    def worker_lost(self, event: WorkerLost) -> None:
        """A lost worker's games are played again; a disqualification it caused is kept."""
        if event.disqualified is not None and event.bot is not None:
            self.store.add_disqualified(event.bot, event.disqualified)


# -- reading the results ---------------------------------------------------------------------------

def live_boards(results: Path, current: set[str]) -> dict[str, Any]:
    """The leaderboards as plain data: every board, rated on every game (old versions' too), listing
    the `current` bots only (the house bots and current versions: "live"), and the count of games."""
    if not results.exists():
        return {"games": 0, "boards": []}
    with ResultStore(results) as store:
        games = list(store.games())
    try:
        boards = leaderboards(games)  # the defaults of `cardarena leaderboard`: the same board on the same file
    except RatingError as error:
        return {"games": len(games), "boards": [], "note": str(error)}
    return {"games": len(games), "boards": [
        {"title": board.title, "games": board.games, "notes": board.notes,
         "rows": [_finite(row.to_dict()) | {"interval": row.interval_text()} for row in board.rows if row.bot in current]}
        for board in boards]}


def board_snapshot(results: Path, current: set[str], recent: int = 20) -> dict[str, Any]:
    """What the live board shows: `live_boards` and the `recent` latest games (computed in a process of
    its own: a large board holds the interpreter for a second, which the web server must not wait on)."""
    return {**live_boards(results, current), "recent": recent_games(results, None, recent)}


def _finite(row: dict[str, Any]) -> dict[str, Any]:
    return {key: None if isinstance(value, float) and not math.isfinite(value) else value for key, value in row.items()}


def rating_histories(results: Path) -> list[dict[str, Any]]:
    """Every board's rating history, round by round (standings.rating_history), recomputed from the
    results file; [] before the first game."""
    if not results.exists():
        return []
    with ResultStore(results) as store:
        return rating_history(store.games(), lambda game: game.placement.deal // ROUND_DEALS)


def recent_games(results: Path, bots: set[str] | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """The latest games (of `bots` when given), newest first: id, game, seats, ranks, faults."""
    if not results.exists():
        return []
    with ResultStore(results) as store:
        games = [game for game in store.games() if bots is None or bots & set(game.seats)]
    return [{"game_id": game.game_id, "game": game.game, "seats": game.seats, "ranks": game.ranks,
             "faults": len(game.faults)} for game in sorted(games, key=lambda g: (g.placement.deal, g.game_id))[-limit:][::-1]]


def bot_faults(results: Path, bot: str) -> list[str]:
    """Every fault of one bot in the results file, with its evidence and reproduce line (`cardarena faults`)."""
    if not results.exists():
        return []
    with ResultStore(results) as store:
        entries = stored_entries(store.games(), store.entrants(), store.settings(), bot, store.match_faults())
    return [line for entry in entries for line in text_lines(entry)]


def bot_log(logs: Path, bot: str, limit: int = 256 << 10) -> str:
    """The end of a bot's stderr log (its last `limit` bytes), or '' when it wrote none."""
    path = logs / log_file_name(bot)
    try:
        with open(path, "rb") as file:
            size = file.seek(0, 2)
            file.seek(max(0, size - limit))
            data = file.read()
    except FileNotFoundError:
        return ""
    note = f"[the first {size - limit:,} bytes are left out]\n" if size > limit else ""
    return note + data.decode("utf-8", "replace")


def replay_html(results: Path, game_id: str, assets: str) -> str | None:
    """The replay viewer page of one stored game (its script and style at the URL `assets`), or None."""
    if not results.exists():
        return None
    try:
        with ResultStore(results) as store:
            record = next(store.games(game_id, actions=True), None)
    except StoreError:
        return None
    if record is None:
        return None
    get_game(record.game)
    return replay_page(replay_data(record), assets_beside=assets, back_link="/")


def report_text(result: dict[str, Any]) -> str:
    """A stored check result as the text `cardarena check` prints."""
    return "\n".join(result.get("text", []))

