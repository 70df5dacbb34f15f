"""What a Python bot's start costs before its hello (issue 25, item 1): every game starts each bot
afresh, so the SDK and the sample bots import nothing they do not need at start. Measured as the
modules a start imports (load-independent), in the interpreter as the sandbox runs it: the SDK's copy
on its path, no site hooks of this machine (`-S`), bytecode compiled beside the sources."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest

from cardarena.protocol.bot import seed_argument
from cardarena.referee.views import sdk_copy

ROOT = Path(__file__).resolve().parents[1]
#: modules a bot's start must not import: argparse (with re and enum, about 15 ms of a 50 ms start
#: under the sandbox), typing (4 ms), threading (1.3 ms)
HEAVY = ("argparse", "typing", "threading", "re", "enum")


def started_modules(tmp_path: Path, script: str, cwd: Path) -> set[str]:
    """The modules Python imports running `script` (in `cwd`) up to its first read of stdin, which
    here is the end of input: `run` then returns, as a bot whose referee went away."""
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join(
        [f"{sdk_copy()}/lib", str(Path(msgpack.__file__).parent.parent)])}
    done = subprocess.run([sys.executable, "-S", "-X", "importtime", script, "--seed", "3"], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize("folder", ["random", "heuristic"])
def test_a_sample_bots_start_imports_neither_argparse_nor_typing(tmp_path, folder):
    bot = tmp_path / folder
    shutil.copytree(ROOT / "sample_bots" / folder, bot, ignore=shutil.ignore_patterns("__pycache__"))
    imported = started_modules(tmp_path, "bot.py", bot)
    assert "cardarena.protocol.bot" in imported and "msgpack" in imported  # the measure saw the start
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))


def test_the_heuristic_bot_imports_a_games_strategy_when_its_game_starts(tmp_path):
    bot = tmp_path / "heuristic"
    shutil.copytree(ROOT / "sample_bots" / "heuristic", bot, ignore=shutil.ignore_patterns("__pycache__"))
    imported = started_modules(tmp_path, "bot.py", bot)
    assert not {name for name in imported if name.startswith(("heuristic_bot.", "cardarena.search", "cardarena.games"))}


@pytest.mark.parametrize("game", ["casino", "cuajo", "knock_rummy", "quitlok"])
def test_a_heuristic_strategy_imports_no_engine(tmp_path, game):
    """A game's strategy, imported when its game starts (on the clock of the first decision), needs
    no engine: Cuajo's takes the hand evaluation of `cardarena.search.evaluate` alone."""
    bot = tmp_path / "heuristic"
    shutil.copytree(ROOT / "sample_bots" / "heuristic", bot, ignore=shutil.ignore_patterns("__pycache__"))
    (bot / "start.py").write_text(f"import heuristic_bot.{game}\n")
    imported = started_modules(tmp_path, "start.py", bot)
    assert f"heuristic_bot.{game}" in imported
    assert not {name for name in imported if name.startswith(("cardarena.games", "cardarena.search.knowledge"))}
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))


def test_the_sdk_imports_only_what_a_bot_needs(tmp_path):
    script = tmp_path / "bot.py"
    script.write_text("from cardarena.protocol.bot import RandomBot, run\nrun(RandomBot(1))\n")
    imported = started_modules(tmp_path, str(script), tmp_path)
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))


@pytest.mark.parametrize("argv, seed", [([], 7), (["--seed", "12"], 12), (["--seed=-4"], -4), (["--seed", "0"], 0)])
def test_seed_argument_reads_the_seed_option(argv, seed):
    assert seed_argument(argv, default=7) == seed


@pytest.mark.parametrize("argv, problem", [
    (["--seed", "x1"], "--seed takes an integer, not 'x1'"),
    (["--seed"], "unexpected arguments '--seed'"),
    (["--rung", "fast"], "unexpected arguments '--rung fast'"),
    (["--seed", "1", "--seed", "2"], "unexpected arguments '--seed 1 --seed 2'"),
    (["--seed=", ], "--seed takes an integer, not ''"),
])
def test_seed_argument_refuses_anything_else_as_argparse_would(argv, problem, capsys):
    with pytest.raises(SystemExit) as stop:
        seed_argument(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" in err and problem in err


def test_seed_argument_help_prints_the_usage_and_exits_zero(capsys):
    with pytest.raises(SystemExit) as stop:
        seed_argument(["--help"])
    assert stop.value.code == 0
    assert "[--seed N]" in capsys.readouterr().out
