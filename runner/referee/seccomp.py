"""The seccomp filter every bot runs under bubblewrap: system calls that reach kernel state shared
between sandboxes are refused, everything else is allowed.

Namespaces make most kernel objects private to one sandbox (IPC, network and with it abstract unix
sockets, /dev, /tmp), but some stay reachable by name or by inode from every sandbox and outlive a
bot process: a bot could leave its hand there for the next rotation's process, or signal it live
to a partner at another table. Refused here:

- the kernel keyring (`add_key`, `request_key`, `keyctl`): keys belong to a uid, not a namespace,
  and outlive the process and the run;
- file locks, leases and directory notifications (`flock`, `fcntl` lock, lease and `F_NOTIFY`
  commands), `inotify` and `fanotify`: state kept on an inode, and the system's files are the same
  inodes in every sandbox;
- page-cache probes that answer without timing (`preadv2` with `RWF_NOWAIT`, `cachestat`,
  `mincore`) and eviction (`fadvise(DONTNEED)`, ignored), same-page merging across processes (KSM:
  `madvise(MADV_MERGEABLE)` is ignored, `PR_SET_MEMORY_MERGE` refused), whose copy-on-write faults
  time another sandbox's memory, and `io_uring`, which does file I/O past this filter;
- host-wide counters (`sysinfo`: load, free memory, process count) and the kernel log (`syslog`);
- the machine's pools: kernel AIO contexts (`io_setup`: one `aio-max-nr` for all), and the memory
  of TCP and UDP buffers, which every network namespace's /proc/net/sockstat shows: socket families
  other than unix and netlink are refused (the sandbox has no network anyway; vsock, say, would
  reach past it);
- new namespaces (`unshare`, `setns`, namespace flags of `clone`; `clone3`, whose flags this filter
  cannot read, answers ENOSYS so the C library falls back to `clone`), and `bpf`, `perf_event_open`
  and `userfaultfd`, kernel surface a bot has no use for;
- sleeping on a shared futex: a shared (not `FUTEX_PRIVATE_FLAG`) futex on a page of a file is
  keyed by the file's inode, which is the same in every sandbox, so anything that wakes it in one
  sandbox (`FUTEX_WAKE`, or the kernel itself when a thread whose clear-child-tid address or robust
  list names the word exits) wakes a waiter in another. Wakes cannot be refused (the kernel's are
  not system calls), so the waits are: a shared `FUTEX_WAIT`, `FUTEX_WAIT_BITSET` or
  `FUTEX_WAIT_REQUEUE_PI` answers EAGAIN ("the word changed") at once, and the caller, which must
  re-check its word after any wait, polls instead of sleeping. With no shared waiter in any sandbox,
  shared wakes and requeues reach nobody there and stay allowed; the priority-inheritance locks
  need a writable word, which no two sandboxes share. The futex2 calls (`futex_wait`,
  `futex_waitv`, `futex_requeue`, `futex_wake`), whose flags a requeue reads from memory, answer
  ENOSYS: the C library and the runtimes bots use do not call them. What polls: `pthread_join`
  (the kernel's wake at a thread's exit is a shared one) and process-shared locks, semaphores and
  conditions (Python's `multiprocessing`); every other lock of a threaded program is private.

The filter is classic BPF as bubblewrap's `--seccomp FD` takes it: a bot is x86_64 code; calls from
another architecture or the x32 ABI are refused. `filter_program()` is None on other machines,
where bubblewrap runs without a filter.
"""

from __future__ import annotations

import errno
import functools
import platform
import struct
from dataclasses import dataclass

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000

# classic BPF instructions (linux/filter.h, linux/bpf_common.h)
_LD_ABS_W = 0x20  # A = 32-bit word at offset k of struct seccomp_data
_JEQ = 0x15  # jump if A == k
_JGE = 0x35  # jump if A >= k
_JSET = 0x45  # jump if A & k
_RET = 0x06  # return k
_JA = 0x05  # jump k instructions ahead

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian x86_64)
_NR, _ARCH = 0, 4


def _arg_low(index: int) -> int:
    """Offset of the low 32 bits of argument `index` (all the arguments checked here are int-sized)."""
    return 16 + 8 * index


@dataclass(frozen=True)
class Rule:
    """System call `nr` fails with `error` (0: skipped, reporting success): always when `arg` is None,
    else when argument `arg` is one of `values`, has a bit of `mask` set, or (with `allowed`) is
    not one of `allowed`."""

    nr: int
    error: int
    arg: int | None = None
    values: tuple[int, ...] = ()
    mask: int = 0
    allowed: tuple[int, ...] = ()


_F_LOCKS = (5, 6, 7, 36, 37, 38)  # F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW
_F_LEASE_NOTIFY = (1024, 1025, 1026)  # F_SETLEASE, F_GETLEASE, F_NOTIFY
_CLONE_NEW_NAMESPACES = 0x7E020080  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME
_RWF_NOWAIT = 0x8
_POSIX_FADV_DONTNEED = 4
_MADV_MERGEABLE, _PR_SET_MEMORY_MERGE = 12, 67  # same-page merging (KSM), where the machine runs it
_SOCKET_FAMILIES = (1, 16)  # AF_UNIX, AF_NETLINK
#: the futex operations that sleep, without FUTEX_PRIVATE_FLAG (0x80), with or without
#: FUTEX_CLOCK_REALTIME (0x100): FUTEX_WAIT, FUTEX_WAIT_BITSET, FUTEX_WAIT_REQUEUE_PI (the kernel
#: runs no other operation for values with further bits set)
_SHARED_FUTEX_WAITS = (0, 9, 11, 0x100, 0x109, 0x10B)

#: x86_64 system call numbers (asm/unistd_64.h)
RULES = (
    Rule(248, errno.EPERM),  # add_key
    Rule(249, errno.EPERM),  # request_key
    Rule(250, errno.EPERM),  # keyctl
    Rule(73, errno.ENOLCK),  # flock
    Rule(72, errno.ENOLCK, arg=1, values=_F_LOCKS),  # fcntl: record and open-file-description locks
    Rule(72, errno.EPERM, arg=1, values=_F_LEASE_NOTIFY),  # fcntl: leases, directory notifications
    Rule(253, errno.ENOSYS),  # inotify_init
    Rule(254, errno.ENOSYS),  # inotify_add_watch
    Rule(294, errno.ENOSYS),  # inotify_init1
    Rule(300, errno.EPERM),  # fanotify_init
    Rule(301, errno.EPERM),  # fanotify_mark
    Rule(327, errno.EOPNOTSUPP, arg=5, mask=_RWF_NOWAIT),  # preadv2(..., flags)
    Rule(451, errno.ENOSYS),  # cachestat
    Rule(27, errno.ENOSYS),  # mincore
    Rule(221, 0, arg=3, values=(_POSIX_FADV_DONTNEED,)),  # fadvise64: advice ignored
    Rule(28, 0, arg=2, values=(_MADV_MERGEABLE,)),  # madvise: advice ignored
    Rule(157, errno.EINVAL, arg=0, values=(_PR_SET_MEMORY_MERGE,)),  # prctl
    Rule(206, errno.ENOSYS),  # io_setup
    Rule(425, errno.ENOSYS),  # io_uring_setup
    Rule(426, errno.ENOSYS),  # io_uring_enter
    Rule(427, errno.ENOSYS),  # io_uring_register
    Rule(99, errno.ENOSYS),  # sysinfo
    Rule(103, errno.EPERM),  # syslog
    Rule(41, errno.EAFNOSUPPORT, arg=0, allowed=_SOCKET_FAMILIES),  # socket
    Rule(272, errno.EPERM),  # unshare
    Rule(308, errno.EPERM),  # setns
    Rule(56, errno.EPERM, arg=0, mask=_CLONE_NEW_NAMESPACES),  # clone
    Rule(435, errno.ENOSYS),  # clone3
    Rule(202, errno.EAGAIN, arg=1, values=_SHARED_FUTEX_WAITS),  # futex(uaddr, op, ...): the caller polls
    Rule(449, errno.ENOSYS),  # futex_waitv
    Rule(454, errno.ENOSYS),  # futex_wake
    Rule(455, errno.ENOSYS),  # futex_wait
    Rule(456, errno.ENOSYS),  # futex_requeue
    Rule(321, errno.EPERM),  # bpf
    Rule(298, errno.EPERM),  # perf_event_open
    Rule(323, errno.EPERM),  # userfaultfd
)


class _Assembler:
    """Classic BPF with forward jumps to named labels, resolved when the program is packed."""

    def __init__(self) -> None:
        self.code: list[tuple[int, str | None, int | str]] = []  # op, label if it holds, k (or a label)
        self.labels: dict[str, int] = {}

    def emit(self, op: int, k: int = 0, true: str | None = None) -> None:
        """One instruction; a conditional jump goes to label `true` when it holds, else on."""
        self.code.append((op, true, k))

    def jump(self, target: str) -> None:
        self.code.append((_JA, None, target))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def pack(self) -> bytes:
        def offset(pc: int, target: str | None) -> int:
            return 0 if target is None else self.labels[target] - pc - 1

        packed = []
        for pc, (op, true, k) in enumerate(self.code):
            jump = offset(pc, true)
            if not 0 <= jump <= 255:
                raise ValueError(f"seccomp filter: a jump at instruction {pc} is out of range")
            packed.append(struct.pack("=HBBI", op, jump, 0, offset(pc, k) if isinstance(k, str) else k))
        return b"".join(packed)


def assemble(rules: tuple[Rule, ...] = RULES) -> bytes:
    """The filter as bubblewrap reads it: an array of struct sock_filter."""
    program = _Assembler()
    program.emit(_LD_ABS_W, _ARCH)
    program.emit(_JEQ, AUDIT_ARCH_X86_64, true="native")
    program.emit(_RET, SECCOMP_RET_ERRNO | errno.ENOSYS)
    program.label("native")
    program.emit(_LD_ABS_W, _NR)
    program.emit(_JGE, X32_SYSCALL_BIT, true="refuse")
    numbers = list(dict.fromkeys(rule.nr for rule in rules))
    for nr in numbers:
        program.emit(_JEQ, nr, true=f"{nr}")
    program.emit(_RET, SECCOMP_RET_ALLOW)
    for nr in numbers:
        program.label(f"{nr}")
        for index, rule in enumerate(rule for rule in rules if rule.nr == nr):
            if rule.arg is None:
                program.emit(_RET, SECCOMP_RET_ERRNO | rule.error)
                break
            refuse, next_rule = f"{nr}.{index}.refuse", f"{nr}.{index}.next"
            program.emit(_LD_ABS_W, _arg_low(rule.arg))
            for value in rule.values:
                program.emit(_JEQ, value, true=refuse)
            if rule.mask:
                program.emit(_JSET, rule.mask, true=refuse)
            for value in rule.allowed:
                program.emit(_JEQ, value, true=next_rule)
            if not rule.allowed:
                program.jump(next_rule)
            program.label(refuse)
            program.emit(_RET, SECCOMP_RET_ERRNO | rule.error)
            program.label(next_rule)
        else:
            program.emit(_RET, SECCOMP_RET_ALLOW)
    program.label("refuse")
    program.emit(_RET, SECCOMP_RET_ERRNO | errno.ENOSYS)
    return program.pack()


@functools.cache
def filter_program() -> bytes | None:
    """The filter for this machine, or None where bots are not x86_64 code (no filter is applied);
    assembled once per process (0.1 ms that every start paid)."""
    return assemble() if platform.machine() == "x86_64" else None
