"""A bot process's pipes as a `Transport`: spawn it under the sandbox, exchange frames under
deadlines, capture its stderr, and kill it cleanly.

Every wait is bounded: pipes are non-blocking and each read or write polls with the time left
until a deadline, so a bot that stalls, never reads its input, floods its stderr or dies can
never block the referee. The same poll watches the process itself (a pidfd; where the kernel has
none, a waitpid every EXIT_CHECK_SECONDS), so a bot's exit is noticed at once even while a child
of it still holds its pipes. The bot runs in its own process group so that killing it also kills
anything it spawned (a shell wrapper's child, say), and it is always reaped: no zombies.
"""

from __future__ import annotations

import fcntl
import math
import os
import select
import shlex
import signal
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from cardarena.config import BotSpec, Limits
from cardarena.protocol.framing import FrameError, FrameReader, decode_body, text_on_stdout
from cardarena.referee.sandbox import Confinement, SandboxError, prepare, sweep_once, unconfined
from cardarena.referee.transport import NoReply, Transport, TransportError

STDERR_TAIL = 2048  # bytes of a bot's latest stderr kept for fault reports
EXIT_CHECK_SECONDS = 0.05  # without a pidfd, how often a wait checks whether the bot has exited
STDERR_CATCH_UP_SECONDS = 0.5  # a fault's stderr tail waits at most this long for the drain to catch up
SETTLE_SPIN_SECONDS = 200e-6  # `settle` yields the CPU this long, then waits in doubling steps from this long
LOG_CAPPED_NOTE = b"\n[cardarena: stderr log capped here]\n"


class PipeTransport(Transport):
    """A bot process started under the sandbox, spoken to over its stdin/stdout."""

    def __init__(self, spec: BotSpec, limits: Limits, log_path: Path | None = None, log_note: str = ""):
        """`log_path` is the bot's stderr log, shared by all its starts in a run (appended to, capped
        at `limits.stderr_cap` on disk); `log_note` says where this start belongs in its header line."""
        self.spec = spec
        self.limits = limits
        self.log_path = log_path
        self.log_note = log_note
        self._proc: subprocess.Popen | None = None
        self._reader = FrameReader(limits.max_frame)
        self._received = False  # whether the bot has sent a byte yet
        self._stderr_tail = bytearray()
        self._stderr_lock = threading.Lock()
        self._stderr_thread: threading.Thread | None = None
        self._pidfd: int | None = None  # readable once the process has exited; None without pidfd support
        self._poll_exit: select.poll | None = None  # a poll of the pidfd alone (`alive`), while there is one
        self._stdin = self._stdout = -1  # the pipes' file descriptors while the process runs
        self.confinement: Confinement | None = None
        self.frozen = False  # whether its freezer cgroup holds all its processes stopped
        self._helpers_exempt = False  # whether the launch chain's helpers were taken out of that cgroup

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """Asked of each seat's bot before every game: where the process has a pidfd, one poll of it
        (no waitpid under Popen's lock: about half the cost, 0.5 against 1.0 us)."""
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return False
        if self._pidfd is not None:
            return not self._poll_exit.poll(0)
        return proc.poll() is None

    @property
    def started(self) -> bool:
        return self._proc is not None

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def spawn(self) -> None:
        """Start the process with non-blocking pipes and a stderr drain."""
        argv = self.spec.argv()
        if self.spec.confined:
            sweep_once()  # before this referee's first confined bot: what killed referees left behind
        try:
            self.confinement = (prepare(argv, self.spec.cwd, self.spec.folder, self.spec.env, self.spec.pass_env,
                                        self.limits.sandbox) if self.spec.confined
                                else unconfined(argv, self.spec.cwd, self.limits.sandbox))
        except SandboxError as error:
            raise TransportError("start", f"cannot run {shlex.join(argv)!r}: {error}") from None
        log = self._open_log()
        try:
            self._proc = self._popen()
        except OSError as error:
            if log is not None:
                os.close(log)
            self.confinement.release()
            raise TransportError("start", f"cannot run {shlex.join(argv)!r}: {error}") from None
        self.confinement.close_fds()
        self._watch()
        os.set_blocking(self._proc.stderr.fileno(), False)
        self._stderr_stop = os.pipe()  # `kill` writes to it: stop draining once the pipe is empty
        self._stderr_thread = threading.Thread(target=self._drain_stderr, args=(log,), daemon=True)
        self._stderr_thread.start()

    def _open_log(self) -> int | None:
        """The bot's stderr log opened for appending (None without one)."""
        try:
            return None if self.log_path is None else os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                                                              0o644)
        except OSError:
            self.confinement.release()  # the organiser's log folder is missing: leave no cgroup behind
            raise

    def _popen(self) -> subprocess.Popen:
        """The process as the confinement says to start it, in a session of its own."""
        confinement = self.confinement
        return subprocess.Popen(
            confinement.argv,
            cwd=confinement.cwd,
            env=confinement.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            bufsize=0,
            close_fds=True,
            pass_fds=confinement.fds,
            preexec_fn=confinement.preexec,
        )

    def _watch(self) -> None:
        """Make stdin and stdout non-blocking, and set up the polls that wait on them and on the exit."""
        self._stdin, self._stdout = self._proc.stdin.fileno(), self._proc.stdout.fileno()
        os.set_blocking(self._stdin, False)
        os.set_blocking(self._stdout, False)
        self._pidfd = open_pidfd(self._proc.pid)
        self._poll_in = select.poll()
        self._poll_in.register(self._stdout, select.POLLIN)
        self._poll_out = select.poll()
        self._poll_out.register(self._stdin, select.POLLOUT)
        self._watched = [self._stdout]  # what `settle` waits on: output, or the exit
        if self._pidfd is not None:
            self._poll_in.register(self._pidfd, select.POLLIN)
            self._poll_out.register(self._pidfd, select.POLLIN)
            self._watched.append(self._pidfd)
            self._poll_exit = select.poll()
            self._poll_exit.register(self._pidfd, select.POLLIN)

    def freeze(self, frozen: bool) -> None:
        """Through the bot's freezer cgroup, where it has one; writes only when the state changes.
        Before the first freeze (the bot has said hello: its launch chain is complete) the chain's
        waiting helpers leave that cgroup (`Confinement.exempt_helpers`)."""
        if frozen == self.frozen:
            return
        cgroups = None if self.confinement is None else self.confinement.cgroups
        if cgroups is None:
            return
        if frozen and not self._helpers_exempt:
            self._helpers_exempt = True
            self.confinement.exempt_helpers(self._proc.pid)
        if cgroups.freeze(frozen):
            self.frozen = frozen

    def wait_exit(self, timeout: float) -> int | None:
        try:
            return self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """Kill the bot's whole process group, reap it, and close its pipes. Safe to call twice."""
        proc = self._proc
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # the group is already gone
        self.freeze(False)  # a frozen process dies of the SIGKILL only once thawed
        proc.wait()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass  # closing a pipe whose other end died can report the broken pipe; it is closed
        self._stdin = self._stdout = -1  # their numbers may be reused by files opened from now on
        if self._stderr_thread is not None:
            os.write(self._stderr_stop[1], b"!")  # a process that escaped the kill may hold the pipe
            self._stderr_thread.join(timeout=2.0)
            for fd in self._stderr_stop:
                os.close(fd)
            self._stderr_thread = None
        proc.stderr.close()
        self.confinement.release()

    # -- framed I/O ------------------------------------------------------------------------

    def offer(self, data: bytes) -> int:
        try:
            return os.write(self._stdin, data)
        except BlockingIOError:
            return 0
        except OSError:
            raise TransportError("crash", f"the bot closed its input ({self.exit_status()})") from None

    def write(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            view = view[self.offer(view):]
            if not view:
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TransportError(
                    "timeout", f"the bot did not read its input: {len(view)} bytes of a frame could not be sent")
            if self._exited(self._poll_out.poll(self._poll_ms(remaining))):
                raise TransportError(
                    "crash", f"the bot exited ({self.exit_status()}) while another process still held its input")

    def receive(self, deadline: float) -> tuple[dict[str, Any], bytes]:
        exited = False
        looked = False  # whether the pipe was read once before the first wait
        while True:
            try:
                body = self._reader.next_body()
                if body is not None:
                    return decode_body(body), body
            except FrameError as error:
                raise TransportError(error.kind, str(error), error.data) from None
            if not looked:
                looked = True  # on a shared core the answer is usually in already: no poll for it
                if self._read_chunk():
                    continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise NoReply(self._reader.pending(), self._received)
            if exited:
                # What it wrote before exiting still counts; once the pipe is empty, the exit is a crash.
                if not self._read_chunk():
                    raise TransportError(
                        "crash", f"the bot exited ({self.exit_status()}) while another process still held its output",
                        self._reader.pending())
                continue
            ready = self._poll_in.poll(self._poll_ms(remaining))
            if self._exited(ready):
                exited = True
            elif ready:
                self._read_chunk()

    def settle(self, data: bytes, grace: float) -> int:
        """A bot handles its input in order, so once it has read on, whatever it sent in reply to
        what came before (a second answer, say) is in the pipe."""
        stdin = self._stdin
        try:
            written = os.write(stdin, data)
        except OSError:
            return 0  # its input is full or closed: the next request finds out why
        now = time.monotonic()
        spin_until, deadline, wait = now + SETTLE_SPIN_SECONDS, now + grace, SETTLE_SPIN_SECONDS
        while written == len(data) and unread_bytes(stdin) and not self._poll_in.poll(0):
            now = time.monotonic()
            if now >= deadline:
                break
            if now < spin_until:
                os.sched_yield()  # on a shared core, this is what lets the bot run on to its next read
            else:
                select.select(self._watched, (), (), min(wait, deadline - now))
                wait *= 2
        return written

    def unsolicited(self) -> bytes:
        data = bytearray(self._reader.pending())
        if self._proc is None:
            return bytes(data)  # never started (spawn failed): nothing more can have arrived
        if not data and not self._poll_in.poll(0):
            return b""  # the usual answer, from one poll (a read of an empty pipe costs three times that)
        fd = self._stdout
        while len(data) <= self.limits.max_frame:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:  # BlockingIOError above all: the pipe is empty
                break
            if not chunk:
                break
            data += chunk
        return bytes(data)

    def _read_chunk(self) -> bool:
        """Feed the reader what the pipe holds; False when it holds nothing now (crash at end of file)."""
        try:
            chunk = os.read(self._stdout, 1 << 16)
        except BlockingIOError:
            return False
        if not chunk:
            pending = self._reader.pending()
            text = text_on_stdout(pending)
            raise TransportError("crash", f"the bot closed its output ({self.exit_status()})"
                                 + (f"; {text}" if text else ""), pending)
        self._reader.feed(chunk)
        self._received = True
        return True

    def _poll_ms(self, remaining: float) -> int:
        """Milliseconds the next poll may wait: the time left, in slices where no pidfd reports an exit."""
        if self._pidfd is None:
            remaining = min(remaining, EXIT_CHECK_SECONDS)
        return math.ceil(remaining * 1000)

    def _exited(self, ready: list[tuple[int, int]]) -> bool:
        """Whether the process has exited, given what a poll returned (its pidfd, or a waitpid check)."""
        if self._pidfd is None:
            return not ready and self._proc.poll() is not None
        return any(fd == self._pidfd for fd, _ in ready)

    # -- evidence --------------------------------------------------------------------------

    def stderr_tail(self) -> str:
        """The latest stderr, once the drain has taken in what the bot wrote before now (at most
        `STDERR_CATCH_UP_SECONDS` waited): a fault quotes a crashed bot's last words even when the
        drain thread had not run since it wrote them (a busy machine)."""
        deadline = time.monotonic() + STDERR_CATCH_UP_SECONDS
        while True:
            with self._stderr_lock:  # the drain reads and keeps under this lock: nothing is half-taken
                thread = self._stderr_thread
                if thread is None or not thread.is_alive() or not unread_bytes(self._proc.stderr.fileno()) \
                        or time.monotonic() >= deadline:
                    return self._stderr_tail.decode("utf-8", "replace")
            time.sleep(0.001)

    def cap_evidence(self, stderr_tail: str) -> str | None:
        if self.confinement is None:
            return None
        return self.confinement.cap_evidence(self._proc.poll() if self._proc else None, stderr_tail)

    def exit_status(self) -> str:
        """How the process ended ("exit status 3", "killed by signal 9"), waiting briefly for it."""
        try:
            code = self._proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return "still running"
        return f"killed by signal {-code}" if code < 0 else f"exit status {code}"

    def _drain_stderr(self, log: int | None) -> None:
        """Keep the latest stderr tail in memory and append stderr to the bot's log (file
        descriptor `log`) after a header line, while the log's size on disk is under the cap.
        Whole lines are appended where possible: other processes may write to the same log."""
        capped = log is None or not append_capped(log, self._log_header(), self.limits.stderr_cap)
        partial = b""  # the start of a line not yet ended
        try:
            for chunk in self._stderr_chunks():
                if capped:
                    continue
                data = partial + chunk
                end = data.rfind(b"\n") + 1 if len(data) < 1 << 16 else len(data)
                partial = data[end:]
                if end:
                    capped = not append_capped(log, data[:end], self.limits.stderr_cap)
        except (OSError, ValueError):
            pass  # the pipe was closed by kill(): nothing more to drain
        finally:
            if log is not None:
                if partial and not capped:
                    append_capped(log, partial + b"\n", self.limits.stderr_cap)
                os.close(log)

    def _stderr_chunks(self) -> Iterator[bytes]:
        """What the bot writes to stderr, each chunk kept in the tail as it is read, until the end of
        file, or once `kill` has stopped the bot, until the pipe is empty: a process that escaped the
        kill (no cgroup to find it) could hold the pipe open for ever, and the referee would wait for
        it at every stop."""
        fd, stop = self._proc.stderr.fileno(), self._stderr_stop[0]
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.register(stop, select.POLLIN)
        stopping = False
        while True:
            if not stopping:
                stopping = any(ready == stop for ready, _ in poller.poll())
            with self._stderr_lock:
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    chunk = None
                else:
                    self._stderr_tail += chunk
                    del self._stderr_tail[:-STDERR_TAIL]
            if chunk is None:
                if stopping:
                    return
                continue
            if not chunk:
                return
            yield chunk

    def _log_header(self) -> bytes:
        """The line that opens each start's part of the log: who, where, which process, when."""
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        note = f", {self.log_note}" if self.log_note else ""
        return f"[cardarena: {self.spec.name} started{note}, pid {self._proc.pid}, {when}]\n".encode()


def append_capped(log: int, data: bytes, cap: int) -> bool:
    """Append `data` to the log while its size on disk stays within `cap` (the note marks where it
    stops); False once it is full. The size on disk is the count, so the cap holds across restarts
    and processes sharing the file; concurrent writers overshoot it by at most one chunk each."""
    room = cap - os.fstat(log).st_size
    if room <= 0:
        return False
    if len(data) < room:
        os.write(log, data)
        return True
    os.write(log, data[:room] + LOG_CAPPED_NOTE)
    return False


def unread_bytes(fd: int) -> int:
    """How many bytes written to a pipe its reader has not read yet (0 where the system cannot tell)."""
    try:
        return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, bytes(4)), sys.byteorder)
    except OSError:
        return 0


def open_pidfd(pid: int) -> int | None:
    """A file descriptor that polls readable once process `pid` exits; None where the system has none."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return None
    try:
        return pidfd_open(pid)
    except OSError:
        return None  # a kernel older than 5.3, or a sandbox that forbids the call
