"""The bubblewrap sandbox around a bot: namespaces, read-only binds of what it is shown (views.py),
private tmpfs folders, the seccomp filter and constant /proc counters, its options handed over
through memfds rather than argv. The sandbox is made by cardarena's own launcher (launcher.py)
wherever it builds and runs, else by bubblewrap itself: both take the same options."""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import stat
from pathlib import Path
from typing import Sequence

from cardarena.config import SandboxSettings
from cardarena.referee import hostview, launcher, seccomp
from cardarena.referee.system import MIB, NOBODY, namespace_probe, tool
from cardarena.referee.views import (SDK_ROOT, SYSTEM_DIRS, check_readable_by_nobody, own_startup_hooks,
                                     prepared_folder, python_folders, sdk_copy, visible_folders)

BOT_USER = "bot"  # the bot's uid's name in the sandbox's /etc/passwd
BOT_HOME = "/home/bot"  # HOME inside the sandbox (a private tmpfs)
#: the only parts of /etc a bot sees: the dynamic loader's cache, users and groups, time zones, TLS roots
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf",
               "localtime", "timezone", "alternatives", "ssl", "ca-certificates")


def bwrap_problem() -> str | None:
    """Why neither cardarena's own launcher nor bubblewrap can confine a bot on this machine, or None
    when one can (each tried once)."""
    if launcher.own_launcher() is not None:
        return None
    problem = _bubblewrap_problem()
    return None if problem is None else f"{problem}, and cardarena's own launcher is not used: {launcher.launcher_problem()}"


@functools.cache
def _bubblewrap_problem() -> str | None:
    """Why bubblewrap cannot confine a bot on this machine, or None when it can."""
    bwrap = tool("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    return namespace_probe("bubblewrap", [bwrap, *_namespace_args(), "--ro-bind", "/", "/", "--proc", "/proc",
                                           "--dev", "/dev", "--", "/bin/true"])


def sandbox_program() -> str:
    """The program that makes the sandbox: cardarena's own launcher, else bubblewrap."""
    return launcher.own_launcher() or tool("bwrap") or "bwrap"


def sandbox_maker() -> str:
    """Which program makes the sandbox, in words for the organiser."""
    return "cardarena's own launcher" if launcher.own_launcher() else "bubblewrap"


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

    def cover(self, path: str) -> None:
        """Show an empty file at `path`, a file inside a folder already bound."""
        self.args += ["--ro-bind", os.devnull, path]

    def add(self, option: str, source: str | None, dest: str, *, perms: str | None = None, size: int | None = None) -> None:
        parts = dest.rstrip("/").split("/")
        for depth in range(2, len(parts)):  # each ancestor of `dest` but /, outermost first
            parent = "/".join(parts[:depth])
            if parent not in self._made:
                self.args += ["--perms", "0755", "--dir", parent]
                self._made.add(parent)
        self._made.add(dest)
        self.args += (["--perms", perms] if perms else []) + (["--size", str(size)] if size else [])
        self.args += [option, *([source] if source is not None else []), dest]


def bwrap_command(command: Sequence[str], cwd: str | None, folder: str | None, bot_env: dict[str, str],
                  settings: SandboxSettings, bot_uid: int,
                  confinement: tuple[list[str], dict[str, int]] | None = None) -> tuple[list[str], dict[str, str], list[int]]:
    """The bubblewrap command line around the bot (run as `bot_uid` when the organiser is root), the
    environment bubblewrap itself gets, and the descriptors it reads its arguments from.
    `confinement` (cardarena's own launcher only): the tasks files of the cgroups it joins first,
    and the rlimits it sets."""
    root = os.geteuid() == 0
    mounts = _Mounts()
    for top in SYSTEM_DIRS:
        if os.path.islink(top):
            mounts.add("--symlink", os.readlink(top), top)
        elif os.path.isdir(top):
            mounts.add("--ro-bind", top, top)
    mounts.add("--ro-bind", etc_copy(), "/etc")  # as root, its passwd is covered by one naming the bot's uid
    mounts.add("--proc", None, "/proc")
    mounts.add("--dev", None, "/dev")
    mounts.add("--tmpfs", None, "/dev/shm", perms="1777", size=settings.disk_mb * MIB)
    mounts.add("--tmpfs", None, "/tmp", perms="1777", size=settings.disk_mb * MIB)
    mounts.add("--tmpfs", None, BOT_HOME, perms="0777" if root else "0700", size=settings.disk_mb * MIB)
    interpreter = python_folders()
    own = visible_folders(command, cwd, folder)
    if root:  # the SDK's copy is readable by every uid
        check_readable_by_nobody([*interpreter, *own], "a uid of its own")
    for path in interpreter:
        mounts.add("--ro-bind", path, path)
    for hook in own_startup_hooks():
        mounts.cover(hook)
    mounts.add("--ro-bind", sdk_copy(), SDK_ROOT)
    for path in own:
        mounts.add("--ro-bind", path, path)
    workdir = str(Path(cwd).resolve()) if cwd is not None else os.getcwd()
    if not any(workdir == path or workdir.startswith(path.rstrip("/") + "/") for path in own):
        mounts.add("--dir", None, workdir, perms="0755")
    handover = _Handover()  # from here on nothing refuses the bot: the descriptors reach Confinement
    own = launcher.own_launcher() is not None
    if confinement is not None and not own:
        raise ValueError("only cardarena's own launcher joins cgroups and sets rlimits")
    tasks, rlimits = confinement or ([], {})
    args = [*itertools.chain.from_iterable(("--join-cgroup", path) for path in tasks),
            *itertools.chain.from_iterable(("--rlimit", name, str(value)) for name, value in rlimits.items()),
            *_namespace_args(), "--die-with-parent", "--new-session", *_seccomp_args(handover), *mounts.args,
            *_host_counters_covered(settings), *(_passwd_args(handover, bot_uid) if root else []),
            "--chdir", workdir]
    more, run = _identity(command, bot_env, bot_uid if root else None, own)
    args += more
    # bubblewrap's options travel through a file descriptor, not argv: the sandbox's process 1 is
    # bubblewrap, whose command line anyone inside can read, and they name the organiser's folders.
    # The command itself cannot (bubblewrap takes it from argv): it is the bot's own, with its variables.
    options = handover.add("".join(f"{arg}\0" for arg in args).encode())
    return [sandbox_program(), "--args", options, "--", *run], {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, handover.fds


def _identity(command: Sequence[str], bot_env: dict[str, str], bot_uid: int | None,
              own: bool) -> tuple[list[str], list[str]]:
    """The sandbox's options that set who the bot runs as and its environment, and the command that
    the sandbox runs: as root (`bot_uid` given), the bot's own uid with no capabilities and no way
    to regain any, before the bot's own environment (LD_PRELOAD, say) can take effect."""
    variables = list(itertools.chain.from_iterable(("--setenv", n, v) for n, v in bot_env.items()))
    if bot_uid is None:  # a user namespace maps the organiser's uid: capabilities are dropped in it
        return ["--clearenv", *variables], list(command)
    if own:  # the launcher drops to the bot's uid itself
        return ["--uid", str(bot_uid), "--gid", str(NOBODY), "--clearenv", *variables], list(command)
    # bubblewrap runs as root here (no user namespace): setpriv drops to the bot's uid, env sets its variables
    return (["--clearenv", "--setenv", "PATH", "/usr/sbin:/usr/bin:/sbin:/bin"],
            [tool("setpriv"), f"--reuid={bot_uid}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all",
             "--bounding-set=-all", "--no-new-privs", "--",
             tool("env"), "-i", "--", *(f"{name}={value}" for name, value in bot_env.items()), *command])


def etc_copy() -> str:
    """This process's copy of the parts of /etc a bot is shown (`ETC_ENTRIES`), mounted read-only as
    the sandbox's /etc: one mount at every start instead of one per entry. Only what every uid may
    read is copied (a folder only its owner may enter, such as /etc/ssl/private, is left out: a bot
    could not read it through a bind either); links inside folders stay links, as through a bind."""
    return prepared_folder("etc", _fill_etc)


def _fill_etc(root: str) -> None:
    for entry in ETC_ENTRIES:
        _copy_readable(Path("/etc") / entry, Path(root) / entry)


def _copy_readable(source: Path, target: Path) -> None:
    """`source` (a link followed, as a bind follows it) copied to `target` with its mode, where every
    uid may read it; a folder's links copied as links."""
    try:
        mode = source.stat().st_mode
    except OSError:
        return  # not there (or a dangling link): not shown
    if stat.S_ISDIR(mode) and mode & 0o005 == 0o005:
        target.mkdir()
        for child in sorted(source.iterdir()):
            if child.is_symlink():
                (target / child.name).symlink_to(os.readlink(child))
            else:
                _copy_readable(child, target / child.name)
    elif stat.S_ISREG(mode) and mode & 0o004:
        shutil.copyfile(source, target)
    else:
        return
    target.chmod(stat.S_IMODE(mode) & 0o755)


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


def _host_counters_covered(settings: SandboxSettings) -> list[str]:
    """The sandbox's options that cover the machine-wide counters of the new /proc with constant
    files and empty folders (see `hostview`): read-only binds of this process's copies of the files
    (`host_counters_copy`), so that a start hands down no descriptor for them (it took 26 memfds
    written afresh at every start)."""
    copy = host_counters_copy(settings.memory_mb)
    args = []
    for path in hostview.constant_files(settings.memory_mb):
        args += ["--ro-bind", os.path.join(copy, _copy_name(path)), path]
    for path in hostview.empty_folders():
        args += ["--perms", "0555", "--tmpfs", path]
    return args


def host_counters_copy(memory_mb: int) -> str:
    """This process's folder of the constant /proc files shown to bots with a `memory_mb` cap (their
    `meminfo` shows it), readable by every uid (`prepared_folder`)."""
    def fill(root: str) -> None:
        for path, content in hostview.constant_files(memory_mb).items():
            target = os.path.join(root, _copy_name(path))
            with open(target, "wb") as file:
                file.write(content)
            os.chmod(target, 0o444)
    return prepared_folder(f"proc-{memory_mb}", fill)


def _copy_name(path: str) -> str:
    """The name of /proc file `path`'s copy: its path below /proc, with dashes for slashes."""
    return path.removeprefix("/proc/").replace("/", "-")
