"""A bot sees its own files and nothing else, whatever the layout (SANDBOX.md § A bot sees its own files and nothing else): the results file,
the bot logs, the league file and other bots are never in any bot's view. A layout that would show one
of them is refused by run, play and check before any bot starts, in one line saying what to do.

The hostile case is issue 20's: the league file at the project root, as runner/tournament/README.md (§ League files) lays it out, with
a NAME=CMD bot beside it: its folder was the project root, mounted whole, deal secret included.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardarena.cli import main
from cardarena.referee import sandbox, views
from tests.conftest import RANDOM_BOT, ROOT, ZOO

BWRAP_PROBLEM = sandbox.bwrap_problem()
FAST = ("--game", "casino", "--deals", "1", "--jobs", "1", "--bootstrap", "0", "--timeout", "10")


def cardarena(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cardarena.cli", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def refused(done: subprocess.CompletedProcess, *phrases: str) -> bool:
    """True when the command ended in one line, with exit status 2, saying each phrase."""
    lines = done.stderr.strip().splitlines()
    return done.returncode == 2 and len(lines) == 1 and all(phrase in lines[0] for phrase in phrases)


def project(tmp_path: Path) -> Path:
    """A project as runner/tournament/README.md (§ League files) lays one out: the random bot's folder, a spy script at the root, readable
    by others like published bots (a root organiser's bots run as nobody)."""
    root = tmp_path / "project"
    (root / "bots").mkdir(parents=True)
    shutil.copytree(RANDOM_BOT.parent, root / "bots" / "random")
    shutil.copy(ZOO / "spy.py", root / "other.py")
    for path in (root, *root.rglob("*")):
        path.chmod(0o755)
    return root


def test_a_name_cmd_bot_beside_the_league_file_is_refused_before_any_game(tmp_path):
    """Issue 20 item 2: `other=python other.py` at the project root saw results/*.sqlite (the deal secret)."""
    root = project(tmp_path)
    (root / "league.toml").write_text('name = "x"\nbots = ["bots/random", "other=python other.py"]\n')
    done = cardarena(root, "run", "league.toml", *FAST)
    assert refused(done, "bot other would see the results file", f"{root / 'results' / 'x.sqlite'}",
                   "put other.py in a folder of its own (with a bot.toml)"), done.stderr
    assert not (root / "results").exists()  # nothing was made, no bot started
    elsewhere = cardarena(root, "run", "league.toml", *FAST, "--out", str(tmp_path / "r.sqlite"))
    assert refused(elsewhere, "bot other would see the league file", "put other.py in a folder of its own")
    assert not (tmp_path / "r.sqlite").exists()


@pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=f"bubblewrap cannot run here: {BWRAP_PROBLEM}")
def test_given_a_folder_of_its_own_the_spy_sees_no_result_log_league_file_or_other_bot(tmp_path):
    root = project(tmp_path)
    (root / "other").mkdir(mode=0o755)
    shutil.move(root / "other.py", root / "other" / "other.py")
    results = root / "results" / "x.sqlite"
    secrets = [results, results.with_suffix(".logs") / "random.stderr.log", root / "league.toml",
               root / "bots" / "random" / "bot.py", root / "other" / "peek" / "x.sqlite"]
    os.symlink(results.parent, root / "other" / "peek")  # a link out of its folder leads nowhere in the sandbox
    other = " ".join(["other=python other/other.py", *(f"--probe={path}" for path in secrets)])
    (root / "league.toml").write_text(f'name = "x"\nbots = ["bots/random", {json.dumps(other)}]\n')
    done = cardarena(root, "run", "league.toml", *FAST, "--deals", "2")
    assert done.returncode == 0, done.stderr
    reports = [json.loads(line[4:]) for line in (results.with_suffix(".logs") / "other.stderr.log").read_text().splitlines()
               if line.startswith("SPY ")]
    assert len(reports) == 2  # a start per seat rotation (the preflight's start keeps no log)
    assert all(report["readable"][str(path)] is not True for report in reports for path in secrets), reports[-1]


@pytest.mark.parametrize("layout, bots, phrases", [
    ("the organiser's folder holding results/", ["a=python other.py", "b=python other.py"],
     ["bot a would see the results folder", "put other.py in a folder of its own"]),
    ("a bot folder holding another bot's folder", ["outer", "outer/inner"],
     ["bot outer would see bot inner's files", "move {root}/outer/inner out of {root}/outer"]),
    ("two NAME=CMD scripts in one folder", ["a=python two/a.py", "b=python two/b.py"],
     ["bot a would see bot b's files {root}/two/b.py", "put b.py in a folder of its own"]),
    ("a NAME=CMD script inside a bot folder", ["outer", "b=python outer/bot.py"],
     ["would see bot", "b runs a file of bot outer's folder: enter only one of them, or put bot.py in a folder"]),
    ("a bot folder reached through a symbolic link to the project", ["link", "bots/random"],
     ["bot link would see the results folder {root}/results"]),
    ("a script reached through a symbolic link to a file at the project root", ["a=python linked/a.py", "bots/random"],
     ["bot a would see the results folder", "put a.py in a folder of its own"]),
])
def test_a_layout_that_would_show_a_bot_more_than_its_own_files_is_refused_by_play(tmp_path, layout, bots, phrases):
    root = project(tmp_path)
    (root / "results").mkdir()
    for name in ("outer", "outer/inner"):
        shutil.copytree(RANDOM_BOT.parent, root / name, ignore=shutil.ignore_patterns("inner"))
        (root / name / "bot.toml").write_text(f'name = "{Path(name).name}"\ncommand = ["python", "bot.py"]\n')
    (root / "two").mkdir()
    for script in ("a.py", "b.py"):
        shutil.copy(RANDOM_BOT, root / "two" / script)
    shutil.copy(RANDOM_BOT, root / "a.py")
    (root / "linked").mkdir()
    (root / "linked" / "a.py").symlink_to(root / "a.py")
    (root / "link").symlink_to(root)
    (root / "bot.toml").write_text('name = "link"\ncommand = ["python", "other.py"]\n')
    args = [arg for bot in bots for arg in ("--bot", bot)]
    done = cardarena(root, "play", "casino", *args, "--quiet")
    assert refused(done, *(phrase.format(root=root) for phrase in phrases)), (layout, done.stderr)


def test_copies_of_one_script_may_play_together_and_none_mode_checks_nothing(tmp_path):
    root = project(tmp_path)
    (root / "results").mkdir()
    copies = ["--bot", f"a={sys.executable} {RANDOM_BOT}", "--bot", f"b={sys.executable} {RANDOM_BOT} --seed 1"]
    assert cardarena(root, "play", "casino", *copies, "--quiet").returncode == 0
    beside = ["--bot", "a=python other.py", "--bot", "bots/random"]
    assert refused(cardarena(root, "play", "casino", *beside, "--quiet"), "bot a would see")
    unsandboxed = cardarena(root, "play", "casino", *beside, "--quiet", "--sandbox", "none")
    assert unsandboxed.returncode == 0, unsandboxed.stderr  # without a sandbox it sees what the organiser sees


def test_results_and_logs_inside_a_bot_folder_and_a_bot_inside_the_logs_are_refused_by_run(tmp_path):
    root = project(tmp_path)
    bots = ["--bot", "bots/random", "--bot", f"b={sys.executable} {RANDOM_BOT}"]
    inside = cardarena(root, "run", *bots, *FAST, "--out", str(root / "bots" / "random" / "r.sqlite"))
    assert refused(inside, "bot random would see the results file", f"move {root / 'bots' / 'random' / 'r.sqlite'} out of")
    logs = root / "results" / "x.logs"
    shutil.copytree(RANDOM_BOT.parent, logs / "random")
    nested = cardarena(root, "run", "--bot", str(logs / "random"), "--bot", f"b={sys.executable} {RANDOM_BOT}", *FAST,
                       "--out", str(root / "results" / "x.sqlite"))
    assert refused(nested, "bot random would see the bot logs", "lies inside it", f"move {logs / 'random'} out of"), \
        nested.stderr
    assert not (root / "results" / "x.sqlite").exists()


def test_plays_log_folder_inside_a_bot_folder_and_checks_results_folder_are_refused(tmp_path):
    root = project(tmp_path)
    bots = ["--bot", "bots/random", "--bot", f"b={sys.executable} {RANDOM_BOT}"]
    logs = cardarena(root, "play", "casino", *bots, "--log-dir", "bots/random/logs", "--quiet")
    assert refused(logs, "bot random would see the bot logs folder (--log-dir)")
    (root / "results").mkdir()
    checked = cardarena(root, "check", "mine=python other.py", "--game", "casino", "--games-per-game", "1")
    assert refused(checked, "bot mine would see the results folder", "put other.py in a folder of its own")
    fine = cardarena(root, "check", "bots/random", "--game", "casino", "--games-per-game", "1")
    assert fine.returncode == 0, fine.stderr  # its opponent, the packaged random bot, may share its files


def test_a_python_installation_that_holds_the_project_is_refused(tmp_path, monkeypatch):
    """A virtual environment made at the project root (python -m venv .) is shown to every bot: it
    would show every bot the results and the other bots."""
    root = project(tmp_path)
    (root / "results").mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setattr(views, "python_folders", lambda: (str(root),))
    done = CliRunner().invoke(main, ["play", "casino", "--bot", "bots/random", "--bot", f"b={sys.executable} {RANDOM_BOT}"])
    assert done.exit_code == 2, done.output
    assert done.output.startswith(f"Error: every bot would see the results folder {root / 'results'}: {root} is shown")
    (root / "results").rmdir()
    done = CliRunner().invoke(main, ["play", "casino", "--bot", "bots/random", "--bot", f"b={sys.executable} {RANDOM_BOT}"])
    assert done.exit_code == 2 and f"every bot would see bot random's files {root / 'bots' / 'random'}" in done.output


# -- the Python that runs Python bots: the folders its packages need, wherever they are (issue 20 item 11) --

DEPENDENCIES = ("click", "msgpack", "tqdm", "tabulate")  # what cardarena needs; a bot's SDK needs msgpack


def packages_folder(target: Path) -> Path:
    """A folder holding copies of cardarena's dependencies and a `cardarena` made of links to this tree,
    readable by others: all a Python needs to run cardarena, from where no prefix of it reaches."""
    target.mkdir(parents=True)
    for name in DEPENDENCIES:
        shutil.copytree(Path(__import__(name).__file__).parent, target / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    package = target / "cardarena"
    package.mkdir()
    for entry in (ROOT / "runner").iterdir():
        (package / entry.name).symlink_to(entry)
    (package / "protocol").symlink_to(ROOT / "protocol")
    (package / "sample_bots").symlink_to(ROOT / "sample_bots")
    for path in (target, *target.rglob("*")):
        if not path.is_symlink():
            path.chmod(0o755)
    return target


def bot_importing(tmp_path: Path, module: str) -> Path:
    """The random bot in a folder of its own, importing `module` first."""
    folder = tmp_path / "bot"
    folder.mkdir(mode=0o755)
    (folder / "bot.py").write_text(f"import {module}\n" + RANDOM_BOT.read_text())
    (folder / "bot.py").chmod(0o644)
    return folder / "bot.py"


def play_with(python: Path, bot: Path, mode: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    if mode == "bwrap" and BWRAP_PROBLEM is not None:
        pytest.skip(f"bubblewrap cannot run here: {BWRAP_PROBLEM}")
    return subprocess.run([str(python), "-m", "cardarena.cli", "play", "casino", "--bot", f"a=python {bot}",
                           "--bot", f"b=python {bot} --seed 1", "--quiet", "--sandbox", mode],
                          capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


SYSTEM_PYTHON = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")


@pytest.mark.parametrize("base", ["this", "system"])
@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_a_venv_whose_packages_a_pth_file_links_runs_python_bots(tmp_path, mode, base):
    """Issue 20 item 11: a virtual environment reaching its packages through a .pth file (as an editable
    or linked install does): the bots' SDK could not import msgpack in the sandbox. The project root,
    linked the same way (a legacy editable install), stays out of sight. A venv made from the system's
    Python has a bin/python linking to /usr, outside every folder the bots need: it runs Python bots all the same."""
    if base == "system" and not SYSTEM_PYTHON.is_file():
        pytest.skip(f"no {SYSTEM_PYTHON} to make a virtual environment from")
    venv = tmp_path / "venv"
    maker = sys.executable if base == "this" else str(SYSTEM_PYTHON)
    subprocess.run([maker, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    venv.chmod(0o755)
    packages = packages_folder(tmp_path / "elsewhere" / "packages")
    (site_packages,) = venv.glob("lib/python3*/site-packages")
    (site_packages / "linked.pth").write_text(f"{packages}\n{ROOT}\n")
    spy = bot_importing(tmp_path, "msgpack")
    if mode == "bwrap":  # the bot crashes when it can read the project's files
        spy.write_text(f"import os\nassert not os.path.exists({str(ROOT / 'README.md')!r})\n" + spy.read_text())
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    done = play_with(venv / "bin" / "python", spy, mode, {**env, "PYTHONNOUSERSITE": "1"}, tmp_path)
    assert done.returncode == 0 and "FAULT" not in done.stderr, done.stderr
    if mode == "bwrap":
        shown = subprocess.run([str(venv / "bin" / "python"), "-c", "from cardarena.referee.views import "
                                "python_folders; print('\\n'.join(python_folders()))"], capture_output=True,
                               text=True, env=env, check=True).stdout.split()
        assert str(packages) in shown and str(ROOT) not in shown


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_a_pip_install_user_set_up_runs_python_bots(tmp_path, mode):
    """Packages in the organiser's user site-packages (pip install --user): a bot's private HOME hid them."""
    home = tmp_path / "home"
    python = f"python{sys.version_info.major}.{sys.version_info.minor}"
    user_site = packages_folder(home / ".local" / "lib" / python / "site-packages")
    (user_site / "user_only.py").write_text("FOUND = True\n")
    (user_site / "user_only.py").chmod(0o644)
    base = Path(sys.base_prefix) / "bin" / python  # not a virtual environment: it uses the user site
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "VIRTUAL_ENV")}
    done = play_with(base, bot_importing(tmp_path, "user_only"), mode, {**env, "HOME": str(home)}, tmp_path)
    assert done.returncode == 0 and "FAULT" not in done.stderr, done.stderr


# -- no oracle on the organiser's disk (issue 20 item 8) ----------------------------------------------------

def start_fault(command: list[str], folder: Path, monkeypatch, path: str | None = None) -> str:
    """The detail of the start fault of a bot folder whose bot.toml runs `command`, the program's own word
    replaced by PROGRAM: a detail that names the program, and nothing else about it, says nothing."""
    from cardarena.manifest import load_manifest
    from cardarena.referee.faults import BotFault
    from cardarena.config import Limits, SandboxSettings
    from cardarena.referee.process import BotProcess
    if BWRAP_PROBLEM is not None:
        pytest.skip(f"bubblewrap cannot run here: {BWRAP_PROBLEM} (without it a bot sees what the organiser sees)")
    if path is not None:
        monkeypatch.setenv("PATH", path)
    (folder / "bot.toml").write_text(f'name = "prober"\ncommand = {json.dumps(command)}\n')
    with pytest.raises(BotFault) as raised:
        BotProcess(load_manifest(folder).spec, Limits(sandbox=SandboxSettings(mode="bwrap"))).start()
    assert raised.value.fault.kind == "start"
    return raised.value.fault.detail.replace(command[0], "PROGRAM")


def test_a_bot_toml_cannot_learn_whether_a_file_of_the_organiser_exists(tmp_path, monkeypatch):
    """`command = ["/root/secret.txt"]` answered `not executable`, `/root/nothing` `no such file`."""
    secret = tmp_path / "organiser" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("the organiser's")
    folder = tmp_path / "prober"
    folder.mkdir(mode=0o755)
    (folder / "link").symlink_to(secret)
    probes = [str(secret), str(secret.parent / "nothing"), f"../organiser/{secret.name}", "../organiser/nothing",
              "./link", "/root/.bashrc", "/root/nothing"]
    details = {probe: start_fault([probe], folder, monkeypatch) for probe in probes}
    assert len(set(details.values())) == 1, details
    assert "not among what the bot is shown" in details[probes[0]]


def test_a_bot_toml_cannot_learn_which_programs_the_organisers_path_holds(tmp_path, monkeypatch):
    tools = tmp_path / "organisers-bin"
    tools.mkdir()
    (tools / "organisers-tool").write_text("#!/bin/sh\n")
    (tools / "organisers-tool").chmod(0o755)
    folder = tmp_path / "prober"
    folder.mkdir(mode=0o755)
    path = f"{tools}:{os.environ['PATH']}"
    present, absent = (start_fault([name], folder, monkeypatch, path) for name in ("organisers-tool", "no-such-tool"))
    assert present == absent == "cannot run 'PROGRAM': PROGRAM: no such program on PATH"


@pytest.mark.parametrize("path, roots, inside", [
    ("/usr/bin", ["/usr"], True),
    ("/usr", ["/usr"], True),
    ("/usrlocal/bin", ["/usr"], False),  # a prefix of the text, not a folder above it
    ("/opt/bot", ["/"], True),
    ("/home/a/bot", ["/home/b", "/home/a"], True),
    ("/home/ab", ["/home/a"], False),
    ("/", ["/usr"], False),
])
def test_inside_compares_whole_folder_names(path, roots, inside):
    """What the sandbox shows a bot is decided by `_inside` at every start: compared as text for
    speed, it must still say what pathlib's parents say."""
    assert sandbox._inside(Path(path), [Path(root) for root in roots]) is inside
    assert any(Path(path) == Path(root) or Path(root) in Path(path).parents for root in roots) is inside
