"""Shared fixtures: paths to bots and a helper to build bot specs for real subprocesses."""

import contextlib
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest

from cardarena.config import BotSpec, SandboxSettings
from cardarena.referee import sandbox
from cardarena.tournament import commands as tournament_commands

ROOT = Path(__file__).resolve().parent.parent
ZOO = ROOT / "tests" / "zoo"
RANDOM_BOT = ROOT / "sample_bots" / "random" / "bot.py"

# The suite starts many Python processes (the CLI, its hosts, bots). Where the environment sets
# PYTHONDONTWRITEBYTECODE (the development container does), every one of them compiles each
# cardarena module afresh: a sixth of the user CPU of test_cli, test_faults, test_check and
# test_human. They cache it beside the sources instead (git-ignored, and left out of a bot
# folder's identity: runner/manifest.py).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# A suite started in the background by a non-interactive shell (`CI=true bash .ci/run > log &`)
# has SIGINT ignored, and every process it starts inherits that: the tests that press Ctrl-C on a
# run would see it ignored. Ctrl-C gets its usual effect here, and so in every child.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _memory_temp_folder() -> None:
    """Point the suite's temporary files (pytest's folders, and the referee's copies of /etc and the
    SDK, bot scratch folders and logs in every process it starts) at a folder on /dev/shm where that is
    a writable tmpfs, as /tmp is on many systems. On the development machine's disk a folder and a file
    cost 2.5 ms against 72 us there, and a symbolic link 1.8 ms against 16 us (the /etc copy a
    tournament makes holds some 680); test_cli, test_faults, test_check and test_human took 160 s
    instead of 175 s, with half the system time (23 s, not 50). The folder is shared like /tmp (mode
    1777); set CARDARENA_TEST_TMPDIR to choose another."""
    chosen = os.environ.get("CARDARENA_TEST_TMPDIR")
    if chosen is None:
        shm = Path("/dev/shm")
        if not (shm.is_dir() and os.access(shm, os.W_OK | os.X_OK) and _is_tmpfs(shm)):
            return
        chosen = str(shm / "cardarena-tests")
    os.makedirs(chosen, exist_ok=True)
    if os.stat(chosen).st_uid == os.geteuid():
        os.chmod(chosen, 0o1777)
    os.environ["TMPDIR"] = chosen
    tempfile.tempdir = None  # read TMPDIR again


def _is_tmpfs(folder: Path) -> bool:
    """Whether `folder` is a mount point of a tmpfs (from /proc/self/mounts)."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return False
    return any(line.split()[1:3] == [str(folder), "tmpfs"] for line in mounts)


_memory_temp_folder()


def random_bot(name: str = "random", seed: int = 0) -> BotSpec:
    """The sample random bot as a subprocess."""
    return BotSpec(name=name, command=(sys.executable, str(RANDOM_BOT), "--seed", str(seed)))


def zoo_bot(script: str, after: int = 1) -> BotSpec:
    """A misbehaving bot from tests/zoo that plays `after` legal decisions first."""
    return BotSpec(name=script.removesuffix(".py"), command=(sys.executable, script, "--after", str(after)),
                   cwd=str(ZOO), folder=str(ZOO))


def python_bot_folder(parent: Path, name: str, source: str) -> Path:
    """A bot folder `parent/name` holding `source` as bot.py and a bot.toml that runs it, readable
    by the sandbox's unprivileged user (as a bot author's folder is)."""
    bot = parent / name
    bot.mkdir()
    (bot / "bot.py").write_text(source)
    (bot / "bot.toml").write_text(f'name = "{name}"\ncommand = ["python3", "bot.py"]\n')
    for path in (parent, bot, bot / "bot.py", bot / "bot.toml"):
        path.chmod(0o755)
    return bot


def writable_folder(parent: Path) -> Path:
    """A folder under `parent` that a bot may write in: without bubblewrap a root organiser's bots
    run as nobody, who cannot write in pytest's own (mode 0700) folders."""
    folder = parent / "writable"
    folder.mkdir()
    folder.chmod(0o777)
    return folder


def skip_without_bwrap(mode: str) -> None:
    """Skip a test of the bubblewrap sandbox where bubblewrap cannot run."""
    from cardarena.referee.sandbox import bwrap_problem

    if mode == "bwrap" and bwrap_problem() is not None:
        pytest.skip(f"needs bubblewrap: {bwrap_problem()}")


MAKERS = ["own launcher", "bubblewrap"]


@contextlib.contextmanager
def sandbox_made_by(maker: str):
    """Within it, bots' sandboxes are made by `maker` (one of MAKERS): cardarena's own launcher, or
    bubblewrap, which makes them where the launcher cannot be built; skips where `maker` cannot run."""
    from cardarena.referee import launcher

    if maker == "bubblewrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    saved = os.environ.get(launcher.CHOICE)
    os.environ.pop(launcher.CHOICE, None)
    if maker == "bubblewrap":
        os.environ[launcher.CHOICE] = "bwrap"
    launcher._launcher.cache_clear()  # each referee tries the launcher once: this test's referee again
    try:
        if maker != "bubblewrap" and launcher.own_launcher() is None:
            pytest.skip(f"cardarena's own launcher is not used here: {launcher.launcher_problem()}")
        yield
    finally:
        os.environ.pop(launcher.CHOICE, None)
        if saved is not None:
            os.environ[launcher.CHOICE] = saved
        launcher._launcher.cache_clear()


@pytest.fixture(params=MAKERS)
def maker(request):
    """Each test that takes it runs with each program that makes sandboxes (`sandbox_made_by`): both
    must keep every promise of SANDBOX.md."""
    with sandbox_made_by(request.param):
        yield request.param


def sandbox_init() -> str:
    """How pid 1 of a bot's sandbox reads in a process list: cardarena's own launcher names itself
    (its path would tell where the organiser keeps it), bubblewrap shows its path."""
    from cardarena.referee.launcher import NAME, own_launcher

    return NAME if own_launcher() else str(shutil.which("bwrap"))


def zoo_script(parent: Path, script: str) -> Path:
    """A copy of a zoo script (with the `zoo` helper it imports) in a folder of its own under `parent`,
    readable by others: two NAME=CMD bots in one folder would see each other's files, which run refuses."""
    folder = parent / script.removesuffix(".py")
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    for name in (script, "zoo.py"):
        shutil.copy(ZOO / name, folder / name)
    return folder / script


@pytest.fixture
def make_random_bot():
    return random_bot


#: the most pytest-xdist workers `-n auto` starts (pyproject.toml's addopts): past this, more tests at
#: once mostly make the timed ones (deadlines of 1 s, CPU shares under the freezer) share their cores
MOST_WORKERS = 4


def pytest_xdist_auto_num_workers(config) -> int:
    """One worker per core this process may run on, at most MOST_WORKERS: on the two-core machines
    the suite is written on, 380 s against 650 s in one process, every test passing."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()  # macOS has no affinity
    return max(1, min(MOST_WORKERS, cores or 1))


@pytest.fixture
def refused_before_any_bot(monkeypatch):
    """A machine whose sandbox warns (no freezer cgroup: any non-root organiser's), on which a
    refused run must still be the refusal's one line, given before any bot starts."""
    monkeypatch.setattr(sandbox, "freezes_bots", lambda confined: False)
    assert sandbox.sandbox_warnings(SandboxSettings())

    def no_start(*args, **kwargs):
        raise AssertionError("a bot was started before the results file was refused")
    monkeypatch.setattr(tournament_commands, "start_bots", no_start)


def bots_have_keyrings_of_their_own() -> bool:
    """Whether bots without bubblewrap each get a kernel keyring of their own here: the keyring is kept
    per user namespace, and a non-root organiser's get one each from unshare (runner/referee/SANDBOX.md
    § Without bubblewrap); a root organiser's all run as nobody, who has one."""
    return os.geteuid() != 0 and sandbox.isolation_problem() is None


def warnings_beyond_the_machines(stderr: str) -> list[str]:
    """The lines of a command's stderr that warn of anything but what `sandbox_warnings` says of this
    machine (a non-root organiser, who gets no freezer cgroup, is always warned of that)."""
    machine = set(sandbox.sandbox_warnings(SandboxSettings()))
    return [line for line in stderr.splitlines() if "warn" in line.lower() and line not in machine]
