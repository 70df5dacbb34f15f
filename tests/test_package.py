"""The installed package, as a user gets it: a wheel built from this tree, installed in a fresh
virtual environment, runs the bot author's CI snippet (taken from sample_bots/README.md, so the
guide and this test cannot drift) and `cardarena run`, `check` and `play` in an empty directory."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import click
import msgpack
import pip
import pytest
import tabulate
import tqdm

from tests.conftest import ROOT

GUIDE = ROOT / "sample_bots" / "README.md"
SNIPPET_MARK = "<!-- ci-snippet:"
#: what a build needs from the tree (build outputs, node_modules and caches left out)
SOURCES = ("pyproject.toml", "README.md", "runner", "protocol", "sample_bots")
NOT_SOURCES = shutil.ignore_patterns("__pycache__", "node_modules", "build", "*.egg-info")
STEP_SECONDS = 300  # a hung step fails the test instead of blocking the suite


def guide_ci_snippet() -> str:
    """The shell block of sample_bots/README.md that follows the ci-snippet comment."""
    found = re.search(re.escape(SNIPPET_MARK) + r".*?-->\n```sh\n(.*?)```", GUIDE.read_text(), re.S)
    assert found, f"{GUIDE} lost its marked CI snippet ({SNIPPET_MARK} ... followed by a sh block)"
    return found.group(1)


def step(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run one step of the user's session; a failure shows everything it printed."""
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=STEP_SECONDS)
    assert done.returncode == 0, f"{command} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built with pip from a copy of the tree (so no build files are left in it)."""
    work = tmp_path_factory.mktemp("wheel")
    (work / "src").mkdir()
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, work / "src" / name, ignore=NOT_SOURCES)
        else:
            shutil.copy2(source, work / "src" / name)
    step([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"), str(work / "src")],
         work, os.environ.copy())
    (built,) = (work / "dist").glob("cardarena-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> dict[str, str]:
    """The environment of a shell in a fresh virtual environment that can reach cardarena's
    dependencies (and pip) where this interpreter has them, so nothing is downloaded, but not
    the cardarena this suite runs from: no PYTHONPATH, no editable install."""
    home = tmp_path_factory.mktemp("venv")
    home.chmod(0o755)  # as a venv outside pytest's private folders is: a root organiser's bots run as nobody
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home)], check=True, timeout=STEP_SECONDS)
    site = Path(sysconfig.get_path("purelib", "venv", vars={"base": str(home), "platbase": str(home)}))
    # directories named in a .pth file join sys.path without their own .pth files being run
    reachable = {str(Path(module.__file__).resolve().parents[1]) for module in (click, msgpack, tqdm, tabulate, pip)}
    (site / "dependencies.pth").write_text("\n".join(sorted(reachable)) + "\n")
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{home / 'bin'}{os.pathsep}{env['PATH']}"
    env["VIRTUAL_ENV"] = str(home)
    return env


def install(wheel: Path, venv: dict[str, str], cwd: Path) -> None:
    step(["python3", "-m", "pip", "install", "-q", wheel.as_uri()], cwd, venv)


def installed_path(expression: str, venv: dict[str, str], cwd: Path) -> Path:
    """A path computed by the venv's interpreter, checked to lie inside the venv (not this tree)."""
    done = step(["python3", "-c", f"print({expression})"], cwd, venv)
    path = Path(done.stdout.strip())
    assert path.is_relative_to(venv["VIRTUAL_ENV"]), f"{expression} is {path}, outside the venv"
    return path


def files_under(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts]


def test_the_wheel_holds_every_module_and_document_and_the_unbuilt_sample_bots(wheel):
    """Every file of runner/ (as cardarena/) and protocol/ (as cardarena/protocol/): modules, rules
    docs, PROTOCOL.md, HTML assets; the sample league, and the sample bots that need no build: a
    package left out of pyproject's list fails here."""
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {f"cardarena/{path.relative_to(ROOT / 'runner')}" for path in files_under(ROOT / "runner")}
    wanted |= {f"cardarena/{path.relative_to(ROOT)}" for path in files_under(ROOT / "protocol")}
    wanted |= {f"cardarena/{path.relative_to(ROOT)}" for bot in ("random", "heuristic", "search/strong")
               for path in files_under(ROOT / "sample_bots" / bot)}
    wanted.add("cardarena/sample_bots/league.toml")
    assert sorted(wanted - names) == []
    assert not [name for name in names if "/js/" in name or "/c/" in name], "bots that need building were shipped"


def test_the_wheel_puts_only_cardarena_at_the_top_of_site_packages(wheel):
    """One import package: nothing named `runner` or `protocol` (names other distributions use)
    lands in site-packages; only `cardarena` and the wheel's own metadata folder."""
    tops = {name.split("/", 1)[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"cardarena"}


def test_the_guides_ci_snippet_runs_as_written_against_the_built_wheel(wheel, venv, tmp_path):
    """The guide's snippet installs the wheel, builds a bot and checks it (against the packaged
    random bot), writing the JUnit report."""
    bot = tmp_path / "mybot"
    (bot / "src").mkdir(parents=True)
    shutil.copy2(ROOT / "sample_bots" / "random" / "bot.py", bot / "src" / "bot.py")
    (bot / "bot.toml").write_text('name = "mybot"\ncommand = ["python3", "bot.py"]\ngames = ["knock-rummy"]\n')
    (bot / "build.sh").write_text("#!/bin/sh\ncp src/bot.py bot.py\n")  # the bot exists only once built
    (bot / "build.sh").chmod(0o755)
    env = dict(venv, CARDARENA=wheel.as_uri())

    done = step(["bash", "-e", "-c", guide_ci_snippet()], bot, env)

    assert "PASS: mybot played" in done.stdout
    report = (bot / "cardarena-check.xml").read_text()
    assert 'failures="0"' in report and "<testcase" in report
    installed_path("__import__('cardarena').__file__", venv, tmp_path)


def test_run_check_and_play_work_from_the_wheel_in_an_empty_directory(wheel, venv, tmp_path):
    """The sample league and bots ship in the wheel; `run` writes under ./results."""
    empty = tmp_path / "empty"
    empty.mkdir()
    install(wheel, venv, empty)
    samples = installed_path("__import__('cardarena.samples').samples.SAMPLE_BOTS", venv, empty)

    # the packaged sample league's whole field, search rung included, at one game and one deal to stay quick
    done = step(["cardarena", "run", "--deals", "1", "--game", "knock-rummy"], empty, venv)
    assert (empty / "results" / "sample.sqlite").is_file()
    assert re.search(r"sample: 4 bots, 1 table, 4 games", done.stderr), done.stderr
    assert all(name in done.stdout for name in ("heuristic", "random-2", "search-fast")) and "faults: none" in done.stdout

    done = step(["cardarena", "check", str(samples / "heuristic"), "--games", "casino", "--games-per-game", "2"],
                empty, venv)
    assert "PASS: heuristic played 2 games" in done.stdout

    done = step(["cardarena", "play", "knock-rummy", "--bot", str(samples / "random"),
                 "--bot", str(samples / "heuristic"), "--quiet"], empty, venv)
    assert "Knock Rummy, seed" in done.stdout
    assert sorted(path.name for path in empty.iterdir()) == ["results"]


def test_a_dask_run_works_from_the_wheel(wheel, venv, tmp_path):
    """`run --executor dask` from the installed wheel: its workers start portion hosts (fresh
    interpreters, cardarena.tournament.execution.host) that must import the installed cardarena, not this tree."""
    pytest.importorskip("distributed", reason="Dask is not installed (pip install 'cardarena[dask]'; .ci/run does)")
    empty = tmp_path / "empty"
    empty.mkdir()
    install(wheel, venv, empty)
    done = step(["cardarena", "run", "--executor", "dask", "--jobs", "2", "--game", "casino", "--deals", "1"],
                empty, venv)
    assert re.search(r"^playing on a local Dask cluster at tcp://127\.0\.0\.1:\d+ \(2 worker threads\)$", done.stderr,
                     re.MULTILINE), done.stderr
    assert "heuristic" in done.stdout and "faults: none" in done.stdout, done.stdout
