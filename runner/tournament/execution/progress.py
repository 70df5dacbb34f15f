"""Progress of a tournament for people: tqdm's bar on a terminal, plain lines in a log.

A log that is not a terminal (CI, nohup, a file) gets no bar redrawn with carriage returns;
it gets one line every `every_games` games or `every_seconds` seconds, whichever comes first,
with the games done, the rate, the time left, the faults, the current leader (the best fitted
rating so far) and whatever the run adds (an SPRT's LLR), and a last line when the run ends.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, Callable, TextIO

from tqdm import tqdm

from cardarena.ratings import Tally, comparisons_from_ranks, fit, tally

EVERY_SECONDS = 60.0
LINES_PER_RUN = 20  # without the clock, a line every twentieth of the run
BAR_SECONDS = 1.0  # how often the bar's leader and extra are brought up to date


def _duration(seconds: float) -> str:
    """Seconds as h:mm:ss or m:ss."""
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Counts finished games and shows them: a tqdm bar on a terminal, a line now and then elsewhere."""

    def __init__(self, total: int, done: int = 0, stream: TextIO | None = None, every_games: int | None = None,
                 every_seconds: float = EVERY_SECONDS, extra: Callable[[], str] | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.stream = stream or sys.stderr
        self.total, self.done, self.faults = total, done, 0
        self.played = 0  # games finished in this run (the rate counts these)
        self.every_games = every_games or max(1, math.ceil((total - done) / LINES_PER_RUN))
        self.every_seconds = every_seconds
        self.extra = extra
        self.clock = clock
        self.started = self.last_line = clock()  # last_line: the last line, or the bar's last postfix
        self.since_line = 0
        self.tally: Tally = {}
        isatty = getattr(self.stream, "isatty", None)
        self.bar = (tqdm(total=total, initial=done, unit="game", dynamic_ncols=True, postfix={"faults": 0},
                         file=self.stream) if isatty is not None and isatty() else None)

    def game(self, record: dict[str, Any]) -> None:
        """Count one finished game (a `GameRecord.to_dict()`), and show progress when it is time."""
        self.done += 1
        self.played += 1
        self.since_line += 1
        self.faults += len(record["faults"])
        comparisons = comparisons_from_ranks(record["seats"], record["ranks"], record["result"]["teams"])
        for pair, (points, count) in tally(comparisons).items():
            entry = self.tally.setdefault(pair, [0.0, 0])
            entry[0] += points
            entry[1] += count
        if self.bar is not None:
            if self.clock() - self.last_line >= BAR_SECONDS:  # a fit per game would slow a large league
                self.bar.set_postfix_str(self._postfix(), refresh=False)
                self.last_line = self.clock()
            self.bar.update()
        elif self.since_line >= self.every_games or self.clock() - self.last_line >= self.every_seconds:
            self._line()

    def leader(self) -> str | None:
        """The bot with the best fitted rating so far, over every game of this run (None before any result)."""
        if not self.tally:
            return None
        ratings, _ = fit(self.tally)
        return max(sorted(ratings), key=ratings.__getitem__)

    def _postfix(self) -> str:
        parts = [f"faults {self.faults}"]
        leader = self.leader()
        if leader is not None:
            parts.append(f"leader {leader}")
        if self.extra is not None:
            parts.append(self.extra())
        return ", ".join(parts)

    def _line(self) -> None:
        """Write one progress line and restart the count towards the next."""
        now = self.clock()
        elapsed = now - self.started
        rate = self.played / elapsed if elapsed > 0 else 0.0
        left = self.total - self.done
        eta = _duration(left / rate) if rate > 0 else "unknown"
        share = 100.0 * self.done / self.total if self.total else 100.0
        print(f"progress: {self.done}/{self.total} games ({share:.0f}%), {rate:.1f} games/s, ETA {eta}, "
              f"{self._postfix()}", file=self.stream, flush=True)
        self.last_line, self.since_line = now, 0

    def write(self, text: str) -> None:
        """A message (a warning) on its own line, without breaking the bar."""
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def close(self) -> None:
        """End the bar, or write the last line unless the last game just had one (a second call does nothing)."""
        if self.bar is not None:
            self.bar.close()
        elif self.since_line:
            self._line()
