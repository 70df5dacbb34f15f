"""What this machine offers the sandbox: its system programs, whether a tool that makes namespaces
works here, and the error for a bot that cannot be started as the sandbox settings require."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from typing import Sequence
from pathlib import Path

from cardarena.errors import UsageError

NOBODY = 65534  # the unprivileged gid a bot runs as when the organiser is root (`nogroup`)
MIB = 1 << 20


class SandboxError(UsageError):
    """A bot cannot be started as the sandbox settings require; the message says why in one line."""


@functools.cache
def tool(name: str) -> str | None:
    """The absolute path of a system program, or None when it is not installed."""
    return shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin")


def namespace_probe(tool: str, probe: list[str], pass_fds: Sequence[int] = ()) -> str | None:
    """Why `probe`, `tool`'s command that makes namespaces around /bin/true, fails here, or None."""
    try:
        result = subprocess.run(probe, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, timeout=10, pass_fds=pass_fds)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{tool} does not run here: {error}"
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {result.returncode}"]
        return f"{tool} cannot create namespaces here ({reason[0]})"
    return None


def process_start_time(pid: int | str) -> str | None:
    """When process `pid` started (clock ticks since boot): with the pid, it names one process for
    the machine's uptime, unlike a pid, which is reused. None when there is no such process, or it
    has died and waits to be reaped (a zombie referee's bots are as good as orphaned)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if len(fields) < 20 or fields[0] in ("Z", "X") else fields[19]


@functools.cache
def pid_namespace() -> str:
    """This process's PID namespace (the inode of its /proc/self/ns/pid; "" where there is none)."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return ""


def process_tag() -> str:
    """This process as <pid>-<start time>-<PID namespace>: what it leaves for a later sweep (its
    bots' cgroups, their scratch folders, its prepared folders) is named beginning with it, so that
    the sweep can tell for sure whether its maker is gone (`leftover_owner`)."""
    return f"{os.getpid()}-{process_start_time('self')}-{pid_namespace()}"


def leftover_owner(name: str) -> str:
    """Whose leftover `name` (what follows its prefix) is: "live" (its maker runs, or is another PID
    namespace's process, which this namespace's pids cannot judge: a referee under `unshare --pid`,
    say, sharing the temporary folder), "gone" (a process of this namespace that no longer runs,
    though another process may have its pid now), or "unknown" (a name begun by a pid alone, as
    older versions made them, of no process running here)."""
    parts = name.split("-")
    if len(parts) >= 3 and all(part.isdigit() for part in parts[:3]):
        pid, start, namespace = parts[:3]
        if namespace != pid_namespace():
            return "live"
        return "live" if process_start_time(pid) == start else "gone"
    return "unknown" if parts[0].isdigit() and process_start_time(parts[0]) is None else "live"
