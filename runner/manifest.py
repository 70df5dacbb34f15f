"""Bot manifests: a bot is a folder holding `bot.toml` (name, command, optional cwd, games).

    name = "random"
    command = ["python", "bot.py", "--seed", "1"]   # or one string, split like a shell would
    games = ["casino", "knock-rummy"]                # optional: default every game
    cwd = "."                                         # optional, relative to the folder, inside it
    env = { OMP_NUM_THREADS = "1" }                   # optional: variables the bot gets
    pass_env = ["CUDA_VISIBLE_DEVICES"]               # optional: organiser's variables it asks for

The command runs in the bot's folder (or `cwd`, relative to it). A bot's *identity* (`identify`)
is recorded with tournament results, so a changed bot is never mistaken for the old one: a digest
of its folder's files (`bot_files`: every file, less what the organiser's git work tree ignores by
rules outside the folder, else less build output; nothing in the folder decides), or for a NAME=CMD
bot of its command and script.
The sandbox shows the bot its own folder read-only and nothing else of the organiser's files;
`pass_env` names reach the bot only when the organiser allows them (league `[limits] pass_env`).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
import subprocess
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from cardarena.errors import UsageError
from cardarena.games import all_games, get_game
from cardarena.games.base import OptionError
from cardarena.config import BotSpec, check_bot_name, check_env_name

MANIFEST_NAME = "bot.toml"
_KEYS = {"name", "command", "games", "cwd", "version", "description", "env", "pass_env"}
#: folders and file endings a walk of a bot folder outside git leaves out: build output and caches
SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", ".git", "build", ".venv", "venv", ".mypy_cache",
                             ".pytest_cache"})
SKIPPED_SUFFIXES = (".pyc", ".pyo")
MAX_BOT_FILES = 10_000  # files in a bot's identity: more is build output that belongs in .gitignore
CONTENT_BUDGET = 128 << 20  # bytes of content hashed per bot; files past it count by size and mtime
#: a bot folder may ship its own .git, whose config git obeys: `core.fsmonitor` names a command git
#: runs, as the organiser, whenever it lists the folder's files; overriding it on the command line wins
GIT_WITHOUT_HOOKS = ("-c", "core.fsmonitor=false")


class ManifestError(UsageError, ValueError):
    """A bot manifest that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class Identity:
    """What a bot is made of: a short digest of it all, and a digest per file (to name what changed)."""

    digest: str  # 16 hex digits; results record it as the bot's `manifest_hash`
    files: tuple[tuple[str, str], ...]  # (path relative to the bot folder, or "command"; its digest)

    def changes(self, old: dict[str, str]) -> list[str]:
        """The files that differ from an older identity's file digests: changed, added or removed."""
        new = dict(self.files)
        return sorted(path for path in set(new) | set(old) if new.get(path) != old.get(path))


@dataclass(frozen=True)
class Entrant:
    """A bot ready to enter games: how to run it, which games it plays, and its identity."""

    spec: BotSpec
    games: tuple[str, ...]
    identity: Identity

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def manifest_hash(self) -> str:
        """The identity's digest, under the name the results file stores it by."""
        return self.identity.digest


def bot_files(folder: Path) -> list[str]:
    """The files that make up a bot folder, as sorted relative POSIX paths: every file, less what the
    organiser's git work tree ignores by rules outside the folder when the folder lies in one, else
    less SKIPPED_FOLDERS and SKIPPED_SUFFIXES. Nothing in the folder decides: not its own .git (its
    index, exclude file or config), nor a .gitignore inside it. Symbolic links are listed, never followed."""
    ignored = _ignored_from_outside(folder)
    names = []
    for root, folders, files in os.walk(folder):
        relative = Path(root).relative_to(folder)
        links = [name for name in folders if os.path.islink(os.path.join(root, name))]  # walk lists, never enters
        folders[:] = [name for name in folders if name not in links and name != ".git" and (
            (relative / name).as_posix() + "/" not in ignored if ignored is not None else name not in SKIPPED_FOLDERS)]
        names += [(relative / name).as_posix() for name in files + links
                  if ((relative / name).as_posix() not in ignored if ignored is not None
                      else not name.endswith(SKIPPED_SUFFIXES))]
        if len(names) > MAX_BOT_FILES:
            raise ManifestError(f"{folder}: more than {MAX_BOT_FILES:,} files make up this bot; leave build output "
                                "out of it (.gitignore, or node_modules/, build/ outside git)")
    return sorted(names)


def _ignored_from_outside(folder: Path) -> set[str] | None:
    """The entries of `folder` (files, and folders ending in "/") that the organiser's git work tree
    ignores by a rule kept outside the folder; None when the folder is not inside such a work tree, or
    carries a .git of its own (whose index, exclude file and config are the bot author's to write)."""
    if os.path.lexists(folder / ".git"):
        return None
    try:
        top = _git(folder, "rev-parse", "--show-toplevel")
        if top is None:
            return None
        inside = folder.resolve()
        if Path(os.fsdecode(top).strip()).resolve() not in inside.parents:
            return None
        entries = _git(folder, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
        if entries is None:
            return None
        matches = _git(folder, "check-ignore", "-z", "-v", "--stdin", stdin=entries) if entries else b""
    except (OSError, subprocess.TimeoutExpired):
        return None
    fields = os.fsdecode(matches or b"").split("\0")
    root = Path(os.fsdecode(top).strip())
    return {path for source, path in zip(fields[0::4], fields[3::4])
            if source and inside not in (root / source).resolve().parents}


def _git(folder: Path, *args: str, stdin: bytes | None = None) -> bytes | None:
    """What git prints for `args` run in `folder` (None when it fails: not a work tree, say). It never
    runs a command that a .git config of the organiser's names (core.fsmonitor)."""
    done = subprocess.run(["git", *GIT_WITHOUT_HOOKS, "-C", str(folder), *args], input=stdin, capture_output=True,
                          timeout=60, check=False)
    found = (0, 1) if args[0] == "check-ignore" else (0,)  # check-ignore: 1 when nothing is ignored
    return done.stdout if done.returncode in found else None


def identify(folder: Path | None, command: tuple[str, ...] = (), cwd: Path | None = None) -> Identity:
    """A bot's identity: the files of its `folder` (see `bot_files`), or for a bot without one its
    `command` and, when the command's first argument after the interpreter is a file (run in `cwd`),
    that file. Content is hashed up to CONTENT_BUDGET bytes per bot; files past it by size and mtime,
    so a folder of gigabytes cannot stall a run."""
    budget = [CONTENT_BUDGET]
    if folder is not None:
        files = [(name, _file_digest(folder / name, budget)) for name in bot_files(folder)]
    else:
        files = [("command", hashlib.sha256(shlex.join(command).encode()).hexdigest())]
        script = Path(cwd or ".") / command[1] if len(command) > 1 else None
        if script is not None and script.is_file():
            files.append((command[1], _file_digest(script, budget)))
    whole = hashlib.sha256(b"".join(f"{path}\0{digest}\n".encode("utf-8", "surrogateescape")
                                    for path, digest in files))
    return Identity(whole.hexdigest()[:16], tuple(files))


def _file_digest(path: Path, budget: list[int]) -> str:
    """SHA-256 of one file's content while `budget` (bytes left, shared by a bot's files) lasts, else
    of its size and mtime; a symbolic link by its target; ManifestError if it cannot be read."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            return "link:" + hashlib.sha256(os.readlink(path).encode("utf-8", "surrogateescape")).hexdigest()
        if not stat.S_ISREG(info.st_mode):
            return f"special:{stat.S_IFMT(info.st_mode)}"
        if info.st_size > budget[0]:
            budget[0] = 0
            return f"size:{info.st_size}:mtime:{info.st_mtime_ns}"
        budget[0] -= info.st_size
        with open(path, "rb") as file:
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError as error:
        raise ManifestError(f"{path}: cannot read it to identify the bot: {error.strerror}") from None


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
    except RecursionError:  # tomllib descends once per level of nested arrays and tables
        raise ManifestError(f"{manifest}: not valid TOML: nested too deeply to read") from None
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ManifestError(f"{manifest}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(_KEYS))})")
    name = data.get("name")
    try:
        check_bot_name(name)
    except ValueError as error:
        raise ManifestError(f"{manifest}: 'name': {error}") from None
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
    if not games:
        raise ManifestError(f"{manifest}: 'games' is empty; list the games the bot plays, or leave 'games' "
                            "out for every game")
    cwd = data.get("cwd", ".")
    if not isinstance(cwd, str):
        raise ManifestError(f"{manifest}: 'cwd' must be a string")
    folder = manifest.parent.resolve()
    workdir = (folder / cwd).resolve()
    if workdir != folder and folder not in workdir.parents:
        raise ManifestError(f"{manifest}: 'cwd' must stay inside the bot's folder, got {cwd!r}")
    if not workdir.is_dir():
        raise ManifestError(f"{manifest}: working directory {workdir} does not exist")
    env, pass_env = _environment(data, manifest)
    spec = BotSpec(name=name, command=tuple(command), cwd=str(workdir), folder=str(folder), env=env, pass_env=pass_env)
    return Entrant(spec=spec, games=games, identity=identify(manifest.parent))


def _environment(data: dict, manifest: Path) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """The manifest's `env` table (name = string value) and `pass_env` list, validated."""
    env = data.get("env", {})
    pass_env = data.get("pass_env", [])
    if not isinstance(env, dict) or not all(isinstance(value, str) for value in env.values()):
        raise ManifestError(f"{manifest}: 'env' must be a table of NAME = \"value\" strings")
    if not isinstance(pass_env, list):
        raise ManifestError(f"{manifest}: 'pass_env' must be a list of variable names")
    try:
        names = [check_env_name(name, "env") for name in env] + [check_env_name(name, "pass_env") for name in pass_env]
    except ValueError as error:
        raise ManifestError(f"{manifest}: {error}") from None
    if len(set(names)) < len(names):
        raise ManifestError(f"{manifest}: a variable is named twice in 'env' and 'pass_env'")
    return tuple(env.items()), tuple(pass_env)


def entrant_from_command(text: str, paths_from: Path | None = None) -> Entrant:
    """An entrant from `NAME=COMMAND` (plays every game), run in the current directory; with
    `paths_from` (a league file's folder), each word of the command that names a file or folder
    there becomes its absolute path, so `mine=python mine.py` finds the script beside the league
    file without the bot running in (and, sandboxed, seeing) that folder."""
    try:
        spec = BotSpec.parse(text)
    except ValueError as error:
        raise ManifestError(str(error)) from None
    if paths_from is not None:
        spec = replace(spec, command=tuple(
            str((paths_from / word).resolve()) if not os.path.isabs(word) and os.path.lexists(paths_from / word)
            else word for word in spec.command))
    return Entrant(spec=spec, games=tuple(sorted(all_games())), identity=identify(None, spec.command))


def load_entrant(text: str) -> Entrant:
    """The bot named on a command line: a folder (or its bot.toml) with a manifest, or NAME=COMMAND."""
    if Path(text).exists() or ("=" not in text and ("/" in text or text.endswith(".toml"))):
        return load_manifest(text)  # a path: its error says which manifest is missing
    if "=" in text:
        return entrant_from_command(text)
    raise ManifestError(f"bot {text!r} is neither a bot folder (holding bot.toml) nor NAME=COMMAND")
