"""Deal secrecy and no memory across a duplicate set, tried by cheating bots through `cardarena run`.

The seed cheater knows the league file's seed and the code and predicts its hand from each game
id: with the deals drawn from the results file's secret it predicts none, and given the deal seed
it predicts every one (which shows the cheater works). The memory cheater remembers every deal it
saw, in its memory and on disk: no process of it ever meets a deal twice, since a table's bots are
started afresh for each seat rotation.
"""

from __future__ import annotations

import ctypes
import errno
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import bots_have_keyrings_of_their_own

ROOT = Path(__file__).resolve().parent.parent
ZOO = ROOT / "tests" / "zoo"
RANDOM = f"random={sys.executable} {ROOT / 'sample_bots' / 'random' / 'bot.py'} --seed 1"
#: the cheaters import a copy of the engines before their hello: a generous start on a loaded machine
SMALL = ("--game", "casino", "--game", "knock-rummy", "--timeout", "10", "--handshake-timeout", "60",
         "--bootstrap", "0")


def cardarena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cardarena.cli", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def bot_folder(parent: Path, script: str, *args: str) -> Path:
    """A bot folder holding a copy of a zoo script and its bot.toml (the bot may write to its folder)."""
    folder = parent / script.removesuffix(".py").replace("_", "-")
    folder.mkdir()
    shutil.copy(ZOO / script, folder)
    command = ", ".join(f'"{word}"' for word in (sys.executable, script, *args))
    folder.joinpath("bot.toml").write_text(f'name = "{folder.name}"\ncommand = [{command}]\n')
    return folder


def reports(logs: Path, bot: str) -> list[dict[str, str]]:
    """The cheater's report lines from its stderr logs, as key → value per line."""
    lines = [line for log in logs.glob(f"{bot}.stderr.log")
             for line in log.read_text().splitlines() if line.startswith(f"{bot} ")]
    return [dict(re.findall(r"(\S+)=(\S+)", line)) for line in lines]


def games_of(results: Path, bot: str) -> set[str]:
    with sqlite3.connect(results) as db:
        return {game_id for game_id, seats in db.execute("SELECT game_id, seats FROM games") if f'"{bot}"' in seats}


@pytest.mark.parametrize("deal_seed, predicted", [(None, "no"), ("5", "yes")])
def test_a_bot_that_knows_the_league_seed_cannot_predict_a_deal(tmp_path, deal_seed, predicted):
    cheater = bot_folder(tmp_path, "seed_cheater.py", "--league-seed", "5")
    # it knows the code: the engines are in the SDK, and it carries a copy of the schedule's seeding,
    # as any bot author may (the sandbox shows a bot no more of cardarena than the SDK and engines)
    shutil.copy(ROOT / "runner" / "tournament" / "planning" / "schedule.py", cheater / "known_schedule.py")
    league = tmp_path / "league.toml"
    league.write_text(f'name = "secret"\nseed = 5\ndeals = 2\nbots = ["{cheater}", "{RANDOM}"]\n')
    out = tmp_path / "secret.sqlite"
    done = cardarena("run", str(league), *SMALL, "--out", str(out),
                     *(["--deal-seed", deal_seed] if deal_seed else []))
    assert done.returncode == 0, done.stderr
    seen = reports(tmp_path / "secret.logs", "seed-cheater")
    played = games_of(out, "seed-cheater")
    # it reports at its first decision: a Knock Rummy game may end before a seat's first turn
    assert {report["game"] for report in seen} <= played and len(seen) >= len(played) / 2
    assert {report["predicted"] for report in seen} == {predicted}
    assert ("anyone who knows it can compute every deal" in done.stderr) == (deal_seed is not None)
    with sqlite3.connect(out) as db:
        (secret,) = db.execute("SELECT value FROM meta WHERE key = 'deal_secret'").fetchone()
    printed = [done.stdout, done.stderr] + [log.read_text() for log in (tmp_path / "secret.logs").rglob("*.log")]
    assert len(secret) == 64 and not any(secret in text for text in printed)


def deals(results: Path) -> dict[str, int]:
    with sqlite3.connect(results) as db:
        return dict(db.execute("SELECT game_id, seed FROM games"))


def test_an_explicit_deal_seed_reproduces_the_deals_and_each_new_results_file_draws_new_ones(tmp_path):
    runs = {}
    for name, extra in [("secret-1", ()), ("secret-2", ()), ("seeded-1", ("--deal-seed", "9")),
                        ("seeded-2", ("--deal-seed", "9"))]:
        done = cardarena("run", "--bot", RANDOM, "--bot", RANDOM.replace("random=", "other=", 1), "--game", "casino",
                         "--deals", "2", "--jobs", "1", "--bootstrap", "0", "--out", str(tmp_path / f"{name}.sqlite"),
                         *extra)
        assert done.returncode == 0, done.stderr
        runs[name] = deals(tmp_path / f"{name}.sqlite")
    assert runs["seeded-1"] == runs["seeded-2"]
    assert runs["secret-1"].keys() == runs["secret-2"].keys() == runs["seeded-1"].keys()
    assert not set(runs["secret-1"].values()) & set(runs["secret-2"].values())


@pytest.fixture
def namespace():
    """A name for one memory cheater's records, removed afterwards from every place it writes to."""
    name = uuid.uuid4().hex
    yield name
    for folder in (Path("/tmp") / f"memory-cheater-{name}", Path.home() / f".memory-cheater-{name}",
                   Path(tempfile.gettempdir()) / f"memory-cheater-{name}", Path("/dev/shm") / f"memory-cheater-{name}"):
        shutil.rmtree(folder, ignore_errors=True)


def memory_cheater_reports(tmp_path: Path, namespace: str, *extra: str) -> list[dict[str, str]]:
    """A small run of the memory cheater against the random bot: its reports, after checking that no
    process of it ever met a deal twice, at the cost of one start per rotation and seat."""
    cheater = bot_folder(tmp_path, "memory_cheater.py", "--namespace", namespace)
    out = tmp_path / "memory.sqlite"
    done = cardarena("run", "--bot", str(cheater), "--bot", RANDOM, *SMALL, "--deals", "3", "--jobs", "2",
                     "--out", str(out), *extra)
    assert done.returncode == 0, done.stderr
    seen = reports(tmp_path / "memory.logs", "memory-cheater")
    assert {report["game"] for report in seen} == games_of(out, "memory-cheater")
    assert {report["in-memory"] for report in seen} == {"no"}
    pids_by_deal, pids_by_table, rotations = defaultdict(list), defaultdict(set), defaultdict(set)
    for report in seen:
        table, deal, rotation = report["game"].rsplit("/", 2)
        pids_by_deal[(table, deal)].append(report["process"])
        pids_by_table[table].add(report["process"])
        rotations[table].add(rotation)
    assert all(len(pids) == len(set(pids)) for pids in pids_by_deal.values())
    for table, pids in pids_by_table.items():  # three deals per rotation, yet one start per rotation
        assert len(pids) == len(rotations[table]) * table.split("/")[1].split("+").count("memory-cheater")
    return seen


def sandbox_option() -> bool:
    """Whether this cardarena has `run --sandbox` (issue 11's sandbox)."""
    return "--sandbox" in cardarena("run", "--help").stdout


def test_no_bot_process_plays_the_same_deal_twice(tmp_path, namespace):
    seen = memory_cheater_reports(tmp_path, namespace, *(("--sandbox", "none") if sandbox_option() else ()))
    # Without a sandbox the processes share /tmp, so records of the first rotation are there to find
    # in the next: that shows the cheater's memory works, and what the sandbox is for.
    keyring = keyring_usable() and not bots_have_keyrings_of_their_own()
    shared = {"/tmp", "/dev/shm"} | ({"keyring"} if keyring else set())
    later = [report for report in seen if not report["game"].endswith("/r0")]
    assert later and all(shared <= set(report["found"].split(",")) for report in later)


def keyring_usable() -> bool:
    """Whether this process may use the kernel keyring (a container's seccomp profile may refuse it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    # keyctl(KEYCTL_SEARCH, the uid's keyring, ...) on x86_64, as the memory cheater looks
    if libc.syscall(250, 10, -4, b"user", b"cardarena-no-such-key", 0) != -1:
        return True
    return ctypes.get_errno() == errno.ENOKEY


def test_under_the_sandbox_the_memory_cheater_finds_nothing_across_rotations_or_runs(tmp_path, namespace):
    if not sandbox_option():
        pytest.skip("this cardarena has no --sandbox yet (issue 11): without it, /tmp is shared")
    probe = cardarena("run", "--bot", RANDOM, "--bot", RANDOM.replace("random=", "other=", 1), "--game", "casino",
                      "--deals", "1", "--bootstrap", "0", "--sandbox", "bwrap", "--out", str(tmp_path / "probe.sqlite"))
    if probe.returncode != 0:
        assert "bwrap" in probe.stderr or "bubblewrap" in probe.stderr, probe.stderr
        pytest.skip(f"bubblewrap cannot run here: {probe.stderr.strip().splitlines()[-1]}")
    for run in ("first", "second"):  # the second run's processes look for what the first run's left
        (tmp_path / run).mkdir()
        seen = memory_cheater_reports(tmp_path / run, namespace, "--sandbox", "bwrap")
        assert {report["found"] for report in seen} == {"none"}, run
