"""The JavaScript/TypeScript, Java and Ruby starter kits (sample_bots/<language>/): each kit's bot
passes `check` in every game and each kit's library answers the referee's edge cases, by the tests
every kit shares (tests/kits_support.py); then every kit, native ones included, plays the same
seeded game the same way, and all of them play a tournament with the Python sample bots.
"""

from __future__ import annotations

import json
import resource
import shutil
import sqlite3
import subprocess
import sys
import tomllib

import pytest

from cardarena.protocol.framing import decode_body
from cardarena.config import SandboxSettings
from tests.kits_support import *  # noqa: F403 (the tests every kit passes)
from tests.kits_support import (
    HELLO, KITS, MANAGED, SAMPLES, SHUTDOWN, built, decision, frame, game_start, language_fixture, replies, talk,
)

language = language_fixture(MANAGED)


def test_every_kit_plays_the_same_seeded_game_the_same_way():
    """The kits share one generator, seeded per game (seed, game id, seat): the same frames get
    the same answers from each, and another game id or seed gets other answers."""
    legal = [{"type": "discard", "card": card} for card in ("AS", "10D", "QH", "7C", "2S", "KD", "9H")]
    script = [HELLO, game_start()] + [decision(n, legal) for n in range(1, 9)] + [SHUTDOWN]
    answers = {kit: replies(talk(kit, *script).stdout)[1:]
               for kit in KITS if KITS[kit].missing() is None}
    if len(answers) < 2:
        pytest.skip("fewer than two kits' toolchains are installed (CI installs them: see .ci/run)")
    first = next(iter(answers))
    assert len(answers[first]) == 8
    assert all(answer == answers[first] for answer in answers.values()), answers
    assert replies(talk(first, *script, seed=2).stdout)[1:] != answers[first]
    other_game = [HELLO, game_start("quitlok/a+b/d2/r0")] + [decision(n, legal) for n in range(1, 9)] + [SHUTDOWN]
    assert replies(talk(first, *other_game).stdout)[1:] != answers[first]


TYPED_BOT = """import cardarena = require(%s);
const bot: cardarena.Bot = {
  decide(decision, rng) {
    const card = cardarena.parseCard(decision.legal[0].card);
    if (card !== null && card.deck === "french") return cardarena.withInt(decision.legal[0], "amount", card.rank);
    return %s;
  },
};
cardarena.run(bot, { name: "typed", seed: 1n });
"""


def test_the_js_kits_types_check_a_typescript_bot_and_the_kits_bot_without_a_compile_step(tmp_path):
    """cardarena.d.ts gives TypeScript authors (and `tsc --checkJs` on bot.js) the library's types,
    and they catch a decide that returns no action."""
    if shutil.which("tsc") is None:
        pytest.skip("no tsc to check the JS kit's types: apt-get install node-typescript (CI does: see .ci/run)")
    folder = built("js")
    library = json.dumps(str(folder / "cardarena"))
    tsc = ["tsc", "--noEmit", "--strict", "--allowJs", "--checkJs", "--module", "commonjs", "--target", "es2020"]
    (tmp_path / "good.ts").write_text(TYPED_BOT % (library, "cardarena.randomAction(decision.legal, rng)"))
    (tmp_path / "bad.ts").write_text(TYPED_BOT % (library, "decision.legal.length"))
    # one compiler run for all three files (tsc starts slowly): only bad.ts may have errors
    checked = subprocess.run([*tsc, str(tmp_path / "good.ts"), str(tmp_path / "bad.ts"), str(folder / "bot.js")],
                             capture_output=True, text=True, timeout=120)
    errors = [line for line in checked.stdout.splitlines() if ": error TS" in line]
    assert checked.returncode != 0 and errors, checked.stdout
    assert all(line.split("(", 1)[0].endswith("/bad.ts") for line in errors), checked.stdout
    assert "not assignable to type 'Action'" in checked.stdout


def test_the_ruby_kit_sends_binary_strings_as_str():
    """Ruby's msgpack packs an ASCII-8BIT string as bin, which the referee refuses (PROTOCOL.md § 2):
    the library re-encodes every string it sends, keys and symbols included, as UTF-8 str."""
    folder = built("ruby")
    script = ('require_relative "cardarena"; '
              'print MessagePack.pack(Cardarena.wire({ "card".b => "10D".b, type: :discard, "n" => ["\\u00e9".b] }))')
    done = subprocess.run(["ruby", "-e", script], cwd=folder, capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr.decode()
    assert decode_body(done.stdout) == {"card": "10D", "type": "discard", "n": ["é"]}
    invalid = subprocess.run(["ruby", "-e", 'require_relative "cardarena"; Cardarena.wire(["\\xff".b])'], cwd=folder,
                             capture_output=True, timeout=30)
    assert invalid.returncode == 1 and b"not valid UTF-8" in invalid.stderr


def test_the_java_kit_starts_within_the_address_space_of_the_default_memory_cap():
    """Where cgroups are unavailable the sandbox caps a bot's address space (SandboxSettings.memory_mb):
    a JVM with its default reservations (1 GiB of class space alone) cannot start under it, so the
    kit's bot.toml sizes them."""
    folder = built("java")
    command = tomllib.loads((folder / "bot.toml").read_text())["command"]
    cap = SandboxSettings().memory_mb << 20
    done = subprocess.run(command, input=frame(HELLO) + frame(SHUTDOWN), capture_output=True, timeout=30, cwd=folder,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap)))
    assert done.returncode == 0, done.stderr.decode()
    assert replies(done.stdout)[0]["name"] == "java-random"


def test_every_kit_and_the_python_sample_bots_play_a_tournament_without_a_fault(tmp_path):
    available = [kit for kit in KITS if KITS[kit].missing() is None]
    if not available:
        pytest.skip("no kit's toolchain is installed (CI installs them: see .ci/run)")
    skipped = {kit: KITS[kit].missing() for kit in KITS if kit not in available}
    bots = [str(built(kit)) for kit in available] + [str(SAMPLES / "random"), str(SAMPLES / "heuristic")]
    out = tmp_path / "kits.sqlite"
    done = subprocess.run(
        [sys.executable, "-m", "cardarena.cli", "run", *[arg for b in bots for arg in ("--bot", b)],
         "--deals", "1", "--max-tables", "2", "--timeout", "5", "--jobs", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(out) as db:
        faults = [row[0] for row in db.execute("SELECT faults FROM games")]
        shutdown_faults = db.execute("SELECT COUNT(*) FROM match_faults").fetchone()[0]
        seated = {name for (seats,) in db.execute("SELECT seats FROM games") for name in json.loads(seats)}
        entrants = {name for (name,) in db.execute("SELECT name FROM entrants")}
    assert len(faults) >= 8 and all(json.loads(f) == [] for f in faults) and shutdown_faults == 0, done.stdout
    assert seated == entrants and len(entrants) == len(bots)
    if skipped:
        pytest.skip(f"played without {', '.join(skipped)}: {'; '.join(skipped.values())}")
