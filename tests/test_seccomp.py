"""The bots' seccomp filter, run by a small classic-BPF interpreter: what it refuses and with which
error, and that everything else passes (tests/test_channels.py runs it in the kernel)."""

from __future__ import annotations

import errno
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cardarena.referee.seccomp import AUDIT_ARCH_X86_64, RULES, SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO, assemble

PROGRAM = assemble()
AUDIT_ARCH_I386 = 0x40000003


def verdict(nr: int, *args: int, arch: int = AUDIT_ARCH_X86_64) -> int:
    """What the filter returns for system call `nr` with `args` (struct seccomp_data, little-endian)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args, *[0] * (6 - len(args)))
    code = [struct.unpack_from("=HBBI", PROGRAM, offset) for offset in range(0, len(PROGRAM), 8)]
    accumulator = pc = 0
    while True:
        op, true, false, k = code[pc]
        if op == 0x20:  # load a word of seccomp_data
            accumulator, pc = struct.unpack_from("<I", data, k)[0], pc + 1
        elif op in (0x15, 0x35, 0x45):  # jeq, jge, jset
            holds = {0x15: accumulator == k, 0x35: accumulator >= k, 0x45: bool(accumulator & k)}[op]
            pc += 1 + (true if holds else false)
        elif op == 0x05:  # ja
            pc += 1 + k
        elif op == 0x06:
            return k
        else:
            raise AssertionError(f"unknown instruction {op:#x} at {pc}")


def refused(error: int) -> int:
    return SECCOMP_RET_ERRNO | error


@pytest.mark.parametrize("nr, args, expected", [
    (248, (), refused(errno.EPERM)),  # add_key
    (249, (), refused(errno.EPERM)),  # request_key
    (250, (), refused(errno.EPERM)),  # keyctl
    (73, (), refused(errno.ENOLCK)),  # flock
    (72, (3, 6), refused(errno.ENOLCK)),  # fcntl F_SETLK
    (72, (3, 5), refused(errno.ENOLCK)),  # fcntl F_GETLK
    (72, (3, 36), refused(errno.ENOLCK)),  # fcntl F_OFD_GETLK
    (72, (3, 1024), refused(errno.EPERM)),  # fcntl F_SETLEASE
    (72, (3, 1026), refused(errno.EPERM)),  # fcntl F_NOTIFY
    (72, (3, 3), SECCOMP_RET_ALLOW),  # fcntl F_GETFL
    (72, (3, 2, 1), SECCOMP_RET_ALLOW),  # fcntl F_SETFD
    (294, (), refused(errno.ENOSYS)),  # inotify_init1
    (300, (), refused(errno.EPERM)),  # fanotify_init
    (99, (), refused(errno.ENOSYS)),  # sysinfo
    (327, (3, 0, 1, 0, 0, 0x8), refused(errno.EOPNOTSUPP)),  # preadv2 RWF_NOWAIT
    (327, (3, 0, 1, 0, 0, 0x10), SECCOMP_RET_ALLOW),  # preadv2 RWF_APPEND
    (221, (3, 0, 0, 4), refused(0)),  # fadvise64 DONTNEED: ignored
    (221, (3, 0, 0, 2), SECCOMP_RET_ALLOW),  # fadvise64 SEQUENTIAL
    (28, (0, 4096, 12), refused(0)),  # madvise MADV_MERGEABLE: ignored
    (28, (0, 4096, 4), SECCOMP_RET_ALLOW),  # madvise MADV_DONTNEED (the allocator's)
    (157, (67,), refused(errno.EINVAL)),  # prctl PR_SET_MEMORY_MERGE
    (157, (38, 1), SECCOMP_RET_ALLOW),  # prctl PR_SET_NO_NEW_PRIVS (setpriv's)
    (41, (40, 1, 0), refused(errno.EAFNOSUPPORT)),  # socket AF_VSOCK
    (41, (2, 1, 0), refused(errno.EAFNOSUPPORT)),  # socket AF_INET
    (41, (10, 2, 0), refused(errno.EAFNOSUPPORT)),  # socket AF_INET6
    (41, (1, 1, 0), SECCOMP_RET_ALLOW),  # socket AF_UNIX
    (41, (16, 3, 0), SECCOMP_RET_ALLOW),  # socket AF_NETLINK
    (206, (4096, 0), refused(errno.ENOSYS)),  # io_setup
    (56, (0x10000000,), refused(errno.EPERM)),  # clone CLONE_NEWUSER
    (56, (0x003D0F00,), SECCOMP_RET_ALLOW),  # clone as pthread_create calls it
    (435, (), refused(errno.ENOSYS)),  # clone3: the C library falls back to clone
    (272, (), refused(errno.EPERM)),  # unshare
    (0, (), SECCOMP_RET_ALLOW),  # read
    (0x40000000 | 248, (), refused(errno.ENOSYS)),  # add_key through the x32 ABI
])
def test_the_filter_refuses_shared_kernel_state_and_allows_the_rest(nr, args, expected):
    assert verdict(nr, *args) == expected


FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME = 0x80, 0x100
SLEEPING = {0: "FUTEX_WAIT", 9: "FUTEX_WAIT_BITSET", 11: "FUTEX_WAIT_REQUEUE_PI"}
NOT_SLEEPING = {1: "FUTEX_WAKE", 3: "FUTEX_REQUEUE", 4: "FUTEX_CMP_REQUEUE", 5: "FUTEX_WAKE_OP",
                10: "FUTEX_WAKE_BITSET", 12: "FUTEX_CMP_REQUEUE_PI", 6: "FUTEX_LOCK_PI", 7: "FUTEX_UNLOCK_PI",
                8: "FUTEX_TRYLOCK_PI", 13: "FUTEX_LOCK_PI2"}


@pytest.mark.parametrize("clock", [0, FUTEX_CLOCK_REALTIME], ids=["", "clock-realtime"])
@pytest.mark.parametrize("command", SLEEPING, ids=SLEEPING.values())
def test_a_shared_futex_wait_returns_at_once_and_a_private_one_is_allowed(command, clock):
    assert verdict(202, 0x1000, command | clock, 5) == refused(errno.EAGAIN)
    assert verdict(202, 0x1000, command | clock | FUTEX_PRIVATE_FLAG, 5) == SECCOMP_RET_ALLOW


@pytest.mark.parametrize("command", NOT_SLEEPING, ids=NOT_SLEEPING.values())
def test_futex_operations_that_do_not_sleep_on_a_shared_word_are_allowed_shared_or_private(command):
    assert verdict(202, 0x1000, command, 1) == SECCOMP_RET_ALLOW
    assert verdict(202, 0x1000, command | FUTEX_PRIVATE_FLAG, 1) == SECCOMP_RET_ALLOW


@given(st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1))
def test_every_private_futex_operation_is_allowed(op, value):
    assert verdict(202, 0x1000, op | FUTEX_PRIVATE_FLAG, value) == SECCOMP_RET_ALLOW


@pytest.mark.parametrize("nr, name", [(449, "futex_waitv"), (454, "futex_wake"), (455, "futex_wait"),
                                      (456, "futex_requeue")])
def test_the_futex2_calls_are_refused(nr, name):
    assert verdict(nr, 0x1000, 1, 0, 0x80) == refused(errno.ENOSYS)


@given(st.integers(0, 600).filter(lambda nr: nr not in {rule.nr for rule in RULES}),
       st.lists(st.integers(0, 2**64 - 1), min_size=6, max_size=6))
def test_every_other_system_call_is_allowed(nr, args):
    assert verdict(nr, *args) == SECCOMP_RET_ALLOW


@given(st.integers(0, 600))
def test_calls_of_another_architecture_are_refused(nr):
    assert verdict(nr, arch=AUDIT_ARCH_I386) == refused(errno.ENOSYS)
