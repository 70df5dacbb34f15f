"""How a bot process is started: a clean environment, resource caps, and a bubblewrap sandbox.

`prepare(spec, settings)` turns a bot into the command line, environment and working directory
that `BotProcess.spawn` hands to `subprocess.Popen`, plus a `Confinement` that cleans up after
the process and explains a fault caused by a cap. The command is a chain of small programs that
each `exec` the next, so no Python runs between fork and exec (no `preexec_fn`):

    sh -c 'echo $$ >cgroup.procs ...; exec "$@"'    join the bot's own memory, pids and cpu cgroups
    prlimit --nofile=... --fsize=... --core=0        rlimits (address space / processes only
                                                     where no cgroup could be made)
    bwrap --args FD -- ...                           namespaces, read-only binds, private tmpfs, the
                                                     seccomp filter and constant /proc counters (its
                                                     options come through a memfd, not argv)
      setpriv --reuid=UID ... env -i ...             as root: drop to a uid of the bot's own, then its env
    or setpriv --pdeathsig KILL                      without bubblewrap: die with the referee
    the bot's own command

The organiser's environment never reaches the bot: it gets PATH, LANG/LC_*/TZ, a private HOME
and TMPDIR, PYTHONPATH naming the referee's `cardarena` package (the Python SDK and the game
engines, read-only) and the stub that names the SDK's old import, PYTHONUSERBASE where the
organiser's Python takes packages from the user's site-packages, and the variables its bot.toml
sets (`env`) or asks for (`pass_env`, only names the organiser allows). `check_layout` refuses a
layout in which a bot would be shown more than its own files (the results, the logs, other bots).
"""

from __future__ import annotations

import atexit
import functools
import itertools
import os
import re
import secrets
import shlex
import shutil
import signal
import site
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import cardarena
import cardarena.protocol
from cardarena.config import BWRAP, NONE, SandboxSettings
from cardarena.referee import hostview, seccomp

NOBODY = 65534  # the unprivileged gid a bot runs as when the organiser is root (`nogroup`)
#: where the uid a bot runs as when the organiser is root is drawn from, one per bot process: far above
#: any account's or container's, so no file is its own, and the kernel's per-user counts (pipe buffers,
#: pending signals, message queue bytes, locked memory) that one bot could fill and another observe
#: are not shared (two bots drawing the same uid at once: about 1 in 10^5 for 100 concurrent bots)
BOT_UIDS = range(0x40000000, 0x7FFF0000)
BOT_USER = "bot"  # the bot's uid's name in the sandbox's /etc/passwd
BOT_HOME = "/home/bot"  # HOME inside the sandbox (a private tmpfs)
SDK_ROOT = "/opt/cardarena"  # the `cardarena` package a bot imports is SDK_ROOT/lib/cardarena (read-only)
#: the parts of the `cardarena` package a bot sees, besides the SDK (`protocol`, mapped in from wherever
#: it lives): the engines, what they import, and the search SDK; not the referee, the tournament code
#: or the sample bots (tests/test_structure.py checks that these import nothing else). Few, since
#: each is a mount that every bot start pays for.
SDK_ENTRIES = ("__init__.py", "__pycache__", "cards.py", "games", "search")
#: system folders visible read-only inside the sandbox (symlinks, as on merged-/usr systems, are copied)
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: the only parts of /etc a bot sees: the dynamic loader's cache, users and groups, time zones, TLS roots
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf",
               "localtime", "timezone", "alternatives", "ssl", "ca-certificates")
#: the organiser's variables every bot gets (when set); LC_* are added by prefix
BASE_ENV = ("PATH", "LANG", "LANGUAGE", "TZ")
_MIB = 1 << 20
#: how long killed processes may take to leave a bot's cgroup before it counts as stuck (a loaded
#: machine has been seen to need more than 2 s; the wait ends as soon as the cgroup is empty)
CGROUP_REMOVAL_SECONDS = 10.0


class SandboxError(Exception):
    """A bot cannot be started as the sandbox settings require; the message says why in one line."""


# -- what this machine offers --------------------------------------------------------------------

@functools.cache
def _tool(name: str) -> str | None:
    """The absolute path of a system program, or None when it is not installed."""
    return shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin")


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot confine a bot on this machine, or None when it can (tried once)."""
    bwrap = _tool("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    return _namespace_probe("bubblewrap", [bwrap, *_namespace_args(), "--ro-bind", "/", "/", "--proc", "/proc",
                                           "--dev", "/dev", "--", "/bin/true"])


def _namespace_probe(tool: str, probe: list[str]) -> str | None:
    """Why `probe`, `tool`'s command that makes namespaces around /bin/true, fails here, or None."""
    try:
        result = subprocess.run(probe, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{tool} does not run here: {error}"
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {result.returncode}"]
        return f"{tool} cannot create namespaces here ({reason[0]})"
    return None


_warned = False


def effective_mode(settings: SandboxSettings, warn: Callable[[str], None] | None = None) -> str:
    """`bwrap` or `none`: what `settings.mode` means on this machine. `bwrap` without a working
    bubblewrap raises; otherwise the first call warns (through `warn`, default stderr) of what the
    bots can do here that they should not: under `auto` without bubblewrap, what a bot outside the
    sandbox can reach, and under `auto` or `bwrap` without a freezer cgroup, the CPU of turns."""
    global _warned
    problem = None if settings.mode == NONE else bwrap_problem()
    if problem is not None and settings.mode == BWRAP:
        raise SandboxError(f"--sandbox bwrap: {problem}")
    if not _warned and settings.mode != NONE:
        _warned = True
        messages = [] if problem is None else [
            f"warning: {problem}; bots run without a sandbox, with a clean environment and caps only: "
            f"{unsandboxed_reach()}; --sandbox none silences this"]
        if "freezer" not in _cgroup_parents():
            messages.append(f"warning: {turn_isolation()}")
        for message in messages:
            (warn or (lambda text: print(text, file=sys.stderr, flush=True)))(message)
    return NONE if settings.mode == NONE or problem is not None else BWRAP


def describe(settings: SandboxSettings) -> str:
    """Which sandbox bots run under here, and their caps, in one line (check's report says it)."""
    mode = effective_mode(settings)
    if mode == BWRAP:
        who = "a uid of its own" if os.geteuid() == 0 else "the organiser's uid in a user namespace"
        where = f"bubblewrap (no network, own PID namespace, {who}, read-only folder, private /tmp, /dev/shm and HOME)"
    elif settings.mode == NONE:
        where = f"none (--sandbox none: clean environment and caps only; {unsandboxed_reach()})"
    else:
        where = f"none (fallback: {bwrap_problem()}; clean environment and caps only; {unsandboxed_reach()})"
    return f"{where}; {turn_isolation()}; caps: {settings.caps()}"


def freezes_bots() -> bool:
    """Whether bots here get a freezer cgroup, so the other bots of a table are frozen while one decides."""
    return "freezer" in _cgroup_parents()


def turn_isolation() -> str:
    """Whether the other bots of a table are frozen while one decides, in one phrase (the warning and
    check's report say it)."""
    if freezes_bots():
        return "the other bots of a table are frozen while one decides"
    return ("no freezer cgroup can be made here (a writable cgroup v1 freezer hierarchy; as root): what a bot "
            "runs outside its turn takes CPU from the bot deciding on its core, which may then time out")


# -- cgroups (v1: memory, pids, cpu and freezer controllers) ----------------------------------------

#: the cgroup v1 controllers a bot gets its own cgroup of, where this machine lets the referee make one
CGROUP_CONTROLLERS = ("memory", "pids", "cpu", "freezer")


@functools.cache
def _cgroup_parents() -> dict[str, Path]:
    """For each of the memory, pids, cpu and freezer controllers that this process may create child cgroups in,
    the directory of its own cgroup (children nest inside it, so outer limits still hold)."""
    mounts: dict[str, Path] = {}
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            fields = line.split()
            separator = fields.index("-")
            if fields[separator + 1] == "cgroup":
                for option in fields[separator + 3].split(","):
                    if option in CGROUP_CONTROLLERS:
                        mounts[option] = Path(fields[4])
        own = {}
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(","):
                own[controller] = path
    except (OSError, ValueError, IndexError):
        return {}
    parents = {}
    for controller, mount in mounts.items():
        parent = mount / own.get(controller, "/").lstrip("/")
        if os.access(parent, os.W_OK):
            parents[controller] = parent
    return parents


_cgroup_numbers = itertools.count()
SCRATCH_PREFIX = "cardarena-bot-"  # a bot's private HOME and TMPDIR without bubblewrap: <prefix><referee pid>-...
SDK_FARM_PREFIX = "cardarena-sdk-"  # a referee's links to the SDK for bots without bubblewrap: <prefix><pid>-...


def sweep_folders(prefix: str) -> None:
    """Remove the folders of the system's temporary folder named <prefix><pid>-... whose process no
    longer runs: left by a process killed before it could clean up (a pid in use again keeps its
    folder; the next sweep after that process looks again)."""
    for stale in Path(tempfile.gettempdir()).glob(f"{prefix}*"):
        owner = stale.name.removeprefix(prefix).split("-")[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            shutil.rmtree(stale, ignore_errors=True)  # another user's, say: not ours to judge


def _start_time(pid: int | str) -> str | None:
    """When process `pid` started (clock ticks since boot): with the pid, it names one process for
    the machine's uptime, unlike a pid, which is reused. None when there is no such process, or it
    has died and waits to be reaped (a zombie referee's bots are as good as orphaned)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if len(fields) < 20 or fields[0] in ("Z", "X") else fields[19]


@functools.cache
def _pid_namespace() -> str:
    """This process's PID namespace (the inode of its /proc/self/ns/pid; "" where there is none)."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return ""


def _cgroup_name() -> str:
    """A new bot cgroup's name: cardarena-<pid>-<start time>-<PID namespace>-<number>, which lets a
    later referee tell for sure that the referee which made it is gone."""
    return f"cardarena-{os.getpid()}-{_start_time('self')}-{_pid_namespace()}-{next(_cgroup_numbers)}"


def _cgroup_owner(path: Path) -> str:
    """Whose a cgroup named cardarena-... is: "live" (its referee runs, or it is not ours to judge),
    "gone" (a referee of this PID namespace that no longer runs), or "unknown" (named by an older
    cardarena with a pid alone, which no longer runs here: its processes may be another namespace's)."""
    parts = path.name.removeprefix("cardarena-").split("-")
    if len(parts) == 4 and all(part.isdigit() for part in parts):
        pid, start, namespace, _ = parts
        if namespace != _pid_namespace():
            return "live"  # a referee in another PID namespace that shares the hierarchy: its pids are not ours
        return "live" if _start_time(pid) == start else "gone"
    return "unknown" if parts[0].isdigit() and not Path(f"/proc/{parts[0]}").exists() else "live"


def _sweep_stale_cgroups(parent: Path) -> int:
    """Clear the cgroups of referees that were killed before they could clean up, and count those
    of referees gone. A referee of this PID namespace that is gone leaves nothing running: what is
    still in its bots' cgroups (escapees in sessions of their own, under --sandbox none, or bots
    frozen between turns) is killed. An older name's cgroup is removed only when empty."""
    gone = 0
    for stale in parent.glob("cardarena-*"):
        owner = _cgroup_owner(stale)
        gone += owner == "gone"
        try:
            if owner == "gone":
                Cgroups._remove(stale)
            elif owner == "unknown":
                stale.rmdir()
        except (OSError, SandboxError):
            pass  # unkillable (stuck in the kernel) or not ours to remove: the next referee looks again
    return gone


def release_dead_referees() -> int:
    """Thaw and kill what referees that died left in their bots' cgroups: a bot frozen while another
    decided cannot die of its referee's death until it is thawed. Called by each new referee, and by
    whoever outlives one (a worker's supervisor, a portion host's owner) as soon as it has died.
    Returns how many such cgroups it found."""
    parents = _cgroup_parents()
    return sum(_sweep_stale_cgroups(parents[controller])  # the freezer's first: thawed, the rest can die
               for controller in sorted(parents, key=lambda controller: controller != "freezer"))


@functools.cache
def _swept() -> bool:
    """Once per referee process: clear what killed referees left behind (cgroups, private folders)."""
    release_dead_referees()
    sweep_folders(SCRATCH_PREFIX)
    sweep_folders(SDK_FARM_PREFIX)
    return True


class Cgroups:
    """A bot's own memory, pids, cpu and freezer cgroups (whichever this machine lets us make),
    removed after it. The cpu cgroup gives each bot one equal share of a busy core (CFS group
    scheduling), so a bot spinning many threads cannot starve the opponents that share its core;
    the freezer stops all its processes while another bot of its table decides (`freeze`)."""

    def __init__(self, settings: SandboxSettings):
        _swept()
        self.paths: dict[str, Path] = {}
        self._freezer_state: int | None = None  # freezer.state, open for writing once the bot is first frozen
        name = _cgroup_name()
        for controller, parent in _cgroup_parents().items():
            path = parent / name
            try:
                path.mkdir()
                if controller == "memory":
                    (path / "memory.limit_in_bytes").write_text(str(settings.memory_mb * _MIB))
                    swap = path / "memory.memsw.limit_in_bytes"
                    if swap.exists():
                        swap.write_text(str(settings.memory_mb * _MIB))
                elif controller == "pids":
                    (path / "pids.max").write_text(str(settings.processes))
                # cpu: the default weight (cpu.shares 1024), equal for every bot whatever its thread count
            except OSError:
                self._remove(path)
                continue  # this controller is not ours to use here: its rlimit stands in
            self.paths[controller] = path

    def procs_files(self) -> list[str]:
        return [str(path / "cgroup.procs") for path in self.paths.values()]

    def _read(self, controller: str, name: str) -> str:
        try:
            return (self.paths[controller] / name).read_text()
        except (KeyError, OSError):
            return ""

    def oom_kills(self) -> int:
        """How many of the bot's processes the kernel killed for reaching the memory cap."""
        match = re.search(r"^oom_kill (\d+)", self._read("memory", "memory.oom_control"), re.M)
        return int(match.group(1)) if match else 0

    def forks_refused(self) -> int:
        """How many times the bot tried to start a process or thread beyond the cap."""
        match = re.search(r"^max (\d+)", self._read("pids", "pids.events"), re.M)
        return int(match.group(1)) if match else 0

    def freeze(self, frozen: bool) -> bool:
        """Stop (`frozen`) or resume every process of the bot through its freezer cgroup; False,
        changing nothing, without one. One write of a file kept open: the referee calls it only
        when a bot's turn begins or ends."""
        if "freezer" not in self.paths:
            return False
        if self._freezer_state is None:
            self._freezer_state = os.open(self.paths["freezer"] / "freezer.state", os.O_WRONLY | os.O_CLOEXEC)
        os.write(self._freezer_state, b"FROZEN" if frozen else b"THAWED")
        return True

    def release(self) -> None:
        """Kill whatever is left in the bot's cgroups (a setsid escapee, say), then remove them."""
        if self._freezer_state is not None:
            os.close(self._freezer_state)
            self._freezer_state = None
        for path in sorted(self.paths.values(), key=lambda path: path != self.paths.get("freezer")):
            self._remove(path)
        self.paths = {}

    @staticmethod
    def _remove(path: Path) -> None:
        deadline = time.monotonic() + CGROUP_REMOVAL_SECONDS
        _thaw(path)
        while path.exists():
            try:
                pids = [int(pid) for pid in (path / "cgroup.procs").read_text().split()]
            except OSError:
                pids = []
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass  # exited meanwhile
            try:
                path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise SandboxError(f"cannot remove the bot's cgroup {path}: processes keep running in it") from None
                time.sleep(0.005)  # killed processes take a moment to leave the cgroup


def _thaw(path: Path) -> None:
    """Resume the processes of a freezer cgroup (a frozen process cannot die of SIGKILL until then);
    nothing for a cgroup of another controller, or one already gone."""
    state = path / "freezer.state"
    try:
        if state.exists():
            state.write_text("THAWED")
    except FileNotFoundError:
        pass  # removed meanwhile


# -- the launch ---------------------------------------------------------------------------------------

_JOIN_CGROUPS = 'p=$$; while [ "$1" != -- ]; do echo $p >"$1" || exit 125; shift; done; shift; exec "$@"'


@dataclass
class Confinement:
    """How one bot process is started, and what to clean up and explain after it ends."""

    argv: list[str]
    env: dict[str, str]
    cwd: str | None
    mode: str
    settings: SandboxSettings
    cgroups: Cgroups | None = None
    scratch: str | None = None  # the private HOME and TMPDIR without bubblewrap, removed afterwards
    preexec: Callable[[], None] | None = None  # only where prlimit is missing (not Linux)
    rlimits: dict[str, int] = field(default_factory=dict)
    fds: list[int] = field(default_factory=list)  # what bubblewrap reads its arguments from: hand them down

    def close_fds(self) -> None:
        """Close the descriptors handed down to the bot's process (once it is started, or instead)."""
        for fd in self.fds:
            os.close(fd)
        self.fds = []

    def cap_evidence(self, returncode: int | None, stderr_tail: str) -> str | None:
        """Which cap stopped the bot, with its value, judged from the kernel's counters, the signal
        that ended it, or its last words on stderr; None when no cap was reached."""
        settings = self.settings
        if self.cgroups is not None and (kills := self.cgroups.oom_kills()):
            return f"memory cap {settings.memory_mb} MiB reached ({kills} process(es) killed by the kernel)"
        if self.cgroups is not None and (refused := self.cgroups.forks_refused()):
            return f"process cap {settings.processes} reached ({refused} process or thread start(s) refused)"
        if returncode == -signal.SIGXFSZ:
            return f"file size cap {settings.file_size_mb} MiB reached (killed by SIGXFSZ)"
        if re.search(r"File too large|EFBIG", stderr_tail):
            return f"file size cap {settings.file_size_mb} MiB reached (the bot's stderr says so)"
        if "as" in self.rlimits and re.search(r"MemoryError|Cannot allocate memory|bad_alloc|out of memory",
                                              stderr_tail, re.I):
            return f"memory cap {settings.memory_mb} MiB reached (address space; the bot's stderr says so)"
        if "nproc" in self.rlimits and "Resource temporarily unavailable" in stderr_tail:
            return f"process cap {settings.processes} reached (a start was refused; the bot's stderr says so)"
        if re.search(r"Too many open files|EMFILE", stderr_tail):
            return f"open files cap {settings.open_files} reached (the bot's stderr says so)"
        if re.search(r"No space left on device|ENOSPC", stderr_tail):
            return f"disk cap {settings.disk_mb} MiB of /tmp, /dev/shm or HOME reached (the bot's stderr says so)"
        return None

    def release(self) -> None:
        """Remove the bot's cgroups (killing anything left in them) and its private folders."""
        self.close_fds()
        if self.cgroups is not None:
            self.cgroups.release()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None


def prepare(command: Sequence[str], cwd: str | None, folder: str | None, env: Sequence[tuple[str, str]],
            pass_env: Sequence[str], settings: SandboxSettings) -> Confinement:
    """How to start a bot's `command` (argv, interpreter already resolved) in `cwd` under `settings`.

    `folder` is the bot's own folder (visible read-only under bubblewrap); a bot given as NAME=CMD
    has none, and then the folders of the files its command names are visible instead.
    """
    mode = effective_mode(settings)
    bot_env = {**_python_env(), **_bot_env(env, pass_env, settings)}
    shown = _shown_roots(command, cwd, folder) if mode == BWRAP else None
    if shown is not None and "PATH" in bot_env:  # folders it is not shown would only tell it the organiser's
        bot_env["PATH"] = _shown_path(bot_env["PATH"], shown)
    _check_executable(command, cwd, bot_env.get("PATH", os.defpath), shown)
    cgroups = Cgroups(settings)
    fds: list[int] = []
    try:
        rlimits = {"nofile": settings.open_files, "fsize": settings.file_size_mb * _MIB, "core": 0}
        if "memory" not in cgroups.paths:
            rlimits["as"] = settings.memory_mb * _MIB
        if os.geteuid() != 0:
            bot_uid = os.getuid()
        elif mode == BWRAP:
            bot_uid = secrets.choice(BOT_UIDS)  # a uid of its own: no per-user kernel count is shared
        else:
            bot_uid = NOBODY if isolation_problem() is None else 0
        if "pids" not in cgroups.paths and bot_uid != 0:  # the kernel exempts root from RLIMIT_NPROC
            rlimits["nproc"] = settings.processes + _tasks_of(bot_uid)
        scratch = None
        if mode == BWRAP:
            bot_env.update(HOME=BOT_HOME, TMPDIR="/tmp", PYTHONPATH=_sdk_path(SDK_ROOT, bot_env))
            inner, outer_env, fds = _bwrap_command(command, cwd, folder, bot_env, settings, bot_uid)
            workdir = None
        else:
            inner, outer_env, scratch = _unsandboxed_command(command, cwd, folder, bot_env)
            workdir = cwd
        argv, preexec = _with_rlimits(inner, rlimits)
        if cgroups.paths:
            argv = ["/bin/sh", "-c", _JOIN_CGROUPS, "sh", *cgroups.procs_files(), "--", *argv]
        return Confinement(argv, outer_env, workdir, mode, settings, cgroups if cgroups.paths else None,
                           scratch, preexec, rlimits, fds)
    except BaseException:
        cgroups.release()
        for fd in fds:
            os.close(fd)
        raise


# -- without bubblewrap: a PID namespace of its own, as nobody where the organiser is root ------------

#: the first program inside the bot's PID namespace (its pid 1): reaps orphans, and reports the bot's exit
_NAMESPACE_INIT = '"$@"; exit $?'


def _unshare_args() -> list[str]:
    """unshare's options: a PID namespace with its own /proc (in a mount namespace of its own) that
    dies with its first process, which dies with unshare; and a user namespace when the organiser
    is not root (then unshare needs one to do the rest)."""
    own_user = [] if os.geteuid() == 0 else ["--user", "--map-current-user"]
    return [*own_user, "--pid", "--fork", "--kill-child", "--mount-proc"]


@functools.cache
def isolation_problem() -> str | None:
    """Why a bot without bubblewrap cannot get a PID namespace of its own here (and, where the
    organiser is root, run as nobody), or None when it can (tried once)."""
    needed = ["unshare", "setpriv"] + (["env"] if os.geteuid() == 0 else [])
    missing = [name for name in needed if _tool(name) is None]
    if missing:
        return f"{' and '.join(missing)} (util-linux) not installed"
    return _namespace_probe("unshare", [_tool("unshare"), *_unshare_args(), "--", "/bin/true"])


def unsandboxed_reach() -> str:
    """What a bot without bubblewrap can still do on this machine, in one phrase (the warning and
    check's report say it)."""
    problem = isolation_problem()
    if problem is None and os.geteuid() == 0:
        return (f"it runs as uid {NOBODY} (nobody) in a PID namespace of its own: it cannot see or signal the "
                "referee, but reads what any user may and reaches the network")
    if problem is None:
        return ("it runs in PID and user namespaces of its own: it cannot see or signal the referee, but as the "
                "organiser's user it can read and change every file the organiser can, and reach the network")
    return (f"it runs as the organiser's user beside the referee ({problem}): it can stop or kill the referee's "
            "process (and get its opponent blamed for it), read the referee's environment in /proc, read and "
            "change every file the organiser can, and reach the network")


def _unsandboxed_command(command: Sequence[str], cwd: str | None, folder: str | None,
                         bot_env: dict[str, str]) -> tuple[list[str], dict[str, str], str]:
    """Without bubblewrap: the command line around the bot, the environment of that launch chain,
    and the scratch folder holding the bot's private HOME and TMPDIR (its view of the SDK is the
    referee's folder of links, `_sdk_farm`).
    Where `unshare` works the bot gets a PID namespace of its own (`isolation_problem`), as nobody
    where the organiser is root; else it runs beside the referee and dies with it."""
    scratch = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
    try:
        home, tmp = os.path.join(scratch, "home"), os.path.join(scratch, "tmp")
        os.mkdir(home)
        os.mkdir(tmp)
        bot_env.update(HOME=home, TMPDIR=tmp, PYTHONPATH=_sdk_path(_sdk_farm(), bot_env))
        setpriv = _tool("setpriv")
        if isolation_problem() is not None:
            return ([setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []) + list(command), bot_env, scratch
        # the bot's own environment (LD_PRELOAD, say) takes effect only in the bot, never in the launch chain
        bot = [_tool("env"), "-i", "--", *(f"{name}={value}" for name, value in bot_env.items()), *command]
        init = _NAMESPACE_INIT
        if os.geteuid() == 0:
            init = _as_nobody(scratch, [home, tmp], command, cwd, folder) + init
            bot = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all",
                   "--bounding-set=-all", "--no-new-privs", "--", *bot]
        inner = [setpriv, "--pdeathsig", "KILL", "--", _tool("unshare"), *_unshare_args(), "--",
                 "/bin/sh", "-c", init, "sh", *bot]
        return inner, {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, scratch
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def _as_nobody(scratch: str, private: list[str], command: Sequence[str], cwd: str | None, folder: str | None) -> str:
    """Make the scratch folder the bot's (its `private` folders nobody's own), check nobody can read
    what the bot needs, and return the shell lines that show it what folders nobody cannot enter
    (mode 0700, such as /root or pytest's temporary folders) hide: the bot's folder, the Python
    installation, the SDK. Each such folder gets an empty tmpfs with only those inside, in the bot's
    own mount namespace. A working directory outside the bot's folder that nobody could not reach
    (the organiser's, for a NAME=CMD bot) becomes an empty folder there, as under bubblewrap."""
    for path, _, _ in os.walk(scratch):
        os.chmod(path, 0o755)
    for path in private:
        os.chown(path, NOBODY, NOBODY)
        os.chmod(path, 0o700)
    own = visible_folders(command, cwd, folder)
    interpreter = list(python_folders()) if _runs_this_python(command) else []  # each hidden one costs ms per start
    sdk = [str(Path(cardarena.__file__).resolve().parent), str(Path(cardarena.protocol.__file__).resolve().parent)]
    _check_readable_by_nobody([*interpreter, *sdk, *sdk_entries().values(), *own], f"uid {NOBODY} (nobody)")
    workdir = Path(cwd).resolve() if cwd is not None else Path.cwd()
    empty = [] if _inside(workdir, [Path(path) for path in own]) else [workdir]
    plan = _mount_plan([Path(path) for path in {*interpreter, *sdk, *own, scratch}], empty)
    if not plan:
        return ""
    mount = _tool("mount")
    if mount is None:
        raise SandboxError(f"the bot runs as uid {NOBODY} (nobody), which cannot enter {min(plan.values())}, "
                           "and mount (util-linux), which would show it what it needs there, is not installed")
    stage = os.path.join(scratch, "mnt")
    os.mkdir(stage, 0o700)
    staged = {path: os.path.join(stage, str(number)) for number, path in enumerate(plan) if path not in empty}
    lines = ["set -e", "umask 022"]
    for path, place in staged.items():  # while the folders nobody cannot enter still show them
        os.mkdir(place)
        lines.append(shlex.join([mount, "--bind", str(path), place]))
    covered: set[Path] = set()
    for path, closed in plan.items():  # outer folders first: inner ones go inside them
        if closed not in covered:
            covered.add(closed)
            lines.append(shlex.join([mount, "-t", "tmpfs", "-o", "mode=0755,size=64k", "cardarena", str(closed)]))
        lines.append(shlex.join(["mkdir", "-p", str(path)]))
        if path in staged:
            lines.append(shlex.join([mount, "--move", staged[path], str(path)]))
    lines.append(shlex.join(["cd", str(workdir)]))  # its path now leads to what nobody is shown
    return "; ".join(lines) + "; "


def _mount_plan(needed: list[Path], empty: list[Path]) -> dict[Path, Path]:
    """Which of the folders nobody must reach (`needed`, each one it may enter, shown as they are; `empty`,
    shown empty) need a mount, outer ones first, each with the folder nobody cannot enter that an empty
    tmpfs covers to show it: the outermost such above it (or, for an empty one, itself), below the nearest
    needed folder that holds it (shown before it). A folder inside a needed one, with nothing closed
    between, is shown with it."""
    shown: list[Path] = []
    plan: dict[Path, Path] = {}
    wanted = [(path, True) for path in set(needed)] + [(path, False) for path in empty if path not in needed]
    for path, real in sorted(wanted, key=lambda entry: len(entry[0].parts)):
        holder = max((other for other in shown if other in path.parents), key=lambda other: len(other.parts),
                     default=None)
        closed = _closed_between(path, holder) or (None if real or _enterable(path) else path)
        if closed is None and (holder is not None or not real):
            continue
        if real:
            shown.append(path)
        if closed is not None:
            plan[path] = closed
    return plan


def _runs_this_python(command: Sequence[str]) -> bool:
    """Whether the command names a program of the Python installation that runs Python bots (a C
    bot's launch need not show that installation to nobody): a file there, or a link there to one
    elsewhere (a virtual environment's bin/python, whose base Python may live under /usr)."""
    dirs = [Path(path) for path in python_folders()]
    files = [Path(word).absolute() for word in command if os.path.isfile(word)]
    programs = [place for file in files for place in (file.resolve(), file.parent.resolve() / file.name)]
    return any(_inside(program, dirs) for program in programs)


def _closed_between(path: Path, holder: Path | None) -> Path | None:
    """The outermost folder above `path` (and below `holder`, when given) that nobody cannot enter,
    or None when nobody can reach `path` from there."""
    ancestors = reversed(path.parents)
    return next((ancestor for ancestor in ancestors
                 if (holder is None or holder in ancestor.parents) and not _enterable(ancestor)), None)


def _enterable(folder: Path) -> bool:
    """Whether uid nobody has search permission for `folder` (may enter it)."""
    info = os.stat(folder)
    if info.st_uid == NOBODY:
        bit = stat.S_IXUSR
    elif info.st_gid == NOBODY:
        bit = stat.S_IXGRP
    else:
        bit = stat.S_IXOTH
    return bool(info.st_mode & bit)


def _check_executable(command: Sequence[str], cwd: str | None, path: str, shown: list[Path] | None) -> None:
    """SandboxError unless the command's program exists and may be executed (checked here, since
    inside the launch chain a missing program would look like a crash of the bot). With `shown` (the
    folders the sandbox shows the bot), a program elsewhere is refused alike whether it exists or not,
    so that a bot.toml learns nothing of the organiser's other files."""
    program = command[0] if command else ""
    if "/" in program:
        found = os.path.join(cwd or os.getcwd(), program)
        if shown is not None and not _inside(Path(found).resolve(), shown):
            raise SandboxError(f"{program}: not among what the bot is shown (its folder, the system's programs "
                               "and Python)")
        if not os.path.isfile(found):
            raise SandboxError(f"{program}: no such file")
        if not os.access(found, os.X_OK):
            raise SandboxError(f"{program}: not executable")
        return
    if shown is not None:  # only the folders of PATH that the bot sees can hold its program
        path = _shown_path(path, shown)
    if shutil.which(program, path=path) is None:
        raise SandboxError(f"{program}: no such program on PATH")


def _shown_roots(command: Sequence[str], cwd: str | None, folder: str | None) -> list[Path]:
    """The folders under bubblewrap a bot may run a program from: the system's, Python's and its own."""
    system = [Path(top).resolve() for top in SYSTEM_DIRS if os.path.isdir(top)]
    return [*system, *(Path(path) for path in (*python_folders(), *visible_folders(command, cwd, folder)))]


def _shown_path(path: str, shown: Sequence[Path]) -> str:
    """A PATH of only those of `path`'s folders that lie in `shown`."""
    return os.pathsep.join(part for part in path.split(os.pathsep) if part and _inside(Path(part).resolve(), shown))


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    """True when `path` is one of `roots` or lies inside one."""
    return any(path == root or root in path.parents for root in roots)


def _tasks_of(uid: int) -> int:
    """How many processes and threads `uid` runs now: RLIMIT_NPROC counts them all, so a bot's
    allowance is added on top (approximate: the uid's other processes come and go)."""
    tasks = 0
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and entry.stat().st_uid == uid:
                tasks += len(os.listdir(f"/proc/{entry.name}/task"))
        except OSError:
            continue  # the process exited while being counted
    return tasks


def unconfined(command: Sequence[str], cwd: str | None, settings: SandboxSettings) -> Confinement:
    """How to start one of the organiser's own programs (a human seat): as given, with the
    organiser's environment, no sandbox and no caps."""
    return Confinement(list(command), dict(os.environ), cwd, NONE, settings)


def _sdk_path(root: str, bot_env: dict[str, str]) -> str:
    """PYTHONPATH: the folder holding the bot's view of `cardarena`, the old-name stub's folder,
    then the bot's own entries."""
    own = bot_env.pop("PYTHONPATH", "")
    sdk = f"{root}/lib:{root}/moved"
    return f"{sdk}:{own}" if own else sdk


def sdk_entries() -> dict[str, str]:
    """What a bot sees of the `cardarena` package, as name -> path: `SDK_ENTRIES` and the SDK as
    `protocol`, wherever each lives (an installed wheel has one folder; a source tree maps
    `protocol/` into the package)."""
    package = Path(cardarena.__file__).resolve().parent
    entries = {name: str(package / name) for name in SDK_ENTRIES if (package / name).exists()}
    entries["protocol"] = str(Path(cardarena.protocol.__file__).resolve().parent)
    return entries


_sdk_farms: dict[int, str] = {}  # referee pid -> its folder of links (a fork makes its own)


def _sdk_farm() -> str:
    """Without bubblewrap: this process's folder holding the bot's view of `cardarena` as links,
    made once and shared by every bot it starts (removed at exit, or by a later sweep)."""
    pid = os.getpid()
    if pid not in _sdk_farms:
        root = tempfile.mkdtemp(prefix=f"{SDK_FARM_PREFIX}{pid}-")
        _link_sdk(root)
        os.chmod(root, 0o755)  # a bot running as another user reads it
        atexit.register(lambda: os.getpid() == pid and shutil.rmtree(root, ignore_errors=True))
        _sdk_farms[pid] = root
    return _sdk_farms[pid]


def _moved_stub() -> str:
    """The folder whose `protocol` package fails with the SDK's new import name."""
    return str(Path(cardarena.__file__).resolve().parent / "moved")


def _link_sdk(root: str) -> None:
    """Without bubblewrap: the bot's view of `cardarena` as a folder of links under `root`."""
    package = os.path.join(root, "lib", "cardarena")
    os.makedirs(package)
    for name, path in sdk_entries().items():
        os.symlink(path, os.path.join(package, name))
    os.symlink(_moved_stub(), os.path.join(root, "moved"))


def _bot_env(env: Sequence[tuple[str, str]], pass_env: Sequence[str], settings: SandboxSettings) -> dict[str, str]:
    """The organiser's PATH, locale and time zone, the bot.toml's own variables, and the variables
    it asks for that the organiser allows (SandboxError naming one the organiser does not allow)."""
    result = {name: value for name, value in os.environ.items()
              if name in BASE_ENV or name.startswith("LC_")}
    for name in pass_env:
        if name not in settings.pass_env:
            raise SandboxError(f"the bot asks for the organiser's variable {name} (pass_env), which the "
                               f"organiser does not allow (league [limits] pass_env, or --pass-env {name})")
        if name in os.environ:
            result[name] = os.environ[name]
    result.update(env)
    return result


def _with_rlimits(argv: list[str], rlimits: dict[str, int]) -> tuple[list[str], Callable[[], None] | None]:
    """`argv` run under `rlimits`: through prlimit where installed, else set between fork and exec."""
    prlimit = _tool("prlimit")
    if prlimit is not None:
        return [prlimit, *(f"--{name}={value}" for name, value in rlimits.items()), "--", *argv], None
    import resource  # POSIX only; reached only where prlimit (util-linux) is missing

    names = {"nofile": "RLIMIT_NOFILE", "fsize": "RLIMIT_FSIZE", "core": "RLIMIT_CORE", "as": "RLIMIT_AS",
             "nproc": "RLIMIT_NPROC"}
    pairs = [(getattr(resource, names[name]), value) for name, value in rlimits.items() if hasattr(resource, names[name])]

    def set_rlimits() -> None:
        for which, value in pairs:
            resource.setrlimit(which, (value, value))

    return argv, set_rlimits


def visible_folders(command: Sequence[str], cwd: str | None, folder: str | None) -> list[str]:
    """The bot's own folder, visible read-only: `folder`, else its working directory, else (a
    NAME=CMD bot) the folder of its program or, for an interpreter, of the script it runs first.
    SandboxError when that is a place shared with other files, such as / or the temporary folder."""
    if folder is not None or cwd is not None:
        return [str(Path(folder or cwd).resolve())]
    program = _program_file(command)
    if program is None:
        return []
    word, path = program
    parent = path.parent
    if parent in {Path("/"), Path(tempfile.gettempdir()).resolve(), Path.home().resolve()}:
        raise SandboxError(f"the bot's command names {word}, whose folder {parent} is shared with other "
                           "files; put the bot in a folder of its own (with a bot.toml)")
    return [str(parent)]


def _program_file(command: Sequence[str]) -> tuple[str, Path] | None:
    """The file a NAME=CMD bot is made of, as (the word naming it, its resolved path): its program, or for an
    interpreter the script it runs first; None when its command names no file outside the system and Python."""
    for word in command:
        path = Path(word)
        if path.is_file() and not _already_visible(path.resolve().parent):
            return word, path.resolve()
    return None


@functools.cache
def python_folders() -> tuple[str, ...]:
    """The folders the Python that runs Python bots needs for its standard library and installed packages,
    shown read-only: its prefixes, its site-packages folders (the user's too, where that Python uses it)
    and the folders their .pth files add (where a virtual environment or a dependency may live), less
    those under /usr (shown anyway) and any .pth folder holding cardarena's own source (the project
    tree of an editable install: the SDK is shown apart, and a bot sees nothing else of it)."""
    source = [Path(module.__file__).resolve().parent for module in (cardarena, cardarena.protocol)]
    folders = [Path(prefix) for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)]
    for site_folder in _site_folders():
        folders.append(Path(site_folder))
        folders += [added for added in _pth_folders(Path(site_folder))
                    if not any(added == path or added in path.parents for path in source)]
    resolved = list(dict.fromkeys(path.resolve() for path in folders if path.is_dir()))
    shown = [path for path in resolved if path != Path("/usr") and Path("/usr") not in path.parents]
    return tuple(str(path) for path in shown if not any(other in path.parents for other in shown))


def _site_folders() -> list[str]:
    """This Python's site-packages folders, the user's own among them where this Python uses it."""
    folders = list(site.getsitepackages())
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        folders.append(site.getusersitepackages())
    return folders


def _pth_folders(site_folder: Path) -> list[Path]:
    """The folders the .pth files of a site-packages folder add to sys.path, as `site` reads them (a line
    is a path relative to the folder, unless it is a comment or starts with `import`)."""
    added = []
    for pth in sorted(site_folder.glob("*.pth")):
        try:
            lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue  # unreadable: `site` skips it too
        added += [site_folder / line.rstrip() for line in lines
                  if line.strip() and not line.startswith(("#", "import ", "import\t"))]
    return added


def _python_env() -> dict[str, str]:
    """PYTHONUSERBASE naming the organiser's user base where its Python takes packages from it (pip
    install --user), since a bot's private HOME would hide them."""
    return {"PYTHONUSERBASE": site.getuserbase()} if site.ENABLE_USER_SITE and os.path.isdir(
        site.getusersitepackages()) else {}


def _already_visible(path: Path) -> bool:
    """True for a folder the sandbox shows anyway: the system's programs, or the Python installation."""
    tops = [Path("/usr"), *(Path(prefix).resolve() for prefix in (sys.prefix, sys.base_prefix))]
    return any(path == top or top in path.parents for top in tops)


# -- layouts: a bot sees its own files and nothing else ---------------------------------------------------

@dataclass(frozen=True)
class BotView:
    """What one bot sees of the organiser's files (`folders`, read-only, under bubblewrap) and what of that
    is the bot itself (`own`: its folder, or the file a NAME=CMD bot's command runs; None: no file at all)."""

    name: str
    own: Path | None
    folders: tuple[Path, ...]
    script: str | None = None  # the word of a NAME=CMD bot's command naming `own`, for advice


def bot_view(name: str, command: Sequence[str], cwd: str | None, folder: str | None) -> BotView:
    """The view of a bot started with `command` (interpreter resolved) in `cwd`, from its `folder` or none."""
    folders = tuple(Path(path) for path in visible_folders(command, cwd, folder))
    if folder is not None or cwd is not None:
        return BotView(name, folders[0], folders)
    program = _program_file(command)
    return BotView(name, None if program is None else program[1], folders, None if program is None else program[0])


def _overlap(first: Path, second: Path) -> bool:
    """True when one path is the other or lies inside it: a view of either shows (some of) the other."""
    return first == second or first in second.parents or second in first.parents


def _remedy(inner: Path, outer: Path, *bots: BotView) -> str:
    """What the organiser can do when `outer` shows a bot `inner`: give a NAME=CMD bot among `bots` a
    folder of its own, else move `inner` out of `outer` (or `outer` out of `inner`, when it lies inside)."""
    script = next((bot.script for bot in bots if bot.script is not None), None)
    if script is not None:
        return f"put {Path(script).name} in a folder of its own (with a bot.toml)"
    return f"move {inner} out of {outer}" if outer in inner.parents else f"move {outer} out of {inner}"


def check_layout(views: Sequence[BotView], protected: Sequence[tuple[str, Path]],
                 trusted: Sequence[BotView] = ()) -> None:
    """SandboxError, in one line saying what to do, when a bot would see more than its own files: a
    `protected` path (results file, bot logs, league file: each as (what, path)), another bot's files, or
    either of these through a folder every bot is shown (the Python that runs Python bots, cardarena's own
    package). `trusted` bots (check's opponents, the packaged random bot) are held to the protected paths only."""
    protected = [(what, Path(path).resolve()) for what, path in protected]
    shipped = Path(cardarena.__file__).resolve().parent  # the sample bots a wheel ships: public, like the rest
    for shared in (Path(path) for path in (*python_folders(), *sdk_entries().values(), _moved_stub())):
        for what, path in protected:
            if _overlap(shared, path):
                raise SandboxError(f"every bot would see {what} {path}: {shared} is shown to every bot (the Python "
                                   "that runs Python bots, or cardarena's own package); keep the two apart")
        for other in views:
            if other.own is not None and shared in other.own.parents and shipped not in other.own.parents:
                raise SandboxError(f"every bot would see bot {other.name}'s files {other.own}: {shared} is shown to "
                                   "every bot (the Python that runs Python bots); move the bot out of it")
    for view in (*views, *trusted):
        for folder, (what, path) in itertools.product(view.folders, protected):
            if _overlap(folder, path):
                where = "lies inside" if path in folder.parents else "holds"
                raise SandboxError(f"bot {view.name} would see {what} {path}: the folder it is shown, {folder}, "
                                   f"{where} it; {_remedy(path, folder, view)}")
    for view, other in itertools.permutations(views, 2):
        for folder in view.folders:
            if other.own is not None and other.own != view.own and _overlap(folder, other.own):
                runs = next((f"{a.name} runs a file of bot {b.name}'s folder: enter only one of them, or "
                             for a, b in ((view, other), (other, view))
                             if a.script is not None and b.script is None and b.own in a.own.parents), "")
                raise SandboxError(f"bot {view.name} would see bot {other.name}'s files {other.own}: the folder "
                                   f"{view.name} is shown is {folder}; {runs}{_remedy(other.own, folder, other, view)}")


def _namespace_args() -> list[str]:
    """Every namespace but the mount's own setup: PID, network, IPC, UTS, cgroup; and a user
    namespace when the organiser is not root (then bubblewrap needs one to do the rest)."""
    args = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if os.geteuid() != 0:
        args += ["--unshare-user", "--disable-userns"]
    return args


class _Mounts:
    """bubblewrap mount arguments; each destination's missing parent folders are made first, mode
    0755 (bubblewrap itself would make them 0700, which an unprivileged bot cannot pass through)."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self._made: set[str] = {"/"}

    def add(self, option: str, source: str | None, dest: str, *, perms: str | None = None, size: int | None = None) -> None:
        for parent in reversed(Path(dest).parents):
            if str(parent) not in self._made:
                self.args += ["--perms", "0755", "--dir", str(parent)]
                self._made.add(str(parent))
        self._made.add(dest)
        self.args += (["--perms", perms] if perms else []) + (["--size", str(size)] if size else [])
        self.args += [option, *([source] if source is not None else []), dest]


def _bwrap_command(command: Sequence[str], cwd: str | None, folder: str | None, bot_env: dict[str, str],
                   settings: SandboxSettings, bot_uid: int) -> tuple[list[str], dict[str, str], list[int]]:
    """The bubblewrap command line around the bot (run as `bot_uid` when the organiser is root), the
    environment bubblewrap itself gets, and the descriptors it reads its arguments from."""
    root = os.geteuid() == 0
    mounts = _Mounts()
    for top in SYSTEM_DIRS:
        if os.path.islink(top):
            mounts.add("--symlink", os.readlink(top), top)
        elif os.path.isdir(top):
            mounts.add("--ro-bind", top, top)
    for entry in ETC_ENTRIES:
        if os.path.lexists(f"/etc/{entry}") and not (root and entry == "passwd"):  # then: the bot's uid added
            mounts.add("--ro-bind", f"/etc/{entry}", f"/etc/{entry}")
    mounts.add("--proc", None, "/proc")
    mounts.add("--dev", None, "/dev")
    mounts.add("--tmpfs", None, "/dev/shm", perms="1777", size=settings.disk_mb * _MIB)
    mounts.add("--tmpfs", None, "/tmp", perms="1777", size=settings.disk_mb * _MIB)
    mounts.add("--tmpfs", None, BOT_HOME, perms="0777" if root else "0700", size=settings.disk_mb * _MIB)
    interpreter, sdk = python_folders(), sdk_entries()
    own = visible_folders(command, cwd, folder)
    if root:
        _check_readable_by_nobody([*interpreter, *sdk.values(), *own], "a uid of its own")
    for path in interpreter:
        mounts.add("--ro-bind", path, path)
    for name, path in sorted(sdk.items()):
        mounts.add("--ro-bind", path, f"{SDK_ROOT}/lib/cardarena/{name}")
    mounts.add("--ro-bind", _moved_stub(), f"{SDK_ROOT}/moved")
    for path in own:
        mounts.add("--ro-bind", path, path)
    workdir = str(Path(cwd).resolve()) if cwd is not None else os.getcwd()
    if not any(workdir == path or workdir.startswith(path.rstrip("/") + "/") for path in own):
        mounts.add("--dir", None, workdir, perms="0755")
    handover = _Handover()  # from here on nothing refuses the bot: the descriptors reach Confinement
    args = [*_namespace_args(), "--die-with-parent", "--new-session", *_seccomp_args(handover), *mounts.args,
            *_host_counters_covered(handover, settings), *(_passwd_args(handover, bot_uid) if root else []),
            "--chdir", workdir]
    if root:
        # bubblewrap runs as root here (no user namespace): drop to the bot's uid, with no capabilities
        # and no way to regain any, before the bot's own environment (LD_PRELOAD, say) can take effect
        args += ["--clearenv", "--setenv", "PATH", "/usr/sbin:/usr/bin:/sbin:/bin"]
        run = [_tool("setpriv"), f"--reuid={bot_uid}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all",
               "--bounding-set=-all", "--no-new-privs", "--",
               _tool("env"), "-i", "--", *(f"{name}={value}" for name, value in bot_env.items()), *command]
    else:
        args += ["--clearenv", *itertools.chain.from_iterable(("--setenv", n, v) for n, v in bot_env.items())]
        run = list(command)
    # bubblewrap's options travel through a file descriptor, not argv: the sandbox's process 1 is
    # bubblewrap, whose command line anyone inside can read, and they name the organiser's folders.
    # The command itself cannot (bubblewrap takes it from argv): it is the bot's own, with its variables.
    options = handover.add("".join(f"{arg}\0" for arg in args).encode())
    return [_tool("bwrap"), "--args", options, "--", *run], {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, handover.fds


class _Handover:
    """Data bubblewrap reads from file descriptors the bot's process inherits (memfds, which
    `Confinement` closes once the process is started)."""

    def __init__(self) -> None:
        self.fds: list[int] = []

    def add(self, data: bytes) -> str:
        """A new descriptor that reads `data` from its start, as bubblewrap's argument names it."""
        fd = os.memfd_create("cardarena-bwrap")
        self.fds.append(fd)
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
        return str(fd)


def _seccomp_args(handover: _Handover) -> list[str]:
    """bubblewrap's arguments that load the bots' seccomp filter (none where there is no filter)."""
    program = seccomp.filter_program()
    return [] if program is None else ["--seccomp", handover.add(program)]


def _passwd_args(handover: _Handover, bot_uid: int) -> list[str]:
    """bubblewrap's arguments that show the machine's /etc/passwd with the bot's uid named in it
    (`BOT_USER`), for the runtimes that look their user up."""
    try:
        accounts = Path("/etc/passwd").read_bytes()
    except OSError:
        accounts = b""
    entry = f"{BOT_USER}:x:{bot_uid}:{NOBODY}::{BOT_HOME}:/usr/sbin/nologin\n".encode()
    separator = b"" if accounts.endswith(b"\n") or not accounts else b"\n"
    return ["--perms", "0444", "--bind-data", handover.add(accounts + separator + entry), "/etc/passwd"]


def _host_counters_covered(handover: _Handover, settings: SandboxSettings) -> list[str]:
    """bubblewrap's arguments that cover the machine-wide counters of the new /proc with constant
    files and empty folders (see `hostview`). Each file is the sandbox's own copy, so it needs no
    read-only remount (a mount operation per file saved at every start)."""
    args = []
    for path, content in hostview.constant_files(settings.memory_mb).items():
        args += ["--perms", "0444", "--bind-data", handover.add(content), path]
    for path in hostview.empty_folders():
        args += ["--perms", "0555", "--tmpfs", path]
    return args


def _check_readable_by_nobody(folders: list[str], who: str) -> None:
    """SandboxError when the unprivileged bot (`who`: as root, bots run as a uid of their own under
    bubblewrap, as nobody without it) could not read a folder (or file) it needs (mode 0700, say)."""
    for path in folders:
        mode = os.stat(path).st_mode
        needed = 0o005 if stat.S_ISDIR(mode) else 0o004
        if mode & needed != needed:
            raise SandboxError(f"the bot runs as {who}, which cannot read {path} "
                               f"(mode {mode & 0o777:04o}): make it readable by others (chmod -R o+rX)")
