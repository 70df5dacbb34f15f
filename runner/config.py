"""The configuration values every layer passes down: how to run a bot (`BotSpec`), the limits the
referee enforces (`Limits`) and how bots are confined (`SandboxSettings`), with the checks that
keep a bad value from a command line, a league file or a bot.toml out of them.

Plain values with no behaviour beyond checking themselves: the CLI, the tournament and the referee
all build or read them, so they sit below all three.
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass
from typing import Any

from cardarena.protocol.framing import DEFAULT_MAX_FRAME

AUTO, BWRAP, NONE = "auto", "bwrap", "none"
SANDBOX_MODES = (AUTO, BWRAP, NONE)
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: names a bot.toml may neither set nor pass through: the sandbox sets them
RESERVED_ENV = frozenset({"HOME", "TMPDIR", "PYTHONPATH"})
_PYTHON_NAMES = {"python", "python3", f"python{sys.version_info.major}.{sys.version_info.minor}"}


@dataclass(frozen=True)
class SandboxSettings:
    """How bots are confined: the sandbox mode and the caps every bot process gets (a bot.toml
    cannot change them), and the organiser's variables a bot.toml may ask for with `pass_env`."""

    mode: str = AUTO
    memory_mb: int = 1024  # the bot's whole process tree: a cgroup, else its address space
    processes: int = 128  # processes and threads of the bot's tree: a pids cgroup, else RLIMIT_NPROC
    open_files: int = 256  # RLIMIT_NOFILE
    file_size_mb: int = 64  # RLIMIT_FSIZE: the largest file the bot may write
    disk_mb: int = 64  # size of the private /tmp, of HOME and (under bubblewrap) of /dev/shm: tmpfs there
    pass_env: tuple[str, ...] = ()  # organiser's variables a bot.toml may name in pass_env

    def __post_init__(self) -> None:
        if self.mode not in SANDBOX_MODES:
            raise ValueError(f"sandbox must be one of {', '.join(SANDBOX_MODES)}, got {self.mode!r}")
        for name in ("memory_mb", "processes", "open_files", "file_size_mb", "disk_mb"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, got {value!r}")
        for name in self.pass_env:
            check_env_name(name, "pass_env")

    def caps(self) -> str:
        """The caps in one phrase, for reports."""
        return (f"memory {self.memory_mb} MiB, {self.processes} processes, {self.open_files} open files, "
                f"files up to {self.file_size_mb} MiB, /tmp and HOME {self.disk_mb} MiB each")


def check_env_name(name: Any, where: str) -> str:
    """`name` if it is a usable environment variable name a bot may have, else ValueError."""
    if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
        raise ValueError(f"{where}: {name!r} is not a valid environment variable name")
    if name in RESERVED_ENV:
        raise ValueError(f"{where}: {name} is set by the sandbox and cannot be changed")
    return name


#: a bot's name: it becomes part of game ids (`casino/a+b/d0/r1`), log file names and every report,
#: and a league takes it from a stranger's bot.toml, so it holds no separator, space or control character
BOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def check_bot_name(name: object) -> str:
    """`name` if it is a usable bot name, else ValueError saying what a name may hold."""
    if not isinstance(name, str) or not BOT_NAME.fullmatch(name):
        raise ValueError(f"bot name {name!r} must be 1-64 letters, digits, '.', '_' or '-', starting with "
                         "a letter or digit (it becomes part of game ids and file names)")
    return name


@dataclass(frozen=True)
class BotSpec:
    """How to run a bot: its name, its command line, the directory it runs in, its own folder
    (visible read-only in the sandbox), and the environment variables its bot.toml sets or asks for."""

    name: str
    command: tuple[str, ...]
    cwd: str | None = None
    decision_timeout: float | None = None  # this bot's own limit per decision (a human seat's); None: the Limits'
    folder: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    pass_env: tuple[str, ...] = ()
    confined: bool = True  # False only for the organiser's own programs (a human seat): no sandbox, no caps

    @classmethod
    def parse(cls, text: str, cwd: str | None = None) -> "BotSpec":
        """A bot from `NAME=COMMAND` (the command split like a shell would); ValueError if malformed."""
        name, sep, command = text.partition("=")
        name = name.strip()
        if not sep or not name or not command.strip():
            raise ValueError(f"bot must be given as NAME=COMMAND, got {text!r}")
        check_bot_name(name)
        try:
            argv = tuple(shlex.split(command))
        except ValueError as error:
            raise ValueError(f"bot {name!r}: cannot split command {command!r}: {error}") from None
        return cls(name=name, command=argv, cwd=cwd)

    def argv(self) -> list[str]:
        """The command to execute; a bare `python`/`python3` becomes this interpreter's real path,
        since a shell shim (pyenv's, say) costs tens of milliseconds per start."""
        argv = list(self.command)
        if argv and argv[0] in _PYTHON_NAMES:
            argv[0] = sys.executable
        return argv


#: the range of a time limit in seconds: a millisecond to an hour (a bot slower than that is stuck)
MIN_SECONDS, MAX_SECONDS = 0.001, 3600.0


def check_seconds(value: Any, what: str) -> float:
    """`value` as a time limit in seconds; ValueError naming `what` unless a finite number in range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not MIN_SECONDS <= value <= MAX_SECONDS:
        raise ValueError(f"{what} must be a number of seconds from {MIN_SECONDS:g} to {MAX_SECONDS:g}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Limits:
    """Time and size limits the referee enforces on every bot."""

    handshake_timeout: float = 10.0
    decision_timeout: float = 1.0
    max_frame: int = DEFAULT_MAX_FRAME
    stderr_cap: int = 1 << 20  # bytes of a bot's stderr log (all its starts in a run); the rest is dropped
    shutdown_grace: float = 1.0  # seconds a bot has to exit after "shutdown"
    sandbox: SandboxSettings = SandboxSettings()  # the sandbox mode and the resource caps
