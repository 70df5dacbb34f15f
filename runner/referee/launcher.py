"""cardarena's own sandbox launcher (launch.c beside this file): the bubblewrap sandbox's namespaces,
mounts, seccomp filter and uid made directly, at a third of bubblewrap's cost per start. It is built
from its source with the machine's C compiler once per user (cached by the source's digest), tried
once per process, and used wherever it builds and passes that try; elsewhere bubblewrap does the
same work. `CARDARENA_LAUNCHER=bwrap` in the organiser's environment keeps bubblewrap."""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import platform
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from cardarena.referee.system import namespace_probe, tool

SOURCE = Path(__file__).with_name("launch.c")
CHOICE = "CARDARENA_LAUNCHER"  # the organiser's choice: "bwrap" keeps bubblewrap
NAME = "cardarena-launch"


def own_launcher() -> str | None:
    """The built launcher's path where it can confine a bot here, else None (`launcher_problem`)."""
    return _launcher()[0]


def launcher_problem() -> str | None:
    """Why cardarena's own launcher is not used here, or None when it is."""
    return _launcher()[1]


@functools.cache
def _launcher() -> tuple[str | None, str | None]:
    if os.environ.get(CHOICE, "").strip() == "bwrap":
        return None, f"{CHOICE}=bwrap"
    if platform.system() != "Linux":
        return None, "it needs Linux"
    try:
        path = _built()
    except LaunchBuildError as error:
        return None, str(error)
    except OSError as error:  # its source missing from an installation, the cache unwritable
        return None, f"it could not be built: {error}"
    problem = _try(path)
    return (None, problem) if problem else (path, None)


class LaunchBuildError(Exception):
    """The launcher could not be built here (no C compiler, or it refused the source)."""


def _built() -> str:
    """The launcher for this source and machine, compiled now unless the cache holds it."""
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source + platform.machine().encode()).hexdigest()[:16]
    folder = _cache_folder()
    path = folder / f"{NAME}-{digest}"
    if path.is_file() and _only_ours(path):
        return str(path)
    compiler = tool("cc") or tool("gcc") or tool("clang")
    if compiler is None:
        raise LaunchBuildError("no C compiler (cc, gcc or clang) to build it with")
    handle, partial = tempfile.mkstemp(prefix=f".{NAME}-", dir=folder)
    os.close(handle)
    try:
        result = subprocess.run([compiler, "-O2", "-o", partial, str(SOURCE)], stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[-1]
            raise LaunchBuildError(f"{Path(compiler).name} could not build it: {last}")
        os.chmod(partial, 0o700)
        os.replace(partial, path)  # another process building the same source meanwhile wrote the same bytes
    except (OSError, subprocess.TimeoutExpired) as error:
        raise LaunchBuildError(f"building it failed: {error}") from None
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return str(path)


def _cache_folder() -> Path:
    """The user's cache folder for the launcher (XDG), made private; else a private temporary one.
    The launcher runs with the organiser's rights: no other user may be able to replace it."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / "cardarena"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if _only_ours(folder) and os.access(folder, os.W_OK):
            return folder
    except OSError:
        pass
    return Path(_private_folder())


@functools.cache
def _private_folder() -> str:
    folder = tempfile.mkdtemp(prefix=f"{NAME}-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _only_ours(path: Path) -> bool:
    """Whether only this user (or root) can change `path`."""
    seen = path.lstat()
    return seen.st_uid in (os.geteuid(), 0) and not seen.st_mode & (stat.S_IWGRP | stat.S_IWOTH) \
        and not stat.S_ISLNK(seen.st_mode)


def _try(path: str) -> str | None:
    """Why the launcher at `path` cannot make a sandbox here (a minimal one around /bin/true), or None."""
    options = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
               "--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
               "--tmpfs", "/tmp"]
    if os.geteuid() != 0:
        options += ["--unshare-user", "--disable-userns"]
    else:
        options += ["--uid", "65534", "--gid", "65534"]
    fd = os.memfd_create(NAME)
    try:
        os.write(fd, "".join(f"{option}\0" for option in options).encode())
        os.lseek(fd, 0, os.SEEK_SET)
        return namespace_probe("it", [path, "--args", str(fd), "--", "/bin/true"], pass_fds=[fd])
    finally:
        os.close(fd)
