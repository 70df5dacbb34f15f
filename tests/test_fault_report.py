"""One fault report (runner/fault_report.py): a fault rendered as text, JSON, JUnit, HTML and Markdown
shows the same fields in every rendering, and the HTML report shows what `cardarena faults` lists:
each fault's reproduce line, and the faults at a match's shutdown."""

from __future__ import annotations

import html
import json
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardarena.cli import main
from cardarena.fault_report import (CHECK_TEXT, LISTING_TEXT, FaultEntry, html_item, json_entry, junit_failure,
                                    detail_text, markdown, sent_text, text_lines)
from cardarena.html.report import write_report
from cardarena.referee.faults import FAULT_KINDS, Fault
from cardarena.tournament.store import ResultStore
from tests.random_results import play_random

REPRODUCE = "cd /bots && /venv/bin/cardarena play knock-rummy --seed 7 --game-id kr/a+b/d0/r1 --bot a --bot b"
STDERR = "Traceback (most recent call last):\n  File 'bot.py', line 3\nValueError: no card ZZ\n"

#: one fault of each shape: a decoded message in a game, raw bytes in a game, and one at a match's shutdown
ENTRIES = {
    "message": FaultEntry(Fault("illegal", "zebra", "the action is not among the 3 legal actions", seat=1,
                                game="knock-rummy", game_id="kr/a+zebra/d0/r1", decision=7, data=b"\x81\xa4type",
                                message={"type": "action", "action": {"card": "ZZ"}}, stderr_tail=STDERR),
                          REPRODUCE, seed=7, players=2, options={}),
    "bytes": FaultEntry(Fault("malformed", "zebra", "not valid msgpack", seat=0, game="casino",
                              game_id="casino/a+zebra/d3/r0", decision=2, data=b"Thinking hard\n" * 30),
                        REPRODUCE, seed=3, players=2, options={}),
    "shutdown": FaultEntry(Fault("crash", "zebra", "did not exit with status 0 within 1.0 s of shutdown",
                                 game="casino", game_id="casino/a+zebra/d3/r1", stderr_tail="bye\n"),
                           REPRODUCE, at_shutdown=True, match_id="casino/a+zebra"),
}


def visible_text(entry: FaultEntry, rendering: str) -> str:
    """What a person reads of one rendering of `entry`, as plain text."""
    if rendering == "text":
        return "\n".join(text_lines(entry, LISTING_TEXT))
    if rendering == "check text":
        return "\n".join(text_lines(entry, CHECK_TEXT))
    if rendering == "junit":
        case = ET.Element("testcase")
        junit_failure(case, [entry])
        failure = ET.fromstring(ET.tostring(case)).find("failure")  # through XML and back
        return f"{failure.get('type')} {failure.get('message')}\n{failure.text}"
    if rendering == "html":
        return html.unescape(re.sub(r"<[^>]+>", " ", html_item(entry)))
    if rendering == "markdown":
        return re.sub(r"\\(.)", r"\1", markdown([entry])).replace("`", "")
    raise AssertionError(rendering)


def shown_fields(entry: FaultEntry) -> dict[str, tuple[str, object, str]]:
    """Each field a fault report shows: (its JSON key, its JSON value, the text a person reads)."""
    fault = entry.fault
    fields = {"bot": ("bot", fault.bot, fault.bot), "kind": ("kind", fault.kind, fault.kind),
              "game": ("game", fault.game, fault.game), "rule": ("rule", FAULT_KINDS[fault.kind], fault.rule),
              "detail": ("detail", fault.detail, detail_text(fault)), "sent": ("sent", sent_text(fault), sent_text(fault)),
              "reproduce": ("reproduce", entry.reproduce, entry.reproduce)}
    if fault.seat is not None:
        fields["seat"] = ("seat", fault.seat, f"seat {fault.seat}")
    if fault.decision is not None:
        fields["decision"] = ("decision", fault.decision, f"decision {fault.decision}")
    if fault.data and fault.message is None:  # the offending bytes, where they did not decode
        fields["bytes"] = ("data_hex", fault.data.hex(), "hex " + fault.data[:8].hex(" "))
    if fault.stderr_tail:
        fields["stderr"] = ("stderr_tail", fault.stderr_tail, fault.stderr_tail.splitlines()[-1])
    return fields


@pytest.mark.parametrize("shape", sorted(ENTRIES))
def test_one_fault_shows_the_same_fields_in_every_rendering(shape):
    entry = ENTRIES[shape]
    data = json.loads(json.dumps(json_entry(entry)))
    fields = shown_fields(entry)
    for name, (key, value, _) in fields.items():
        assert data[key] == value, name
    assert data["at_shutdown"] == entry.at_shutdown and data["game_id"] == entry.fault.game_id
    for rendering in ("text", "check text", "junit", "html", "markdown"):
        shown = visible_text(entry, rendering)
        missing = [name for name, (_, _, text) in fields.items() if text not in shown]
        assert missing == [], f"{rendering} leaves out {missing}:\n{shown}"
        if rendering != "check text":  # check names the table it set up, the others the game id
            assert entry.fault.game_id in shown, rendering
        if entry.at_shutdown and rendering not in ("check text", "junit"):
            assert f"at the shutdown after {entry.fault.game_id}" in shown, rendering


def test_hostile_bot_text_is_escaped_in_every_rendering():
    hostile = FaultEntry(Fault("protocol", "x<b>`*", "</code><script>alert(1)</script> \x1b[31m `` ", seat=0,
                               game="casino", game_id="g", decision=1, message={"type": "<img src=x>"}))
    assert "<script>" not in html_item(hostile) and "<img" not in html_item(hostile)
    for rendering in ("text", "check text", "junit", "html", "markdown"):
        assert "\x1b" not in visible_text(hostile, rendering) and "\\x1b[31m" in visible_text(hostile, rendering)
    text = markdown([hostile])
    assert "<script>" not in text and "x\\<b\\>\\`\\*" in text  # Markdown reads none of it as markup


@pytest.fixture
def results_with_faults(tmp_path) -> Path:
    """A results file with a fault in a game and a fault at its match's shutdown, the bots by command."""
    path = tmp_path / "t.sqlite"
    record = play_random("casino", ["alpha", "beta"], seed=5, fault_seat=1)
    record["game_id"] = "casino/alpha+beta/d0/r0"
    with ResultStore(path, create=True) as store:
        store.save_settings({"name": "t", "limits": {"decision_timeout": 2.0}})
        for name in ("alpha", "beta"):
            store.add_entrant(name, "digest", ["python3", f"{name}.py"], ["casino"], where={"folder": None, "cwd": "/bots"})
        store.add_game(record, "casino/alpha+beta", 0, 0, "casino/d0")
        store.add_match_faults("casino/alpha+beta", [Fault(
            "crash", "alpha", "did not exit with status 0 within 1.0 s of shutdown", game="casino",
            game_id=record["game_id"], stderr_tail="still thinking").to_dict()])
    return path


def test_the_html_report_shows_each_faults_reproduce_line_and_the_shutdown_faults(results_with_faults, tmp_path):
    listed = CliRunner().invoke(main, ["faults", str(results_with_faults), "--json"])
    assert listed.exit_code == 0, listed.output
    entries = [json.loads(line) for line in listed.output.splitlines()]
    assert [(entry["bot"], entry["at_shutdown"]) for entry in entries] == [("beta", False), ("alpha", True)]
    out = tmp_path / "report.html"
    write_report(results_with_faults, out, bootstrap=0, replays=False)
    page = html.unescape(re.sub(r"<[^>]+>", "", out.read_text()))  # as a person reads it
    for entry in entries:  # each line as `faults` prints it: one fault report, so the two cannot disagree
        assert f"reproduce: {entry['reproduce']}" in page
        words = shlex.split(entry["reproduce"])
        assert words[:2] == ["cd", "/bots"] and Path(words[3]).is_absolute() and words[4] == "play"
    assert "at the shutdown after casino/alpha+beta/d0/r0 (match casino/alpha+beta; no game's result changed)" in page
    assert "did not exit with status 0 within 1.0 s of shutdown" in page and "still thinking" in page
    assert '<details class="faults" data-bot="alpha">' in out.read_text()


def test_faults_prints_markdown_too(results_with_faults):
    listed = CliRunner().invoke(main, ["faults", str(results_with_faults), "--markdown"])
    assert listed.exit_code == 0, listed.output
    items = [line for line in listed.output.splitlines() if line.startswith("- ")]
    assert len(items) == 2 and items[0].startswith("- **beta**: illegal in casino/alpha\\+beta/d0/r0")
    assert "  - reproduce: ` cd /bots && " in listed.output
