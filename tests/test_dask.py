"""Tournaments on a real Dask cluster on 127.0.0.1: the same games as a local run, bots shipped to
workers that do not share their folders, and a worker killed mid-run costing nothing."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import pytest

from cardarena.config import BotSpec, Limits
from cardarena.tournament.execution.events import FinishedGame
from cardarena.tournament.planning.schedule import GameSettings, schedule
from tests.conftest import sandbox_init, warnings_beyond_the_machines
from tests.ports import free_port
from tests.test_sandbox import spy_folder
from tests.test_tournament import ROOT, cardarena, stored_games

pytest.importorskip("distributed", reason="Dask is not installed (pip install 'cardarena[dask]'; .ci/run does)")
pytestmark = pytest.mark.dask

RANDOM_BOT = ROOT / "sample_bots" / "random" / "bot.py"
START_SECONDS = 30
STOP_SECONDS = 10  # for a cluster's processes to exit once asked to
WORKER_ENVIRONMENT = {"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}  # as DASK.md's worker command sets it
DEALS, GAMES = 1, 18  # per table; in all (3 Casino tables of 2 games, 3 Knock Rummy tables of 4): six portions
#: a worker of a test's own cluster, when the test is not about the nanny: one process to start, not two
NO_NANNY = ("--no-nanny",)


@dataclass
class Cluster:
    """A `dask scheduler` and its `dask worker`s, each worker with a bot cache of its own (as on
    machines that share no files)."""

    address: str
    scheduler: subprocess.Popen
    workers: list[subprocess.Popen]
    caches: list[Path]
    tmp: Path  # the workers' TMPDIR: where they claim cores (below) and keep their portions' logs

    def kill_worker(self, index: int) -> None:
        """Kill a worker (its nanny, worker process and bots) at once, as a machine that is lost."""
        os.killpg(self.workers[index].pid, signal.SIGKILL)
        self.workers[index].wait()

    def stop(self) -> None:
        """Stop every process of the cluster as an operator would (SIGTERM: a nanny's resource tracker,
        which ignores it, then unlinks the semaphores the nanny made in /dev/shm), killing what is
        left after STOP_SECONDS."""
        running = [process for process in [*self.workers, self.scheduler] if process.poll() is None]
        for process in running:
            os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        for process in running:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # what of its group is still there
            process.wait()


def _environment(tmp: Path) -> dict[str, str]:
    """The environment cluster processes start with: this one, with this tree importable, and a
    TMPDIR of the cluster's own. A cluster stands for one machine: its workers claim that machine's
    cores through lock files in TMPDIR, and the clusters of other test files, or of this module on
    another pytest-xdist worker, running meanwhile would otherwise hold them (a worker that finds
    every core claimed runs its bots unpinned, as DASK.md says)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(":"),
            "TMPDIR": str(tmp)}


def start_cluster(folder: Path, workers: int = 2, worker_options: tuple[str, ...] = (), wait: bool = True) -> Cluster:
    """A scheduler on a free port of 127.0.0.1 (its HTTP server too, so clusters started at once do
    not contend for port 8787) and `workers` one-thread workers, started as runner/tournament/DASK.md says
    at the same time as the scheduler (they keep trying to reach it while it starts); waits until
    the scheduler listens and, when `wait`, until every worker has joined (a `run` waits for a first
    worker itself). What was started is stopped again if the cluster cannot start."""
    tmp = folder / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    scheduler_file = folder / "scheduler.json"
    address = f"tcp://127.0.0.1:{free_port()}"
    with open(folder / "scheduler.log", "w") as log:
        scheduler = subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1",
                                      "--port", address.rsplit(":", 1)[1], "--no-dashboard",
                                      "--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(scheduler_file)],
                                     env=_environment(tmp), start_new_session=True, stdout=subprocess.DEVNULL, stderr=log)
    cluster = Cluster(address, scheduler, [], [], tmp)
    try:
        for _ in range(workers):
            add_worker(cluster, folder, worker_options)
        deadline = time.monotonic() + START_SECONDS
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # written once the scheduler listens
        assert scheduler_file.exists(), (folder / "scheduler.log").read_text()
        if wait:
            wait_for_workers(cluster)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def wait_for_workers(cluster: Cluster) -> None:
    """Wait until every worker started for `cluster` has joined it."""
    if cluster.workers:
        from distributed import Client
        with Client(cluster.address, timeout=START_SECONDS) as client:
            client.wait_for_workers(len(cluster.workers), timeout=START_SECONDS)


def add_worker(cluster: Cluster, folder: Path, worker_options: tuple[str, ...] = ()) -> None:
    """Start one more one-thread worker for `cluster`, with a bot cache of its own (not waited for)."""
    index = len(cluster.workers)
    cluster.caches.append(folder / f"cache-{index}")
    with open(folder / f"worker-{index}.log", "w") as log:
        cluster.workers.append(subprocess.Popen(
            [sys.executable, "-m", "dask", "worker", cluster.address, "--nworkers", "1", "--nthreads", "1",
             "--host", "127.0.0.1", "--memory-limit", "0", "--no-dashboard", "--name", f"w{index}",
             "--local-directory", str(folder / f"work-{index}"), *worker_options],
            env={**_environment(cluster.tmp), **WORKER_ENVIRONMENT, "CARDARENA_BOT_CACHE": str(cluster.caches[-1])},
            start_new_session=True, stdout=subprocess.DEVNULL, stderr=log))


@contextlib.contextmanager
def own_cluster(folder: Path, workers: int = 2, worker_options: tuple[str, ...] = (), wait: bool = True
                ) -> Iterator[Cluster]:
    """A cluster of the test's own (one it may break, or start differently), stopped at the end."""
    cluster = start_cluster(folder, workers, worker_options, wait)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, request):
    """The module's cluster; its workers start while the local run (which every test file run needs)
    plays, and have all joined before any test uses them."""
    cluster = start_cluster(tmp_path_factory.mktemp("cluster"), wait=False)
    try:
        request.getfixturevalue("local_run")
        wait_for_workers(cluster)
        yield cluster
    finally:
        cluster.stop()


def bot_folders(folder: Path, names: tuple[str, ...] = ("a", "b", "c"), script: str | None = None) -> list[str]:
    """Bot folders of the random bot (seeded per bot) that only this test's folder holds."""
    folders = []
    for seed, name in enumerate(names, 1):
        bot = folder / name
        bot.mkdir(parents=True)
        (bot / "bot.py").write_text(script or RANDOM_BOT.read_text())
        (bot / "bot.toml").write_text(f'name = "{name}"\ncommand = ["python", "bot.py", "--seed", "{seed}"]\n')
        folders.append(str(bot))
    return folders


def run_args(out: Path, bots: list[str], deals: int, *extra: str, games: tuple[str, ...] = ("casino", "knock-rummy")
             ) -> list[str]:
    """A small tournament at Casino and Knock Rummy (or `games`), dealt from a fixed seed so two files
    compare."""
    args = ["run", *(f"--game={game}" for game in games), "--deals", str(deals), "--seed", "42",
            "--deal-seed", "5", "--timeout", "10", "--bootstrap", "20", "--out", str(out)]
    for bot in bots:
        args += ["--bot", bot]
    return args + list(extra)


def casino_games(path: Path) -> list[tuple]:
    """The stored Casino games of a results file: a run of Casino alone plays the same ones."""
    return [game for game in stored_games(path) if game[0].startswith("casino/")]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> tuple[list[str], Path]:
    """The bots, and the same tournament played by the local executor with two workers."""
    folder = tmp_path_factory.mktemp("local")
    bots = bot_folders(folder / "bots")
    out = folder / "local.sqlite"
    result = cardarena(*run_args(out, bots, DEALS, "--jobs", "2"))
    assert result.returncode == 0, result.stderr
    return bots, out


def test_batched_games_reach_the_organiser_once_each_and_the_last_partial_batch_with_the_result():
    """Batches sent as their flushes fall due, the last one still waiting when the task ends (its
    flush, coming after, sends nothing), then the task's result and a replay's: every game passes
    once, in order."""
    from cardarena.tournament.execution.dask_executor import _Batches, _new_items
    from cardarena.tournament.execution.events import FinishedGame
    sent, due = [], []
    batches = _Batches("attempt-1", sent.append, lambda delay, flush: due.append(flush))
    games = [FinishedGame("m", f"game-{number}", None) for number in range(7)]
    pickled = [pickle.dumps(game) for game in games]
    for number, game in enumerate(pickled):
        batches.add(game)
        if number in (2, 5):
            due.pop()()
    batches.close()
    due.pop()()
    assert not due and [message["first"] for message in sent] == [0, 3]
    seen: set = set()
    passed = [game for message in sent for game in _new_items(seen, message["attempt"], message["first"], message["items"])]
    assert passed == games[:6]
    assert list(_new_items(seen, "attempt-1", 0, pickled)) == games[6:]  # the task's result
    assert list(_new_items(seen, "attempt-2", 0, pickled)) == []  # the portion played again elsewhere


def test_referees_on_a_worker_run_without_what_the_nanny_set_for_its_worker_alone(monkeypatch):
    """A portion host runs with the worker's environment minus the nanny's tuning (a fixed malloc
    trim threshold costs a referee 15% more CPU), and keeps what the user set."""
    from cardarena.tournament.execution.dask_executor import PortionHost, host_environment
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")  # as a Dask nanny sets it
    monkeypatch.setenv("OMP_NUM_THREADS", "4")  # the user's own choice, not the nanny's
    host = PortionHost(host_environment())
    try:
        environ = Path(f"/proc/{host.process.pid}/environ")
        deadline = time.monotonic() + 10
        while not environ.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)  # Popen returns at the exec's close-on-exec, a moment before the kernel sets this
        environment = dict(entry.split(b"=", 1) for entry in environ.read_bytes().split(b"\0") if entry)
    finally:
        host.close()
    assert b"MALLOC_TRIM_THRESHOLD_" not in environment and environment[b"OMP_NUM_THREADS"] == b"4"
    assert os.environ["MALLOC_TRIM_THRESHOLD_"] == "65536"  # the worker's own is left alone


def test_a_tournament_on_a_dask_cluster_equals_a_local_run(cluster, local_run, tmp_path):
    bots, local = local_run
    out = tmp_path / "dask.sqlite"
    result = cardarena(*run_args(out, bots, DEALS, "--scheduler", cluster.address))
    assert result.returncode == 0, result.stderr
    games = stored_games(out)
    assert games == stored_games(local) and len(games) == GAMES
    for cache in cluster.caches:  # each worker unpacked the bots it needed into its own cache
        unpacked = [folder for folder in cache.iterdir() if not folder.name.startswith(".")]
        assert unpacked and all((folder / "bot.toml").is_file() for folder in unpacked)
    for name in ("a", "b", "c"):  # the bots' stderr came back to the organiser's one log per bot
        log = (out.with_suffix(".logs") / f"{name}.stderr.log").read_text()
        assert f"[cardarena: {name} started" in log
    assert not warnings_beyond_the_machines(result.stderr), result.stderr
    from distributed import Client
    with Client(cluster.address, timeout=START_SECONDS) as client:  # the scheduler let go of the games it passed on
        kept = {topic: events for topic, events in client.get_events().items() if topic.startswith("cardarena-")}
    assert not any(kept.values())  # (a topic without events is not listed at all)


def test_a_scheduler_that_will_not_let_go_of_a_runs_games_is_a_warning(cluster, tmp_path):
    from cardarena.tournament.execution.dask_executor import DaskExecutor
    executor = DaskExecutor(cluster.address)
    try:
        def refuse(*args, **kwargs):
            raise PermissionError("pickled functions are turned off here")
        executor.client.run_on_scheduler = refuse
        bots = {name: BotSpec.parse(f"{name}={sys.executable} {RANDOM_BOT}") for name in ("a", "b")}
        plans = schedule({name: ("casino",) for name in bots}, [GameSettings("casino", players=2, deals=1)], seed=1,
                         deal_key="warning-test")
        items = list(executor.run(plans, bots, Limits(decision_timeout=5.0)))
    finally:
        executor.close()
    assert sum(isinstance(item, FinishedGame) for item in items) == 2
    assert executor.warnings == [
        f"the Dask scheduler at {cluster.address} keeps this run's games in its event log (its last 1,000 batches, "
        "until it restarts): could not clear them: PermissionError: pickled functions are turned off here"]


def run_until(out: Path, bots: list[str], address: str, games: int = 1,
              also: Callable[[], object] = lambda: True) -> tuple[subprocess.Popen, int]:
    """`run` on the cluster at `address`, started in the background and left running once `games`
    games are stored in `out` and `also()` holds (or it ended, or a minute passed): the process and
    the games stored. Waiting for what was seen, not for a long run, keeps a test's run short."""
    runner = subprocess.Popen([sys.executable, "-m", "cardarena.cli", *run_args(out, bots, DEALS, "--scheduler", address)],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline, recorded = time.monotonic() + 60, 0
    while not (recorded >= games and also()) and time.monotonic() < deadline and runner.poll() is None:
        time.sleep(0.05)
        if not out.exists():
            continue
        try:
            with sqlite3.connect(f"file:{out}?mode=ro", uri=True) as db:
                recorded = db.execute("SELECT count(*) FROM games").fetchone()[0]
        except sqlite3.OperationalError:
            recorded = 0  # not made yet
    return runner, recorded


def children(parent: int) -> list[int]:
    """The pids of a process's children."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1] == str(parent):
                found.append(int(entry))
        except (OSError, IndexError):
            continue  # it exited meanwhile
    return found


def test_a_worker_killed_mid_run_costs_nothing(local_run, tmp_path):
    bots, local = local_run
    out = tmp_path / "dask.sqlite"
    with own_cluster(tmp_path / "cluster") as own:  # workers with their nannies, as DASK.md starts them
        # a third of the games in (fewer left for the one worker that remains), the doomed worker mid-portion
        runner, recorded = run_until(out, bots, own.address, GAMES // 3, also=lambda: bots_on_workers(own.caches[1:]))
        playing = bots_on_workers(own.caches[1:])  # the worker is in mid-portion: its bots are running
        worker = children(own.workers[1].pid)  # the nanny's worker process (and its resource tracker)
        own.kill_worker(1)
        left = [path for pid in worker for path in own.tmp.glob(f"cardarena-logs-{pid}-*")]
        _, errors = runner.communicate(timeout=120)
    assert runner.returncode == 0 and "Traceback" not in errors and " - ERROR - " not in errors, errors
    assert playing and GAMES // 3 <= recorded < GAMES, "the worker was not killed mid-run"
    assert stored_games(out) == stored_games(local)
    # the dead worker's portion logs, when it was in mid-portion, went with the next portion played here
    assert not any(path.exists() for path in left)


def test_a_scheduler_lost_mid_run_is_one_line_keeping_the_games_and_resume_finishes_elsewhere(cluster, local_run,
                                                                                              tmp_path):
    bots, local = local_run
    out = tmp_path / "dask.sqlite"
    with own_cluster(tmp_path / "doomed", worker_options=NO_NANNY) as doomed:
        runner, _ = run_until(out, bots, doomed.address)
        os.killpg(doomed.scheduler.pid, signal.SIGKILL)
        _, errors = runner.communicate(timeout=120)
    saved = len(stored_games(out))
    assert runner.returncode == 1 and "Traceback" not in errors and " - ERROR - " not in errors, errors
    last = errors.strip().splitlines()[-1]
    assert re.fullmatch(rf"Error: portion \S+: the Dask scheduler at {re.escape(doomed.address)} (dropped it \(\w+\)|"
                        rf"went away \([^)]*\)); is the scheduler still running\? \({saved} of {GAMES} games saved in "
                        rf"{re.escape(str(out))}; --resume finishes the run\)", last), last
    assert 1 <= saved < GAMES
    result = cardarena(*run_args(out, bots, DEALS, "--scheduler", cluster.address, "--resume"))  # elsewhere
    assert result.returncode == 0, result.stderr
    assert stored_games(out) == stored_games(local)


def test_a_cluster_that_every_worker_left_is_an_error_not_a_wait_for_ever(tmp_path, monkeypatch):
    """Dask keeps tasks waiting until a worker joins; a run does that for WORKER_WAIT_SECONDS, as
    for a cluster's first worker, then ends with the command that starts workers (--resume goes on)."""
    from cardarena.tournament.execution import dask_executor
    monkeypatch.setattr(dask_executor, "WORKER_WAIT_SECONDS", 2.0)
    bots = {name: BotSpec.parse(f"{name}={sys.executable} {RANDOM_BOT}") for name in ("a", "b")}
    plans = schedule({name: ("casino",) for name in bots}, [GameSettings("casino", players=2, deals=30)], seed=1,
                     deal_key="deserted-test")
    with own_cluster(tmp_path / "deserted", worker_options=NO_NANNY) as deserted:
        executor = dask_executor.DaskExecutor(deserted.address)
        try:
            stream = executor.run(plans, bots, Limits(decision_timeout=5.0))
            next(item for item in stream if isinstance(item, FinishedGame))
            deserted.kill_worker(0)
            deserted.kill_worker(1)
            left = time.monotonic()
            with pytest.raises(dask_executor.ClusterError) as raised:
                for _ in stream:
                    pass
        finally:
            executor.close()
    assert 2 <= time.monotonic() - left < 30
    assert str(raised.value) == (f"every worker of the Dask cluster at {deserted.address} has left and none joined "
                                 f"within 2 s: start some with DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False dask "
                                 f"worker {deserted.address} --nworkers N --nthreads 1 --memory-limit 0")


def test_workers_that_cannot_run_bubblewrap_are_named_before_the_run(tmp_path):
    """As the organiser checks its own machine: under auto (the default) a warning per such worker,
    under --sandbox bwrap a one-line refusal before any results file."""
    stand_in = tmp_path / "no_bwrap.py"  # a worker preload: the worker's machine, seen as one without bubblewrap
    stand_in.write_text("from cardarena.referee import sandbox\n"
                        "sandbox.bwrap_problem = lambda: 'bubblewrap is not installed (a stand-in)'\n")
    bots = bot_folders(tmp_path / "bots", ("a", "b"))
    options = ("--preload", str(stand_in), *NO_NANNY)
    with own_cluster(tmp_path / "cluster", workers=1, worker_options=options) as lacking:
        [worker] = worker_addresses(lacking.address)
        args = ["run", "--game", "casino", "--deals", "1", "--deal-seed", "5", "--bootstrap", "0",
                "--bot", bots[0], "--bot", bots[1], "--scheduler", lacking.address]
        warned = cardarena(*args, "--out", str(tmp_path / "auto.sqlite"))
        refused = cardarena(*args, "--out", str(tmp_path / "bwrap.sqlite"), "--sandbox", "bwrap")
    assert warned.returncode == 0, warned.stderr
    assert (f"warning: Dask worker {worker}: bubblewrap is not installed (a stand-in); its bots run without a "
            "sandbox (clean environment and caps only); --sandbox none silences this\n") in warned.stderr
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines()[-1] == (
        f"Error: --sandbox bwrap: Dask worker {worker}: bubblewrap is not installed (a stand-in)")
    assert not (tmp_path / "bwrap.sqlite").exists()


def test_a_worker_without_bubblewrap_that_joins_mid_run_is_named_when_the_run_ends(local_run, tmp_path):
    stand_in = tmp_path / "no_bwrap.py"
    stand_in.write_text("from cardarena.referee import sandbox\n"
                        "sandbox.bwrap_problem = lambda: 'bubblewrap is not installed (a stand-in)'\n")
    bots, _ = local_run
    out = tmp_path / "dask.sqlite"
    with own_cluster(tmp_path / "cluster", workers=1, worker_options=NO_NANNY, wait=False) as growing:
        # past the preflight (a game is stored), with five portions left for the late worker to play some of
        runner, _ = run_until(out, bots, growing.address)
        add_worker(growing, tmp_path / "cluster", ("--preload", str(stand_in), *NO_NANNY))
        _, errors = runner.communicate(timeout=300)
    assert runner.returncode == 0, errors
    late = re.findall(r"^warning: Dask worker (\S+): bubblewrap is not installed \(a stand-in\); its bots ran without a "
                      r"sandbox \(clean environment and caps only\); --sandbox none silences this$", errors, re.MULTILINE)
    assert len(late) == 1, errors  # named once, however many portions it played
    assert "its bots run without" not in errors  # the first worker could run bubblewrap


def spy_reports(spy: Path, opponent: str, address: str, out: Path, *options: str) -> list[dict]:
    """What the spy bot reported of each of its starts in a small run against `opponent` on the cluster."""
    result = cardarena("run", "--game", "casino", "--deals", "1", "--deal-seed", "5", "--bootstrap", "0",
                       "--out", str(out), "--bot", str(spy), "--bot", opponent, "--scheduler", address, *options)
    assert result.returncode == 0, result.stderr
    log = (out.with_suffix(".logs") / "spy.stderr.log").read_text()
    return [json.loads(line[4:]) for line in log.splitlines() if line.startswith("SPY ")]


def test_a_run_without_pinning_after_a_pinned_one_has_its_bots_on_every_core(tmp_path):
    """A worker's task thread pinned by one run is unpinned for a --no-pin-cores run (and its host
    started afresh on every core)."""
    spy = spy_folder(tmp_path)
    opponent = bot_folders(tmp_path)[0]
    with own_cluster(tmp_path / "cluster", workers=1, worker_options=NO_NANNY, wait=False) as single:
        pinned = spy_reports(spy, opponent, single.address, tmp_path / "pinned.sqlite")
        unpinned = spy_reports(spy, opponent, single.address, tmp_path / "unpinned.sqlite", "--no-pin-cores")
    every = sorted(os.sched_getaffinity(0))
    if len(every) < 2:
        pytest.skip("one core: pinned and unpinned look alike")
    assert any(len(report["cores"]) == 1 for report in pinned)  # the games on the worker
    assert all(report["cores"] == every for report in unpinned), [report["cores"] for report in unpinned]


def worker_addresses(address: str) -> list[str]:
    """The addresses of the workers of the cluster at `address`."""
    from distributed import Client
    with Client(address, timeout=START_SECONDS) as client:
        return sorted(client.nthreads())


def test_a_bot_that_cannot_start_on_a_worker_is_a_fault_naming_the_worker(cluster, tmp_path):
    # .git stays home (bots are shipped without it): it stands for what a worker machine lacks
    refuses = "import os, sys\nif not os.path.exists('.git/HEAD'):\n    sys.exit('no toolchain on this machine')\n"
    bots = bot_folders(tmp_path / "bots", ("a",)) + bot_folders(tmp_path / "more", ("picky",), refuses +
                                                               RANDOM_BOT.read_text())
    (tmp_path / "more" / "picky" / ".git").mkdir()
    (tmp_path / "more" / "picky" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    out = tmp_path / "dask.sqlite"
    result = cardarena("run", "--game", "casino", "--deals", "1", "--deal-seed", "5", "--bootstrap", "0",
                       "--out", str(out), "--bot", bots[0], "--bot", bots[1], "--scheduler", cluster.address)
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(out) as db:
        faults = [fault for (text,) in db.execute("SELECT faults FROM games") for fault in json.loads(text)]
    assert faults and {fault["bot"] for fault in faults} == {"picky"}
    assert all("on Dask worker tcp://127.0.0.1:" in fault["detail"] for fault in faults)
    assert all("no toolchain on this machine" in fault["stderr_tail"] for fault in faults)


def test_a_league_files_scheduler_plays_there_as_the_option_does(cluster, local_run, tmp_path):
    bots, local = local_run
    league = tmp_path / "league.toml"
    league.write_text(f"name = 'on-dask'\nseed = 42\ndeal_seed = 5\nbots = {json.dumps(bots)}\n"
                      f"games = ['casino']\ndeals = {DEALS}\nscheduler = '{cluster.address}'\n"
                      "[limits]\ndecision_timeout = 10.0\n")
    out = tmp_path / "league.sqlite"
    result = cardarena("run", str(league), "--bootstrap", "20", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert f"playing on the Dask cluster at {cluster.address} (2 worker threads)\n" in result.stderr
    assert stored_games(out) == casino_games(local) and casino_games(local)


def test_executor_dask_without_an_address_starts_a_local_cluster(local_run, tmp_path):
    bots, local = local_run
    out = tmp_path / "demo.sqlite"
    with socket.socket() as dashboard:  # Dask's default HTTP port taken (as by another cluster): no matter
        try:
            dashboard.bind(("127.0.0.1", 8787))
            dashboard.listen()
        except OSError:
            pass  # taken already
        result = cardarena(*run_args(out, bots, DEALS, "--executor", "dask", "--jobs", "2", games=("casino",)))
    assert result.returncode == 0, result.stderr
    assert not warnings_beyond_the_machines(result.stderr), result.stderr
    assert re.search(r"^playing on a local Dask cluster at tcp://127\.0\.0\.1:\d+ \(2 worker threads\)$", result.stderr,
                     re.MULTILINE), result.stderr
    assert stored_games(out) == casino_games(local) and casino_games(local)


def test_an_unreachable_scheduler_is_one_line_before_any_results_file(tmp_path):
    out = tmp_path / "never.sqlite"
    result = cardarena(*run_args(out, bot_folders(tmp_path), 1, "--scheduler", "tcp://127.0.0.1:9"))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("Error: cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert "Traceback" not in result.stderr and not out.exists()


@pytest.mark.parametrize("args, message", [
    (["--executor", "local", "--scheduler", "tcp://127.0.0.1:9"], "choose one"),
    (["--scheduler", "tcp://127.0.0.1:9", "--jobs", "2"], "--jobs sets the workers of a local run"),
    (["--scheduler", "127.0.0.1"], "scheduler must be a Dask scheduler address"),
])
def test_contradictory_executor_options_are_one_line_with_status_2(tmp_path, args, message):
    result = cardarena(*run_args(tmp_path / "never.sqlite", bot_folders(tmp_path), 1, *args))
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_a_bot_that_kills_its_referee_on_a_worker_costs_a_replay_not_the_worker(tmp_path, monkeypatch):
    """On workers whose bots run beside their referee (--sandbox none where unshare cannot isolate
    them, simulated by tests/unisolated; under bubblewrap or unshare the parent is out of reach)."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "tests" / "unisolated"))  # the cluster's processes take it
    killer = f"o={sys.executable} {ROOT / 'tests' / 'zoo' / 'kills_parent_once.py'} --marker {tmp_path / 'marker'}"
    out = tmp_path / "dask.sqlite"
    with own_cluster(tmp_path / "cluster", workers=1, worker_options=NO_NANNY, wait=False) as unisolated:
        result = cardarena("run", "--game", "casino", "--deals", "2", "--deal-seed", "5", "--bootstrap", "0",
                           "--timeout", "2", "--out", str(out), "--bot", killer, "--bot", bot_folders(tmp_path)[0],
                           "--scheduler", unisolated.address, "--sandbox", "none")
        assert result.returncode == 0, result.stderr
        assert result.stderr.count("killed by signal 9 (SIGKILL) while it waited on o") == 1
        assert len(stored_games(out)) == 4 and all(worker.poll() is None for worker in unisolated.workers)


def test_a_scheduler_without_workers_is_an_error_that_says_how_to_start_them(tmp_path, monkeypatch):
    from cardarena.tournament.execution import dask_executor
    monkeypatch.setattr(dask_executor, "WORKER_WAIT_SECONDS", 0.5)
    with own_cluster(tmp_path / "cluster", workers=0) as lonely:
        executor = dask_executor.DaskExecutor(lonely.address)
        try:
            with pytest.raises(dask_executor.ClusterError) as caught:
                executor.workers()
        finally:
            executor.close()
    assert str(caught.value) == (
        f"the Dask scheduler at {lonely.address} has no worker (waited 0.5 s): start some with "
        f"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False dask worker {lonely.address} --nworkers N --nthreads 1 "
        "--memory-limit 0")


def bots_on_workers(caches: list[Path]) -> list[str]:
    """Processes whose working folder is in a worker's bot cache: the shipped bots running there."""
    running = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            folder = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if any(folder.startswith(str(cache)) for cache in caches):
            running.append(folder)
    return running


def test_ctrl_c_keeps_what_finished_stops_the_workers_bots_and_resume_finishes_as_locally(cluster, local_run, tmp_path):
    bots, local = local_run
    out = tmp_path / "dask.sqlite"
    runner, _ = run_until(out, bots, cluster.address)
    seen = time.monotonic() + 10
    while not bots_on_workers(cluster.caches) and time.monotonic() < seen:
        time.sleep(0.01)  # between two rotations a table has no bot for a moment
    assert bots_on_workers(cluster.caches), "no shipped bot was found running: this test could not see them stop"
    # The workers (their whole process groups) are stopped while Ctrl-C lands: on a free machine the
    # 18 games take about 2 s, and the run must not finish them between the look above and the signal.
    for worker in cluster.workers:
        os.killpg(worker.pid, signal.SIGSTOP)
    try:
        runner.send_signal(signal.SIGINT)
        _, errors = runner.communicate(timeout=60)
    finally:
        for worker in cluster.workers:
            os.killpg(worker.pid, signal.SIGCONT)
    assert runner.returncode == 130, errors
    saved = len(stored_games(out))
    assert f"interrupted: {saved} of {GAMES} games saved in {out}" in errors and 1 <= saved < GAMES
    assert "Traceback" not in errors

    deadline = time.monotonic() + 30
    while bots_on_workers(cluster.caches) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not bots_on_workers(cluster.caches), "the cancelled portions' bots were left running on the workers"
    result = cardarena(*run_args(out, bots, DEALS, "--scheduler", cluster.address, "--resume"))
    assert result.returncode == 0, result.stderr
    assert f"({saved} already played)" in result.stderr
    assert stored_games(out) == stored_games(local)


def test_shipped_bots_run_sandboxed_and_pinned_on_the_workers(cluster, tmp_path):
    from cardarena.referee.sandbox import BOT_UIDS, bwrap_problem
    if bwrap_problem() is not None:
        pytest.skip(f"bubblewrap cannot run here: {bwrap_problem()}")
    spy = spy_folder(tmp_path)
    out = tmp_path / "dask.sqlite"
    probes = [f"--probe={path}" for path in (out, ROOT / "runner" / "cli.py", ROOT / "tests" / "test_dask.py")]
    (spy / "bot.toml").write_text(f'name = "spy"\ncommand = {json.dumps(["python", "spy.py", *probes])}\n')
    reports = spy_reports(spy, bot_folders(tmp_path)[0], cluster.address, out)
    assert len(reports) >= 2  # the start-up check on the organiser's machine, then the games on a worker
    for report in reports:
        assert "CARDARENA_BOT_CACHE" not in report["env"] and not any(name.startswith("DASK_") for name in report["env"])
        assert all(readable is not True for readable in report["readable"].values()), report["readable"]
        others = [line for line in report["processes"] if "spy.py" not in line]
        assert all(line.startswith(sandbox_init()) for line in others), "only the sandbox's init is in sight"
        assert len(report["cores"]) == 1, f"the bot was not pinned to one core: report {reports.index(report)} of {len(reports)}"
        if os.geteuid() == 0:
            assert report["uid"] in BOT_UIDS and report["status"]["CapEff"] == ["0" * 16]
