"""What the starter kits' tests share (tests/test_kits_native.py, tests/test_kits_managed.py): the
kits, building them once per session, driving a kit's bot over pipes with hand-made frames, and
the tests every kit passes (each test module gives them its kits through a `language` fixture).

The shared tests check that a kit's bot passes `check` in every game, and that its library answers
the referee's edge cases (PROTOCOL.md § 2 framing and limits, § 4 every message type with unknown
keys, § 5 notifications delivered together, § 6 ranges). A kit whose toolchain is missing is
skipped with the reason.
"""

from __future__ import annotations

import glob
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from cardarena.protocol.actions import find_legal
from cardarena.protocol.framing import DEFAULT_MAX_FRAME, HEADER, decode_body, encode
from tests.conftest import ROOT
from tests.test_check import ALL_GAMES, build, junit_cases, run_check

SAMPLES = ROOT / "sample_bots"
#: What `from tests.kits_support import *` brings into a test module: the tests every kit passes.
__all__ = [
    "test_the_kits_bot_passes_check_in_every_game",
    "test_the_kit_answers_every_message_type_with_unknown_keys_and_ranges",
    "test_the_kit_reads_the_largest_frame_and_notifications_sent_together",
    "test_a_broken_stream_ends_the_kit_with_one_line_on_stderr_and_nothing_on_stdout",
]


@dataclass(frozen=True)
class Kit:
    """A starter kit: its build command (none for Ruby), and what its toolchain needs."""

    language: str
    build: tuple[str, ...] | None
    programs: tuple[str, ...]
    library: str | None  # a glob that matches once Debian's msgpack package is installed (npm ci fetches JS's)
    packages: str

    @property
    def folder(self) -> Path:
        return SAMPLES / self.language

    def missing(self) -> str | None:
        """Why this kit cannot be built here, or None."""
        absent = [program for program in self.programs if shutil.which(program) is None]
        if absent or (self.library is not None and not glob.glob(self.library)):
            return f"the {self.language} kit's toolchain is missing ({', '.join(absent) or self.library}): " \
                   f"apt-get install {self.packages} (CI does: see .ci/run)"
        return None


NATIVE = ("c", "cpp", "go", "rust")
MANAGED = ("js", "java", "ruby")
KITS = {kit.language: kit for kit in (
    Kit("c", ("make",), ("make", "cc"), "/usr/include/msgpack.h", "gcc make libmsgpack-dev"),
    Kit("cpp", ("make",), ("make", "g++"), "/usr/include/msgpack.hpp", "g++ make libmsgpack-cxx-dev"),
    Kit("go", ("make",), ("make", "go"), "/usr/share/gocode/src/github.com/vmihailenco/msgpack/v5",
        "golang-go golang-github-vmihailenco-msgpack.v5-dev"),
    Kit("rust", ("cargo", "build", "--release", "--quiet"), ("cargo",),
        "/usr/share/cargo/registry/rmp-serde-*", "cargo librust-rmp-serde-dev librust-serde-derive-dev"),
    Kit("js", ("npm", "ci", "--no-audit", "--no-fund"), ("node", "npm"), None, "nodejs npm"),
    Kit("java", ("make",), ("make", "javac", "java"), "/usr/share/java/msgpack-core.jar",
        "default-jdk make libmsgpack-java"),
    Kit("ruby", None, ("ruby",), "/usr/lib/*/rubygems-integration/*/gems/msgpack-*/lib/msgpack.rb",
        "ruby ruby-msgpack"),
)}
assert sorted(KITS) == sorted(NATIVE + MANAGED)
_BUILT: set[str] = set()


def built(language: str) -> Path:
    """The kit's folder, its bot built once per session (skips, saying why, without its toolchain)."""
    kit = KITS[language]
    if language not in _BUILT:
        if (reason := kit.missing()) is not None:
            pytest.skip(reason)
        if kit.build is not None:
            build(list(kit.build), kit.folder)
        _BUILT.add(language)
    return kit.folder


def language_fixture(languages: tuple[str, ...]):
    """A `language` fixture that runs the shared tests once for each of these kits."""

    @pytest.fixture(params=languages)
    def language(request) -> str:
        return request.param

    return language


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


def talk(language: str, *messages: dict | bytes, seed: int = 1) -> subprocess.CompletedProcess:
    """Runs the kit's bot (its bot.toml command, with --seed `seed`) on the given frames, all sent
    at once, and waits for it to exit."""
    data = b"".join(m if isinstance(m, bytes) else frame(m) for m in messages)
    folder = built(language)
    command = tomllib.loads((folder / "bot.toml").read_text())["command"]
    assert command[-2:] == ["--seed", "1"], command
    return subprocess.run([*command[:-1], str(seed)], input=data, capture_output=True, timeout=30, cwd=folder)


HELLO = {"type": "hello", "protocol": 1, "referee": "cardarena", "future_key": [1, {"x": None}]}
RANGE_LEGAL = [{"type": "fund", "amount": {"min": 10, "max": 263}}, {"type": "retire"}]


def game_start(game_id: str = "quitlok/a+b/d1/r0", seat: int = 2, **extra) -> dict:
    return {"type": "game_start", "game_id": game_id, "game": "quitlok", "rules_version": "1", "seat": seat,
            "players": 5, "names": ["a", "b", "c", "d", "e"], "teams": None, "options": {"rounds": 3}, **extra}


def decision(number: int, legal: list[dict], game_id: str = "quitlok/a+b/d1/r0", view: dict | None = None,
             **extra) -> dict:
    return {"type": "decision", "game_id": game_id, "decision": number, "seat": 2,
            "view": view if view is not None else {"hand": ["Q3", "Q12"], "stacks": [100] * 5},
            "events": [{"type": "fund", "seat": 1, "amount": 40}], "legal": legal, "time_ms": 1000, "bank_ms": 0,
            **extra}


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



def test_the_kits_bot_passes_check_in_every_game(language, tmp_path):
    built(language)
    junit = tmp_path / "junit.xml"
    status, out, _ = run_check(str(KITS[language].folder), "--games-per-game", "1", "--junit", str(junit))
    assert status == 0, out
    assert "handshake: ok" in out and "shutdown: ok" in out
    cases = junit_cases(junit)
    assert sorted(cases) == ALL_GAMES and all(case.find("failure") is None for case in cases.values())


def test_the_kit_answers_every_message_type_with_unknown_keys_and_ranges(language):
    done = talk(language, HELLO, game_start(extra_key="later"), decision(7, RANGE_LEGAL, extra_key=3),
                decision(9, [{"type": "bet", "amount": {"min": 5, "max": 5}}], bank_ms=2500),
                decision(11, [{"type": "bet", "amount": {"min": 0, "max": 2**40}}]), GAME_END, SHUTDOWN)
    assert done.returncode == 0, done.stderr.decode()
    hello, *actions = replies(done.stdout)
    assert hello == {"type": "hello", "protocol": 1, "name": f"{language}-random", "version": hello["version"]}
    assert isinstance(hello["version"], str)
    assert [a["decision"] for a in actions] == [7, 9, 11] and all(a["type"] == "action" for a in actions)
    assert find_legal(RANGE_LEGAL, actions[0]["action"]) is not None
    assert actions[1]["action"] == {"type": "bet", "amount": 5}
    assert type(actions[2]["action"]["amount"]) is int and 0 <= actions[2]["action"]["amount"] <= 2**40


def test_the_kit_reads_the_largest_frame_and_notifications_sent_together(language):
    """A 1 MiB decision, then a game_end sent together with the next game's start and decision."""
    done = talk(language, HELLO, game_start(), padded_decision(3, DEFAULT_MAX_FRAME), GAME_END,
                game_start("quitlok/a+b/d2/r0"), decision(4, RANGE_LEGAL, game_id="quitlok/a+b/d2/r0"))
    assert done.returncode == 0, done.stderr.decode()  # the end of input without shutdown is a clean exit
    _, first, second = replies(done.stdout)
    assert (first["decision"], second["decision"]) == (3, 4)
    assert find_legal(RANGE_LEGAL, first["action"]) and find_legal(RANGE_LEGAL, second["action"])


@pytest.mark.parametrize("stream, complaint", [
    (HEADER.pack(2**31), "too large"),
    (frame(HELLO)[:10], "inside a frame"),
    (frame({"type": "rematch"}), "rematch"),
])
def test_a_broken_stream_ends_the_kit_with_one_line_on_stderr_and_nothing_on_stdout(language, stream, complaint):
    done = talk(language, stream)
    assert done.returncode == 1 and done.stdout == b""
    assert complaint in done.stderr.decode() and len(done.stderr.decode().strip().splitlines()) == 1
