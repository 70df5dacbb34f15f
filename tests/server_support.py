"""A `cardarena serve` process for the league server's end-to-end and browser tests, and waiting on it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.ports import free_port

CARDARENA = [sys.executable, "-m", "cardarena.cli"]
WAIT = 40.0  # seconds at most for the checks and the first games on a loaded machine


def cardarena(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(CARDARENA + list(args), cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def board(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/api/leaderboard", timeout=10) as answer:
        return json.load(answer)


@dataclass
class Server:
    """A running `cardarena serve` and what its tests need of it."""

    folder: Path
    tokens: dict[str, str]
    options: tuple[str, ...] = ("--round-games", "16")  # short rounds: a test waits for one to end
    process: subprocess.Popen | None = None
    url: str = ""

    def start(self) -> None:
        port = free_port()
        self.process = subprocess.Popen(CARDARENA + ["serve", "league.toml", "--port", str(port), "--check-games", "2",
                                                     "--check-workers", "2", "--jobs", "1", *self.options],
                                        cwd=self.folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                board(self.url)
                return
            except OSError:
                assert self.process.poll() is None, self.process.stdout.read()
                assert time.monotonic() < deadline, "the server did not answer within 20 s"
                time.sleep(0.1)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def wait_for(what: str, condition: Any, seconds: float = WAIT) -> Any:
    """The first true value of `condition()`, asked every half second for at most `seconds`."""
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        assert time.monotonic() < deadline, f"{what}: not within {seconds} s"
        time.sleep(0.5)
    return value


def live_bots(url: str) -> set[str]:
    return {row["bot"] for b in board(url)["boards"] for row in b["rows"]}


def league_server(organiser: Path, *options: str, participants: tuple[str, ...] = ("alice", "bob"),
                  league: str = 'name = "class"\ngames = ["casino"]\n') -> Server:
    """A running server of a one-game league (casino, unless `league` says otherwise) in `organiser`, with
    `participants`; `options` are added to the test's usual ones (Server.options)."""
    organiser.mkdir(exist_ok=True)
    (organiser / "league.toml").write_text(league)
    added = cardarena("serve", "league.toml", *(f"--add-participant={name}" for name in participants), cwd=organiser)
    assert added.returncode == 0, added.stderr
    running = Server(organiser, dict(line.split(": ") for line in added.stdout.splitlines()))
    running.options += options
    running.start()
    return running
