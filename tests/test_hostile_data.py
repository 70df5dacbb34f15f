"""Whatever a bot sends is data, never a reason for the referee to fail (issue 10, items 1, 2, 5, 7, 8).

Deep nesting, msgpack bin and extension types, bytes keys, huge maps, control characters and
repeated keys, each from a zoo bot: the fault is recorded with its kind and a detail naming the
problem, its evidence stays small and JSON-safe, and `play`, `check` (text, JSON, JUnit) and
`run` (then `--resume`) finish without a traceback, and without letting escape sequences through.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
import subprocess
import sys
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from cardarena.cli import main
from cardarena.games import get_game
from cardarena.html import esc, plain_text
from cardarena.referee.faults import MAX_EVIDENCE, Fault, cut, plain, printable
from cardarena.referee.match import Match
from cardarena.config import BotSpec, Limits
from tests.conftest import ROOT, ZOO, random_bot, zoo_script

CASINO = get_game("casino")
LIMITS = Limits(decision_timeout=10.0)
MAX_FAULT_JSON = 16 * 1024  # bytes of stored fault JSON per game: evidence is cut to a few KiB

#: (name, zoo script and its arguments, fault kind, words of the detail); each misbehaves at decision 2
CASES = [
    ("deep", ["deep.py"], "malformed", "maps and arrays nested more than 32 deep"),
    ("timestamp", ["exotic.py", "--mode", "timestamp"], "malformed",
     "msgpack extension type -1 (a Timestamp); the protocol has no msgpack extension types"),
    ("bin", ["exotic.py", "--mode", "bin"], "malformed", "a value is msgpack bin (bytes)"),
    ("bytes-key", ["exotic.py", "--mode", "bytes-key"], "malformed", "a map key is msgpack bin (bytes)"),
    ("many-keys", ["bloated.py", "--mode", "keys"], "malformed", "more than 65,536 values in one message"),
    ("tiny-maps", ["bloated.py", "--mode", "tiny-maps"], "malformed", "more than 65,536 values in one message"),
    ("wide", ["bloated.py", "--mode", "wide"], "illegal", "is not among the"),
    ("escapes", ["escapes.py"], "illegal", "is not among the"),
    ("repeated-key", ["repeated_key.py"], "protocol", "map repeats the key 'decision'"),
]
IDS = [case[0] for case in CASES]


def zoo_command(script_and_args: list[str]) -> list[str]:
    return [sys.executable, str(ZOO / script_and_args[0]), *script_and_args[1:]]


def zoo_text(name: str, script_and_args: list[str]) -> str:
    """The zoo bot as NAME=CMD for the command line."""
    return f"{name}={shlex.join(zoo_command(script_and_args))}"


def assert_safe_text(text: str) -> None:
    """No traceback, and no control character but newline and tab reaches a person."""
    assert "Traceback" not in text
    assert printable(text.replace("\n", "").replace("\t", "")) == text.replace("\n", "").replace("\t", "")


# -- the referee itself ------------------------------------------------------------------------

@pytest.mark.parametrize("name, script, kind, detail", CASES, ids=IDS)
def test_the_fault_is_recorded_small_and_json_safe(name, script, kind, detail):
    with Match([BotSpec(name, tuple(zoo_command(script))), random_bot("random", 1)], LIMITS) as match:
        record = match.play(CASINO, 0)
    [fault] = record.faults
    assert (fault.kind, fault.seat, fault.decision) == (kind, 0, 2)
    assert detail in fault.detail
    assert record.result is not None and record.ranks == [1, 0]
    stored = json.dumps(record.to_dict()["faults"], allow_nan=False)
    assert len(stored) < MAX_FAULT_JSON
    assert len(fault.data) <= MAX_EVIDENCE


def test_a_deep_hello_is_a_malformed_handshake():
    with Match([BotSpec("deep", tuple(zoo_command(["deep_hello.py"]))), random_bot("random", 1)], LIMITS) as match:
        record = match.play(CASINO, 0)
    [fault] = record.faults
    assert fault.kind == "malformed" and "nested more than 32 deep" in fault.detail and fault.decision is None


def test_wide_evidence_is_cut_with_its_size_noted():
    with Match([BotSpec("wide", tuple(zoo_command(["bloated.py", "--mode", "wide"]))), random_bot("r", 1)],
               LIMITS) as match:
        [fault] = match.play(CASINO, 0).faults
    assert fault.data_length > 800_000 and len(fault.data) == MAX_EVIDENCE
    marker = fault.message["action"]["…"]
    assert marker.startswith("[cut: ") and marker.endswith(" more of 20,002 keys]")  # and the legal entry's two
    assert ", ...} is not among the " in fault.detail and len(fault.detail) < 2048


# -- the evidence helpers ----------------------------------------------------------------------

def test_plain_makes_any_value_json_safe_and_small():
    nested: list = []
    for _ in range(200):
        nested = [nested]
    value = {"nan": float("nan"), "inf": float("-inf"), "big": 2 ** 200, "bytes": b"\x00\xff",
             1: "int key", None: "nil key", "deep": nested, "long": "x" * 100_000,
             "many": [{"a": n} for n in range(100_000)], "other": object()}
    shown = plain(value)
    text = json.dumps(shown, allow_nan=False)
    assert len(text) < 12_000
    assert shown["nan"] == "nan" and shown["inf"] == "-inf" and shown["big"] == "<int of 201 bits>"
    assert shown["bytes"] == "00ff" and shown["1"] == "int key" and shown["None"] == "nil key"
    assert "[cut: 100,000 characters in all]" in shown["long"]


def test_plain_keeps_a_small_message_as_it_is():
    message = {"type": "action", "decision": 4, "action": {"type": "take", "cards": ["3D", "4H"], "n": 2 ** 64 - 1}}
    assert plain(message) == message


def test_cut_notes_the_full_length_and_is_stable():
    text = "y" * 10_000
    once = cut(text, 100)
    assert len(once) <= 100 and "10,000 characters in all" in once
    assert cut(once, 100) == once and cut("short", 100) == "short"
    assert cut(text, 100, keep="end").endswith("yyy")


def test_printable_escapes_control_characters_visibly():
    assert printable("a\x1b[2Jb\x00\r\n\x7f\x9b\u202e\ud800\ufffe\tz") == \
        "a\\x1b[2Jb\\x00\\x0d\\x0a\\x7f\\x9b\\u202e\\ud800\\ufffe\tz"
    assert printable("plain text, accents é and ü") == "plain text, accents é and ü"


def test_a_fault_keeps_only_bounded_evidence():
    huge = {"type": "action", "junk": [{"a": 0}] * 200_000}
    fault = Fault("protocol", "bot", "d" * 1_000_000, data=b"\x80" * 1_000_000, message=huge,
                  stderr_tail="e" * 100_000)
    assert len(fault.data) == MAX_EVIDENCE and fault.data_length == 1_000_000
    assert len(json.dumps(fault.to_dict(), allow_nan=False)) < MAX_FAULT_JSON
    placed = fault.at(seat=1, decision=3)
    assert placed.message == fault.message and placed.data_length == 1_000_000 and placed.seat == 1


# -- the commands ------------------------------------------------------------------------------

def invoke(*args: str):
    """A cardarena command in this process; an exception escaping it fails the test."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize("name, script, kind, detail", CASES, ids=IDS)
def test_play_and_check_report_the_fault_safely(name, script, kind, detail, tmp_path):
    bot = zoo_text(name, script)
    record_path = tmp_path / "game.json"
    played = invoke("play", "casino", "--bot", bot, "--bot", f"r={sys.executable} {ROOT / 'sample_bots/random/bot.py'}",
                    "--seed", "0", "--timeout", "10", "--quiet", "--record", str(record_path), "--no-pin")
    assert played.exit_code == 1, played.output  # a bot faulted
    assert f"FAULT {name}: {kind} (casino, game casino-0, seat 0, decision 2)" in played.stderr
    assert_safe_text(played.stdout + played.stderr)
    [fault] = json.loads(record_path.read_text())["faults"]
    assert fault["kind"] == kind and detail in fault["detail"]

    junit = tmp_path / "check.xml"
    checked = invoke("check", bot, "--game", "casino", "--games-per-game", "1", "--timeout", "10",
                     "--junit", str(junit))
    assert checked.exit_code == 1
    assert_safe_text(checked.stdout + checked.stderr)
    assert f"FAULT {kind} (casino, seat 0 of 2, decision 2): {name}:" in checked.stdout
    failure = ET.parse(junit).getroot().find("./testsuite/testcase/failure")
    assert failure.get("type") == kind and "reproduce: cd " in failure.text

    as_json = invoke("check", bot, "--game", "casino", "--games-per-game", "1", "--timeout", "10", "--json")
    assert as_json.exit_code == 1
    [game] = json.loads(as_json.stdout)["games"]
    [finding] = game["faults"]
    assert finding["kind"] == kind and detail in finding["detail"]
    assert len(json.dumps(finding)) < MAX_FAULT_JSON


def test_escapes_never_reach_the_terminal_but_show_visibly(tmp_path):
    junit = tmp_path / "check.xml"
    checked = invoke("check", zoo_text("escapes", ["escapes.py"]), "--games", "casino", "--games-per-game", "1",
                     "--timeout", "10", "--junit", str(junit))
    assert "about to misbehave \\x1b[2J\\x1b]0;owned\\x07\\x00" in checked.stdout  # its stderr, escaped
    assert "\x1b" not in junit.read_text(encoding="utf-8")
    assert "\\x1b[2J" in ET.parse(junit).getroot().find("./testsuite/testcase/failure").text


def test_a_deep_hello_fails_check_at_the_handshake(tmp_path):
    junit = tmp_path / "check.xml"
    checked = invoke("check", zoo_text("deep", ["deep_hello.py"]), "--games", "casino", "--junit", str(junit))
    assert checked.exit_code == 1 and "FAULT malformed: deep: frame body breaks the decoding limits" in checked.stdout
    assert ET.parse(junit).getroot().find("./testsuite/testcase/failure").get("type") == "malformed"


# -- a tournament, and its resumption ----------------------------------------------------------

def cardarena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cardarena.cli", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def gauntlet(out: Path, *extra: str) -> subprocess.CompletedProcess:
    """Every zoo bot of CASES challenges the random bot at Casino (one deal, both seats); the bot
    with a deep hello is entered too, and sits the run out."""
    args = ["run", "--game", "casino", "--deals", "1", "--seed", "5", "--timeout", "10", "--jobs", "2",
            "--bootstrap", "20", "--out", str(out), "--bot", f"random={sys.executable} {ROOT / 'sample_bots/random/bot.py'}"]
    for name, script in [("deephello", ["deep_hello.py"]), *((name, script) for name, script, _, _ in CASES)]:
        # each script in a folder of its own, as run requires (the same one for --resume: the same identity)
        copy = zoo_script(out.parent / "zoo", script[0])
        args += ["--bot", f"{name}={shlex.join([sys.executable, str(copy), *script[1:]])}"]
        args += [] if name == "deephello" else ["--challenger", name]
    return cardarena(*args, *extra)


def stored_faults(path: Path) -> dict[str, list[tuple]]:
    """Per game, its faults as (bot, kind, detail); and the size of the largest stored fault JSON."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT game_id, faults FROM games ORDER BY game_id").fetchall()
    return {game_id: [(f["bot"], f["kind"], f["detail"]) for f in json.loads(faults)] for game_id, faults in rows}


def leaderboard(path: Path) -> list[dict]:
    result = cardarena("leaderboard", str(path), "--format", "json", "--bootstrap", "20")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_run_and_resume_play_every_hostile_bot_to_the_same_leaderboard(tmp_path):
    out = tmp_path / "hostile.sqlite"
    done = gauntlet(out)
    assert done.returncode == 0, done.stderr
    assert_safe_text(done.stdout + done.stderr.replace("\r", ""))
    assert "warning: deephello left out of this run: it failed to start (malformed: " in done.stderr
    faults = stored_faults(out)
    assert len(faults) == 2 * len(CASES)
    for name, _, kind, detail in CASES:
        mine = [fault for game in faults.values() for fault in game if fault[0] == name]
        assert len(mine) == 2 and all(fault[1] == kind and detail in fault[2] for fault in mine), mine
    with sqlite3.connect(out) as db:
        assert max(len(faults) for (faults,) in db.execute("SELECT faults FROM games")) < MAX_FAULT_JSON

    # The games of the bots of items 1 and 2 (deep data, bin and ext values) are lost, then resumed.
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(out.read_bytes())
    lost = [game_id for game_id in faults if any(n in game_id for n in ("deep", "timestamp", "bin", "bytes-key"))]
    assert len(lost) == 8
    with sqlite3.connect(copy) as db:
        for table in ("games", "actions"):
            db.executemany(f"DELETE FROM {table} WHERE game_id = ?", [(game_id,) for game_id in lost])
    resumed = gauntlet(copy, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"({len(faults) - len(lost)} already played)" in resumed.stderr
    assert stored_faults(copy) == faults
    assert leaderboard(copy) == leaderboard(out)


INVISIBLE = ["\u061c", "\u200b", "\u200e", "\u200f", "\ufeff", "\U000e0041", "\U000e007f", "\ufdd0", "\U0010ffff",
             "\ue000", "\u00ad", "\u2060", "\u2028", "\u2029", "\ud800", "\x85", "\u0378"]


@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(char):04X}" for char in INVISIBLE])
def test_invisible_characters_are_written_out_on_terminals_and_in_pages(char):
    """Issue 20 item 9: printable() passed U+061C, U+200B, U+200E/F, U+FEFF, tag characters and
    non-characters, and the HTML escaper U+061C: every character of the Unicode categories Cc, Cf, Co,
    Cn, Cs, Zl and Zp is shown as an escape, wherever bot text reaches a person."""
    text = f"bot{char}name"
    for shown in (printable(text), plain_text(text), esc(text)):
        assert char not in shown and shown.startswith("bot\\") and shown.endswith("name"), shown


@given(st.text(alphabet=st.characters(), max_size=40))
def test_whatever_a_bot_sends_nothing_hidden_reaches_a_person(text):
    hidden = {"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"}
    assert not [char for char in printable(text) if unicodedata.category(char) in hidden and char != "\t"]
    assert not [char for char in plain_text(text) if unicodedata.category(char) in hidden and char not in "\t\n"]
    visible = "".join(char for char in text if unicodedata.category(char) not in hidden)
    assert printable(visible) == visible  # letters, marks, symbols and spaces of any script pass unchanged
