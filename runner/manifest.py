"""Bot manifests: a bot is a folder holding `bot.toml` (name, command, optional cwd, games).

    name = "random"
    command = ["python", "bot.py", "--seed", "1"]   # or one string, split like a shell would
    games = ["casino", "knock-rummy"]                # optional: default every game
    cwd = "."                                         # optional, relative to the folder

The command runs in the bot's folder (or `cwd`, relative to it). The manifest's hash is
recorded with tournament results, so a changed bot is never mistaken for the old one.
"""

from __future__ import annotations

import hashlib
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

from runner.games import all_games, get_game
from runner.games.base import OptionError
from runner.referee.process import BotSpec

MANIFEST_NAME = "bot.toml"
_KEYS = {"name", "command", "games", "cwd", "version", "description"}


class ManifestError(ValueError):
    """A bot manifest that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class Entrant:
    """A bot ready to enter games: how to run it, which games it plays, and its manifest hash."""

    spec: BotSpec
    games: tuple[str, ...]
    manifest_hash: str

    @property
    def name(self) -> str:
        return self.spec.name


def load_manifest(path: Path | str) -> Entrant:
    """The entrant described by a bot folder or its `bot.toml` (ManifestError when unusable)."""
    path = Path(path)
    manifest = path / MANIFEST_NAME if path.is_dir() else path
    if not manifest.is_file():
        raise ManifestError(f"{manifest}: no such bot manifest")
    try:
        raw = manifest.read_bytes()
    except OSError as error:
        raise ManifestError(f"{manifest}: cannot read: {error.strerror}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ManifestError(f"{manifest}: not valid TOML: {error}") from None
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ManifestError(f"{manifest}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(_KEYS))})")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or any(c.isspace() or c == "=" for c in name):
        raise ManifestError(f"{manifest}: 'name' must be a non-empty string without spaces or '='")
    command = data.get("command")
    if isinstance(command, str):
        try:
            command = shlex.split(command)
        except ValueError as error:
            raise ManifestError(f"{manifest}: 'command' cannot be split like a shell would: {error}") from None
    if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
        raise ManifestError(f"{manifest}: 'command' must be a non-empty list of strings (or one string)")
    games = data.get("games", sorted(all_games()))
    if not isinstance(games, list) or not all(isinstance(g, str) for g in games):
        raise ManifestError(f"{manifest}: 'games' must be a list of game names")
    try:
        games = tuple(get_game(g).spec.name for g in games)
    except OptionError as error:
        raise ManifestError(f"{manifest}: {error}") from None
    cwd = data.get("cwd", ".")
    if not isinstance(cwd, str):
        raise ManifestError(f"{manifest}: 'cwd' must be a string")
    workdir = (manifest.parent / cwd).resolve()
    if not workdir.is_dir():
        raise ManifestError(f"{manifest}: working directory {workdir} does not exist")
    spec = BotSpec(name=name, command=tuple(command), cwd=str(workdir))
    return Entrant(spec=spec, games=games, manifest_hash=hashlib.sha256(raw).hexdigest()[:16])


def entrant_from_command(text: str) -> Entrant:
    """An entrant from `NAME=COMMAND` on the command line (plays every game)."""
    try:
        spec = BotSpec.parse(text)
    except ValueError as error:
        raise ManifestError(str(error)) from None
    digest = hashlib.sha256(shlex.join(spec.command).encode()).hexdigest()[:16]
    return Entrant(spec=spec, games=tuple(sorted(all_games())), manifest_hash=digest)


def load_entrant(text: str) -> Entrant:
    """The bot named on a command line: a folder (or its bot.toml) with a manifest, or NAME=COMMAND."""
    if Path(text).exists() or ("=" not in text and ("/" in text or text.endswith(".toml"))):
        return load_manifest(text)  # a path: its error says which manifest is missing
    if "=" in text:
        return entrant_from_command(text)
    raise ManifestError(f"bot {text!r} is neither a bot folder (holding bot.toml) nor NAME=COMMAND")
