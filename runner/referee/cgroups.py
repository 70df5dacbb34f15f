"""Bots' own cgroups (v1: memory, pids, cpu and freezer controllers; where v1 has no freezer, cgroup
v2's own `cgroup.freeze`): their caps, the freezer that stops a bot outside its turn, and the
release of what dead referees left in theirs.

A cgroup is named after the referee that made it (pid, start time, PID namespace), so that a later
referee, or whoever outlives one, can tell for sure that its maker is gone and clear it
(`release_dead_referees`): nothing here runs as a side effect of making a bot's cgroups.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import signal
import time
from pathlib import Path
from typing import NamedTuple

from cardarena.config import SandboxSettings
from cardarena.referee.system import MIB, SandboxError, leftover_owner, process_tag

#: how long killed processes may take to leave a bot's cgroup before it counts as stuck (a loaded
#: machine has been seen to need more than 2 s; the wait ends as soon as the cgroup is empty)
CGROUP_REMOVAL_SECONDS = 10.0
#: how long a removal waits before it looks again whether the cgroup's last processes have left, first
#: and at most (doubling): a bot that has just exited usually leaves within a millisecond or two, and a
#: fixed 5 ms wait cost every bot's stop that much
REMOVAL_FIRST_PAUSE_SECONDS, REMOVAL_LAST_PAUSE_SECONDS = 0.0002, 0.005
#: the cgroup v1 controllers a bot gets its own cgroup of, where this machine lets the referee make one
CGROUP_CONTROLLERS = ("memory", "pids", "cpu", "freezer")
#: cpu.shares of a bot whose referee runs at nice 0 (the kernel's weight of one nice-0 task)
DEFAULT_CPU_SHARES = 1024
#: /proc/self/cgroup's name for the v2 hierarchy (its line lists no controllers). Only the freezer is
#: taken from v2: v2 gives a child cgroup a controller only once its parent has no process of its
#: own, and the referee's cgroup holds the referee (rlimits stand in for the caps)
UNIFIED = ""


class FreezerFiles(NamedTuple):
    """A freezer cgroup's files in one hierarchy: the file a process joins it (or its parent) by, the
    file that freezes it, and what is written there to thaw and to freeze (indexed by `frozen`)."""

    join: str
    freeze: str
    states: tuple[bytes, bytes]


V1_FREEZER = FreezerFiles("tasks", "freezer.state", (b"THAWED", b"FROZEN"))
V2_FREEZER = FreezerFiles("cgroup.procs", "cgroup.freeze", (b"0", b"1"))  # v2 moves whole processes only


def cpu_shares(niceness: int) -> int:
    """The cpu.shares that give a bot's cgroup the weight of one task at `niceness`: each step of nice
    is a factor of 1.25 (the kernel's own table rounds the same curve; nice 10 is 110). A bot's own
    cgroup competes with the tasks of its parent by shares, not by nice, so without this a niced
    referee's bots (a league server's play and checks, `nice cardarena run`) would take the CPU from
    un-niced work as if nothing were niced; between bots of one referee it changes nothing."""
    return max(2, round(DEFAULT_CPU_SHARES / 1.25 ** niceness))


class Hierarchies(NamedTuple):
    """Where this process's cgroups are: each v1 controller's directory, and its cgroup v2 directory
    (None where cgroup v2 is not mounted)."""

    v1: dict[str, Path]
    unified: Path | None


@functools.cache
def _hierarchies() -> Hierarchies:
    """This process's own cgroups, from /proc/self/mountinfo and /proc/self/cgroup (none where they
    cannot be read)."""
    mounts: dict[str, Path] = {}
    unified: Path | None = None
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            fields = line.split()
            separator = fields.index("-")
            if fields[separator + 1] == "cgroup":
                for option in fields[separator + 3].split(","):
                    if option in CGROUP_CONTROLLERS:
                        mounts[option] = Path(fields[4])
            elif fields[separator + 1] == "cgroup2" and fields[3] == "/":
                unified = Path(fields[4])
        own = {}
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [UNIFIED]:
                own[controller] = path
    except (OSError, ValueError, IndexError):
        return Hierarchies({}, None)
    return Hierarchies({controller: mount / own.get(controller, "/").lstrip("/") for controller, mount in mounts.items()},
                       None if unified is None or UNIFIED not in own else unified / own[UNIFIED].lstrip("/"))


@functools.cache
def cgroup_parents() -> dict[str, Path]:
    """For each of the memory, pids, cpu and freezer controllers that this process may create child cgroups in,
    the directory of its own cgroup (children nest inside it, so outer limits still hold), for any bot.
    Where no v1 freezer hierarchy is ours, the freezer is cgroup v2's, when this process is root and may
    use it (`_v2_freezes_in`). A cgroup v2 cgroup delegated to an organiser that is not root serves only
    bots that cannot reach the cgroup file system (`delegated_freezer`)."""
    hierarchies = _hierarchies()
    parents = {controller: parent for controller, parent in hierarchies.v1.items() if os.access(parent, os.W_OK)}
    if "freezer" not in parents and os.geteuid() == 0 and hierarchies.unified is not None \
            and _v2_freezes_in(hierarchies.unified):
        parents["freezer"] = hierarchies.unified
    return parents


@functools.cache
def delegated_freezer() -> Path | None:
    """Where an organiser that is not root has no v1 freezer but a cgroup v2 cgroup delegated to its
    uid (systemd's Delegate=yes, as `systemd-run --user --scope -p Delegate=yes` gives), that cgroup,
    in which its bots' freezer cgroups are made; else None. Only for bots under bubblewrap: they run
    as the organiser's uid, which owns the delegated cgroups, but they are shown no cgroup file system
    (no /sys) and have no capability to mount one, so none can move a child out of its freezer; a
    bot without bubblewrap could (runner/referee/SANDBOX.md § Caps)."""
    unified = _hierarchies().unified
    if os.geteuid() == 0 or "freezer" in cgroup_parents() or unified is None or not _v2_freezes_in(unified):
        return None
    return unified


def bot_cgroup_parents(confined: bool) -> dict[str, Path]:
    """`cgroup_parents`, with the delegated freezer (`delegated_freezer`) for a `confined` bot (one
    under bubblewrap) where there is one."""
    parents = dict(cgroup_parents())
    delegated = delegated_freezer() if confined else None
    if delegated is not None:
        parents["freezer"] = delegated
    return parents


def _v2_freezes_in(parent: Path) -> bool:
    """Whether a cgroup v2 `parent` lets this process make a child cgroup, move processes into it and out
    again (both need its `cgroup.procs`: it is their common ancestor), and freeze it (`cgroup.freeze`,
    Linux 5.2; a probe child made and removed, since the root cgroup has no such file to look for)."""
    if not (os.access(parent, os.W_OK) and os.access(parent / "cgroup.procs", os.W_OK)):
        return False
    probe = parent / _cgroup_name()
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        return (probe / V2_FREEZER.freeze).exists()
    finally:
        try:
            probe.rmdir()
        except OSError:
            pass  # left empty: named for this referee, it is swept once this referee is gone


def is_unified(cgroup: Path) -> bool:
    """Whether a bot's cgroup (or a parent of bots' cgroups) is cgroup v2's: it has `cgroup.procs` but
    no v1 `tasks` file. v2 moves whole processes (`cgroup.procs`) and freezes with `cgroup.freeze`."""
    return not (cgroup / "tasks").exists() and (cgroup / "cgroup.procs").exists()


def freezes_bots(confined: bool) -> bool:
    """Whether bots here get a freezer cgroup, so the other bots of a table are frozen while one
    decides; `confined`: bots under bubblewrap (`bot_cgroup_parents`)."""
    return "freezer" in bot_cgroup_parents(confined)


_cgroup_numbers = itertools.count()


def _cgroup_name() -> str:
    """A new bot cgroup's name: cardarena-<pid>-<start time>-<PID namespace>-<number>, which lets a
    later referee tell for sure that the referee which made it is gone (`leftover_owner`)."""
    return f"cardarena-{process_tag()}-{next(_cgroup_numbers)}"


def _sweep_stale_cgroups(parent: Path) -> int:
    """Clear the cgroups of referees that were killed before they could clean up, and count those
    of referees gone. A referee of this PID namespace that is gone leaves nothing running: what is
    still in its bots' cgroups (escapees in sessions of their own, under --sandbox none, or bots
    frozen between turns) is killed. An older name's cgroup (`leftover_owner`'s "unknown": it may
    hold another namespace's processes) is removed only when empty."""
    gone = 0
    for stale in parent.glob("cardarena-*"):
        owner = leftover_owner(stale.name.removeprefix("cardarena-"))
        gone += owner == "gone"
        try:
            if owner == "gone":
                remove_cgroup(stale)
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
    parents = bot_cgroup_parents(confined=True)
    return sum(_sweep_stale_cgroups(parents[controller])  # the freezer's first: thawed, the rest can die
               for controller in sorted(parents, key=lambda controller: controller != "freezer"))


def namespace_helpers(pid: int, launcher: str) -> list[int]:
    """`pid` and its only child, when `pid` runs `launcher` (bubblewrap or unshare) and that child is
    the first process of a PID namespace of its own; else nothing. Both are the launch chain's, and
    only wait: the bot is the child's child, started after both, so neither is ever the bot. Each
    freeze of the bot would wake them too, since their sleeps (waitpid, poll) are not freezable in
    place: three context switches a turn instead of one on a shared core."""
    try:
        if os.readlink(f"/proc/{pid}/exe") != os.path.realpath(launcher):
            return []
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if len(children) != 1:
            return []
        nspid = re.search(r"^NSpid:\s+(.+)$", Path(f"/proc/{children[0]}/status").read_text(), re.M)
    except OSError:
        return []  # gone, or this kernel does not list children: the helpers stay frozen with the bot
    levels = [] if nspid is None else nspid.group(1).split()
    return [pid, int(children[0])] if len(levels) >= 2 and levels[-1] == "1" else []


class Cgroups:
    """A bot's own memory, pids, cpu and freezer cgroups (whichever this machine lets us make),
    removed after it. The cpu cgroup gives each bot one equal share of a busy core (CFS group
    scheduling), so a bot spinning many threads cannot starve the opponents that share its core;
    the freezer stops all its processes while another bot of its table decides (`freeze`)."""

    def __init__(self, settings: SandboxSettings, confined: bool):
        self.paths: dict[str, Path] = {}
        self._freezer_state: int | None = None  # the freezer's file, open for writing once the bot is first frozen
        name = _cgroup_name()
        for controller, parent in bot_cgroup_parents(confined).items():
            path = parent / name
            try:
                path.mkdir()
                if controller == "memory":
                    (path / "memory.limit_in_bytes").write_text(str(settings.memory_mb * MIB))
                    swap = path / "memory.memsw.limit_in_bytes"
                    if swap.exists():
                        swap.write_text(str(settings.memory_mb * MIB))
                elif controller == "pids":
                    (path / "pids.max").write_text(str(settings.processes))
                elif controller == "cpu":  # one task's weight, equal for every bot whatever its thread count
                    niceness = os.getpriority(os.PRIO_PROCESS, 0)
                    if niceness:
                        (path / "cpu.shares").write_text(str(cpu_shares(niceness)))
            except OSError:
                remove_cgroup(path)
                continue  # this controller is not ours to use here: its rlimit stands in
            self.paths[controller] = path
        self._freezer = V2_FREEZER if "freezer" in self.paths and is_unified(self.paths["freezer"]) else V1_FREEZER

    def tasks_files(self) -> list[str]:
        """The `tasks` file of each of the bot's cgroups: the launch chain's first process joins them
        by writing 0 (itself, a single thread) to each. Moving one thread skips the lock that moving a
        whole process takes (cgroup_threadgroup_rwsem), whose every write waits for an RCU grace period:
        11-14 ms per start on the loaded development machine, against under 2 ms this way. The shell
        has one thread, and what it runs and starts afterwards is born inside. cgroup v2 moves only
        whole processes: its freezer cgroup's file is `cgroup.procs`, where 0 is the writer too."""
        return [str(path / (self._freezer.join if controller == "freezer" else "tasks"))
                for controller, path in self.paths.items()]

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
            self._freezer_state = os.open(self.paths["freezer"] / self._freezer.freeze, os.O_WRONLY | os.O_CLOEXEC)
        os.write(self._freezer_state, self._freezer.states[frozen])
        return True

    def exempt_from_freezer(self, tids: list[int]) -> None:
        """Move these single-threaded processes of the launch chain from the bot's freezer cgroup to
        the referee's own, where freezing the bot no longer wakes them (see `namespace_helpers`).
        One thread each, as `tasks_files` explains (cgroup v2: the process, which leaves the bot's
        only cgroup); a process that has exited is skipped, and a move the kernel refuses leaves it
        where it was, frozen with the bot as before."""
        if "freezer" not in self.paths or not tids:
            return
        try:
            fd = os.open(self.paths["freezer"].parent / self._freezer.join, os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            return  # not ours to write (a delegated hierarchy's parent): they stay, as they were
        try:
            for tid in tids:
                try:
                    os.write(fd, str(tid).encode())
                except ProcessLookupError:
                    continue  # exited: the bot is gone too, and its next request finds out
                except OSError:
                    return  # refused: they stay frozen with the bot, which costs time, not safety
        finally:
            os.close(fd)

    def release(self) -> None:
        """Kill whatever is left in the bot's cgroups (a setsid escapee, say), then remove them."""
        if self._freezer_state is not None:
            os.close(self._freezer_state)
            self._freezer_state = None
        for path in sorted(self.paths.values(), key=lambda path: path != self.paths.get("freezer")):
            remove_cgroup(path)
        self.paths = {}



def _thaw(path: Path) -> None:
    """Resume the processes of a freezer cgroup (v1: a frozen process cannot die of SIGKILL until then;
    v2: a frozen one can, and what is left runs on to its exit); nothing for a cgroup of another
    controller, or one already gone."""
    for files in (V1_FREEZER, V2_FREEZER):
        try:
            if (path / files.freeze).exists():
                (path / files.freeze).write_bytes(files.states[False])
        except FileNotFoundError:
            pass  # removed meanwhile


def _kill_all(path: Path) -> None:
    """SIGKILL every process of a bot's cgroup: at once through v2's `cgroup.kill` (Linux 5.14), which
    no fork can race, else one by one from its `cgroup.procs` (the removal's loop looks again)."""
    kill = path / "cgroup.kill"
    try:
        if kill.exists():
            kill.write_text("1")
            return
    except OSError:
        pass  # removed meanwhile, or refused: one by one
    try:
        pids = [int(pid) for pid in (path / "cgroup.procs").read_text().split()]
    except OSError:
        pids = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # exited meanwhile


def remove_cgroup(path: Path) -> None:
    """Thaw a bot's cgroup, kill what runs in it, and remove it (SandboxError when its processes keep
    running past CGROUP_REMOVAL_SECONDS)."""
    deadline = time.monotonic() + CGROUP_REMOVAL_SECONDS
    pause = REMOVAL_FIRST_PAUSE_SECONDS
    _thaw(path)
    while path.exists():
        _kill_all(path)
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                raise SandboxError(f"cannot remove the bot's cgroup {path}: processes keep running in it") from None
            time.sleep(pause)  # killed or exiting processes take a moment to leave the cgroup
            pause = min(pause * 2, REMOVAL_LAST_PAUSE_SECONDS)
