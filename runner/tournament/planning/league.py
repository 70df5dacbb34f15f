"""League files: a whole tournament set-up in TOML (bots, games, table sizes, deals, limits, seed).

    name = "sample"                 # names the results file: results/<name>.sqlite
    seed = 1                        # picks the tables of a balanced sample; not the deals
    # deal_seed = 7                 # deals from this seed instead of the results file's secret:
                                    # predictable by anyone who knows it (for demos and tests)
    bots = ["random", "*/"]         # bot folders (globs allowed, relative to this file) or NAME=CMD
                                    # (files a NAME=CMD names: relative to this file too)
    exclude = ["wip/"]              # folders (globs allowed, relative to this file) that the bots'
                                    # globs leave out; a pattern matching nothing is fine
    games = ["casino", "cuajo"]     # default: every registered game
    deals = 4                       # deals per table (each played once per seat rotation)
    format = "round-robin"          # or "gauntlet", with challengers = ["new-bot"]
    max_tables = 200                # above this many tables per game, a balanced sample of them
    pin_cores = true                # pin each worker (and its bots) to one core
    sandbox = "auto"                # "auto", "bwrap" or "none" (runner/referee/SANDBOX.md)
    # scheduler = "tcp://host:8786" # play on this Dask cluster instead of this machine's cores
    # baseline = "old-bot"          # an SPRT of the one challenger against this bot (needs [sprt])
    # max_games = 20000             # the SPRT stops undecided after this many games
    # [sprt]
    # elo0 = 0                      # H0: the challenger is at most elo0 stronger
    # elo1 = 10                     # H1: at least elo1 stronger
    # alpha = 0.05                  # the chance of accepting H1 when H0 holds (beta: H0 when H1 holds)
    [limits]
    decision_timeout = 1.0          # seconds per decision
    handshake_timeout = 10.0        # seconds to start and say hello
    memory_mb = 1024                # caps on each bot process (with everything it starts);
    processes = 128                 #   a bot.toml cannot change them
    open_files = 256
    file_size_mb = 64
    disk_mb = 64                    # its private /tmp, /dev/shm and HOME, each
    pass_env = ["OMP_NUM_THREADS"]  # organiser's variables a bot.toml may ask for (pass_env)
    [game.casino]
    players = 2                     # table size, within the game's limits
    deals = 6                       # overrides the league's deals for this game
    partners = "copy"               # partnership games: "copy" (a bot partners itself) or "any"
    options = { target = 11 }       # the game's rule options

The command line can override any of these; `settings_fingerprint` is what a resumed run must
match exactly.
"""

from __future__ import annotations

import glob
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from cardarena.errors import UsageError
from cardarena.games import all_games, get_game
from cardarena.games.base import OptionError
from cardarena.manifest import MANIFEST_NAME, Entrant, ManifestError, entrant_from_command, load_manifest
from cardarena.samples import SAMPLE_BOTS
from cardarena.config import AUTO, Limits, SandboxSettings, check_seconds
from cardarena.tournament.planning.schedule import (
    DEFAULT_PLAYERS,
    FORMATS,
    GAUNTLET,
    PARTNERS_ANY,
    PARTNERS_COPY,
    ROUND_ROBIN,
    GameSettings,
    ScheduleError,
    game_count,
    sprt_rounds,
    sprt_tables,
)
from cardarena.tournament.planning.sprt import SprtError, SprtSettings, sprt_settings

SAMPLE_LEAGUE = SAMPLE_BOTS / "league.toml"
_KEYS = {"name", "seed", "deal_seed", "bots", "exclude", "games", "deals", "format", "challengers", "max_tables",
         "pin_cores", "out", "limits", "game", "baseline", "sprt", "max_games", "sandbox",
         "scheduler"}
DEFAULT_SPRT_MAX_GAMES = 20_000
_GAME_KEYS = {"players", "deals", "partners", "options"}
_TIME_KEYS = {"decision_timeout", "handshake_timeout"}
_CAP_KEYS = {"memory_mb", "processes", "open_files", "file_size_mb", "disk_mb"}
_LIMIT_KEYS = _TIME_KEYS | _CAP_KEYS | {"pass_env"}
MAX_TABLES = 10_000  # max_tables: beyond it, choosing a balanced sample alone takes minutes
MAX_GAMES = 250_000  # games per tournament: the schedule (about 400 bytes a game) is held in memory


class LeagueError(UsageError, ValueError):
    """A league set-up that cannot be played; the message says where and why."""


@dataclass(frozen=True)
class League:
    """A validated tournament set-up: entrants, per-game settings, format, limits and seeds
    (`deal_seed` None: the deals come from the results file's secret)."""

    name: str
    seed: int
    entrants: tuple[Entrant, ...]
    games: tuple[GameSettings, ...]
    format: str = ROUND_ROBIN
    challengers: tuple[str, ...] = ()
    max_tables: int = 200
    limits: Limits = field(default_factory=Limits)
    pin_cores: bool = True
    out: Path | None = None
    deal_seed: int | None = None
    sprt: SprtSettings | None = None  # an SPRT of the one challenger against `baseline`, up to `max_games`
    baseline: str | None = None
    max_games: int = DEFAULT_SPRT_MAX_GAMES
    scheduler: str | None = None  # a Dask scheduler's address: where the games are played, not what they are

    def indispensable(self) -> tuple[str, ...]:
        """The bots without which the league cannot be played: an SPRT's challenger and baseline."""
        return () if self.sprt is None else (self.challengers[0], self.baseline)

    def settings_fingerprint(self) -> dict[str, Any]:
        """Everything that shapes the schedule and the games, except the entrants (which may grow)
        and the deal secret (kept in the results file itself)."""
        # the cap is left out: a larger one extends the same schedule, so an undecided SPRT can resume
        sprt = {} if self.sprt is None else {"sprt": {**self.sprt.to_dict(), "baseline": self.baseline}}
        return {
            **sprt,
            "seed": self.seed,
            "deal_seed": "secret" if self.deal_seed is None else self.deal_seed,
            "format": self.format,
            "challengers": list(self.challengers),
            "max_tables": self.max_tables,
            "limits": {"decision_timeout": self.limits.decision_timeout,
                       "handshake_timeout": self.limits.handshake_timeout},
            "caps": {key: getattr(self.limits.sandbox, key) for key in sorted(_CAP_KEYS)},
            "games": {g.name: {"players": g.players, "deals": g.deals, "partners": g.partners,
                               "options": dict(g.options), "rules_version": get_game(g.name).spec.rules_version}
                      for g in self.games},
        }


_TOML_TYPES = {dict: "table"}  # what a league file calls a type where Python's name would puzzle


def _expect(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    """`value` if it has the expected TOML type, else a LeagueError naming the key."""
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = " or ".join(_TOML_TYPES.get(k, k.__name__) for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise LeagueError(f"{where} must be {'an' if names[0] in 'aeiou' else 'a'} {names}, got {value!r}")
    return value


def _excluded_folders(entries: list[Any], base: Path) -> frozenset[Path]:
    """The folders that `exclude` patterns (globs allowed, relative to `base`) name, resolved."""
    folders: set[Path] = set()
    for entry in entries:
        _expect(entry, str, "exclude entry")
        folders.update(Path(p).resolve() for p in glob.glob(str(base / entry)))
    return frozenset(folders)


def _entrants(entries: list[Any], base: Path, where: str, command_paths: Path | None,
              excluded: frozenset[Path] = frozenset()) -> tuple[Entrant, ...]:
    """Bots from folder paths (globs allowed, relative to `base`, leaving out the `excluded`
    folders) or `NAME=CMD` strings, whose commands name files relative to `command_paths` (None:
    the current directory)."""
    entrants: list[Entrant] = []
    for entry in entries:
        _expect(entry, str, f"{where} entry")
        if "\0" in entry:
            raise LeagueError(f"{where}: {entry!r} holds a NUL character")
        pattern = base / entry
        if glob.has_magic(entry):
            folders = sorted(Path(p) for p in glob.glob(str(pattern))
                             if (Path(p) / MANIFEST_NAME).is_file() and Path(p).resolve() not in excluded)
            if not folders:
                raise LeagueError(f"{where}: no bot folder matches {entry!r}")
            entrants.extend(load_manifest(folder) for folder in folders)
        elif pattern.exists():
            entrants.append(load_manifest(pattern))
        elif "=" in entry:
            entrants.append(entrant_from_command(entry, command_paths))
        else:
            raise LeagueError(f"{where}: {entry!r} is neither a bot folder nor NAME=CMD")
    names = [entrant.name for entrant in entrants]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise LeagueError(f"{where}: bot name(s) {', '.join(repeated)} given more than once")
    if len(entrants) < 2:
        raise LeagueError(f"{where}: a tournament needs at least two bots, got {len(entrants)}")
    return tuple(sorted(entrants, key=lambda entrant: entrant.name))


def _game_settings(name: str, table: Mapping[str, Any], default_deals: int, where: str) -> GameSettings:
    """One game's settings, checked against the game's own limits and options."""
    unknown = sorted(set(table) - _GAME_KEYS)
    if unknown:
        raise LeagueError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(_GAME_KEYS))})")
    spec = get_game(name).spec
    players = _expect(table.get("players", DEFAULT_PLAYERS.get(spec.name, spec.min_players)), int, f"{where}.players")
    deals = _expect(table.get("deals", default_deals), int, f"{where}.deals")
    if deals < 1:
        raise LeagueError(f"{where}.deals must be at least 1, got {deals}")
    partners = table.get("partners", PARTNERS_COPY)
    if partners not in (PARTNERS_COPY, PARTNERS_ANY):
        raise LeagueError(f"{where}.partners must be {PARTNERS_COPY!r} or {PARTNERS_ANY!r}, got {partners!r}")
    options = _expect(table.get("options", {}), dict, f"{where}.options")
    spec.check_players(players)
    resolved = spec.resolve_options(options)
    get_game(name).new_state(players, resolved, 0)  # options may depend on the table size
    return GameSettings(spec.name, players, deals, resolved, spec.teams(players, resolved) is not None, partners)


def _sprt(data: Mapping[str, Any], challengers: tuple[str, ...],
          names: set[str]) -> tuple[SprtSettings | None, str | None, int]:
    """The SPRT settings, baseline and game cap of a league: all three, or no SPRT and neither of the others."""
    table = data.get("sprt")
    baseline = data.get("baseline")
    max_games = data.get("max_games")
    if table is None:
        if baseline is not None or max_games is not None:
            raise LeagueError("baseline and max_games belong to an SPRT: add [sprt] (or --sprt elo0=0,elo1=10)")
        return None, None, DEFAULT_SPRT_MAX_GAMES
    settings = table if isinstance(table, SprtSettings) else sprt_settings(_expect(table, dict, "[sprt]"), "[sprt]")
    if len(challengers) != 1:
        raise LeagueError(f"an SPRT tests one challenger against the baseline, got {len(challengers)} challengers")
    if baseline is None:
        raise LeagueError("an SPRT needs a baseline: the bot the challenger is tested against")
    if _expect(baseline, str, "baseline") not in names:
        raise LeagueError(f"baseline {baseline} is not among the bots")
    if baseline == challengers[0]:
        raise LeagueError(f"the baseline {baseline} is the challenger itself")
    max_games = _expect(DEFAULT_SPRT_MAX_GAMES if max_games is None else max_games, int, "max_games")
    if not 1 <= max_games <= MAX_GAMES:
        raise LeagueError(f"max_games must be from 1 to {MAX_GAMES:,}, got {max_games}")
    return settings, baseline, max_games


def _sandbox_settings(mode: Any, limit_table: Mapping[str, Any]) -> SandboxSettings:
    """The sandbox mode and the caps of `[limits]` (defaults where not given)."""
    caps = {key: _expect(value, int, f"limits.{key}") for key, value in limit_table.items() if key in _CAP_KEYS}
    pass_env = tuple(_expect(name, str, "limits.pass_env entry")
                     for name in _expect(limit_table.get("pass_env", []), list, "limits.pass_env"))
    try:
        return SandboxSettings(mode=_expect(mode, str, "sandbox"), pass_env=pass_env, **caps)
    except ValueError as error:
        raise LeagueError(str(error)) from None


@dataclass(frozen=True)
class LeagueOverrides:
    """League settings given apart from the league file (on the command line), each over the file's;
    None (or empty) is not given. Bots given here are resolved in the current directory, and
    challengers without a format make a gauntlet."""

    bots: tuple[str, ...] = ()
    games: tuple[str, ...] = ()  # canonical game names (`command_line_games`)
    players: Mapping[str, int] = field(default_factory=dict)  # table size by game (`command_line_players`)
    deals: int | None = None
    seed: int | None = None
    deal_seed: int | None = None
    format: str | None = None
    challengers: tuple[str, ...] = ()
    max_tables: int | None = None
    pin_cores: bool | None = None
    sandbox: str | None = None
    scheduler: str | None = None
    sprt: SprtSettings | None = None
    baseline: str | None = None
    max_games: int | None = None
    decision_timeout: float | None = None
    handshake_timeout: float | None = None
    pass_env: tuple[str, ...] = ()

    def given(self, key: str) -> Any:
        """The setting `key` (a league file's key) as given here, or None."""
        if key == "format" and self.format is None and self.challengers:
            return GAUNTLET
        value = getattr(self, key, None)
        if isinstance(value, tuple):
            return list(value) if value else None  # a TOML array, as the file gives it
        return value


def command_line_games(texts: Sequence[str]) -> tuple[str, ...]:
    """Game names given on the command line, repeated or comma-separated, by their canonical names."""
    try:
        return tuple(get_game(name).spec.name for text in texts
                     for name in filter(None, (part.strip() for part in text.split(","))))
    except OptionError as error:
        raise LeagueError(f"command line: {error}") from None


def command_line_players(texts: Sequence[str]) -> dict[str, int]:
    """Table sizes given on the command line as GAME=N, by canonical game name."""
    players = {}
    for text in texts:
        game, sep, count = text.partition("=")
        if not sep or not count.strip().isdigit():
            raise LeagueError(f"--players takes GAME=N, got {text!r}")
        try:
            players[get_game(game.strip()).spec.name] = int(count)
        except OptionError as error:
            raise LeagueError(f"command line: {error}") from None
    return players


class _Settings:
    """A league file's data with the command line's settings over it, read key by key."""

    def __init__(self, data: Mapping[str, Any], overrides: LeagueOverrides):
        self.data, self.overrides = data, overrides

    def get(self, key: str, default: Any = None) -> Any:
        given = self.overrides.given(key)
        return self.data.get(key, default) if given is None else given

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def table(self, key: str) -> dict[str, Any]:
        """The file's TOML table `key` (empty when absent)."""
        return _expect(self.data.get(key, {}), dict, key)

    def limits(self) -> dict[str, Any]:
        """The file's [limits] table with the command line's limits over it."""
        overrides = {key: self.overrides.given(key) for key in ("decision_timeout", "handshake_timeout", "pass_env")}
        return {**self.table("limits"), **{key: value for key, value in overrides.items() if value is not None}}


def build_league(data: Mapping[str, Any], base: Path, source: str,
                 overrides: LeagueOverrides = LeagueOverrides()) -> League:
    """A League from parsed league-file data (`base` resolves relative paths; `source` names it) with
    the command line's `overrides` over it."""
    try:
        unknown = sorted(set(data) - _KEYS)
        if unknown:
            raise LeagueError(f"unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(_KEYS))})")
        return _league(_Settings(data, overrides), base, Path.cwd() if overrides.bots else None)
    except (LeagueError, OptionError, ManifestError, SprtError, ScheduleError) as error:
        raise LeagueError(f"{source}: {error}") from None


def _league(settings: _Settings, base: Path, bots_base: Path | None) -> League:
    """The League of `settings` (see `build_league`); `bots_base`, when given, resolves the bots instead of `base`."""
    name = _expect(settings.get("name", "league"), str, "name")
    if not name or name.startswith(".") or any(c in name for c in "/\\\0") or name != name.strip():
        raise LeagueError(f"name must be a plain file name (it names results/<name>.sqlite), got {name!r}")
    seed = _expect(settings.get("seed", 0), int, "seed")
    deal_seed = settings.get("deal_seed")
    if deal_seed is not None:
        _expect(deal_seed, int, "deal_seed")
    games = _games(settings)
    # A league file's NAME=CMD bots name files relative to it, as its bot folders are; those given
    # on the command line, relative to the current directory. Both run in the current directory.
    excluded = _excluded_folders(_expect(settings.get("exclude", []), list, "exclude"), base)
    entrants = _entrants(_expect(settings.get("bots", []), list, "bots"), bots_base or base, "bots",
                         None if bots_base is not None else base.resolve(), excluded)
    form, challengers = _format(settings, {entrant.name for entrant in entrants})
    sprt, baseline, max_games = _sprt(settings, challengers, {entrant.name for entrant in entrants})
    max_tables = _expect(settings.get("max_tables", 200), int, "max_tables")
    if not 1 <= max_tables <= MAX_TABLES:
        raise LeagueError(f"max_tables must be from 1 to {MAX_TABLES:,}, got {max_tables}")
    limits = _limits(settings)
    plays = {e.name: e.games for e in entrants}
    if sprt is not None:  # its size is max_games; a round of sets must fit in it
        sprt_rounds(sprt_tables(plays, games, challengers[0], baseline, max_tables, seed), max_games)
    elif (planned := game_count(plays, games, seed, challengers, max_tables)) > MAX_GAMES:
        raise LeagueError(f"this tournament would play {planned:,} games, over the limit of {MAX_GAMES:,} per "
                          "results file (the schedule is held in memory); lower deals or max_tables, or split "
                          "it into several leagues")
    out = settings.get("out")
    pin_cores = _expect(settings.get("pin_cores", True), bool, "pin_cores")
    return League(name=name, seed=seed, entrants=entrants, games=games, format=form, challengers=challengers,
                  max_tables=max_tables, limits=limits, pin_cores=pin_cores,
                  out=None if out is None else base / _expect(out, str, "out"), deal_seed=deal_seed,
                  sprt=sprt, baseline=baseline, max_games=max_games, scheduler=_scheduler(settings.get("scheduler")))


def _games(settings: _Settings) -> tuple[GameSettings, ...]:
    """The settings of each game chosen (default: every game), from its [game.NAME] table, with the
    command line's table sizes over them."""
    deals = _expect(settings.get("deals", 2), int, "deals")
    game_tables = settings.table("game")
    chosen = _expect(settings.get("games", sorted(all_games())), list, "games")
    names = [get_game(_expect(g, str, "games entry")).spec.name for g in chosen]
    # settings of a game left out of `games` are checked for the game's name and otherwise unused
    tables = {get_game(key).spec.name: _expect(value, dict, f"[game.{key}]") for key, value in game_tables.items()}
    for game, players in settings.overrides.players.items():
        tables[game] = {**tables.get(game, {}), "players": players}
    games = tuple(_game_settings(g, tables.get(g, {}), deals, f"[game.{g}]") for g in dict.fromkeys(names))
    if not games:
        raise LeagueError("games: no game chosen")
    return games


def _format(settings: _Settings, names: set[str]) -> tuple[str, tuple[str, ...]]:
    """The league's format and its challengers, who must be among the bots `names`."""
    form = settings.get("format", GAUNTLET if "sprt" in settings else ROUND_ROBIN)  # an SPRT has a challenger
    if form not in FORMATS:
        raise LeagueError(f"format must be one of {', '.join(FORMATS)}, got {form!r}")
    challengers = tuple(_expect(c, str, "challengers entry")
                        for c in _expect(settings.get("challengers", []), list, "challengers"))
    missing = sorted(set(challengers) - names)
    if missing:
        raise LeagueError(f"challenger(s) {', '.join(missing)} are not among the bots")
    return form, challengers


def _limits(settings: _Settings) -> Limits:
    """The time limits and the sandbox of [limits] (with the command line's over them)."""
    limit_table = settings.limits()
    unknown = sorted(set(limit_table) - _LIMIT_KEYS)
    if unknown:
        raise LeagueError(f"[limits]: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(_LIMIT_KEYS))})")
    try:
        return Limits(**{key: check_seconds(value, f"[limits].{key}")
                         for key, value in limit_table.items() if key in _TIME_KEYS},
                      sandbox=_sandbox_settings(settings.get("sandbox", AUTO), limit_table))
    except ValueError as error:
        raise LeagueError(str(error)) from None


def _scheduler(address: Any) -> str | None:
    """A Dask scheduler address (`tcp://HOST:PORT` and the like), or None."""
    if address is None:
        return None
    if not isinstance(address, str) or "://" not in address or not address.split("://", 1)[1].strip():
        raise LeagueError(f"scheduler must be a Dask scheduler address such as tcp://host:8786, got {address!r}")
    return address


def read_league_file(path: Path) -> dict[str, Any]:
    """The parsed TOML of a league file (LeagueError when missing or malformed)."""
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LeagueError(f"{path}: no such league file") from None
    except OSError as error:
        raise LeagueError(f"{path}: cannot read the league file: {error.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise LeagueError(f"{path}: not valid TOML: {error}") from None
    except RecursionError:  # tomllib descends once per level of nested arrays and tables
        raise LeagueError(f"{path}: not valid TOML: nested too deeply to read") from None
