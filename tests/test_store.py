"""A damaged results file: every command that opens it says so in one line (exit 1, no traceback),
and `cardarena salvage` copies every readable game into a new file that the other commands take."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardarena.cli import main
from cardarena.tournament.store import ResultStore, StoreError, salvage
from tests.conftest import RANDOM_BOT

GAMES = 300
PAGE = 4096


def record(number: int) -> dict:
    """A finished two-seat casino game between a and b (the winner alternates with the deal)."""
    winner = number // 2 % 2
    return {"game_id": f"casino/a+b/d{number // 2}/r{number % 2}", "game": "casino", "rules_version": "1",
            "options": {}, "seed": number, "seats": ["a", "b"] if number % 2 == 0 else ["b", "a"],
            "actions": [[number % 2, {"type": "trail", "card": "QS"}]] * 40,
            "result": {"scores": [1 - winner, winner], "teams": None},
            "ranks": [winner, 1 - winner], "faults": [], "duration": 0.01}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """A results file of GAMES games, written the way `run` writes them (once for the module)."""
    path = tmp_path_factory.mktemp("written") / "good.sqlite"
    with ResultStore(path, create=True) as store:
        store.db.execute("PRAGMA synchronous = OFF")  # no fsync per game: this is a fixture
        store.save_settings({"seed": 1})
        for name in "ab":
            store.add_entrant(name, "0" * 16, ["python3", "bot.py"], ["casino"])
        for number in range(GAMES):
            game = record(number)
            store.add_game(game, "casino/a+b", number // 2, number % 2, game["game_id"].rsplit("/", 1)[0])
    return path


@pytest.fixture
def good(written, tmp_path) -> Path:
    """A fresh copy of the written results file."""
    path = tmp_path / "good.sqlite"
    path.write_bytes(written.read_bytes())
    return path


def damaged(good: Path, kind: str) -> Path:
    """A copy of `good` with one kind of damage."""
    data = good.read_bytes()
    rng = random.Random(kind)
    if kind == "truncated":
        data = data[:len(data) // 2]
    elif kind == "page-garbage":
        page = len(data) // PAGE // 2
        data = data[:page * PAGE] + rng.randbytes(PAGE) + data[(page + 1) * PAGE:]
    elif kind == "random-bytes":
        data = rng.randbytes(len(data))
    elif kind == "empty":
        data = b""
    path = good.with_name(f"{kind}.sqlite")
    path.write_bytes(data)
    return path


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def one_line_exit_1(result) -> str:
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


EXPECTED = {
    "truncated": "the results file is corrupt (SQLite: database disk image is malformed); "
                 "copy every readable game into a new file with: cardarena salvage",
    "page-garbage": "the results file is corrupt (SQLite: ",
    "random-bytes": "is not a cardarena results database (SQLite: file is not a database)",
    "empty": "is empty, not a cardarena results database",
}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_every_command_that_opens_a_damaged_file_says_so_in_one_line(good, kind, refused_before_any_bot):
    path = damaged(good, kind)
    before = path.read_bytes()
    bots = [arg for name in "ab" for arg in ("--bot", f"{name}={sys.executable} {RANDOM_BOT}")]
    for args in (["leaderboard", str(path)], ["replay", str(path), "casino/a+b/d0/r0"],
                 ["run", *bots, "--game", "casino", "--seed", "1", "--out", str(path), "--resume"]):
        line = one_line_exit_1(invoke(*args))
        assert line.startswith(f"Error: {path}: ") and EXPECTED[kind] in line, line
    assert path.read_bytes() == before  # nothing written into it


@pytest.mark.parametrize("kind", ["truncated", "page-garbage"])
def test_salvage_copies_the_readable_games_into_a_file_the_other_commands_take(good, kind):
    path = damaged(good, kind)
    before = path.read_bytes()
    out = path.with_name("salvaged.sqlite")
    done = invoke("salvage", str(path), str(out))
    assert done.exit_code == 0, done.output
    assert path.read_bytes() == before
    with ResultStore(out) as store:
        games = list(store.games(actions=True))
        assert store.settings() == {"seed": 1} and set(store.entrants()) == {"a", "b"}
        assert store.deal_secret() == ResultStore(good).deal_secret()
        assert all(game.actions == [tuple(a) for a in record(game.seed)["actions"]] for game in games)
    assert 0 < len(games) < GAMES
    assert f"salvaged {len(games)} games and 2 bots" in done.output
    assert "damaged stretch(es) skipped" in done.output
    board = invoke("leaderboard", str(out), "--bootstrap", "0")
    assert board.exit_code == 0 and " a " in board.output, board.output
    assert "already exists" in one_line_exit_1(invoke("salvage", str(path), str(out)))


def test_salvage_of_an_intact_file_copies_everything(good, tmp_path):
    report = salvage(good, tmp_path / "copy.sqlite")
    assert (report.games, report.entrants, report.settings, report.unreadable, report.incomplete_games) == \
        (GAMES, 2, True, {}, 0)


@pytest.mark.parametrize("kind", ["random-bytes", "empty"])
def test_salvage_of_a_file_with_nothing_readable_is_one_line(good, kind):
    path = damaged(good, kind)
    line = one_line_exit_1(invoke("salvage", str(path), str(path.with_name("out.sqlite"))))
    assert "nothing could be read from it" in line and not path.with_name("out.sqlite").exists()


def test_damage_met_deep_in_a_query_is_a_store_error(good):
    """A page that goes bad after the file was opened (and checked) fails the read, not the program."""
    with ResultStore(good) as store:
        store.db.execute("PRAGMA cache_size = 1")  # read pages from the file again, as a big file would
        data = bytearray(good.read_bytes())
        middle = len(data) // PAGE // 2
        with open(good, "r+b") as file:
            file.seek(middle * PAGE)
            file.write(os.urandom(PAGE))
        with pytest.raises(StoreError, match="the results file is corrupt"):
            list(store.games(actions=True))
