"""Bad input to any command is one clear line on stderr and exit status 2 (1 for a runtime failure),
never a traceback, and nothing is played or written before it is found."""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from cardarena.cli import main
from tests.conftest import RANDOM_BOT, ROOT

A = f"a={sys.executable} {RANDOM_BOT}"
B = f"b={sys.executable} {RANDOM_BOT}"
TWO = ["--bot", A, "--bot", B]
LIMIT = "must be a number of seconds from 0.001 to 3600"
#: issue 20 item 7: 5,000 nested arrays (or inline tables) made tomllib, and json, recurse past Python's limit
DEEP_ARRAYS = "a = " + "[" * 5000 + "]" * 5000 + "\n"
DEEP_TABLES = "a = " + "{ b = " * 3000 + "1" + " }" * 3000 + "\n"
DEEP = "not valid TOML: nested too deeply to read"

#: (command line with {tmp} for a fresh folder, files to write first, exit status, text of the line)
CASES = [
    # time limits: finite and at most an hour, everywhere a time limit is taken
    (["play", "casino", *TWO, "--timeout", "nan"], {}, 2, LIMIT + ", got nan"),
    (["play", "casino", *TWO, "--timeout", "inf"], {}, 2, LIMIT + ", got inf"),
    (["play", "casino", *TWO, "--handshake-timeout", "1e300"], {}, 2, LIMIT + ", got 1e+300"),
    (["play", "casino", *TWO, "--timeout", "soon"], {}, 2, "'soon' is not a number of seconds"),
    (["check", A, "--timeout", "-1"], {}, 2, LIMIT + ", got -1.0"),
    (["check", A, "--handshake-timeout", "nan"], {}, 2, LIMIT + ", got nan"),
    (["run", *TWO, "--timeout", "inf", "--out", "{tmp}/r.sqlite"], {}, 2, LIMIT + ", got inf"),
    (["run", "{tmp}/l.toml"], {"l.toml": f'bots = ["{A}", "{B}"]\n[limits]\ndecision_timeout = nan\n'}, 2,
     "l.toml: [limits].decision_timeout " + LIMIT + ", got nan"),
    (["run", "{tmp}/l.toml"], {"l.toml": f'bots = ["{A}", "{B}"]\n[limits]\nhandshake_timeout = 1e300\n'}, 2,
     "[limits].handshake_timeout " + LIMIT),
    # paths that cannot be written, found before any game
    (["play", "casino", *TWO, "--record", "{tmp}/missing/game.json"], {}, 2, "game.json: folder"),
    (["play", "casino", *TWO, "--record", "{tmp}/file/game.json"], {"file": ""}, 2, "file is not a folder"),
    (["play", "casino", *TWO, "--log-dir", "{tmp}/file/logs"], {"file": ""}, 2, "cannot create the folder"),
    (["check", A, "--junit", "{tmp}/file/check.xml"], {"file": ""}, 2, "--junit"),
    (["run", *TWO, "--out", "{tmp}/file/deeper/r.sqlite"], {"file": ""}, 2, "file is not a folder"),
    (["run", *TWO, "--out", "{tmp}"], {}, 2, "is a directory"),
    # bot commands that cannot be split like a shell would
    (["run", "--bot", A, "--bot", "b=python3 'unclosed", "--out", "{tmp}/r.sqlite"], {}, 2,
     "command line: bot 'b': cannot split command"),
    (["run", "{tmp}/l.toml"], {"l.toml": f'bots = ["{A}", "b=python3 \\"oops"]\n'}, 2,
     "l.toml: bot 'b': cannot split command"),
    (["run", "--bot", "{tmp}/bot", "--bot", B], {"bot/bot.toml": 'name = "q"\ncommand = "python3 \'oops"\n'}, 2,
     "bot.toml: 'command' cannot be split like a shell would: No closing quotation"),
    (["play", "casino", "--bot", "{tmp}/bot", "--bot", B], {"bot/bot.toml": 'name = "q"\ncommand = "x \'y"\n'}, 2,
     "bot.toml: 'command' cannot be split like a shell would"),
    # bot names: part of game ids and file names, so no separators, spaces or control characters
    (["run", "--bot", "{tmp}/bot", "--bot", B, "--out", "{tmp}/r.sqlite"],
     {"bot/bot.toml": 'name = "a+b"\ncommand = "python3 bot.py"\n'}, 2,
     "bot.toml: 'name': bot name 'a+b' must be 1-64 letters, digits"),
    (["run", "--bot", "{tmp}/bot", "--bot", B, "--out", "{tmp}/r.sqlite"],
     {"bot/bot.toml": 'name = "evil\\u001b[2J"\ncommand = "python3 bot.py"\n'}, 2,
     "bot name 'evil\\x1b[2J' must be 1-64 letters"),
    (["play", "casino", "--bot", f"x/y={sys.executable} {RANDOM_BOT}", "--bot", B], {}, 2,
     "bot name 'x/y' must be 1-64 letters"),
    # rule options that depend on the table size
    (["play", "knock-rummy", *TWO, "--option", "dealer=7"], {}, 2, "option 'dealer' must be a seat below 2, got 7"),
    (["play", "casino", *TWO, "--option", "partnerships=true"], {}, 2, "option 'partnerships' needs 4 players"),
    (["run", *TWO, "--game", "casino", "--players", "casino=99"], {}, 2, "casino is played by 2 to 4 players"),
    # sizes: a schedule that would not fit, and other bounds
    (["run", *TWO, "--deals", "10000000"], {}, 2, "games, over the limit of 250,000 per results file"),
    (["run", *TWO, "--max-tables", "100000"], {}, 2, "max_tables must be from 1 to 10,000"),
    (["run", *TWO, "--jobs", "100000"], {}, 2, "100000 is not in the range 1<=x<=256"),
    (["run", *TWO, "--bootstrap", "99999999"], {}, 2, "not in the range 0<=x<=10000"),
    (["check", A, "--games-per-game", "999999999"], {}, 2, "not in the range 1<=x<=10000"),
    (["run", *TWO, "--anchor", "a=nan"], {}, 2, "expected BOT=RATING with a finite rating"),
    # the blame goes to the right source
    (["run", str(ROOT / "sample_bots" / "league.toml"), "--game", "nonexistent"], {}, 2,
     "command line: unknown game 'nonexistent'"),
    (["run", str(ROOT / "sample_bots" / "league.toml"), "--players", "nonexistent=3"], {}, 2,
     "command line: unknown game 'nonexistent'"),
    # league files of the wrong shape
    (["run", "{tmp}"], {}, 2, "is a directory"),
    (["run", "{tmp}/l.toml"], {"l.toml": f'bots = ["{A}", "{B}"]\ndeals = "3"\n'}, 2, "deals must be an int, got '3'"),
    (["run", "{tmp}/l.toml"], {"l.toml": f'bots = ["{A}", "{B}"]\nname = "../x"\n'}, 2, "name must be a plain file name"),
    (["run", "{tmp}/l.toml", "--players", "casino=2"], {"l.toml": f'bots = ["{A}", "{B}"]\ngame = 3\n'}, 2,
     "game must be a table, got 3"),
    (["run", "{tmp}/l.toml", "--timeout", "2"], {"l.toml": f'bots = ["{A}", "{B}"]\nlimits = 5\n'}, 2,
     "limits must be a table, got 5"),
    (["run", "{tmp}/l.toml"], {"l.toml": f'bots = ["{A}", "{B}"]\n[game.casino]\noptions = {{target = "x"}}\n'}, 2,
     "option 'target' takes a int, got 'x'"),
    (["run", "{tmp}/l.toml"], {"l.toml": b"\xff\xfe"}, 2, "not valid TOML"),
    (["replay", "{tmp}/results.db"], {"results.db": ""}, 2, "name the game to replay"),  # a missing argument
    # nested past Python's recursion limit: bot.toml (check, play, a league's glob) and league file
    (["check", "{tmp}/deep"], {"deep/bot.toml": DEEP_ARRAYS}, 2, "deep/bot.toml: " + DEEP),
    (["play", "casino", "--bot", "{tmp}/deep", "--bot", A], {"deep/bot.toml": DEEP_TABLES}, 2, "deep/bot.toml: " + DEEP),
    (["run", "{tmp}/l.toml"], {"l.toml": DEEP_ARRAYS}, 2, "l.toml: " + DEEP),
    (["run", "{tmp}/l.toml"], {"l.toml": f'bots = ["{A}"]\n' + DEEP_TABLES}, 2, "l.toml: " + DEEP),
    (["run", "{tmp}/l.toml"], {"l.toml": f'bots = ["{A}", "*/"]\n', "deep/bot.toml": f'name = "d"\n{DEEP_ARRAYS}'},
     2, "deep/bot.toml: " + DEEP),
    (["run", "--bot", A, "--bot", "{tmp}/deep", "--out", "{tmp}/r.sqlite"], {"deep/bot.toml": DEEP_ARRAYS}, 2, DEEP),
    # records and results that are not what they claim (runtime failures: exit 1)
    (["replay", "{tmp}/r.json"], {"r.json": '{"game": "casino", "game_id": "x", "rules_version": "2", "options": {}, '
                                            '"seed": 1, "seats": ["a"], "actions": [], "result": {"scores": [1]}, '
                                            '"ranks": [0]}'}, 1, "x: the record's table cannot be set up"),
    (["replay", "{tmp}/r.json"], {"r.json": '{"game": "casino", "game_id": "x", "rules_version": "2", "options": {}, '
                                            '"seed": 1, "seats": ["a", "b"], "actions": [[0, "x"]], '
                                            '"result": {"scores": [1, 0]}, "ranks": [0, 1]}'}, 1,
     "not a game record written by 'cardarena play --record' (actions must be [seat, action] pairs)"),
    (["replay", "{tmp}/r.json"], {"r.json": "[" * 100_000 + "]" * 100_000}, 1,
     "not a game record written by 'cardarena play --record' (nested too deeply to read)"),
    (["leaderboard", "{tmp}/r.sqlite"], {"r.sqlite": "not a database"}, 1, "is not a cardarena results database"),
]


@pytest.mark.parametrize("args, files, status, text", CASES, ids=[" ".join(case[0])[:60] for case in CASES])
def test_bad_input_is_one_line_and_the_right_exit_status(tmp_path, args, files, status, text):
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    done = CliRunner().invoke(main, [arg.replace("{tmp}", str(tmp_path)) for arg in args])
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    assert done.exit_code == status, done.output
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.output, done.output
    assert lines[0].startswith("Error: ") and text in lines[0], lines[0]
    assert done.stdout == ""
    assert not list(tmp_path.rglob("*.sqlite")) or "leaderboard" in args  # nothing was written
