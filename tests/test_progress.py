"""Progress of a run: a line now and then in a log that is not a terminal, tqdm's bar on a terminal."""

from __future__ import annotations

import io
import re

from cardarena.tournament.execution.progress import Progress


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def game(winner: str, loser: str, faults: int = 0) -> dict:
    return {"seats": [winner, loser], "ranks": [0, 1], "result": {"teams": None},
            "faults": [{"bot": loser}] * faults}


def test_a_log_gets_a_line_every_n_games_with_rate_eta_faults_and_leader():
    log, clock = io.StringIO(), Clock()
    progress = Progress(total=40, done=10, stream=log, every_games=5, every_seconds=3600, clock=clock)
    for number in range(10):
        clock.now += 2.0
        progress.game(game("new", "old", faults=1 if number == 3 else 0))
    lines = log.getvalue().splitlines()
    assert lines == [
        "progress: 15/40 games (38%), 0.5 games/s, ETA 0:50, faults 1, leader new",
        "progress: 20/40 games (50%), 0.5 games/s, ETA 0:40, faults 1, leader new"]
    progress.close()
    assert log.getvalue().splitlines() == lines  # the last game already had its line


def test_a_log_gets_a_line_after_m_seconds_even_between_the_n_games_and_a_last_one_at_the_end():
    log, clock = io.StringIO(), Clock()
    progress = Progress(total=1000, stream=log, every_games=500, every_seconds=30, clock=clock,
                        extra=lambda: "LLR 1.20 (-2.94, 2.94)")
    progress.game(game("a", "b"))
    clock.now += 31  # 1-1 at the line: ties go to the first name
    progress.game(game("b", "a"))
    progress.game(game("b", "a"))
    assert log.getvalue().splitlines() == [
        "progress: 2/1000 games (0%), 0.1 games/s, ETA 4:17:49, faults 0, leader a, LLR 1.20 (-2.94, 2.94)"]
    progress.write("warning: a did not shut down cleanly")
    progress.close()
    assert log.getvalue().splitlines()[1:] == [
        "warning: a did not shut down cleanly",
        "progress: 3/1000 games (0%), 0.1 games/s, ETA 2:51:42, faults 0, leader b, LLR 1.20 (-2.94, 2.94)"]


def test_without_games_the_rate_and_eta_are_unknown():
    log = io.StringIO()
    progress = Progress(total=10, stream=log, clock=Clock())
    progress.played = 0
    progress._line()
    assert log.getvalue() == "progress: 0/10 games (0%), 0.0 games/s, ETA unknown, faults 0\n"


def test_a_terminal_gets_the_bar_and_no_lines():
    screen = Terminal()
    progress = Progress(total=4, stream=screen, every_games=1)
    for _ in range(4):
        progress.game(game("a", "b"))
    progress.close()
    text = screen.getvalue()
    assert "progress:" not in text and re.search(r"4/4 \[", text) and "\r" in text


def test_run_logs_progress_lines_when_stderr_is_not_a_terminal(tmp_path):
    from tests.test_tournament import bot, cardarena

    result = cardarena("run", "--game", "casino", "--deals", "3", "--seed", "1", "--jobs", "1", "--bootstrap", "5",
                       "--out", str(tmp_path / "r.sqlite"), "--bot", bot("a", 1), "--bot", bot("b", 2))
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("progress:")]
    assert lines and lines[-1].startswith("progress: 6/6 games (100%)") and "leader " in lines[-1]
    assert "\r" not in result.stderr
