"""Shared pieces of the command line: parsing KEY=VALUE options and rendering records for people."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Sequence

import click
from tabulate import tabulate

from cardarena.config import NONE, SANDBOX_MODES, BotSpec, SandboxSettings, check_seconds
from cardarena.errors import UsageError
from cardarena.record import GameRecord


#: bootstrap resamples for the rating intervals at most: beyond it the intervals barely move
MAX_BOOTSTRAP = 10_000


class Seconds(click.ParamType):
    """A time limit in seconds: a finite number from a millisecond to an hour."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        try:
            return check_seconds(seconds, "a time limit")
        except ValueError as error:
            self.fail(str(error), param, ctx)


def check_writable_file(path: Path, what: str, make_folders: bool = False) -> None:
    """Fail early, before any game is played, when `path` cannot be written as a file (in a folder
    that exists, or with `make_folders` in one that can be made)."""
    folder = path.parent
    if make_folders:
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
    if path.is_dir():
        raise UsageError(f"{what} {path}: is a folder, not a file")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{what} {path}: cannot be written (permission denied)")
    if not folder.is_dir():
        raise UsageError(f"{what} {path}: {folder} is not a folder" if folder.exists()
                            else f"{what} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {path}: cannot write in folder {folder} (permission denied)")


def make_folder(path: Path, what: str) -> None:
    """Create a folder given on the command line now, so that a bad one fails before any game."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"{what} {path}: cannot create the folder: {error.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {path}: cannot write in it (permission denied)")
from cardarena.tournament.service import RESULTS_DIR
from cardarena.referee.sandbox import effective_mode, sandbox_warnings
from cardarena.referee.views import bot_view, check_layout


def parse_option(text: str) -> tuple[str, Any]:
    """`key=value` from the command line: true/false, none, integers, else the string itself."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise click.BadParameter(f"options are given as KEY=VALUE, got {text!r}", param_hint="--option")
    lowered = raw.strip().lower()
    if lowered in ("true", "false"):
        value: Any = lowered == "true"
    elif lowered in ("none", "null"):
        value = None
    else:
        try:
            value = int(raw)
        except ValueError:
            value = raw
    return key.strip(), value


def parse_anchor(text: str | None) -> tuple[str, float] | None:
    """`BOT=RATING` from the command line (--anchor), or None when not given."""
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


def describe(data: dict[str, Any]) -> str:
    """A compact one-line rendering of an action or event: `type key=value ...`."""
    parts = [str(data.get("type", "?"))]
    for key, value in data.items():
        if key != "type":
            shown = " ".join(map(str, value)) if isinstance(value, list) else value
            parts.append(f"{key}={shown}")
    return " ".join(parts)


def result_table(record: GameRecord) -> str:
    """The result of one game as a table: seat, bot, score, rank, faults."""
    faults = {fault.seat: fault.kind for fault in record.faults}
    rows = [
        [seat, name, str(record.result.scores[seat]), record.ranks[seat] + 1, faults.get(seat, "")]
        for seat, name in enumerate(record.seats)
    ]
    return tabulate(rows, headers=["seat", "bot", "score", "rank", "fault"])


SANDBOX_HELP = ("How bots are confined: auto (bubblewrap where it runs, else a warning and what none gives), "
                "bwrap (refuse to run without it), none (clean environment and caps, and a PID namespace of its "
                "own where unshare works; runner/referee/SANDBOX.md).")


def sandbox_option(default: str | None) -> Any:
    """The --sandbox option of play, run and check (runner/referee/SANDBOX.md)."""
    return click.option("--sandbox", "sandbox_mode", type=click.Choice(SANDBOX_MODES), default=default,
                        show_default=default is not None, help=SANDBOX_HELP)


def pass_env_option() -> Any:
    """The --pass-env option: an organiser's variable a bot.toml may ask for with pass_env."""
    return click.option("--pass-env", "pass_env", multiple=True, metavar="NAME",
                        help="Let a bot whose bot.toml asks for this variable (pass_env) have it; repeatable.")


def sandbox_settings(mode: str, pass_env: Sequence[str]) -> SandboxSettings:
    """The sandbox settings given by --sandbox and --pass-env (UsageError naming a bad variable name)."""
    try:
        return SandboxSettings(mode=mode, pass_env=tuple(pass_env))
    except ValueError as error:
        raise UsageError(str(error)) from None


def require_sandbox(settings: SandboxSettings) -> None:
    """Resolve the sandbox before any bot starts: --sandbox bwrap without it ends the command here,
    and auto's one-line warning comes first rather than in the middle of the output."""
    effective_mode(settings)
    for warning in sandbox_warnings(settings):
        click.echo(warning, err=True)


def require_own_views(bots: Sequence[BotSpec], settings: SandboxSettings, protected: Sequence[tuple[str, Path | None]],
                      trusted: Sequence[BotSpec] = ()) -> None:
    """Refuse, before any bot starts, a layout in which a bot would see more than its own files: the
    `protected` paths (as (what, path); None for one not in use), the results folder of the current
    directory, or another bot's files (SANDBOX.md § A bot sees its own files and nothing else). `trusted` bots (check's opponents) may share
    files with the others. Without a sandbox (`--sandbox none`) bots see what the organiser sees anyway."""
    if settings.mode == NONE:
        return
    guarded = [(what, path) for what, path in protected if path is not None]
    if RESULTS_DIR.is_dir():
        guarded.append(("the results folder", RESULTS_DIR))
    check_layout([bot_view(spec.name, spec.argv(), spec.cwd, spec.folder) for spec in bots if spec.confined],
                 guarded, [bot_view(spec.name, spec.argv(), spec.cwd, spec.folder) for spec in trusted])
