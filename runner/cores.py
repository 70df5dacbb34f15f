"""CPU cores: how many this process may use, and pinning it to one where the system can (Linux has
sched_setaffinity; macOS has no such call, so there the processes run unpinned)."""

import os

#: printed once by a command asked to pin where the system cannot
PINNING_UNAVAILABLE = ("note: this system cannot pin a process to a core (no os.sched_setaffinity, "
                       "as on macOS): running unpinned")


def can_pin() -> bool:
    """Whether this system lets a process choose the cores it runs on."""
    return hasattr(os, "sched_setaffinity") and hasattr(os, "sched_getaffinity")


def usable_cores() -> int:
    """How many cores this process may run on: its affinity set where the system has one, else every CPU."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def pin_to_core(index: int) -> bool:
    """Pin this process (and the processes it starts afterwards) to its `index`-th usable core,
    counting round; False, changing nothing, where the system cannot pin."""
    if not can_pin():
        return False
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[index % len(cores)]})
    return True
