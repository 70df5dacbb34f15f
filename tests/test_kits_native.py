"""The C, C++, Go and Rust starter kits (sample_bots/<language>/): each kit's bot passes `check`
in every game, they play a tournament with the Python sample bots without a fault, and each kit's
library answers the referee's edge cases (PROTOCOL.md § 2 framing and limits, § 4 every message
type with unknown keys, § 5 notifications delivered together, § 6 ranges) by driving its binary
over pipes with hand-made frames.

A kit whose toolchain is missing is skipped with the reason; each kit is built once per session.
"""

from __future__ import annotations

import glob
import json
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from cardarena.protocol.actions import find_legal
from cardarena.protocol.framing import DEFAULT_MAX_FRAME, HEADER, decode_body, encode
from tests.conftest import ROOT
from tests.test_check import ALL_GAMES, build, junit_cases, run_check

SAMPLES = ROOT / "sample_bots"


@dataclass(frozen=True)
class Kit:
    """A starter kit: its folder, build command, binary, and what its toolchain needs."""

    language: str
    build: tuple[str, ...]
    binary: str
    programs: tuple[str, ...]
    library: str  # a glob that matches once Debian's msgpack package is installed
    packages: str

    @property
    def folder(self) -> Path:
        return SAMPLES / self.language

    def missing(self) -> str | None:
        """Why this kit cannot be built here, or None."""
        absent = [program for program in self.programs if shutil.which(program) is None]
        if absent or not glob.glob(self.library):
            return f"the {self.language} kit's toolchain is missing ({', '.join(absent) or self.library}): " \
                   f"apt-get install {self.packages} (CI does: see .ci/run)"
        return None


KITS = {kit.language: kit for kit in (
    Kit("c", ("make",), "bot", ("make", "cc"), "/usr/include/msgpack.h", "gcc make libmsgpack-dev"),
    Kit("cpp", ("make",), "bot", ("make", "g++"), "/usr/include/msgpack.hpp", "g++ make libmsgpack-cxx-dev"),
    Kit("go", ("make",), "bot", ("make", "go"), "/usr/share/gocode/src/github.com/vmihailenco/msgpack/v5",
        "golang-go golang-github-vmihailenco-msgpack.v5-dev"),
    Kit("rust", ("cargo", "build", "--release", "--quiet"), "target/release/bot", ("cargo",),
        "/usr/share/cargo/registry/rmp-serde-*", "cargo librust-rmp-serde-dev librust-serde-derive-dev"),
)}
_BUILT: dict[str, Path] = {}


def built(language: str) -> Path:
    """The kit's bot binary, built once per session (skips, saying why, without its toolchain)."""
    kit = KITS[language]
    if language not in _BUILT:
        if (reason := kit.missing()) is not None:
            pytest.skip(reason)
        build(list(kit.build), kit.folder)
        _BUILT[language] = kit.folder / kit.binary
    return _BUILT[language]


def frame(message: dict) -> bytes:
    return encode(message)


def replies(stdout: bytes) -> list[dict]:
    """The frames a bot wrote, decoded under the referee's limits (no bin, no extension types)."""
    messages = []
    while stdout:
        (length,) = HEADER.unpack(stdout[:4])
        assert length <= DEFAULT_MAX_FRAME
        messages.append(decode_body(stdout[4:4 + length]))
        stdout = stdout[4 + length:]
    return messages


def talk(binary: Path, *messages: dict | bytes, seed: int = 1) -> subprocess.CompletedProcess:
    """Runs the kit's bot on the given frames (all sent at once) and waits for it to exit."""
    data = b"".join(m if isinstance(m, bytes) else frame(m) for m in messages)
    return subprocess.run([str(binary), "--seed", str(seed)], input=data, capture_output=True, timeout=20,
                          cwd=binary.parent)


HELLO = {"type": "hello", "protocol": 1, "referee": "cardarena", "future_key": [1, {"x": None}]}
RANGE_LEGAL = [{"type": "fund", "amount": {"min": 10, "max": 263}}, {"type": "retire"}]


def game_start(game_id: str = "quitlok/a+b/d1/r0", seat: int = 2, **extra) -> dict:
    return {"type": "game_start", "game_id": game_id, "game": "quitlok", "rules_version": "1", "seat": seat,
            "players": 5, "names": ["a", "b", "c", "d", "e"], "teams": None, "options": {"rounds": 3}, **extra}


def decision(number: int, legal: list[dict], game_id: str = "quitlok/a+b/d1/r0", view: dict | None = None,
             **extra) -> dict:
    return {"type": "decision", "game_id": game_id, "decision": number, "seat": 2,
            "view": view if view is not None else {"hand": ["Q3", "Q12"], "stacks": [100] * 5},
            "events": [{"type": "fund", "seat": 1, "amount": 40}], "legal": legal, "time_ms": 1000, **extra}


GAME_END = {"type": "game_end", "game_id": "quitlok/a+b/d1/r0",
            "result": {"scores": [1, [1, 2], 0, 0, 0], "ranks": [0, 1, 2, 2, 2], "teams": None},
            "reveal": {"hands": [["Q1"], [], [], [], []]}, "events": [{"type": "round_end"}], "faults": [],
            "unknown_later_key": True}
SHUTDOWN = {"type": "shutdown"}


def padded_decision(number: int, size: int) -> dict:
    """A decision whose frame body is exactly `size` bytes (a view padded with 60,000-byte strings)."""
    message = decision(number, RANGE_LEGAL, view={"padding": []})
    base = len(frame(message)) - 4 - 1 + 3  # the padding list becomes an array16
    chunks, rest = divmod(size - base, 60_003)  # each str16 chunk: 3 header bytes + 60,000
    padding = ["x" * 60_000] * chunks + ["y" * (rest - 3)]
    message["view"]["padding"] = padding
    assert len(frame(message)) - 4 == size
    return message


@pytest.mark.parametrize("language", KITS)
def test_the_kits_bot_passes_check_in_every_game(language, tmp_path):
    built(language)
    junit = tmp_path / "junit.xml"
    status, out, _ = run_check(str(KITS[language].folder), "--games-per-game", "1", "--junit", str(junit))
    assert status == 0, out
    assert "handshake: ok" in out and "shutdown: ok" in out
    cases = junit_cases(junit)
    assert sorted(cases) == ALL_GAMES and all(case.find("failure") is None for case in cases.values())


@pytest.mark.parametrize("language", KITS)
def test_the_kit_answers_every_message_type_with_unknown_keys_and_ranges(language):
    done = talk(built(language), HELLO, game_start(extra_key="later"), decision(7, RANGE_LEGAL, extra_key=3),
                decision(9, [{"type": "bet", "amount": {"min": 5, "max": 5}}]),
                decision(11, [{"type": "bet", "amount": {"min": 0, "max": 2**40}}]), GAME_END, SHUTDOWN)
    assert done.returncode == 0, done.stderr.decode()
    hello, *actions = replies(done.stdout)
    assert hello == {"type": "hello", "protocol": 1, "name": f"{language}-random", "version": hello["version"]}
    assert isinstance(hello["version"], str)
    assert [a["decision"] for a in actions] == [7, 9, 11] and all(a["type"] == "action" for a in actions)
    assert find_legal(RANGE_LEGAL, actions[0]["action"]) is not None
    assert actions[1]["action"] == {"type": "bet", "amount": 5}
    assert type(actions[2]["action"]["amount"]) is int and 0 <= actions[2]["action"]["amount"] <= 2**40


@pytest.mark.parametrize("language", KITS)
def test_the_kit_reads_the_largest_frame_and_notifications_sent_together(language):
    """A 1 MiB decision, then a game_end sent together with the next game's start and decision."""
    done = talk(built(language), HELLO, game_start(), padded_decision(3, DEFAULT_MAX_FRAME), GAME_END,
                game_start("quitlok/a+b/d2/r0"), decision(4, RANGE_LEGAL, game_id="quitlok/a+b/d2/r0"))
    assert done.returncode == 0, done.stderr.decode()  # the end of input without shutdown is a clean exit
    _, first, second = replies(done.stdout)
    assert (first["decision"], second["decision"]) == (3, 4)
    assert find_legal(RANGE_LEGAL, first["action"]) and find_legal(RANGE_LEGAL, second["action"])


@pytest.mark.parametrize("language", KITS)
@pytest.mark.parametrize("stream, complaint", [
    (HEADER.pack(2**31), "too large"),
    (frame(HELLO)[:10], "inside a frame"),
    (frame({"type": "rematch"}), "rematch"),
])
def test_a_broken_stream_ends_the_kit_with_one_line_on_stderr_and_nothing_on_stdout(language, stream, complaint):
    done = talk(built(language), stream)
    assert done.returncode == 1 and done.stdout == b""
    assert complaint in done.stderr.decode() and len(done.stderr.decode().strip().splitlines()) == 1


def test_every_kit_plays_the_same_seeded_game_the_same_way():
    """The kits share one generator, seeded per game (seed, game id, seat): the same frames get
    the same answers from each, and another game id or seed gets other answers."""
    legal = [{"type": "discard", "card": card} for card in ("AS", "10D", "QH", "7C", "2S", "KD", "9H")]
    script = [HELLO, game_start()] + [decision(n, legal) for n in range(1, 9)] + [SHUTDOWN]
    answers = {}
    for language in KITS:
        if KITS[language].missing() is None:
            answers[language] = replies(talk(built(language), *script).stdout)[1:]
    if len(answers) < 2:
        pytest.skip("fewer than two kits' toolchains are installed (CI installs them: see .ci/run)")
    language = next(iter(answers))
    assert all(answer == answers[language] for answer in answers.values()), answers
    assert replies(talk(built(language), *script, seed=2).stdout)[1:] != answers[language]


def test_the_kits_and_the_python_sample_bots_play_a_tournament_without_a_fault(tmp_path):
    kits = [language for language in KITS if KITS[language].missing() is None]
    if not kits:
        pytest.skip("no kit's toolchain is installed (CI installs them: see .ci/run)")
    bots = [str(KITS[language].folder) for language in kits if built(language)]
    bots += [str(SAMPLES / "random"), str(SAMPLES / "heuristic")]
    out = tmp_path / "kits.sqlite"
    done = subprocess.run(
        [sys.executable, "-m", "cardarena.cli", "run", *[arg for b in bots for arg in ("--bot", b)],
         "--deals", "1", "--max-tables", "2", "--timeout", "5", "--jobs", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(out) as db:
        faults = [row[0] for row in db.execute("SELECT faults FROM games")]
        shutdown_faults = db.execute("SELECT COUNT(*) FROM match_faults").fetchone()[0]
    assert len(faults) >= 8 and all(json.loads(f) == [] for f in faults) and shutdown_faults == 0, done.stdout
