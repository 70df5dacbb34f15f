"""The league server's own database: participants and their tokens, sessions, submissions and bot versions.

It is a SQLite file beside the league's results file (`league.sqlite` -> `league.server.sqlite`),
not tables inside it. The results file stays exactly what `cardarena run` writes, so `leaderboard`,
`report`, `faults`, `replay` and `salvage` read it unchanged, and it can be handed to anyone (mailed
to a class, published with the report) without handing over token hashes, check reports or who
uploaded what. The two files are written in separate transactions: this one is the record of every
accepted submission and version (written before the upload is acknowledged), the results file of
every finished game; neither refers to a row of the other that may be missing after a crash
(a version's games name its bot, which this file holds from the moment it passed).

Tokens are `ca_<id>_<secret>`: the id finds the row, and the secret (256 random bits) is stored as
its SHA-256 and compared in constant time. A slow password hash (scrypt, PBKDF2) protects
low-entropy passwords against guessing; a 256-bit random secret cannot be guessed however fast the
hash, and a fast one keeps every request's check cheap instead of making log-ins a way to load
the server. Each token is shown once, when it is made.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from cardarena.errors import CardarenaError

FORMAT = "cardarena-league-server"
SCHEMA_VERSION = "1"
ORGANISER, PARTICIPANT = "organiser", "participant"
CHECKING, PASSED, FAILED = "checking", "passed", "failed"
#: a participant's name: it starts each of their bots' names (NAME-vN), so it obeys the bot-name rules and is shorter
PARTICIPANT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
SESSION_SECONDS = 12 * 3600
FORM_SECONDS = 2 * 3600  # how long a page's form stays good

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE participants (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, role TEXT NOT NULL, token_id TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE sessions (
    key_hash TEXT PRIMARY KEY, participant INTEGER NOT NULL REFERENCES participants(id), expires REAL NOT NULL);
CREATE TABLE forms (nonce_hash TEXT PRIMARY KEY, session_hash TEXT NOT NULL, expires REAL NOT NULL);
CREATE TABLE submissions (
    id INTEGER PRIMARY KEY, participant INTEGER NOT NULL REFERENCES participants(id), created REAL NOT NULL,
    digest TEXT NOT NULL, folder TEXT NOT NULL, status TEXT NOT NULL, report TEXT, passed_as TEXT);
CREATE TABLE versions (
    bot TEXT PRIMARY KEY, participant INTEGER NOT NULL REFERENCES participants(id), number INTEGER NOT NULL,
    submission INTEGER NOT NULL REFERENCES submissions(id), folder TEXT NOT NULL, created REAL NOT NULL,
    current INTEGER NOT NULL, retired INTEGER NOT NULL DEFAULT 0, UNIQUE (participant, number));
"""


class AccountError(CardarenaError, ValueError):
    """A server database that cannot be used, or an account request that cannot be met; one line."""


@dataclass(frozen=True)
class Participant:
    id: int
    name: str
    role: str

    @property
    def is_organiser(self) -> bool:
        return self.role == ORGANISER


@dataclass(frozen=True)
class Submission:
    id: int
    participant: int
    created: float
    digest: str
    folder: str
    status: str
    report: dict[str, Any] | None
    passed_as: str | None


@dataclass(frozen=True)
class Version:
    bot: str  # its name in the results file: PARTICIPANT-vN
    participant: int
    number: int
    submission: int
    folder: str
    created: float
    current: bool
    retired: bool


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def house_clash(participant: str, house: Iterable[str]) -> str | None:
    """The house bot that a version of `participant` (PARTICIPANT-vN) would be named as, if any: the
    results file names a bot once, so they could not both play."""
    versions = re.compile(re.escape(participant) + r"-v[0-9]+", re.IGNORECASE)
    return next((bot for bot in sorted(house) if versions.fullmatch(bot)), None)


def check_participant_name(name: str) -> str:
    if not isinstance(name, str) or not PARTICIPANT_NAME.fullmatch(name):
        raise AccountError(f"participant name {name!r} must be 1-40 letters, digits, '.', '_' or '-', starting with "
                           "a letter or digit (it starts the names of their bots)")
    return name


class Accounts:
    """An open server database (made on first use); safe to share between threads."""

    def __init__(self, path: Path):
        self.path = Path(path)
        exists = self.path.exists()
        try:
            self.db = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
            self.db.execute("PRAGMA busy_timeout = 30000")
        except sqlite3.Error as error:
            raise AccountError(f"{self.path}: cannot open: {error}") from None
        self.lock = threading.RLock()
        try:
            if exists:
                row = self.db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
                if row is None or row[0] != FORMAT:
                    raise AccountError(f"{self.path}: is not a cardarena league server database")
            else:
                with self.lock:  # one script, one transaction: a half-made file is never left
                    self.db.executescript(f"BEGIN; {_SCHEMA} INSERT INTO meta VALUES ('format', '{FORMAT}'), "
                                          f"('schema_version', '{SCHEMA_VERSION}'); COMMIT;")
            self.db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.Error as error:
            self.db.close()
            raise AccountError(f"{self.path}: is not a cardarena league server database ({error})") from None
        except AccountError:
            self.db.close()
            raise

    def close(self) -> None:
        self.db.close()

    def transaction(self) -> Any:
        """A context in which the statements commit together (or not at all), one thread at a time."""
        accounts = self

        class _Transaction:
            def __enter__(self) -> None:
                accounts.lock.acquire()
                if not accounts.db.in_transaction:
                    accounts.db.execute("BEGIN IMMEDIATE")

            def __exit__(self, kind: Any, *rest: Any) -> None:
                try:
                    if accounts.db.in_transaction:
                        accounts.db.execute("ROLLBACK" if kind else "COMMIT")
                finally:
                    accounts.lock.release()

        return _Transaction()

    def _rows(self, query: str, *arguments: Any) -> list[tuple]:
        with self.lock:
            return self.db.execute(query, arguments).fetchall()

    # -- meta ---------------------------------------------------------------------------------

    def flag(self, key: str) -> bool:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", key)
        return bool(rows) and rows[0][0] == "1"

    def set_flag(self, key: str, value: bool) -> None:
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, "1" if value else "0"))

    def next_round(self) -> int:
        """The number of the next round of play, counted here so that a restart never reuses one."""
        with self.transaction():
            row = self.db.execute("SELECT value FROM meta WHERE key = 'round'").fetchone()
            number = 0 if row is None else int(row[0]) + 1
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('round', ?)", (str(number),))
        return number

    # -- participants and tokens ----------------------------------------------------------------

    def add_participant(self, name: str, role: str = PARTICIPANT, house: Iterable[str] = ()) -> str:
        """Add a participant (or the organiser) and return their token: the only time it is shown. The
        name must not make version names of the `house` bots."""
        check_participant_name(name)
        if (bot := house_clash(name, house)) is not None:
            raise AccountError(f"participant name {name!r}: its versions would be named as the house bot {bot!r}; "
                               "choose another name")
        token_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        with self.transaction():
            if self.db.execute("SELECT 1 FROM participants WHERE lower(name) = lower(?)", (name,)).fetchone():
                raise AccountError(f"a participant named {name!r} already exists")
            self.db.execute("INSERT INTO participants (name, role, token_id, token_hash, created) VALUES (?, ?, ?, ?, ?)",
                            (name, role, token_id, digest(secret), time.time()))
        return f"ca_{token_id}_{secret}"

    def new_token(self, name: str) -> str:
        """A fresh token for an existing participant (the old one stops working)."""
        token_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        with self.transaction():
            changed = self.db.execute("UPDATE participants SET token_id = ?, token_hash = ? WHERE name = ?",
                                      (token_id, digest(secret), name)).rowcount
        if not changed:
            raise AccountError(f"no participant named {name!r}")
        return f"ca_{token_id}_{secret}"

    def authenticate(self, token: str) -> Participant | None:
        """The participant whose token this is, or None; the secret is compared in constant time."""
        parts = token.split("_", 2) if isinstance(token, str) and len(token) < 200 else []  # the secret may hold "_"
        if len(parts) != 3 or parts[0] != "ca":
            return None
        rows = self._rows("SELECT id, name, role, token_hash FROM participants WHERE token_id = ?", parts[1])
        expected = rows[0][3] if rows else digest("")
        matches = hmac.compare_digest(digest(parts[2]), expected)
        return Participant(*rows[0][:3]) if rows and matches else None

    def participant(self, ident: int) -> Participant | None:
        rows = self._rows("SELECT id, name, role FROM participants WHERE id = ?", ident)
        return Participant(*rows[0]) if rows else None

    def participants(self) -> list[Participant]:
        return [Participant(*row) for row in self._rows("SELECT id, name, role FROM participants ORDER BY name")]

    # -- sessions and one-time forms ---------------------------------------------------------------

    def open_session(self, who: Participant) -> str:
        """A new browser session for `who`: the cookie's value (stored hashed)."""
        key = secrets.token_urlsafe(32)
        with self.transaction():
            self.db.execute("DELETE FROM sessions WHERE expires < ?", (time.time(),))
            self.db.execute("INSERT INTO sessions VALUES (?, ?, ?)", (digest(key), who.id, time.time() + SESSION_SECONDS))
        return key

    def session(self, key: str | None) -> Participant | None:
        if not key or len(key) > 200:
            return None
        rows = self._rows("SELECT participant FROM sessions WHERE key_hash = ? AND expires > ?", digest(key), time.time())
        return self.participant(rows[0][0]) if rows else None

    def close_session(self, key: str) -> None:
        with self.transaction():
            self.db.execute("DELETE FROM sessions WHERE key_hash = ?", (digest(key),))
            self.db.execute("DELETE FROM forms WHERE session_hash = ?", (digest(key),))

    def issue_form(self, session_key: str) -> str:
        """A one-time form token tied to the session (CSRF protection that also refuses a replayed form)."""
        nonce = secrets.token_urlsafe(24)
        with self.transaction():
            self.db.execute("DELETE FROM forms WHERE expires < ?", (time.time(),))
            self.db.execute("INSERT INTO forms VALUES (?, ?, ?)", (digest(nonce), digest(session_key),
                                                                  time.time() + FORM_SECONDS))
        return nonce

    def redeem_form(self, session_key: str, nonce: str) -> bool:
        """Whether `nonce` was issued to this session and not used yet; it is used up either way."""
        if not nonce or len(nonce) > 200:
            return False
        with self.transaction():
            return self.db.execute("DELETE FROM forms WHERE nonce_hash = ? AND session_hash = ? AND expires > ?",
                                   (digest(nonce), digest(session_key), time.time())).rowcount == 1

    # -- submissions and versions -----------------------------------------------------------------

    def add_submission(self, who: Participant, archive_digest: str, folder: str) -> int:
        """Record an unpacked upload, to be checked; committed before the upload is acknowledged."""
        with self.transaction():
            return self.db.execute("INSERT INTO submissions (participant, created, digest, folder, status) "
                                   "VALUES (?, ?, ?, ?, ?)",
                                   (who.id, time.time(), archive_digest, folder, CHECKING)).lastrowid

    def submission(self, ident: int) -> Submission | None:
        rows = self._rows("SELECT * FROM submissions WHERE id = ?", ident)
        return _submission(rows[0]) if rows else None

    def submissions(self, participant: int | None = None) -> list[Submission]:
        query = "SELECT * FROM submissions" + ("" if participant is None else " WHERE participant = ?")
        return [_submission(row) for row in self._rows(query + " ORDER BY id DESC", *(
            () if participant is None else (participant,)))]

    def unchecked(self) -> list[Submission]:
        """Submissions accepted but not yet checked (a restart checks them again)."""
        return [_submission(row) for row in self._rows("SELECT * FROM submissions WHERE status = ? ORDER BY id",
                                                       CHECKING)]

    def finish_check(self, ident: int, report: dict[str, Any], passed: bool) -> str | None:
        """Store a check's report; a pass makes the submission its participant's new current version
        (the previous one leaves the live board, keeping its games). The new bot's name, or None."""
        with self.transaction():
            row = self.db.execute("SELECT participant, folder, status FROM submissions WHERE id = ?", (ident,)).fetchone()
            if row is None or row[2] != CHECKING:
                return None
            participant, folder, _ = row
            bot = None
            if passed:
                number = 1 + self.db.execute("SELECT coalesce(max(number), 0) FROM versions WHERE participant = ?",
                                             (participant,)).fetchone()[0]
                name = self.db.execute("SELECT name FROM participants WHERE id = ?", (participant,)).fetchone()[0]
                bot = f"{name}-v{number}"
                self.db.execute("UPDATE versions SET current = 0 WHERE participant = ?", (participant,))
                self.db.execute("INSERT INTO versions VALUES (?, ?, ?, ?, ?, ?, 1, 0)",
                                (bot, participant, number, ident, folder, time.time()))
            self.db.execute("UPDATE submissions SET status = ?, report = ?, passed_as = ? WHERE id = ?",
                            (PASSED if passed else FAILED, json.dumps(report), bot, ident))
        return bot

    def versions(self, current_only: bool = False) -> list[Version]:
        query = "SELECT * FROM versions" + (" WHERE current = 1 AND retired = 0" if current_only else "")
        return [_version(row) for row in self._rows(query + " ORDER BY bot")]

    def retire(self, bot: str) -> bool:
        """Take a bot version out of play (the organiser's call); its games stay."""
        with self.transaction():
            return self.db.execute("UPDATE versions SET retired = 1 WHERE bot = ?", (bot,)).rowcount == 1

    def owner_of(self, bot: str) -> int | None:
        rows = self._rows("SELECT participant FROM versions WHERE bot = ?", bot)
        return rows[0][0] if rows else None


def _submission(row: tuple) -> Submission:
    ident, participant, created, archive_digest, folder, status, report, passed_as = row
    return Submission(ident, participant, created, archive_digest, folder, status,
                      None if report is None else json.loads(report), passed_as)


def _version(row: tuple) -> Version:
    bot, participant, number, submission, folder, created, current, retired = row
    return Version(bot, participant, number, submission, folder, created, bool(current), bool(retired))

