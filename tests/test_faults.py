"""Faults in plain sight: `cardarena faults`, run's fault summary and --strict, play's exit status,
and a bot that cannot start shown by its most telling stderr lines."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

from cardarena.fault_report import cardarena_command
from cardarena.referee.faults import telling_lines
from tests.conftest import ROOT, ZOO
from tests.test_tournament import cardarena

RANDOM = ROOT / "sample_bots" / "random"
NODE_FAILURE = """node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module '@msgpack/msgpack'
Require stack:
- /bots/js/bot.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)
{
  code: 'MODULE_NOT_FOUND'
}

Node.js v20.20.2
"""


def chatty_run(out: Path, *extra: str):
    """Knock Rummy, two seats: the random bot against the zoo bot that prints on stdout."""
    return cardarena("run", "--bot", str(RANDOM), "--bot", f"talk={sys.executable} {ZOO / 'chatty.py'}",
                     "--game", "knock-rummy", "--players", "knock-rummy=2", "--deals", "1", "--jobs", "1", "--timeout", "10",
                     "--bootstrap", "0", "--out", str(out), *extra)


def test_run_ends_with_a_fault_summary_and_strict_fails(tmp_path):
    done = chatty_run(tmp_path / "t.sqlite")
    assert done.returncode == 0, done.stderr
    assert re.search(r"^  talk: (\d+) faults? \(malformed \1\)$", done.stdout, re.M) and f"cardarena faults {tmp_path / 't.sqlite'}" in done.stdout
    strict = chatty_run(tmp_path / "s.sqlite", "--strict")
    assert strict.returncode == 1, strict.stderr
    clean = cardarena("run", "--bot", f"a={sys.executable} {RANDOM / 'bot.py'}", "--bot", f"b={sys.executable} {RANDOM / 'bot.py'}",
                      "--game", "casino", "--deals", "1", "--jobs", "1", "--bootstrap", "0",
                      "--out", str(tmp_path / "c.sqlite"), "--strict")
    assert clean.returncode == 0 and "faults: none" in clean.stdout, clean.stderr


def test_faults_lists_each_fault_with_a_line_that_reproduces_it(tmp_path):
    out = tmp_path / "t.sqlite"
    assert chatty_run(out).returncode == 0
    listed = cardarena("faults", str(out))
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"^talk: malformed in knock-rummy/random\+talk/d0/r[01] \(seat [01], decision \d+\): ",
                     listed.stdout, re.M), listed.stdout
    assert 'your bot printed text on stdout: "Thinking about decision' in listed.stdout
    assert "rule:      PROTOCOL.md § Framing" in listed.stdout
    entries = [json.loads(line) for line in cardarena("faults", str(out), "--bot", "talk", "--json").stdout.splitlines()]
    assert entries and {entry["kind"] for entry in entries} == {"malformed"}
    count = len(entries)
    assert listed.stdout.rstrip().endswith(f"talk: {count} fault{'s' * (count > 1)} (malformed {count})")
    assert cardarena("faults", str(out), "--bot", "random").stdout.startswith("0 faults of random in 2 games")

    # The line deals the same game again: the same fault at the same decision, and play exits 1.
    entry = entries[0]
    words = shlex.split(entry["reproduce"])
    assert words[0] == "cd" and words[2] == "&&" and Path(words[3]).is_absolute() and words[4] == "play"
    assert "--seed" in words and str(RANDOM) in words  # a folder bot by its folder
    replayed = cardarena(*words[4:], "--quiet")
    assert replayed.returncode == 1
    assert f"FAULT talk: malformed (knock-rummy, game {entry['game_id']}, seat {entry['seat']}, " in replayed.stderr
    assert f"decision {entry['decision']}): your bot printed text" in replayed.stderr


def test_faults_of_an_unknown_bot_is_an_argument_error(tmp_path):
    out = tmp_path / "t.sqlite"
    assert chatty_run(out).returncode == 0
    done = cardarena("faults", str(out), "--bot", "nobody")
    assert done.returncode == 2 and "no bot 'nobody'" in done.stderr and "random, talk" in done.stderr


def test_play_exits_1_when_a_bot_faulted():
    bots = ["--bot", f"a={sys.executable} {RANDOM / 'bot.py'}", "--bot", f"b={sys.executable} {ZOO / 'illegal.py'}"]
    faulted = cardarena("play", "knock-rummy", *bots, "--quiet")
    assert faulted.returncode == 1 and "FAULT b: illegal" in faulted.stderr
    clean = cardarena("play", "knock-rummy", "--bot", f"a={sys.executable} {RANDOM / 'bot.py'}", "--bot", f"b={sys.executable} {RANDOM / 'bot.py'}",
                      "--quiet")
    assert clean.returncode == 0, clean.stderr


def test_the_most_telling_stderr_lines_come_first():
    assert telling_lines(NODE_FAILURE) == ["Error: Cannot find module '@msgpack/msgpack'", "}", "Node.js v20.20.2"]
    python = "Traceback (most recent call last):\n  File 'bot.py'\n    import numpy\nModuleNotFoundError: No module named 'numpy'\n"
    assert telling_lines(python, 1) == ["ModuleNotFoundError: No module named 'numpy'"]
    assert telling_lines("one\ntwo\nthree\nfour\n") == ["two", "three", "four"]


def test_a_bot_that_cannot_start_is_shown_with_its_telling_stderr(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text(f"import sys\nsys.stderr.write({NODE_FAILURE!r})\nsys.exit(1)\n")
    tmp_path.chmod(0o755)  # the bot's folder: as root, bots run as nobody
    done = cardarena("run", "--bot", str(RANDOM), "--bot", f"b={sys.executable} {RANDOM / 'bot.py'}",
                     "--bot", f"broken={sys.executable} {script}", "--game", "casino", "--deals", "1",
                     "--jobs", "1", "--bootstrap", "0", "--sandbox", "none", "--out", str(tmp_path / "t.sqlite"))
    assert done.returncode == 0, done.stderr
    warning = next(line for line in done.stderr.splitlines() if line.startswith("warning: broken"))
    assert "stderr: Error: Cannot find module '@msgpack/msgpack'" in warning
    assert warning.index("Cannot find module") < warning.index("Node.js v20.20.2")


def test_reproduce_lines_start_cardarena_by_its_full_path(tmp_path, monkeypatch):
    """Issue 24 item 5: a reproduce line runs from a shell where cardarena's venv is not active: it names
    the `cardarena` script beside the interpreter, or, where pip put the script elsewhere, the
    interpreter itself with -m."""
    interpreter = tmp_path / "bin" / "python3"
    interpreter.parent.mkdir()
    monkeypatch.setattr(sys, "executable", str(interpreter))
    assert cardarena_command() == [str(interpreter), "-m", "cardarena.cli"]
    script = interpreter.parent / "cardarena"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert cardarena_command() == [str(script)]
