"""The human seat, played through a pseudo-terminal: a whole game of each game, typed answers,
wrong entries asked again, no deadline for the person, and `play`'s readable and JSON output."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardarena.protocol.actions import find_legal
from cardarena.cli import main
from cardarena.games import get_game
from cardarena.referee import sandbox

pexpect = pytest.importorskip("pexpect", reason="pexpect is not installed (pip install -e '.[test]')")

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = str(ROOT / "sample_bots" / "random")
PLAYERS = {"casino": 2, "cuajo": 4, "knock-rummy": 2, "quitlok": 5}
CHOICE = re.compile(r"choose 1-(\d+): ")
AMOUNT = re.compile(r"(\w+) \((-?\d+) to (-?\d+)\): ")


def play_as_human(game: str, tmp_path: Path, seed: int, first_answers: list[str] = (), pause: float = 0.0):
    """Play GAME in seat 0 through a pseudo-terminal, always taking choice 1 and the smallest amount.
    The first prompt gets `first_answers` typed before the real answer, after `pause` seconds."""
    record = tmp_path / f"{game}.json"
    args = ["-m", "cardarena.cli", "play", game, "--bot", "me=human",
            *[arg for _ in range(PLAYERS[game] - 1) for arg in ("--bot", RANDOM_BOT)],
            "--seed", str(seed), "--no-pin", "--timeout", "0.5", "--record", str(record)]
    child = pexpect.spawn(sys.executable, args, cwd=str(ROOT), encoding="utf-8", timeout=30,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, dimensions=(50, 200))
    transcript = []
    prompts = 0
    answers = list(first_answers)
    try:
        while True:
            index = child.expect([CHOICE, AMOUNT, r"decisions in", pexpect.EOF])
            transcript.append(child.before)
            if index >= 2:
                break
            prompts += 1
            if prompts == 1 and pause:
                time.sleep(pause)
            while answers:
                child.sendline(answers.pop(0))
                child.expect(r"is not a number from \d+ to \d+; try again")
                transcript.append(child.before + child.after)
                child.expect([CHOICE, AMOUNT])
            child.sendline("1" if index == 0 else child.match.group(2))
        child.expect(pexpect.EOF)
        transcript.append(child.before)
    finally:
        child.close()
    output = "".join(transcript)
    assert child.exitstatus == 0, output[-2000:]
    return output, json.loads(record.read_text()), prompts


def chosen_as_first(game_name: str, record: dict) -> list[bool]:
    """For each of seat 0's actions: was it the first legal entry (ranges at their minimum)?"""
    game = get_game(game_name)
    state = game.new_state(len(record["seats"]), record["options"], record["seed"])
    verdicts = []
    for seat, action in record["actions"]:
        legal = state.legal_actions()
        assert find_legal(legal, action) is not None
        if seat == 0:
            first = {key: value["min"] if isinstance(value, dict) else value for key, value in legal[0].items()}
            verdicts.append(action == first)
        state.apply(action)
    return verdicts


@pytest.mark.parametrize("game", sorted(PLAYERS))
def test_a_person_plays_a_whole_game(game, tmp_path):
    output, record, prompts = play_as_human(game, tmp_path, seed=2)
    assert record["faults"] == [] and record["seats"][0] == "me"
    verdicts = chosen_as_first(game, record)
    assert verdicts and all(verdicts)  # every typed answer became exactly the action chosen
    assert prompts >= 1
    assert "your choices:" in output and "  1) " in output
    # the other seats' moves appear as they happen, and the deal shows no other seat's hand
    assert re.search(r"^\s+\d+  random \(seat 1\): ", output, re.M)
    deal = re.search(r"deal:\r?\n((?:    .*\r?\n)*)", output).group(1)
    assert deal and "(seat 1): " not in deal
    assert re.search(r"^\s+0\s+me\s", output, re.M)  # the result table


def test_a_wrong_entry_is_asked_again_and_a_person_has_no_deadline(tmp_path):
    output, record, _ = play_as_human("knock-rummy", tmp_path, seed=5, first_answers=["x", "0", "99", ""], pause=1.5)
    assert record["faults"] == []  # 1.5 s over the bots' 0.5 s limit, and four wrong entries: no fault
    assert output.count("is not a number from 1 to") == 4
    assert all(chosen_as_first("knock-rummy", record))


def test_a_human_seat_needs_a_terminal():
    result = CliRunner().invoke(main, ["play", "casino", "--bot", "me=human", "--bot", RANDOM_BOT])
    assert result.exit_code == 2
    assert "a human seat (human) needs a terminal" in result.output


def test_play_prints_cards_and_json_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "freezes_bots", lambda confined: False)  # a machine that warns: never into the JSON
    runner = CliRunner()
    bots = ["--bot", RANDOM_BOT, "--bot", RANDOM_BOT, "--seed", "3", "--no-pin"]
    text = runner.invoke(main, ["play", "knock-rummy", *bots])
    assert text.exit_code == 0, text.output
    assert "deal:" in text.output and "random (seat 0): " in text.output
    assert re.search(r"[AJQK2-9][♠♥♦♣]", text.output) and "{" not in text.output.split("deal:")[1].split("\n\n")[0]
    machine = runner.invoke(main, ["play", "knock-rummy", *bots, "--json"])
    assert machine.exit_code == 0, machine.output
    lines = [json.loads(line) for line in machine.stdout.splitlines()]
    assert "warning: no freezer cgroup can be made here" in machine.stderr, machine.stderr
    assert [lines[0]["type"], lines[-1]["type"]] == ["deal", "result"]
    decisions = [line for line in lines if line["type"] == "decision"]
    assert [[d["seat"], d["action"]] for d in decisions] == lines[-1]["actions"]
