"""How a bot process is started: a clean environment, resource caps, and a bubblewrap sandbox.

`prepare(spec, settings)` turns a bot into the command line, environment and working directory
that `PipeTransport.spawn` hands to `subprocess.Popen`, plus a `Confinement` that cleans up after
the process and explains a fault caused by a cap. The command is a chain of small programs that
each `exec` the next, so no Python runs between fork and exec (no `preexec_fn`):

    cardarena-launch --args FD -- ...                 with bubblewrap's options and its own (launcher.py): all
                                                     the links below but the bot's command, in one program
    or, where it cannot be built:
    sh -c 'echo 0 >tasks ...; ulimit ...; exec "$@"' join the bot's own memory, pids, cpu and freezer
                                                     cgroups, and set its rlimits (`shell_sets_rlimits`)
    or prlimit --nofile=... --fsize=... --core=0     rlimits where no cgroup could be made (then address
                                                     space and processes too) or sh's ulimit differs
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
sets (`env`) or asks for (`pass_env`, only names the organiser allows).

This module chooses and assembles; its parts live apart: cgroups.py (caps, freezer, the release of
dead referees' bots), bubblewrap.py (the sandbox's command line), views.py (what a bot is shown, and
`check_layout`, which refuses a layout showing a bot more than its own files), system.py (the
machine's programs). What the organiser should know of this machine (`sandbox_warnings`) is data for
the command line to print; leftovers of killed referees are swept when a referee asks (`sweep_once`).
"""

from __future__ import annotations

import functools
import os
import re
import secrets
import shlex
import shutil
import signal
import site
import stat
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import cardarena
import cardarena.protocol
from cardarena.config import BWRAP, NONE, SandboxSettings
from cardarena.referee.bubblewrap import (BOT_HOME, bwrap_command, bwrap_problem, etc_copy, host_counters_copy,
                                          sandbox_maker, sandbox_program)
from cardarena.referee.launcher import own_launcher
from cardarena.referee.cgroups import (Cgroups, freezes_bots, namespace_helpers,
                                       release_dead_referees)
from cardarena.referee.system import MIB, NOBODY, SandboxError, leftover_owner, namespace_probe, process_tag, tool
from cardarena.referee.views import (SDK_FARM_PREFIX, SDK_ROOT, SYSTEM_DIRS, check_readable_by_nobody, own_startup_hooks,
                                     prepared_root, python_folders, sdk_copy, sdk_entries, sdk_farm, visible_folders)

#: where the uid a bot runs as when the organiser is root is drawn from, one per bot process: far above
#: any account's or container's, so no file is its own, and the kernel's per-user counts (pipe buffers,
#: pending signals, message queue bytes, locked memory) that one bot could fill and another observe
#: are not shared (two bots drawing the same uid at once: about 1 in 10^5 for 100 concurrent bots)
BOT_UIDS = range(0x40000000, 0x7FFF0000)
#: the organiser's variables every bot gets (when set); LC_* are added by prefix
BASE_ENV = ("PATH", "LANG", "LANGUAGE", "TZ")


def effective_mode(settings: SandboxSettings) -> str:
    """`bwrap` or `none`: what `settings.mode` means on this machine (SandboxError for `bwrap`
    without a working bubblewrap)."""
    problem = None if settings.mode == NONE else bwrap_problem()
    if problem is not None and settings.mode == BWRAP:
        raise SandboxError(f"--sandbox bwrap: {problem}")
    return NONE if settings.mode == NONE or problem is not None else BWRAP


def sandbox_warnings(settings: SandboxSettings) -> list[str]:
    """What the bots can do here that they should not, as warning lines for the organiser (the
    command line prints them once, before any bot starts): under `auto` without bubblewrap, what a
    bot outside the sandbox can reach, and under `auto` or `bwrap` without a freezer cgroup, the CPU
    of turns. None under `none`, whose user asked for no sandbox."""
    if settings.mode == NONE:
        return []
    problem = bwrap_problem()
    warnings = [] if problem is None else [
        f"warning: {problem}; bots run without a sandbox, with a clean environment and caps only: "
        f"{unsandboxed_reach()}; --sandbox none silences this"]
    if not freezes_bots(confined=problem is None):
        warnings.append(f"warning: {turn_isolation(confined=problem is None)}")
    return warnings


def describe(settings: SandboxSettings) -> str:
    """Which sandbox bots run under here, and their caps, in one line (check's report says it)."""
    mode = effective_mode(settings)
    if mode == BWRAP:
        who = "a uid of its own" if os.geteuid() == 0 else "the organiser's uid in a user namespace"
        where = (f"bubblewrap, made by {sandbox_maker()} (no network, own PID namespace, {who}, read-only folder, "
                 "private /tmp, /dev/shm and HOME)")
    elif settings.mode == NONE:
        where = f"none (--sandbox none: clean environment and caps only; {unsandboxed_reach()})"
    else:
        where = f"none (fallback: {bwrap_problem()}; clean environment and caps only; {unsandboxed_reach()})"
    return f"{where}; {turn_isolation(confined=mode == BWRAP)}; caps: {settings.caps()}"


def turn_isolation(confined: bool) -> str:
    """Whether the other bots of a table are frozen while one decides, in one phrase (the warning and
    check's report say it); `confined`: for bots under bubblewrap."""
    if freezes_bots(confined):
        return "the other bots of a table are frozen while one decides"
    return ("no freezer cgroup can be made here (it needs a writable cgroup v1 freezer hierarchy, or a cgroup v2 "
            "cgroup of the referee's in which it may make child cgroups: as root, or, for bots under bubblewrap, "
            "one delegated to the organiser, as systemd-run --user --scope -p Delegate=yes gives): what a bot runs "
            "outside its turn takes CPU from the bot deciding on its core, which may then time out")


SCRATCH_PREFIX = "cardarena-bot-"  # a bot's private HOME and TMPDIR without bubblewrap: <prefix><referee's process tag>-...


def sweep_folders(prefix: str, root: str | None = None) -> None:
    """Remove the folders of `root` (the system's temporary folder by default) named
    <prefix><process tag>-... (`process_tag`) whose maker no longer runs: left by a process killed
    before it could clean up. A folder of a process in another PID namespace that shares the folder
    stays (its pid means nothing here), as does one named by an older version for a pid that runs."""
    for stale in Path(root or tempfile.gettempdir()).glob(f"{prefix}*"):
        if leftover_owner(stale.name.removeprefix(prefix)) != "live":
            shutil.rmtree(stale, ignore_errors=True)  # another user's, say: not ours to remove


def sweep_leftovers() -> None:
    """Clear what killed referees left behind: their bots' cgroups (thawed, and whatever still runs
    in them killed) and their private folders. A referee calls it before its first bot starts
    (`sweep_once`); a test may call it again."""
    release_dead_referees()
    sweep_folders(SCRATCH_PREFIX)
    for root in {tempfile.gettempdir(), prepared_root()}:  # prepared folders went to the latter (older ones: the former)
        sweep_folders(SDK_FARM_PREFIX, root)


#: `sweep_leftovers`, the first time a process calls it (a forked process shares its parent's sweep)
sweep_once = functools.cache(sweep_leftovers)


def prepare_shared(settings: SandboxSettings) -> None:
    """Make now what every bot start under `settings` shares, so that the processes this one forks
    afterwards share it too instead of each making its own: whether sh sets the bots' rlimits, and
    under bubblewrap cardarena's own launcher (built and tried) and the copies of /etc, the SDK and
    /proc's counters that every bot is shown (a tournament calls it before it forks a worker per
    match)."""
    shell_sets_rlimits()
    if settings.mode != NONE and bwrap_problem() is None:
        sdk_copy()
        etc_copy()
        host_counters_copy(settings.memory_mb)


#: the chain's first link where the bot has cgroups: join each (its tasks files, up to --), then set
#: the rlimits given as `ulimit` options and values (up to the next --), then exec the rest
_JOIN_CGROUPS = ('while [ "$1" != -- ]; do echo 0 >"$1" || exit 125; shift; done; shift; '
                 'while [ "$1" != -- ]; do ulimit "$1" "$2" || exit 125; shift 2; done; shift; exec "$@"')
#: the rlimits a POSIX sh's `ulimit` sets, soft and hard alike: its option, and the unit of its value
#: in bytes (POSIX counts a file's size in 512-byte blocks; dash, bash as sh and busybox ash agree)
_ULIMIT_OPTIONS = {"nofile": ("-n", 1), "fsize": ("-f", 512), "core": ("-c", 512)}
#: what /proc/self/limits must show after the probe's `ulimit -n 64 -f 2048 -c 0` (`shell_sets_rlimits`)
_PROBED_LIMITS = {"Max open files": ("64", "64"), "Max file size": ("1048576", "1048576"),
                  "Max core file size": ("0", "0")}


@functools.cache
def shell_sets_rlimits(shell: str = "/bin/sh") -> bool:
    """Whether `shell`'s `ulimit` sets the open files, file size and core size limits, soft and hard,
    in the units `_ULIMIT_OPTIONS` says (tried once, reading the limits it leaves in /proc). Then the
    shell that joins a bot's cgroups sets its rlimits too, and the chain runs no prlimit: one exec
    fewer per start (0.7 ms here). bash, run as bash rather than sh, counts -f in 1024-byte blocks."""
    try:
        probe = subprocess.run([shell, "-c", "ulimit -n 64 && ulimit -f 2048 && ulimit -c 0 && exec cat /proc/self/limits"],
                               capture_output=True, text=True, timeout=10, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.SubprocessError):
        return False
    shown = {}
    for line in probe.stdout.splitlines():
        fields = re.split(r"\s{2,}", line.strip())
        if len(fields) >= 3:
            shown[fields[0]] = (fields[1], fields[2])
    return probe.returncode == 0 and all(shown.get(name) == values for name, values in _PROBED_LIMITS.items())


def _shell_rlimits(rlimits: dict[str, int]) -> list[str] | None:
    """The `ulimit` options and values that set `rlimits` in the shell joining the cgroups, or None
    when prlimit must (a limit `ulimit` does not set alike everywhere, or a shell that does not)."""
    options = []
    for name, value in rlimits.items():
        option, unit = _ULIMIT_OPTIONS.get(name, (None, 0))
        if option is None or value % unit:
            return None
        options += [option, str(value // unit)]
    return options if shell_sets_rlimits() else None


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
    #: the program the chain ends in that waits for the bot's PID namespace's init (bubblewrap or
    #: unshare), where the bot runs as a uid of its own; else None
    launcher: str | None = None

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

    def exempt_helpers(self, pid: int) -> None:
        """Take the launcher (process `pid`, the one `Popen` started, once its chain has run) and the
        init of the bot's PID namespace out of the bot's freezer cgroup (`namespace_helpers`), so
        that each freeze of the bot wakes only its own processes. Only where the bot runs as a uid
        of its own (the organiser is root): a bot of the helpers' own uid could ptrace its init,
        pid 1 of its namespace, and run code there, outside the freezer."""
        if self.launcher is not None and self.cgroups is not None:
            self.cgroups.exempt_from_freezer(namespace_helpers(pid, self.launcher))

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
    cgroups = Cgroups(settings, confined=mode == BWRAP)
    fds: list[int] = []
    try:
        rlimits = {"nofile": settings.open_files, "fsize": settings.file_size_mb * MIB, "core": 0}
        if "memory" not in cgroups.paths:
            rlimits["as"] = settings.memory_mb * MIB
        if os.geteuid() != 0:
            bot_uid = os.getuid()
        elif mode == BWRAP:
            bot_uid = secrets.choice(BOT_UIDS)  # a uid of its own: no per-user kernel count is shared
        else:
            bot_uid = NOBODY if isolation_problem() is None else 0
        if "pids" not in cgroups.paths and bot_uid != 0:  # the kernel exempts root from RLIMIT_NPROC
            rlimits["nproc"] = settings.processes + _tasks_of(bot_uid)
        scratch = None
        # cardarena's own launcher joins the cgroups and sets the rlimits itself: no sh or prlimit before it
        by_launcher = mode == BWRAP and own_launcher() is not None
        if mode == BWRAP:
            bot_env.update(HOME=BOT_HOME, TMPDIR="/tmp", PYTHONPATH=_sdk_path(SDK_ROOT, bot_env))
            inner, outer_env, fds = bwrap_command(command, cwd, folder, bot_env, settings, bot_uid,
                                                  (cgroups.tasks_files(), rlimits) if by_launcher else None)
            workdir = None
        else:
            inner, outer_env, scratch = _unsandboxed_command(command, cwd, folder, bot_env)
            workdir = cwd
        argv, preexec = inner, None
        if not by_launcher:
            in_shell = _shell_rlimits(rlimits) if cgroups.paths else None
            if in_shell is None:
                argv, preexec = _with_rlimits(inner, rlimits)
            if cgroups.paths:
                argv = ["/bin/sh", "-c", _JOIN_CGROUPS, "sh", *cgroups.tasks_files(), "--", *(in_shell or []), "--",
                        *argv]
        launcher = None  # see Confinement.exempt_helpers
        if bot_uid != os.geteuid():
            launcher = sandbox_program() if mode == BWRAP else tool("unshare") if isolation_problem() is None else None
        return Confinement(argv, outer_env, workdir, mode, settings, cgroups if cgroups.paths else None,
                           scratch, preexec, rlimits, fds, launcher)
    except BaseException:
        cgroups.release()
        for fd in fds:
            os.close(fd)
        raise


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
    missing = [name for name in needed if tool(name) is None]
    if missing:
        return f"{' and '.join(missing)} (util-linux) not installed"
    return namespace_probe("unshare", [tool("unshare"), *_unshare_args(), "--", "/bin/true"])


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
    referee's folder of links, `sdk_farm`).
    Where `unshare` works the bot gets a PID namespace of its own (`isolation_problem`), as nobody
    where the organiser is root; else it runs beside the referee and dies with it."""
    scratch = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{process_tag()}-")
    try:
        home, tmp = os.path.join(scratch, "home"), os.path.join(scratch, "tmp")
        os.mkdir(home)
        os.mkdir(tmp)
        bot_env.update(HOME=home, TMPDIR=tmp, PYTHONPATH=_sdk_path(sdk_farm(), bot_env))
        setpriv = tool("setpriv")
        if isolation_problem() is not None:
            return ([setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []) + list(command), bot_env, scratch
        # the bot's own environment (LD_PRELOAD, say) takes effect only in the bot, never in the launch chain
        bot = [tool("env"), "-i", "--", *(f"{name}={value}" for name, value in bot_env.items()), *command]
        python_bot = _runs_this_python(command)
        init = _hooks_covered(python_bot) + _NAMESPACE_INIT
        if os.geteuid() == 0:
            init = _as_nobody(scratch, [home, tmp], command, cwd, folder, python_bot) + init
            bot = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all",
                   "--bounding-set=-all", "--no-new-privs", "--", *bot]
        inner = [setpriv, "--pdeathsig", "KILL", "--", tool("unshare"), *_unshare_args(), "--",
                 "/bin/sh", "-c", init, "sh", *bot]
        return inner, {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, scratch
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def _hooks_covered(python_bot: bool) -> str:
    """Shell lines that cover cardarena's own editable-install hooks (`views.own_startup_hooks`) with
    an empty file in the bot's mount namespace, as bubblewrap does: otherwise every start of a Python
    bot imports the finder they load, some 20 ms of its `site` here, for a package the bot takes from
    the SDK's folder anyway. Only for a bot that runs this Python (`python_bot`: `_runs_this_python`),
    and only where the organiser is root: a non-root organiser's launch chain is its own uid in the
    namespace, whom `mount` refuses. A mount that fails leaves the hook where it is (a slower start,
    nothing else)."""
    mount = tool("mount")
    hooks = own_startup_hooks() if mount is not None and python_bot and os.geteuid() == 0 else ()
    return "".join(f"{shlex.join([mount, '--bind', os.devnull, hook])} 2>/dev/null || :; " for hook in hooks)


def _as_nobody(scratch: str, private: list[str], command: Sequence[str], cwd: str | None, folder: str | None,
               python_bot: bool) -> str:
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
    interpreter = list(python_folders()) if python_bot else []  # each hidden one costs ms per start
    sdk = [str(Path(cardarena.__file__).resolve().parent), str(Path(cardarena.protocol.__file__).resolve().parent)]
    check_readable_by_nobody([*interpreter, *sdk, *sdk_entries().values(), *own], f"uid {NOBODY} (nobody)")
    workdir = Path(cwd).resolve() if cwd is not None else Path.cwd()
    empty = [] if _inside(workdir, [Path(path) for path in own]) else [workdir]
    plan = _mount_plan([Path(path) for path in {*interpreter, *sdk, *own, scratch}], empty)
    if not plan:
        return ""
    mount = tool("mount")
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
    return [*_system_roots(), *(Path(path) for path in visible_folders(command, cwd, folder))]


@functools.cache
def _system_roots() -> tuple[Path, ...]:
    """The system's folders and Python's, resolved (once per referee: every start asks)."""
    return (*(Path(top).resolve() for top in SYSTEM_DIRS if os.path.isdir(top)), *map(Path, python_folders()))


def _shown_path(path: str, shown: Sequence[Path]) -> str:
    """A PATH of only those of `path`'s folders that lie in `shown`."""
    return os.pathsep.join(part for part in path.split(os.pathsep) if part and _inside(_resolved(part), shown))


@functools.lru_cache(maxsize=256)
def _resolved(folder: str) -> Path:
    """`folder` resolved, remembered: the organiser's PATH is resolved at every start otherwise."""
    return Path(folder).resolve()


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    """True when `path` is one of `roots` or lies inside one (absolute, normalised paths compared as
    text: pathlib's `parents` costs every start some 100 µs here)."""
    text = str(path)
    return any(text == str(root) or text.startswith(str(root).rstrip("/") + "/") for root in roots)


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
    prlimit = tool("prlimit")
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


def _python_env() -> dict[str, str]:
    """PYTHONUSERBASE naming the organiser's user base where its Python takes packages from it (pip
    install --user), since a bot's private HOME would hide them."""
    return {"PYTHONUSERBASE": site.getuserbase()} if site.ENABLE_USER_SITE and os.path.isdir(
        site.getusersitepackages()) else {}
