"""What a bot sees of the machine's own counters in /proc: constant copies, so that no bot can read
what another does.

A PID namespace's /proc still shows counters of the whole machine: CPU time, load and clock speed
(`stat`, `loadavg`, `pressure/`, `cpuinfo`'s MHz where it varies), free memory (`meminfo`, `zoneinfo`, `buddyinfo`), open files and inodes
(`sys/fs/file-nr`, `inode-nr`, `dentry-state`), disks, interrupts, locks. One bot changes them by
allocating memory or opening files, another reads the change: a channel between sandboxes, and a
record of past runs. Each is replaced by a copy of the host's file with every number made 0 (its
layout stays, for the runtimes that parse it), `meminfo` by one that shows the bot's memory cap as
its total and free memory, and folders of such counters by empty ones.
"""

from __future__ import annotations

import functools
import os
import re
import stat

#: files of /proc that count for the whole machine (the world-readable ones among them are covered)
HOST_COUNTERS = ("stat", "loadavg", "uptime", "vmstat", "zoneinfo", "buddyinfo", "pagetypeinfo", "diskstats",
                 "interrupts", "softirqs", "schedstat", "locks", "keys", "key-users", "swaps", "cgroups",
                 "slabinfo", "vmallocinfo", "mdstat", "cpuinfo", "sys/fs/dentry-state", "sys/fs/file-nr",
                 "sys/fs/inode-nr", "sys/fs/inode-state", "sys/fs/aio-nr", "sys/kernel/pty/nr",
                 "sys/kernel/random/entropy_avail")
#: folders of /proc about the whole machine, shown empty: pressure stall times, file systems' own
#: statistics (free blocks of each group, journal transactions; ZFS's under spl), per-interrupt
#: counts, drivers' and sound cards' state
HOST_FOLDERS = ("pressure", "fs", "irq", "spl", "driver", "asound")
#: the fields of `meminfo` that show the bot's memory cap; every other one shows 0
MEMINFO_CAP_FIELDS = ("MemTotal", "MemFree", "MemAvailable")
_NUMBER = re.compile(rb"\b\d+\b")


@functools.cache
def _zeroed(path: str) -> bytes | None:
    """The host's file at `path` with every number 0, or None when a bot could not read it anyway
    (not there, or not readable by others)."""
    try:
        if not os.stat(path).st_mode & stat.S_IROTH:
            return None
        with open(path, "rb") as file:
            return _NUMBER.sub(b"0", file.read())
    except OSError:
        return None


def _meminfo(memory_mb: int) -> bytes:
    """`meminfo` as the bot may see it: its cap as total, free and available memory, else 0."""
    lines = []
    for line in (_zeroed("/proc/meminfo") or b"").decode().splitlines():
        name = line.split(":", 1)[0]
        lines.append(f"{name}: {memory_mb * 1024} kB" if name in MEMINFO_CAP_FIELDS else line)
    return "".join(line + "\n" for line in lines).encode()


@functools.cache
def constant_files(memory_mb: int) -> dict[str, bytes]:
    """Each covered file of /proc (absolute path) and the constant content shown in its place (read
    once per process, like each file's copy; callers only read it)."""
    files = {f"/proc/{name}": content for name in HOST_COUNTERS
             if (content := _zeroed(f"/proc/{name}")) is not None}
    if _zeroed("/proc/meminfo") is not None:
        files["/proc/meminfo"] = _meminfo(memory_mb)
    return files


def empty_folders() -> list[str]:
    """The folders of /proc shown empty (those this machine has)."""
    return [f"/proc/{name}" for name in HOST_FOLDERS if os.path.isdir(f"/proc/{name}")]
