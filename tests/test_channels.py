"""No channel between sandboxes, and no memory across bot processes, outside the game (issue 20).

`tests/zoo/covert.py` tries every kind of kernel state one sandbox might share with another: a
sender encodes 8 bits, a receiver reads them, either while both run (partners at two tables, two
entries of one author) or later (the next rotation's process, the next run). Without a sandbox the
bits come through, which shows the receiver reads what it claims to; under bubblewrap not one bit
may. The organiser here is whoever runs the tests (root on the development machine and in CI);
run by another user, the tests expect what SANDBOX.md says of a non-root organiser.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import sys
import uuid
from pathlib import Path

import pytest

from cardarena.referee import sandbox, views
from cardarena.config import BotSpec, Limits, SandboxSettings
from cardarena.referee.process import BotProcess
from tests.conftest import MAKERS, ROOT, ZOO, bots_have_keyrings_of_their_own, sandbox_init, sandbox_made_by

SECRET = "10110010"
#: channels through shared inodes: alive only while the sender holds them
LIVE_ONLY = ("flock", "posix-lock", "ofd-lock", "inotify", "fanotify", "abstract", "futex-wake", "futex-exit")
#: named objects that outlive their process where nothing scopes them
LASTING = ("keyring", "sysv-shm", "posix-mq", "dev-shm", "tmp")
#: counts the kernel keeps per user: one bit (the secret's first), and only among unprivileged users.
#: Tried only for a root organiser, whose bots each run as a uid of their own under bubblewrap: any
#: other organiser's bots share its uid and so its count, as SANDBOX.md concedes, and what a receiver
#: reads of it then depends on every process of that uid (this run's other test workers too).
PER_USER = ("pipe-buffers",)
PER_USER_TRIED = os.geteuid() == 0
#: pools of the whole machine (one bit each; not tried without a sandbox, where they would be the
#: machine's own, other programs' included)
MACHINE_WIDE = ("aio", "tcp-memory")
CHANNELS = LIVE_ONLY + LASTING + PER_USER + MACHINE_WIDE + ("home",)


def covert(mode: str, tmp_path: Path, name: str, *args: str) -> BotProcess:
    """A covert.py bot process (not started) under `mode`, logging to tmp_path/<name>.log."""
    if mode == "bwrap" and sandbox.bwrap_problem() is not None:
        pytest.skip(f"bubblewrap cannot run here: {sandbox.bwrap_problem()}")
    untried = (() if mode == "bwrap" else MACHINE_WIDE) + (() if PER_USER_TRIED and mode == "bwrap" else PER_USER)
    channels = ",".join(name for name in CHANNELS if name not in untried)
    spec = BotSpec(name=name, command=(sys.executable, "covert.py", *args, "--channels", channels), cwd=str(ZOO),
                   folder=str(ZOO))
    return BotProcess(spec, Limits(sandbox=SandboxSettings(mode=mode), handshake_timeout=60),
                      log_path=tmp_path / f"{name}.log")


def report(tmp_path: Path) -> dict[str, str]:
    line = next(line for line in (tmp_path / "receiver.log").read_text().splitlines() if line.startswith("covert "))
    return dict(re.findall(r"(\S+)=(\S+)", line))


def live(mode: str, tmp_path: Path) -> dict[str, str]:
    """What a receiver reads while a sender runs beside it (watches set before the sender starts)."""
    tag = uuid.uuid4().hex[:8]
    receiver = covert(mode, tmp_path, "receiver", "--receive", "--tag", tag)
    sender = covert(mode, tmp_path, "sender", "--send", SECRET, "--tag", tag)
    try:
        receiver.start()
        sender.start()
        receiver.stop()
    finally:
        receiver.kill()
        sender.stop()  # the sender clears what it made
    return report(tmp_path)


def later(mode: str, tmp_path: Path) -> dict[str, str]:
    """What a receiver reads after a sender has run, leaving everything it made behind."""
    tag = uuid.uuid4().hex[:8]
    try:
        for name, args in (("sender", ("--send", SECRET, "--leave")), ("receiver", ("--receive",))):
            process = covert(mode, tmp_path, name, *args, "--tag", tag)
            try:
                process.start()
            finally:
                process.stop()
    finally:  # a sender that clears: what the first left on the host goes
        cleaner = covert(mode, tmp_path, "cleaner", "--send", SECRET, "--tag", tag)
        try:
            cleaner.start()
        finally:
            cleaner.stop()
    return report(tmp_path)


def skip_untried(channel: str) -> None:
    if channel in PER_USER and not PER_USER_TRIED:
        pytest.skip("a non-root organiser's bots share its uid and so the counts the kernel keeps per user (SANDBOX.md "
                    "concedes the bit), which every process of that uid changes: a reading says nothing")


def without_a_sandbox(channel: str) -> str:
    """What a receiver without bubblewrap reads of SECRET on `channel` (runner/referee/SANDBOX.md
    § Without bubblewrap): all of it, but for the keyring, kept per user namespace, where a non-root
    organiser's bots each get one of their own from unshare."""
    if channel == "keyring" and bots_have_keyrings_of_their_own():
        return "0" * len(SECRET)
    return SECRET


@contextlib.contextmanager
def one_covert_pair_at_a_time(tmp_path_factory):
    """Hold the lock that every pytest-xdist worker of this run takes around a sender and receiver:
    the channels without a sandbox are the machine's (inotify, fanotify and locks on the same
    files), so another worker's sender would be read as bits."""
    with open(tmp_path_factory.getbasetemp().parent / "covert.lock", "a") as lock:  # the workers' common folder
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[tuple[str, str], dict[str, str]]:
    """The receivers' reports by (mode, live or later), each run once for the whole module."""
    cache = {}

    def get(mode: str, when: str, maker: str = MAKERS[0]) -> dict[str, str]:
        if (mode, when, maker) not in cache:
            with sandbox_made_by(maker), one_covert_pair_at_a_time(tmp_path_factory):
                cache[mode, when, maker] = (live if when == "live" else later)(
                    mode, tmp_path_factory.mktemp(f"{mode}-{when}"))
        return cache[mode, when, maker]

    return get


@pytest.mark.parametrize("maker", MAKERS)
@pytest.mark.parametrize("channel", CHANNELS)
def test_no_bit_passes_between_two_live_sandboxes(reports, channel, maker):
    skip_untried(channel)
    assert "1" not in reports("bwrap", "live", maker)[channel]


@pytest.mark.parametrize("channel", LIVE_ONLY + LASTING)
def test_without_a_sandbox_the_bits_come_through(reports, channel):
    assert reports("none", "live")[channel] == without_a_sandbox(channel)


@pytest.mark.parametrize("maker", MAKERS)
@pytest.mark.parametrize("channel", CHANNELS)
def test_nothing_is_left_for_a_later_process(reports, channel, maker):
    skip_untried(channel)
    assert "1" not in reports("bwrap", "later", maker)[channel]


@pytest.mark.parametrize("channel", LASTING)
def test_without_a_sandbox_a_later_process_finds_what_was_left(reports, channel):
    assert reports("none", "later")[channel] == without_a_sandbox(channel)


def test_no_machine_wide_counter_changes_while_another_sandbox_works(reports):
    seen = reports("bwrap", "live")
    assert seen["counters"] == "none"
    assert seen["sysinfo"] == "refused"


def test_without_a_sandbox_machine_wide_counters_change(reports):
    changed = reports("none", "live")["counters"].split(",")
    assert {"/proc/meminfo", "/proc/stat"} <= set(changed)


def test_the_sandboxs_process_1_shows_none_of_the_organisers_folders(maker, tmp_path):
    if sandbox.bwrap_problem() is not None:
        pytest.skip(f"bubblewrap cannot run here: {sandbox.bwrap_problem()}")
    folder = tmp_path / "spy"
    folder.mkdir()
    shutil.copy(ZOO / "spy.py", folder / "spy.py")
    for path in (tmp_path, folder):
        path.chmod(0o755)
    spec = BotSpec(name="spy", command=(sys.executable, "spy.py"), cwd=str(folder), folder=str(folder))
    log = tmp_path / "spy.log"
    process = BotProcess(spec, Limits(sandbox=SandboxSettings(mode="bwrap")), log_path=log)
    try:
        process.start()
    finally:
        process.stop()
    spy = next(line for line in log.read_text().splitlines() if line.startswith("SPY "))
    init = next(line for line in re.findall(r'"processes": \[(.*?)\]', spy)[0].split('", "') if line.lstrip('"').startswith(sandbox_init()))
    assert "--ro-bind" not in init and str(folder) not in init, init
    # the Python installation the bot is shown may lie in the project (a venv there): nothing else may
    for shown in sorted(views.python_folders(), key=len, reverse=True):
        init = init.replace(shown, "PYTHON")
    assert str(ROOT) not in init and "/root/.cargo" not in init, init


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_threads_joins_and_process_shared_locks_still_work(mode, tmp_path):
    """Shared futex waits return at once under the filter: what waited on them polls instead."""
    if mode == "bwrap" and sandbox.bwrap_problem() is not None:
        pytest.skip(f"bubblewrap cannot run here: {sandbox.bwrap_problem()}")
    spec = BotSpec(name="threaded", command=(sys.executable, "threaded.py"), cwd=str(ZOO), folder=str(ZOO))
    log = tmp_path / "threaded.log"
    process = BotProcess(spec, Limits(sandbox=SandboxSettings(mode=mode), handshake_timeout=60), log_path=log)
    try:
        process.start()
    finally:
        process.stop()
    text = log.read_text()
    assert re.search(r"^threaded threads=\S+ pthread_join=\S+ multiprocessing=\S+$", text, re.MULTILINE), text
