"""Faults of bots at a match's shutdown (after its last game) are stored, listed and counted, once each."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from cardarena.referee.faults import Fault
from cardarena.tournament.store import ResultStore, salvage
from tests.conftest import zoo_script
from tests.test_tournament import bot, cardarena


@pytest.fixture(scope="module")
def bots(tmp_path_factory) -> list[str]:
    """`stubborn` (ignores shutdown) and `talker` (late_talker.py: a frame after each game's end), each in a
    folder of its own."""
    folder = tmp_path_factory.mktemp("bots")
    return ["--bot", f"stubborn={sys.executable} {zoo_script(folder, 'stubborn.py')}",
            "--bot", f"talker={sys.executable} {zoo_script(folder, 'late_talker.py')}"]


def run_args(out: Path, bots: list[str], *extra: str) -> list[str]:
    """One Knock Rummy table of `stubborn` (ignores shutdown) and `talker` (late_talker.py: a frame after each
    game's end): one deal in two rotations, so the match shuts its bots down after each of its two games. The
    lineup is in name order, so stubborn's shutdown grace passes before talker's late frame is looked for."""
    return ["run", "--game", "knock-rummy", "--players", "knock-rummy=2", "--deals", "1", "--seed", "3",
            "--timeout", "10", "--jobs", "1", "--bootstrap", "0", "--out", str(out), *bots, *extra]


def stored_rows(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT game_id, bot, kind FROM match_faults ORDER BY game_id, bot").fetchall()


@pytest.fixture(scope="module")
def played(tmp_path_factory, bots) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("shutdown") / "t.sqlite"
    return out, cardarena(*run_args(out, bots, "--strict"))


def test_shutdown_faults_are_stored_labelled_and_make_strict_fail(played):
    out, done = played
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    with ResultStore(out) as store:
        games = {game.game_id: game for game in store.games(actions=True)}
        stored = store.match_faults()
        # the referee delivers game_end at once to the bot that decided last only (the others get it with
        # the next message, here the shutdown): so talker's late frame comes before the shutdown there
        talker_last = [game_id for game_id, game in games.items()
                       if game.seats[game.actions[-1][0]] == "talker"]
    assert len(games) == 2 and all(game.faults == [] for game in games.values())  # no result changed
    assert talker_last  # the seed makes it so in one of the two games
    assert sorted((s.game_id, s.fault.bot, s.fault.kind) for s in stored) == sorted(
        [(game_id, "stubborn", "crash") for game_id in games] + [(game_id, "talker", "protocol") for game_id in talker_last])
    assert {s.match_id for s in stored} == {game.match_id for game in games.values()}
    assert "warning: stubborn: crash at the shutdown after game" in done.stderr
    assert "warning: talker: protocol at the shutdown after game" in done.stderr
    assert "did not shut down cleanly" not in done.stderr
    assert f"talker: {len(talker_last)} fault" in done.stdout and "stubborn: 2 faults (crash 2)" in done.stdout


def test_faults_lists_them_with_match_last_game_kind_detail_and_evidence(played):
    out, _ = played
    listed = cardarena("faults", str(out), "--json")
    assert listed.returncode == 0, listed.stderr
    entries = [json.loads(line) for line in listed.stdout.splitlines()]
    assert len(entries) == 2 + len({entry["game_id"] for entry in entries if entry["bot"] == "talker"})
    assert all(entry["at_shutdown"] for entry in entries)
    talker = [entry for entry in entries if entry["bot"] == "talker"]
    assert all("bytes after its last game ended" in entry["detail"] and entry["sent"].startswith("{")
               and "talker" in entry["reproduce"] for entry in talker)
    stubborn = [entry for entry in entries if entry["bot"] == "stubborn"]
    assert all("within 1.0 s of shutdown" in entry["detail"] and entry["match_id"] for entry in stubborn)
    text = cardarena("faults", str(out), "--bot", "stubborn")
    assert "stubborn: crash at the shutdown after knock-rummy" in text.stdout and "2 faults of stubborn" in text.stdout


def test_a_portion_played_again_on_resume_stores_its_shutdown_faults_once(played, bots, tmp_path):
    out, _ = played
    copy = tmp_path / "t.sqlite"
    copy.write_bytes(out.read_bytes())
    before = stored_rows(copy)
    with sqlite3.connect(copy) as db:  # the last game lost, as by a run killed before storing it
        last = db.execute("SELECT max(game_id) FROM games").fetchone()[0]
        db.execute("DELETE FROM actions WHERE game_id = ?", (last,))
        db.execute("DELETE FROM games WHERE game_id = ?", (last,))
    again = cardarena(*run_args(copy, bots, "--resume"))
    assert again.returncode == 0 and "(1 already played)" in again.stderr, again.stderr
    assert "warning: stubborn: crash at the shutdown after game " + last in again.stderr  # produced again ...
    assert stored_rows(copy) == before  # ... and stored once


def test_the_store_skips_a_shutdown_fault_it_holds(tmp_path):
    with ResultStore(tmp_path / "t.sqlite", create=True) as store:
        fault = {"kind": "crash", "bot": "x", "detail": "d", "game_id": "g-1"}
        assert store.add_match_faults("m", [fault, fault]) == 2  # two processes of one bot at the table
        assert store.add_match_faults("m", [fault, fault]) == 0
        assert [stored.fault for stored in store.match_faults()] == [Fault.from_dict(fault)] * 2


def test_salvage_copies_shutdown_faults(played, tmp_path):
    out, _ = played
    report = salvage(out, tmp_path / "s.sqlite")
    assert report.match_faults == len(stored_rows(out)) >= 3 and report.unreadable == {}
    assert stored_rows(tmp_path / "s.sqlite") == stored_rows(out)


def test_an_older_file_without_the_table_still_opens_and_resumes(tmp_path):
    out = tmp_path / "old.sqlite"
    done = cardarena("run", "--game", "casino", "--deals", "1", "--seed", "1", "--jobs", "1", "--bootstrap", "0",
                     "--out", str(out), "--bot", bot("a", 1), "--bot", bot("b", 2))
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(out) as db:
        db.execute("DROP TABLE match_faults")  # as written before shutdown faults were kept
    board = cardarena("leaderboard", str(out))
    listed = cardarena("faults", str(out))
    assert board.returncode == 0 and "faults: the bot's faults in its games" in " ".join(board.stdout.split())
    assert listed.returncode == 0 and listed.stdout.startswith("0 faults in 2 games"), listed.stdout
    assert salvage(out, tmp_path / "s.sqlite").unreadable == {}
    with ResultStore(out) as store:
        assert store.match_faults() == []
        assert store.add_match_faults("m", [{"kind": "crash", "bot": "a", "detail": "d", "game_id": "g"}]) == 1
