"""The results of one tournament in one SQLite file: settings, entrants, games and their actions.

Each game is committed as soon as it finishes (WAL journal), so a killed run loses at most the
games in flight. The file says what it is (`meta.format`), so a stray SQLite file or any other
file is refused with a clear message instead of being written into. It also keeps the secret the
tournament's deals derive from (`meta.deal_secret`, 256 random bits drawn when the file is
created): bots never see it, and a resumed run reuses it, so the organiser can replay a run exactly.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

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


class StoreError(ValueError):
    """A results file that cannot be used; the message names the file and the reason."""


@dataclass(frozen=True)
class StoredGame:
    """One finished game as stored: what the ratings, reports and replays need."""

    game_id: str
    match_id: str
    game: str
    rules_version: str
    options: dict[str, Any]
    seed: int
    deal: int
    rotation: int
    cluster: str
    seats: list[str]
    scores: list[Any]  # wire form: int, or [numerator, denominator]
    ranks: list[int]
    teams: list[int] | None
    faults: list[dict[str, Any]]
    duration: float


class ResultStore:
    """An open results database (created on first use)."""

    def __init__(self, path: Path, create: bool = False):
        self.path = Path(path)
        exists = self.path.exists()
        if not exists and not create:
            raise StoreError(f"{self.path}: no such results file")
        if exists and not self.path.is_file():
            raise StoreError(f"{self.path}: is not a file")
        if not exists:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path)
            if exists:
                self._check_format()
            else:
                with self.db:
                    self.db.executescript(_SCHEMA)
                    self.db.executemany("INSERT INTO meta VALUES (?, ?)",
                                        [("format", FORMAT), ("schema_version", SCHEMA_VERSION),
                                         ("deal_secret", secrets.token_hex(32))])
            self.db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.DatabaseError as error:
            raise StoreError(f"{self.path}: is not a cardarena results database ({error})") from None

    def _check_format(self) -> None:
        """Refuse any file that is not a results database of this schema."""
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.DatabaseError:
            row = None
        if row is None or row[0] != FORMAT:
            self.db.close()
            raise StoreError(f"{self.path}: is not a cardarena results database")
        version = self.meta("schema_version")
        if version != SCHEMA_VERSION:
            self.db.close()
            raise StoreError(f"{self.path}: results schema {version}, this cardarena reads {SCHEMA_VERSION}")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def meta(self, key: str) -> str | None:
        """A stored setting (None when absent)."""
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
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('settings', ?)", (json.dumps(settings, sort_keys=True),))

    def entrants(self) -> dict[str, dict[str, Any]]:
        """Recorded entrants by name: manifest hash, command and games."""
        return {name: {"manifest_hash": digest, "command": json.loads(command), "games": json.loads(games)}
                for name, digest, command, games in self.db.execute("SELECT * FROM entrants ORDER BY name")}

    def add_entrant(self, name: str, manifest_hash: str, command: list[str], games: list[str]) -> None:
        with self.db:
            self.db.execute("INSERT INTO entrants VALUES (?, ?, ?, ?)",
                            (name, manifest_hash, json.dumps(command), json.dumps(games)))

    def finished_ids(self) -> set[str]:
        """Ids of every game already recorded."""
        return {row[0] for row in self.db.execute("SELECT game_id FROM games")}

    def add_game(self, record: dict[str, Any], match_id: str, deal: int, rotation: int, cluster: str) -> None:
        """Record one finished game (a `GameRecord.to_dict()`) and its actions in one transaction."""
        result = record["result"]
        with self.db:
            self.db.execute(
                "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (record["game_id"], match_id, record["game"], record["rules_version"],
                 json.dumps(record["options"], sort_keys=True), record["seed"], deal, rotation, cluster,
                 json.dumps(record["seats"]), json.dumps(result["scores"]), json.dumps(record["ranks"]),
                 None if result["teams"] is None else json.dumps(result["teams"]),
                 json.dumps(record["faults"]), record["duration"]))
            self.db.execute("INSERT INTO actions VALUES (?, ?)", (record["game_id"], json.dumps(record["actions"])))

    def games(self, game_id: str | None = None) -> Iterator[StoredGame]:
        """Every recorded game in game-id order (or just the one called `game_id`)."""
        query, arguments = "SELECT * FROM games ORDER BY game_id", ()
        if game_id is not None:
            query, arguments = "SELECT * FROM games WHERE game_id = ?", (game_id,)
        for row in self.db.execute(query, arguments):
            (game_id, match_id, game, rules_version, options, seed, deal, rotation, cluster,
             seats, scores, ranks, teams, faults, duration) = row
            yield StoredGame(game_id, match_id, game, rules_version, json.loads(options), seed, deal, rotation,
                             cluster, json.loads(seats), json.loads(scores), json.loads(ranks),
                             None if teams is None else json.loads(teams), json.loads(faults), duration)

    def actions(self, game_id: str) -> list[tuple[int, dict[str, Any]]]:
        """The recorded actions of one game, as (seat, action)."""
        row = self.db.execute("SELECT actions FROM actions WHERE game_id = ?", (game_id,)).fetchone()
        return [] if row is None else [(seat, action) for seat, action in json.loads(row[0])]
