"""The league server end to end (issue 23, Done when): `cardarena serve` started as a process on a free
port, two participants added from the command line, the sample random and heuristic bots submitted
with `cardarena submit` from another folder; both pass their check, games are played, and both
appear on the live leaderboard's JSON, as on `cardarena leaderboard` of the same results file. A bot
that cannot start gets its check report back and exit status 1."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from cardarena.samples import SAMPLE_BOTS  # noqa: E402

CARDARENA = [sys.executable, "-m", "cardarena.cli"]
WAIT = 40.0  # seconds at most for the checks and the first games on a loaded machine


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def cardarena(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(CARDARENA + list(args), cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def board(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/api/leaderboard", timeout=10) as answer:
        return json.load(answer)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    organiser = tmp_path_factory.mktemp("organiser")
    (organiser / "league.toml").write_text('name = "class"\ngames = ["casino"]\ndeals = 2\n')
    added = cardarena("serve", "league.toml", "--add-participant", "alice", "--add-participant", "bob", cwd=organiser)
    assert added.returncode == 0, added.stderr
    tokens = dict(line.split(": ") for line in added.stdout.splitlines())
    port = free_port()
    process = subprocess.Popen(CARDARENA + ["serve", "league.toml", "--port", str(port), "--check-games", "2",
                                            "--check-workers", "2", "--jobs", "1"],
                               cwd=organiser, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            board(url)
            break
        except OSError:
            assert process.poll() is None and time.monotonic() < deadline, process.stdout.read() if process.poll() else ""
            time.sleep(0.1)
    try:
        yield url, tokens, organiser
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_two_submitted_bots_are_checked_played_and_rated_live(server, tmp_path):
    url, tokens, organiser = server
    elsewhere = tmp_path / "participant"
    elsewhere.mkdir()
    submits = {name: subprocess.Popen(CARDARENA + ["submit", url, str(SAMPLE_BOTS / bot)], cwd=elsewhere, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      env={**os.environ, "CARDARENA_TOKEN": tokens[name]})
               for name, bot in (("alice", "random"), ("bob", "heuristic"))}  # checked side by side
    for name, submit in submits.items():
        out, err = submit.communicate(timeout=120)
        assert submit.returncode == 0, out + err
        assert f"PASS: {name}-s" in out and f"it plays as {name}-v1" in err
    deadline = time.monotonic() + WAIT
    while True:
        data = board(url)
        bots = {row["bot"] for b in data["boards"] for row in b["rows"]}
        if bots == {"alice-v1", "bob-v1"}:
            break
        assert time.monotonic() < deadline, f"no games after {WAIT} s: {data}"
        time.sleep(0.5)
    assert data["games"] >= 2 and data["recent"]
    printed = cardarena("leaderboard", str(organiser / "results" / "class.sqlite"), "--format", "json", cwd=organiser)
    assert printed.returncode == 0, printed.stderr
    assert {row["bot"] for b in json.loads(printed.stdout) for row in b["rows"]} == {"alice-v1", "bob-v1"}


def test_a_bot_that_fails_its_check_gets_the_report_and_exit_status_1(server, tmp_path):
    url, tokens, _ = server
    bot = tmp_path / "broken"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "broken"\ncommand = ["python3", "-c", "import sys; sys.exit(3)"]\n')
    done = cardarena("submit", url, str(bot), "--token", tokens["alice"], cwd=tmp_path)
    assert done.returncode == 1
    assert "FAULT" in done.stdout and re.search(r"FAIL: alice-s\d+: ", done.stdout)
    assert "failed its check: it does not play" in done.stderr
    wrong = cardarena("submit", url, str(bot), "--token", "ca_000000000000_nope", cwd=tmp_path)
    assert wrong.returncode == 1 and "401" in wrong.stderr
