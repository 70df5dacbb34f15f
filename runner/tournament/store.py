"""The results of one tournament in one SQLite file: settings, entrants, games and their actions.

Each game is committed as soon as it finishes (WAL journal), so a killed run loses at most the
games in flight. The file says what it is (`meta.format`), so a stray SQLite file or any other
file is refused with a clear message instead of being written into. It also keeps the secret the
tournament's deals derive from (`meta.deal_secret`, 256 random bits drawn when the file is
created): bots never see it, and a resumed run reuses it, so the organiser can replay a run exactly.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shlex
import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from cardarena.record import GameRecord, Placement
from cardarena.referee.faults import Fault

FORMAT = "cardarena-results"
SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entrants (
    name TEXT PRIMARY KEY, manifest_hash TEXT NOT NULL, command TEXT NOT NULL, games TEXT NOT NULL);
CREATE TABLE games (
    game_id TEXT PRIMARY KEY, match_id TEXT NOT NULL, game TEXT NOT NULL, rules_version TEXT NOT NULL,
    options TEXT NOT NULL, seed INTEGER NOT NULL, deal INTEGER NOT NULL, rotation INTEGER NOT NULL,
    cluster TEXT NOT NULL, seats TEXT NOT NULL, scores TEXT NOT NULL, ranks TEXT NOT NULL,
    teams TEXT, faults TEXT NOT NULL, duration REAL NOT NULL);
CREATE TABLE actions (game_id TEXT PRIMARY KEY REFERENCES games(game_id), actions TEXT NOT NULL);
"""
#: faults of bots at a match portion's shutdown (after its last game): added after schema 1 was
#: first written, so it is made when missing and a file without it reads as holding none. One row
#: per bot process per shutdown, keyed by the game it followed, so a portion played again (after
#: a resume or a lost worker) stores each of them once.
_MATCH_FAULTS = """
CREATE TABLE IF NOT EXISTS match_faults (
    match_id TEXT NOT NULL, game_id TEXT NOT NULL, bot TEXT NOT NULL, kind TEXT NOT NULL, ordinal INTEGER NOT NULL,
    fault TEXT NOT NULL, PRIMARY KEY (game_id, bot, kind, ordinal));
"""

from cardarena.errors import CardarenaError


class StoreError(CardarenaError, ValueError):
    """A results file that cannot be used; the message names the file and the reason."""


@dataclass(frozen=True)
class StoredMatchFault:
    """A fault of a bot at a match portion's shutdown: it changes no game's result."""

    match_id: str
    game_id: str  # the game it followed (the portion's last game before that shutdown)
    fault: Fault


class ResultStore:
    """An open results database (created on first use)."""

    def __init__(self, path: Path, create: bool = False):
        self.path = Path(path)
        exists = self.path.exists()
        if not exists and not create:
            raise StoreError(f"{self.path}: no such results file")
        if exists and not self.path.is_file():
            raise StoreError(f"{self.path}: is not a file")
        if exists and self.path.stat().st_size == 0:
            raise StoreError(f"{self.path}: is empty, not a cardarena results database")
        try:
            if not exists:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path)
        except (OSError, sqlite3.Error) as error:
            raise StoreError(f"{self.path}: cannot open: {error}") from None
        try:
            with self._guard():
                if exists:
                    self._check_format()
                else:
                    with self.db:
                        self.db.executescript(_SCHEMA + _MATCH_FAULTS)
                        self.db.executemany("INSERT INTO meta VALUES (?, ?)",
                                            [("format", FORMAT), ("schema_version", SCHEMA_VERSION),
                                             ("deal_secret", secrets.token_hex(32))])
                self.db.execute("PRAGMA journal_mode=WAL")
        except StoreError:
            self.db.close()
            raise

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn any SQLite failure (a corrupt page met at open or deep in a query) into a StoreError."""
        try:
            yield
        except sqlite3.Error as error:
            raise StoreError(database_problem(self.path, error)) from None

    def _check_format(self) -> None:
        """Refuse any file that is not a results database of this schema, or that is corrupt."""
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.DatabaseError as error:
            if is_corrupt(error):
                raise
            row = None  # no meta table: some other SQLite file
        if row is None or row[0] != FORMAT:
            raise StoreError(f"{self.path}: is not a cardarena results database")
        version = self.meta("schema_version")
        if version != SCHEMA_VERSION:
            raise StoreError(f"{self.path}: results schema {version}, this cardarena reads {SCHEMA_VERSION}")
        problems = [row[0] for row in self.db.execute("PRAGMA quick_check(1)")]
        if problems != ["ok"]:
            raise StoreError(corrupt_message(self.path, " ".join(problems[0].split())))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def meta(self, key: str) -> str | None:
        """A stored setting (None when absent)."""
        with self._guard():
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def deal_secret(self) -> str:
        """The secret this tournament's deals derive from (drawn when the file was created)."""
        secret = self.meta("deal_secret")
        if secret is None:
            raise StoreError(f"{self.path}: holds no deal secret (written by an older cardarena); "
                             "use --out for a new results file")
        return secret

    def settings(self) -> dict[str, Any] | None:
        """The tournament settings recorded when it began (None for a new file)."""
        text = self.meta("settings")
        return None if text is None else json.loads(text)

    def save_settings(self, settings: dict[str, Any]) -> None:
        with self._guard(), self.db:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('settings', ?)", (json.dumps(settings, sort_keys=True),))

    def disqualified(self) -> dict[str, str]:
        """Bots disqualified from this tournament, with the detail of their fault (kept in `meta`)."""
        text = self.meta("disqualified")
        return {} if text is None else json.loads(text)

    def add_disqualified(self, bot: str, detail: str) -> None:
        """Record that `bot` sits out the rest of this tournament (and every `--resume` of it)."""
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('disqualified', ?)",
                            (json.dumps({**self.disqualified(), bot: detail}, sort_keys=True),))

    def entrants(self) -> dict[str, dict[str, Any]]:
        """Recorded entrants by name: identity digest (`manifest_hash`), command, games, the
        digest of each file of the bot ({} when the file predates per-file digests), and where it
        ran (`folder`, `cwd`; None for a file written before they were kept)."""
        with self._guard():
            rows = self.db.execute("SELECT * FROM entrants ORDER BY name").fetchall()
            files = dict(self.db.execute("SELECT substr(key, 7), value FROM meta WHERE key LIKE 'files:%'"))
            where = dict(self.db.execute("SELECT substr(key, 7), value FROM meta WHERE key LIKE 'where:%'"))
        return {name: {"manifest_hash": digest, "command": json.loads(command), "games": json.loads(games),
                       "files": json.loads(files.get(name, "{}")),
                       "where": json.loads(where[name]) if name in where else None}
                for name, digest, command, games in rows}

    def add_entrant(self, name: str, manifest_hash: str, command: list[str], games: list[str],
                    files: dict[str, str] | None = None, where: dict[str, str | None] | None = None) -> None:
        """Record an entrant; `files` (path -> digest) lets a later resume name what changed, and
        `where` (its `folder` and the `cwd` it runs in) lets `cardarena faults` say how to run it again."""
        with self._guard(), self.db:
            self.db.execute("INSERT INTO entrants VALUES (?, ?, ?, ?)",
                            (name, manifest_hash, json.dumps(command), json.dumps(games)))
            if files is not None:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"files:{name}", json.dumps(files)))
            if where is not None:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"where:{name}", json.dumps(where)))

    def finished_ids(self) -> set[str]:
        """Ids of every game already recorded."""
        with self._guard():
            return {row[0] for row in self.db.execute("SELECT game_id FROM games")}

    def add_game(self, record: dict[str, Any], match_id: str, deal: int, rotation: int, cluster: str) -> None:
        """Record one finished game (a `GameRecord.to_dict()`) and its actions in one transaction."""
        placed = GameRecord.from_dict(record).placed(Placement(match_id, deal, rotation, cluster))
        with self._guard(), self.db:
            self.db.execute(f"INSERT INTO games VALUES ({', '.join('?' * _GAME_COLUMNS)})", placed.storage_row())
            self.db.execute("INSERT INTO actions VALUES (?, ?)", (placed.game_id, placed.actions_text()))

    def add_match_faults(self, match_id: str, faults: Sequence[dict[str, Any]]) -> int:
        """Record the faults of a match portion's shutdown (`Fault.to_dict()`s, each naming the game
        it followed); those already recorded (the portion played again) are skipped. Returns how
        many were new."""
        ordinals: Counter = Counter()
        rows = []
        for fault in faults:
            key = (fault.get("game_id") or match_id, fault["bot"], fault["kind"])
            rows.append((match_id, *key, ordinals[key], json.dumps(fault)))
            ordinals[key] += 1
        with self._guard(), self.db:
            self.db.execute(_MATCH_FAULTS)
            before = self.db.total_changes
            self.db.executemany("INSERT OR IGNORE INTO match_faults VALUES (?, ?, ?, ?, ?, ?)", rows)
            return self.db.total_changes - before

    def match_faults(self) -> list[StoredMatchFault]:
        """Every recorded shutdown fault, in game-id order (none in a file written before they were kept)."""
        with self._guard():
            if not self._has_match_faults():
                return []
            rows = self.db.execute("SELECT match_id, game_id, fault FROM match_faults "
                                   "ORDER BY game_id, bot, kind, ordinal").fetchall()
        return [StoredMatchFault(match_id, game_id, Fault.from_dict(json.loads(fault))) for match_id, game_id, fault in rows]

    def _has_match_faults(self) -> bool:
        """Whether the file has the match_faults table (older files do not)."""
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'match_faults'"
                               ).fetchone() is not None

    def games(self, game_id: str | None = None, actions: bool = False) -> Iterator[GameRecord]:
        """Every recorded game in game-id order (or just the one called `game_id`), with its actions
        when `actions` is true (replays need them; ratings and reports do not)."""
        query = ("SELECT games.*, actions.actions FROM games LEFT JOIN actions USING (game_id)" if actions
                 else "SELECT *, NULL FROM games")
        query, arguments = (f"{query} ORDER BY game_id", ()) if game_id is None else (f"{query} WHERE game_id = ?", (game_id,))
        with self._guard():
            for row in self.db.execute(query, arguments):
                yield GameRecord.from_row(row[:_GAME_COLUMNS], row[_GAME_COLUMNS])


def is_corrupt(error: sqlite3.Error) -> bool:
    """Whether SQLite failed because the file's content is damaged (rather than locked, full, ...)."""
    return getattr(error, "sqlite_errorname", "") in ("SQLITE_CORRUPT", "SQLITE_NOTADB")


def corrupt_message(path: Path, reason: str) -> str:
    """One line: the file is corrupt, SQLite's reason, and the command that saves what can be read."""
    return (f"{path}: the results file is corrupt (SQLite: {reason}); copy every readable game into a new "
            f"file with: cardarena salvage {shlex.quote(str(path))} {shlex.quote(str(salvage_path(path)))}")


def database_problem(path: Path, error: sqlite3.Error) -> str:
    """One line for any SQLite failure on a results file."""
    if getattr(error, "sqlite_errorname", "") == "SQLITE_NOTADB":
        return f"{path}: is not a cardarena results database (SQLite: {error})"
    if is_corrupt(error):
        return corrupt_message(path, str(error))
    return f"{path}: SQLite failed: {error}"


def salvage_path(path: Path) -> Path:
    """Where `salvage` suggests writing what it recovers from `path`: beside it, `-salvaged` added."""
    return path.with_name(f"{path.stem}-salvaged{path.suffix or '.sqlite'}")


# -- salvage ---------------------------------------------------------------------------------

_LAST_ROWID = (1 << 63) - 1
_GAME_COLUMNS = 15  # columns of the games table, in schema order
_JSON_GAME_COLUMNS = (4, 9, 10, 11, 12, 13)  # options, seats, scores, ranks, teams, faults


@dataclass(frozen=True)
class SalvageReport:
    """What `salvage` copied into the new file, and what it could not read."""

    games: int
    entrants: int
    match_faults: int  # faults at a match's shutdown (those of games are in their games)
    settings: bool  # the settings and the deal secret were read (so --resume can continue the same run)
    unreadable: dict[str, int]  # table -> damaged stretches skipped (or 1 when the table is gone)
    incomplete_games: int  # games whose row or actions could not both be read


def salvage(source: Path, target: Path) -> SalvageReport:
    """Copy every readable setting, entrant and complete game of a damaged results file into a new one.

    The damaged file is only read. Rows are read one at a time in rowid order; where a read fails
    (a corrupt page), the reading skips ahead to the first rowid from which it works again, so one
    bad page costs only the rows on it.
    """
    if target.exists():
        raise StoreError(f"{target}: already exists; salvage writes a new results file")
    if not source.is_file():
        raise StoreError(f"{source}: no such results file")
    try:
        db = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
        db.execute("PRAGMA writable_schema = ON")  # lets SQLite read a file shorter than its header says
    except sqlite3.Error as error:
        raise StoreError(f"{source}: cannot open: {error}") from None
    try:
        unreadable: dict[str, int] = {}
        tables = {}
        for table, columns in (("meta", "key, value"), ("entrants", "*"), ("games", "*"),
                               ("actions", "game_id, actions")):
            tables[table], unreadable[table] = _readable_rows(db, table, columns)
        tables["match_faults"], unreadable["match_faults"] = _readable_rows(db, "match_faults", "*")
        if unreadable["match_faults"] == 1 and not tables["match_faults"] and not _mentions_match_faults(db):
            unreadable["match_faults"] = 0  # an older file, written before shutdown faults were kept
    except sqlite3.Error as error:
        raise StoreError(database_problem(source, error)) from None
    finally:
        db.close()
    meta = dict(tables["meta"])
    if meta.get("format", FORMAT) != FORMAT or meta.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
        raise StoreError(f"{source}: is not a cardarena results database of schema {SCHEMA_VERSION}; nothing salvaged")
    if not (meta or tables["entrants"] or tables["games"]):
        raise StoreError(f"{source}: nothing could be read from it (SQLite cannot read its structure); "
                         "nothing salvaged")
    actions = dict(tables["actions"])
    games = [row for row in tables["games"] if len(row) == _GAME_COLUMNS and row[0] in actions
             and _json_intact([row[index] for index in _JSON_GAME_COLUMNS] + [actions[row[0]]])]
    match_faults = [row for row in tables["match_faults"] if len(row) == 6 and _json_intact([row[5]])]
    with ResultStore(target, create=True) as store, store._guard(), store.db:
        store.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                             [(key, value) for key, value in meta.items() if key not in ("format", "schema_version")])
        store.db.executemany("INSERT OR IGNORE INTO entrants VALUES (?, ?, ?, ?)", tables["entrants"])
        store.db.executemany(f"INSERT INTO games VALUES ({', '.join('?' * _GAME_COLUMNS)})", games)
        store.db.executemany("INSERT INTO actions VALUES (?, ?)", [(row[0], actions[row[0]]) for row in games])
        store.db.executemany("INSERT OR IGNORE INTO match_faults VALUES (?, ?, ?, ?, ?, ?)", match_faults)
    complete = {row[0] for row in games}
    incomplete = len({row[0] for row in tables["games"]} | set(actions)) - len(complete)
    return SalvageReport(len(games), len(tables["entrants"]), len(match_faults), {"settings", "deal_secret"} <= set(meta),
                         {table: count for table, count in unreadable.items() if count}, incomplete)


def _mentions_match_faults(db: sqlite3.Connection) -> bool:
    """Whether a damaged file's schema names the match_faults table (True when the schema cannot be read)."""
    try:
        return db.execute("SELECT 1 FROM sqlite_master WHERE name = 'match_faults'").fetchone() is not None
    except sqlite3.DatabaseError:
        return True


def _json_intact(texts: list[str | None]) -> bool:
    """Whether stored JSON texts all parse (damage can garble text without SQLite noticing)."""
    try:
        for text in texts:
            if text is not None:
                json.loads(text)
    except (TypeError, ValueError):
        return False
    return True


class _Damaged(Exception):
    """A read that failed on damage: a corrupt page, or rows out of order behind a corrupt parent page."""


def _readable_rows(db: sqlite3.Connection, table: str, columns: str) -> tuple[list[tuple], int]:
    """Every row of `table` that can be read, in rowid order, and how many damaged stretches were skipped."""
    query = f"SELECT rowid, {columns} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT 1"

    def reads_after(rowid: int) -> tuple | None:
        try:
            row = db.execute(query, (rowid,)).fetchone()
        except sqlite3.DatabaseError as error:
            if is_corrupt(error):
                raise _Damaged() from None
            raise
        if row is not None and row[0] <= rowid:
            raise _Damaged()
        return row

    rows: list[tuple] = []
    damaged, after = 0, 0
    while after < _LAST_ROWID:
        try:
            row = reads_after(after)
        except _Damaged:
            damaged += 1
            after = _past_damage(reads_after, after)
            continue
        except sqlite3.DatabaseError as error:
            if getattr(error, "sqlite_errorname", "") == "SQLITE_ERROR":
                return rows, 1  # no such table: its schema entry is gone
            raise
        if row is None:
            break
        rows.append(tuple(row[1:]))
        after = row[0]
    return rows, damaged


def _past_damage(reads_after: Any, failed: int) -> int:
    """The first rowid after `failed` from which reading works again: steps doubling in length until a
    read works, then bisection back to where the damage ends."""
    step, works = 1, _LAST_ROWID
    while failed + step < _LAST_ROWID:
        try:
            reads_after(failed + step)
            works = failed + step
            break
        except _Damaged:
            failed, step = failed + step, step * 2
    while works - failed > 1:
        middle = (failed + works) // 2
        try:
            reads_after(middle)
            works = middle
        except _Damaged:
            failed = middle
    return works


def merged_games(paths: Sequence[Path]) -> list[GameRecord]:
    """Every game of several results files, to be rated together.

    Refuses a game found twice (the same game id on the same deal: the same file given twice, or
    a copy) and a game played under different rules versions in two files, since such results
    are never pooled.
    """
    named = [Path(path).resolve() for path in paths]
    twice = next((path for index, path in enumerate(paths) if named[index] in named[:index]), None)
    if twice is not None:
        raise StoreError(f"{twice}: given twice; a game is rated once")
    found: dict[tuple[str, int], Path] = {}
    versions: dict[str, tuple[str, Path]] = {}
    games: list[GameRecord] = []
    for path in paths:
        with ResultStore(path) as store:
            for game in store.games():
                key = (game.game_id, game.seed)
                if key in found:
                    raise StoreError(f"{store.path}: game {game.game_id} is also in {found[key]} (same deal); "
                                     "a game is rated once, so leave one of the two files out")
                found[key] = store.path
                version, where = versions.setdefault(game.game, (game.rules_version, store.path))
                if version != game.rules_version:
                    raise StoreError(f"{store.path}: {game.game} was played under rules v{game.rules_version}, "
                                     f"in {where} under v{version}; results of different rules versions are "
                                     "never rated together")
                games.append(game)
    return games
