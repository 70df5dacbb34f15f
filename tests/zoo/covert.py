"""Tries to pass 8 bits from one bot process to another outside the game, through every kind of kernel
state one sandbox might share with another, live (two sandboxes at once) or left behind for a later
process (another rotation, another run).

    python covert.py --send BITS [--leave] --tag TAG     encode BITS before the hello, hold them while
                                                         alive; at shutdown clear them (unless --leave)
    python covert.py --receive --tag TAG                 set up watches before the hello, read the
                                                         channels at shutdown and report on stderr
    --channels NAME,...                                  the channels to try (default: all)

The report is one line, `covert CHANNEL=BITS ...`: each bit 1 or 0 as read, `?` where the probe
itself was refused. Channels: `flock`, `posix-lock` (F_GETLK sees another's record lock),
`ofd-lock`, `inotify` and `fanotify` (watches on files the sender opens): the same /usr/bin files,
which are the same inodes in every sandbox; `keyring` (the uid's user keyring), `sysv-shm`,
`posix-mq`, `abstract` (abstract unix sockets), `dev-shm`, `tmp`, `home`: objects found by name;
`futex-wake` and `futex-exit`: futexes on the pages of a file both sandboxes map (the Python
program), keyed by the file's inode: the receiver waits on one word per bit, the sender wakes it
with `FUTEX_WAKE`, or by the exit of a thread whose clear-child-tid address is that word (the
kernel's own wake); one bit (the first) each: `pipe-buffers` (the kernel's count of the uid's pipe buffers), `aio` (the
machine's pool of kernel AIO contexts) and `tcp-memory` (the machine's TCP buffer memory).
`counters` names the machine-wide /proc files whose content changed between the receiver's start
and its shutdown while the sender allocated memory, opened files and burnt CPU (`none` when none
did), and `sysinfo` says whether the sysinfo call's load, free memory or process count changed
(`same`, `changed` or `refused`). TAG keeps one test's names apart from another's.
"""

import argparse
import ctypes
import errno
import fcntl
import os
import select
import socket
import struct
import sys
import threading
import time
from pathlib import Path

from cardarena.protocol import PROTOCOL_VERSION
from cardarena.protocol.bot import read_message, write_message

LIBC = ctypes.CDLL(None, use_errno=True)
# Sixteen waiting threads, each with glibc's 8 MiB stack and a 64 MiB malloc arena reserved, would
# pass a 1 GiB address-space cap by themselves (the memory cap where no cgroup can be made: a
# non-root organiser's): small stacks, one arena.
threading.stack_size(1 << 18)
LIBC.mallopt(-8, 1)  # M_ARENA_MAX
SYS_ADD_KEY, SYS_KEYCTL = 248, 250
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING = -3, -4
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_LINK, KEYCTL_UNLINK, KEYCTL_SEARCH, KEYCTL_SET_TIMEOUT = 1, 8, 9, 10, 15
F_OFD_GETLK, F_OFD_SETLK = 36, 37
IN_OPEN, IN_ACCESS = 0x20, 0x01
FAN_CLASS_NOTIF, FAN_REPORT_FID, FAN_MARK_ADD, FAN_OPEN, FAN_ACCESS = 0, 0x200, 1, 0x20, 0x01
AT_FDCWD = -100
IPC_CREAT, IPC_RMID = 0o1000, 0
F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032
SYS_IO_SETUP, SYS_IO_DESTROY = 206, 207
SYS_FUTEX, SYS_SET_TID_ADDRESS, FUTEX_WAIT, FUTEX_WAKE = 202, 218, 0, 1
PROT_READ, MAP_PRIVATE = 1, 2
BITS = 8


def shared_files():
    """Eight files every sandbox sees as the same inodes: the first readable programs of /usr/bin."""
    found = []
    for entry in sorted(os.scandir("/usr/bin"), key=lambda entry: entry.name):
        if entry.is_file(follow_symlinks=False) and os.access(entry.path, os.R_OK):
            found.append(entry.path)
        if len(found) == BITS:
            return found
    raise SystemExit("fewer than 8 readable files in /usr/bin")


def refused(call):
    """Run `call`; True when it raised OSError (the probe is refused), else False."""
    try:
        call()
        return False
    except OSError:
        return True


def check(result):
    """A libc call's result, or OSError with its errno when it is -1."""
    if result == -1:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))
    return result


def flock_struct(kind):
    """struct flock for the whole file (x86_64 layout)."""
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, 0, 0, 0)


class Channel:
    """One kind of shared state: `send` sets bit i, `prepare` watches before the sender acts,
    `read` returns bit i (True, False) or raises OSError when the probe is refused."""

    bits = BITS  # how many bits it carries at once

    def __init__(self, tag):
        self.tag = tag

    def send(self, index):
        raise NotImplementedError

    def prepare(self, index):
        pass

    def read(self, index):
        raise NotImplementedError

    def clear(self, index):
        pass


class Flock(Channel):
    def __init__(self, tag):
        super().__init__(tag)
        self.held = []

    def send(self, index):
        handle = open(shared_files()[index], "rb")
        fcntl.flock(handle, fcntl.LOCK_SH)
        self.held.append(handle)

    def read(self, index):
        with open(shared_files()[index], "rb") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
            return False


class PosixLock(Flock):
    set_command, get_command = fcntl.F_SETLK, fcntl.F_GETLK

    def send(self, index):
        handle = open(shared_files()[index], "rb")
        fcntl.fcntl(handle, self.set_command, flock_struct(fcntl.F_RDLCK))
        self.held.append(handle)

    def read(self, index):
        with open(shared_files()[index], "rb") as handle:  # a write lock would conflict with any other's lock
            answer = fcntl.fcntl(handle, self.get_command, flock_struct(fcntl.F_WRLCK))
            return struct.unpack("hhqqi4x", answer)[0] != fcntl.F_UNLCK


class OfdLock(PosixLock):
    set_command, get_command = F_OFD_SETLK, F_OFD_GETLK


class Inotify(Channel):
    def __init__(self, tag):
        super().__init__(tag)
        self.watches = {}

    def send(self, index):
        with open(shared_files()[index], "rb") as handle:
            handle.read(1)

    def prepare(self, index):
        fd = check(LIBC.inotify_init1(os.O_NONBLOCK))
        check(LIBC.inotify_add_watch(fd, shared_files()[index].encode(), IN_OPEN | IN_ACCESS))
        self.watches[index] = fd

    def read(self, index):
        if index not in self.watches:
            raise OSError(errno.ENOSYS, "no watch could be set")
        return bool(select.select([self.watches[index]], [], [], 0)[0])


class Fanotify(Inotify):
    def prepare(self, index):
        fd = check(LIBC.fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID, os.O_RDONLY))
        check(LIBC.fanotify_mark(fd, FAN_MARK_ADD, ctypes.c_uint64(FAN_OPEN | FAN_ACCESS), AT_FDCWD,
                                 shared_files()[index].encode()))
        self.watches[index] = fd


class Keyring(Channel):
    def __init__(self, tag):
        super().__init__(tag)
        # A key of the uid's keyring is found only by a process that possesses it: one whose session
        # keyring links the uid's. A login session's does (pam_keyinit); one started by su or setpriv
        # may not, so do as pam_keyinit does: a session keyring of its own, linked to the uid's.
        if LIBC.syscall(SYS_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING, None) != -1:
            LIBC.syscall(SYS_KEYCTL, KEYCTL_LINK, KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING)

    def name(self, index):
        return f"covert-{self.tag}-{index}".encode()

    def send(self, index):
        key = check(LIBC.syscall(SYS_ADD_KEY, b"user", self.name(index), b"1", 1, KEY_SPEC_USER_KEYRING))
        check(LIBC.syscall(SYS_KEYCTL, KEYCTL_SET_TIMEOUT, key, 120))  # gone within minutes whatever happens

    def find(self, index):
        # the uid's keyring searched by name (request_key would reach it only through a session
        # keyring that links it, which a process started by su or setpriv need not have)
        key = LIBC.syscall(SYS_KEYCTL, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, b"user", self.name(index), 0)
        if key == -1 and ctypes.get_errno() in (errno.ENOKEY, errno.EKEYEXPIRED, errno.EKEYREVOKED):
            return None
        return check(key)

    def read(self, index):
        return self.find(index) is not None

    def clear(self, index):
        if (key := self.find(index)) is not None:
            check(LIBC.syscall(SYS_KEYCTL, KEYCTL_UNLINK, key, KEY_SPEC_USER_KEYRING))


class SysvShm(Channel):
    def key(self, index):
        return (int.from_bytes(self.tag.encode()[:3].ljust(3, b"\0"), "big") << 8) + index + 1

    def send(self, index):
        check(LIBC.shmget(self.key(index), 4096, IPC_CREAT | 0o666))

    def read(self, index):
        if LIBC.shmget(self.key(index), 0, 0) >= 0:
            return True
        if ctypes.get_errno() == errno.ENOENT:
            return False
        return check(-1)

    def clear(self, index):
        if (segment := LIBC.shmget(self.key(index), 0, 0)) >= 0:
            check(LIBC.shmctl(segment, IPC_RMID, None))


class PosixMq(Channel):
    def name(self, index):
        return f"/covert-{self.tag}-{index}".encode()

    def send(self, index):
        check(LIBC.mq_open(self.name(index), os.O_CREAT | os.O_RDWR, 0o666, None))

    def read(self, index):
        if LIBC.mq_open(self.name(index), os.O_RDONLY) >= 0:
            return True
        if ctypes.get_errno() == errno.ENOENT:
            return False
        return check(-1)

    def clear(self, index):
        LIBC.mq_unlink(self.name(index))


class Abstract(Channel):
    def __init__(self, tag):
        super().__init__(tag)
        self.listeners = []

    def address(self, index):
        return f"\0covert-{self.tag}-{index}"

    def send(self, index):
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(self.address(index))
        listener.listen()
        self.listeners.append(listener)

    def read(self, index):
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(self.address(index))
                return True
            except ConnectionRefusedError:
                return False


class PipeBuffers(Channel):
    """The kernel counts the pipe buffers of each user: past a soft limit (16384 pages), a new pipe
    of that user gets 2 pages instead of 16. One bit: the sender holds pipes until it is past."""

    bits = 1

    def __init__(self, tag):
        super().__init__(tag)
        self.pipes = []

    def send(self, index):
        while not refused(lambda: fcntl.fcntl(self.pipe()[1], F_SETPIPE_SZ, 1 << 20)):
            pass  # 1 MiB pipes until the kernel refuses one: at the limit
        for _ in range(20):  # then past it, within the open-files cap
            self.pipe()

    def pipe(self):
        self.pipes.append(os.pipe())
        return self.pipes[-1]

    def read(self, index):
        reading, writing = os.pipe()
        try:
            return fcntl.fcntl(writing, F_GETPIPE_SZ) < 65536
        finally:
            os.close(reading)
            os.close(writing)

    def clear(self, index):
        for pipe in self.pipes:
            for fd in pipe:
                os.close(fd)


class AioContexts(Channel):
    """Kernel AIO contexts come from one pool for the whole machine (`aio-max-nr`). One bit: the
    sender takes all of it, and the receiver cannot have one."""

    bits = 1

    def __init__(self, tag):
        super().__init__(tag)
        self.contexts = []

    def send(self, index):
        while True:
            context = ctypes.c_ulong(0)
            check(LIBC.syscall(SYS_IO_SETUP, 4096, ctypes.byref(context)))
            self.contexts.append(context)

    def read(self, index):
        context = ctypes.c_ulong(0)
        if LIBC.syscall(SYS_IO_SETUP, 1, ctypes.byref(context)) == 0:
            check(LIBC.syscall(SYS_IO_DESTROY, context))
            return False
        if ctypes.get_errno() == errno.EAGAIN:
            return True
        return check(-1)

    def clear(self, index):
        for context in self.contexts:
            LIBC.syscall(SYS_IO_DESTROY, context)


class TcpMemory(Channel):
    """The TCP memory in use, as every network namespace's /proc/net/sockstat shows it, is the
    machine's. One bit: the sender leaves 10 loopback connections full of unread data."""

    bits = 1
    THRESHOLD_PAGES = 1000

    def __init__(self, tag):
        super().__init__(tag)
        self.sockets = []
        self.before = None

    @staticmethod
    def pages():
        with open("/proc/net/sockstat") as sockstat:
            return next(int(line.split()[-1]) for line in sockstat if line.startswith("TCP:"))

    def send(self, index):
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen()
        self.sockets.append(server)
        for _ in range(10):
            client = socket.create_connection(server.getsockname())
            self.sockets += [client, server.accept()[0]]
            client.setblocking(False)
            try:
                while True:
                    client.send(bytes(65536))
            except BlockingIOError:
                pass  # its buffers and its peer's are full

    def prepare(self, index):
        self.before = self.pages()

    def read(self, index):
        return self.pages() - self.before > self.THRESHOLD_PAGES

    def clear(self, index):
        for sock in self.sockets:
            sock.close()


class Timespec(ctypes.Structure):
    _fields_ = [("seconds", ctypes.c_long), ("nanoseconds", ctypes.c_long)]


class FutexWake(Channel):
    """Futex words on a page of the Python program (read-only, shared by every sandbox): a word the
    tag picks, then one per bit; a waiter thread per bit reports woken (1), timed out or interrupted
    (0), or refused (the wait returned at once)."""

    first_word = 0

    def __init__(self, tag):
        super().__init__(tag)
        self.outcomes = {}

    def word(self, index):
        """The address of bit `index`'s futex word in this process's mapping of the program."""
        path = os.path.realpath(sys.executable)
        size = os.path.getsize(path)
        with open(path, "rb") as program:
            LIBC.mmap.restype = ctypes.c_void_p
            base = LIBC.mmap(None, size, PROT_READ, MAP_PRIVATE, program.fileno(), 0)
        if base in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap of the Python program failed")
        page = int(self.tag, 16) % (size // 4096 - 1)
        return base + page * 4096 + 4 * (self.first_word + index)

    def futex(self, address, operation, value, timeout=None):
        return check(LIBC.syscall(SYS_FUTEX, ctypes.c_void_p(address), operation, value,
                                  ctypes.byref(timeout) if timeout else None, None, 0))

    def send(self, index):
        self.futex(self.word(index), FUTEX_WAKE, 1)

    def prepare(self, index):
        address = self.word(index)
        expected = ctypes.c_int.from_address(address).value
        started = time.monotonic()

        def wait():
            try:
                self.futex(address, FUTEX_WAIT, expected, Timespec(60, 0))
                self.outcomes[index] = True
            except OSError as error:
                refused_at_once = error.errno == errno.EAGAIN and time.monotonic() - started < 1
                self.outcomes[index] = None if refused_at_once else False

        threading.Thread(target=wait, daemon=True).start()

    def read(self, index):
        outcome = self.outcomes.get(index, False)
        if outcome is None:
            raise OSError(errno.EAGAIN, "the futex wait returned at once")
        return outcome


class FutexExit(FutexWake):
    """As FutexWake, but the wake is the kernel's at a thread's exit: the thread names the word as
    its clear-child-tid address, which the kernel clears (here it cannot: read-only) and wakes."""

    first_word = BITS

    def send(self, index):
        address = self.word(index)
        thread = threading.Thread(target=lambda: check(LIBC.syscall(SYS_SET_TID_ADDRESS, ctypes.c_void_p(address))))
        thread.start()
        thread.join()


class NamedFile(Channel):
    folder = "/dev/shm"

    def path(self, index):
        return Path(self.folder) / f"covert-{self.tag}-{index}"

    def send(self, index):
        self.path(index).write_text("1")

    def read(self, index):
        return self.path(index).exists()

    def clear(self, index):
        self.path(index).unlink(missing_ok=True)


class TmpFile(NamedFile):
    folder = "/tmp"


class HomeFile(NamedFile):
    folder = os.path.expanduser("~")


#: the watches are read first: the lock probes open the watched files
CHANNELS = {"inotify": Inotify, "fanotify": Fanotify, "flock": Flock, "posix-lock": PosixLock, "ofd-lock": OfdLock,
            "keyring": Keyring, "sysv-shm": SysvShm, "posix-mq": PosixMq, "abstract": Abstract, "dev-shm": NamedFile,
            "tmp": TmpFile, "home": HomeFile, "futex-wake": FutexWake, "futex-exit": FutexExit, "aio": AioContexts, "tcp-memory": TcpMemory,
            "pipe-buffers": PipeBuffers}  # last: it takes most of the open-files cap


def host_counters():
    """The content of every file of /proc about the machine rather than this sandbox's processes."""
    seen = {}
    for root, folders, files in os.walk("/proc"):
        folders[:] = [name for name in folders if not name.isdigit() and name not in ("self", "thread-self", "net")]
        for name in files:
            path = os.path.join(root, name)
            if path in ("/proc/kmsg", "/proc/sys/kernel/random/uuid", "/proc/sys/kernel/ns_last_pid"):
                continue  # blocks; new on every read; this PID namespace's own
            try:
                with open(path, "rb") as file:  # in slices: one 1 MiB buffer per file can exhaust an rlimit's address space
                    seen[path] = b"".join(iter(lambda: file.read(1 << 16), b""))[:1 << 20]
            except OSError:
                continue  # not readable by the bot: nothing to learn from it
    return seen


def sysinfo():
    """The sysinfo call's loads, free memory and process count, or None when it is refused."""
    buffer = ctypes.create_string_buffer(128)
    if LIBC.sysinfo(buffer) != 0:
        return None
    uptime, load1, load5, load15, total, free, shared, buffers, swap, free_swap, procs = struct.unpack_from("l3L6LH", buffer)
    return load1, load5, load15, free, shared, buffers, free_swap, procs


def keep_busy(stop):
    """What the sender does to machine-wide counters while it lives: memory, open files, CPU."""
    ballast = bytearray(64 << 20)
    handles = [open("/usr/bin/env", "rb") for _ in range(16)]
    while not stop.is_set():
        sum(range(10_000))
    del ballast, handles


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tag", required=True)
    parser.add_argument("--send")
    parser.add_argument("--leave", action="store_true")
    parser.add_argument("--receive", action="store_true")
    parser.add_argument("--channels", default=",".join(CHANNELS), help="the channels to try, by name")
    args = parser.parse_args()
    chosen = args.channels.split(",")
    channels = {name: kind(args.tag) for name, kind in CHANNELS.items() if name in chosen}  # watches first
    stop = threading.Event()
    if args.send:
        for channel in channels.values():
            for index, bit in enumerate(args.send):
                if bit == "1" and index < channel.bits:
                    refused(lambda: channel.send(index))
        threading.Thread(target=keep_busy, args=(stop,), daemon=True).start()
    else:
        for channel in channels.values():
            for index in range(channel.bits):
                refused(lambda: channel.prepare(index))
        counters, system = host_counters(), sysinfo()
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while (message := read_message(inp)) is not None and message["type"] != "shutdown":
        if message["type"] == "hello":
            write_message(out, {"type": "hello", "protocol": PROTOCOL_VERSION, "name": "covert", "version": "0"})
    stop.set()
    if args.receive:
        time.sleep(0.2)  # let the sender's last events arrive
        report = {}
        for name, channel in channels.items():
            bits = []
            for index in range(channel.bits):
                try:
                    bits.append("1" if channel.read(index) else "0")
                except OSError:
                    bits.append("?")
            report[name] = "".join(bits)
        now = host_counters()
        report["counters"] = ",".join(sorted(path for path in now if counters.get(path) != now[path])) or "none"
        later = sysinfo()
        report["sysinfo"] = "refused" if later is None else "same" if later == system else "changed"
        print("covert " + " ".join(f"{name}={value}" for name, value in report.items()), file=sys.stderr, flush=True)
    elif not args.leave:
        for channel in channels.values():
            for index in range(channel.bits):
                refused(lambda: channel.clear(index))


if __name__ == "__main__":
    main()
