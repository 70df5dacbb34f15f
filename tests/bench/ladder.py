"""The ladder of reference bots: an SPRT between each pair of neighbouring rungs, in every game.

    python -m tests.bench.ladder [--game NAME ...] [--pair LOWER:UPPER ...] [--jobs N] [--max-sets N]

The rungs, weakest first: `random` (sample_bots/random), `heuristic` (sample_bots/heuristic), and
the search rungs `search-fast` and `search-strong` (sample_bots/search/strong, its README says
what they do). For each game and each rung but the first, an SPRT (runner/tournament/sprt.md;
elo0 = 0, elo1 = 20, alpha = beta = 0.05) asks whether the rung beats the rung below it. It plays
duplicate sets between the two bots alone: one deal, at the game's table (2 seats in Casino and
Knock Rummy, 4 in Cuajo, 5 in Quitlok) seating the two bots alternately, played twice, the second
time with the two bots exchanged; the set's score is the SPRT's own `duplicate_score` (each seat
compared with its twin). Where `cardarena run --sprt` plays every rotation of the seating in a
set, each set here is one rotation (the next in turn from set to set), so a Quitlok set costs two
games instead of ten; at 2 and 4 seats the two schedules are the same. Games are played in-process
(tests/bot_harness.play_in_process: the referee's messages handed to the bots' SDK objects, no
processes), the sets of one test spread over `--jobs` worker processes and counted in schedule order.

Prints, per game and rung: the Elo difference to the rung below with its 95% interval, the SPRT's
result (H1: the rung is better; H0: it is not; "undecided" after --max-sets), the sets played, and
the upper rung's median and largest decision time (wall clock, in the worker, under whatever load
the machine has) and its median CPU time per decision (what the decision costs on an idle core),
as a Markdown table; every 20 sets, each running test's standing goes to stderr.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import multiprocessing
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from cardarena.games import get_game
from cardarena.protocol.bot import Bot, RandomBot
from cardarena.strength import BASELINE, CHALLENGER, PLAYERS, RUNG_FOLDERS, lineups
from cardarena.tournament.planning.sprt import SequentialTest, SprtSettings, duplicate_score
from tests.bot_harness import play_in_process

ROOT = Path(__file__).resolve().parents[2]
RUNGS = tuple(RUNG_FOLDERS)  # weakest first; the tables (PLAYERS) and seatings (lineups) are check --strength's
SETTINGS = SprtSettings(elo0=0, elo1=20, alpha=0.05, beta=0.05)
#: a running test reports its standing on stderr after every this many sets
PROGRESS_EVERY = 20


def load_class(path: Path, name: str, folder: Path) -> type[Bot]:
    """The class `name` of the bot script `path`, with `folder` importable (the bot's own packages)."""
    sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(f"ladder_{path.parent.name}_bot", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def rung_factory(rung: str) -> Callable[[int], Bot]:
    """A maker of the rung's bot from a seed."""
    if rung == "random":
        return RandomBot
    if rung == "heuristic":
        folder = ROOT / "sample_bots" / "heuristic"
        return load_class(folder / "bot.py", "HeuristicBot", folder)
    folder = ROOT / "sample_bots" / "search" / "strong" / "fast"
    rung_bot = load_class(folder / "bot.py", "RungBot", folder)
    budget = rung.removeprefix("search-")
    return lambda seed: rung_bot(seed, budget)


class Timed(Bot):
    """A bot whose every decision is timed: (wall clock, CPU time of the process) in seconds."""

    def __init__(self, bot: Bot, times: list[tuple[float, float]]):
        self.bot, self.times, self.name = bot, times, bot.name

    def start_game(self, info: dict[str, Any]) -> None:
        self.bot.start_game(info)

    def decide(self, view, legal, request):
        started, started_cpu = time.perf_counter(), time.process_time()
        action = self.bot.decide(view, legal, request)
        self.times.append((time.perf_counter() - started, time.process_time() - started_cpu))
        return action

    def end_game(self, info: dict[str, Any]) -> None:
        self.bot.end_game(info)


@dataclass(frozen=True)
class Job:
    game: str
    upper: str
    lower: str
    index: int


_FACTORIES: dict[str, Callable[[int], Bot]] = {}


def play_set(job: Job) -> tuple[int, float, list[tuple[float, float]]]:
    """One duplicate set: (its index, the upper rung's score against the lower, its decision times)."""
    for rung in (job.upper, job.lower):
        if rung not in _FACTORIES:
            _FACTORIES[rung] = rung_factory(rung)
    game = get_game(job.game)
    players = PLAYERS[job.game]
    times: list[tuple[float, float]] = []
    games = []
    seed = 1_000_003 * (1 + list(PLAYERS).index(job.game)) + job.index
    for rotation, seating in enumerate(lineups(players, job.index)):
        bots: list[Bot] = []
        for seat, role in enumerate(seating):
            bot_seed = 7919 * seat + 1
            if role == CHALLENGER:
                bots.append(Timed(_FACTORIES[job.upper](bot_seed), times))
            else:
                bots.append(_FACTORIES[job.lower](bot_seed))
        result = play_in_process(game, bots, seed=seed, game_id=f"{job.game}-{job.index}-{rotation}",
                                 time_ms=60_000)
        games.append((seating, result.ranks))
    return job.index, duplicate_score(games, CHALLENGER, BASELINE), times


@dataclass
class Outcome:
    game: str
    upper: str
    lower: str
    test: SequentialTest
    times: list[tuple[float, float]]
    seconds: float


def run_sprt(pool: Any, jobs: int, game: str, upper: str, lower: str, max_sets: int) -> Outcome:
    """The SPRT of `upper` against `lower` in `game`, stopped at a decision or after `max_sets` sets
    (at most two sets per worker in flight, so little is played past the decision)."""
    test = SequentialTest(SETTINGS)
    times: list[tuple[float, float]] = []
    started = time.monotonic()
    pending: list[Any] = []
    submitted = 0
    while test.decision is None and (pending or submitted < max_sets):
        while submitted < max_sets and len(pending) < 2 * jobs:
            pending.append(pool.apply_async(play_set, (Job(game, upper, lower, submitted),)))
            submitted += 1
        index, score, set_times = pending.pop(0).get()
        test.record(index, score)
        times += set_times
        if test.sets % PROGRESS_EVERY == 0:  # an interrupted run still shows where each test stood
            print(f"  {game}: {upper} vs {lower}: {progress(test)} after {(time.monotonic() - started) / 60:.1f} min",
                  file=sys.stderr, flush=True)
    for late in pending:  # played past the decision: wait, so the next test starts on idle workers
        late.wait()
    return Outcome(game, upper, lower, test, times, time.monotonic() - started)


def progress(test: SequentialTest) -> str:
    """Where a running test stands: sets, LLR, Elo estimate."""
    estimate = test.estimate()
    elo = "" if estimate is None else \
        f", Elo {elo_text(estimate.elo)} [{elo_text(estimate.low)}, {elo_text(estimate.high)}]"
    return f"{test.sets} sets, LLR {test.llr:+.2f} (bounds {SETTINGS.lower:+.2f}, {SETTINGS.upper:+.2f}){elo}"


def elo_text(value: float) -> str:
    return "+inf" if value == math.inf else "-inf" if value == -math.inf else f"{value:+.0f}"


def row(outcome: Outcome) -> str:
    test = outcome.test
    estimate = test.estimate()
    elo = "no set" if estimate is None else \
        f"{elo_text(estimate.elo)} [{elo_text(estimate.low)}, {elo_text(estimate.high)}]"
    walls = [wall for wall, _ in outcome.times]
    cpus = [cpu for _, cpu in outcome.times]
    timing = (f"{1000 * statistics.median(walls):.1f} ms | {1000 * max(walls):.0f} ms | "
              f"{1000 * statistics.median(cpus):.1f} ms" if walls else "- | - | -")
    verdict = test.decision or f"undecided (LLR {test.llr:+.2f})"
    return (f"| {outcome.game} | {outcome.upper} vs {outcome.lower} | {elo} | {verdict} | {test.sets} | "
            f"{timing} | {outcome.seconds / 60:.1f} min |")


HEADER = ("| game | rung vs the one below | Elo [95%] | SPRT | sets | median decision | largest decision "
          "| median CPU | time |\n|---|---|---|---|---:|---:|---:|---:|---:|")


def print_timing(games: list[str], uppers: list[str], against: str | None, sets: int) -> None:
    """Each upper rung's decision times over `sets` sets against the rung below, in one process,
    with the 90th percentile (a Casino move's item steps are answered at once and make most of its
    decisions, so there the median is not what a searched decision costs)."""
    print("| game | rung | decisions | median decision | 90th percentile | largest decision | median CPU | largest CPU |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|")
    for upper in uppers:
        lower = against or RUNGS[RUNGS.index(upper) - 1]
        for game in games:
            times = [time_pair for index in range(sets) for time_pair in play_set(Job(game, upper, lower, index))[2]]
            walls, cpus = [wall for wall, _ in times], [cpu for _, cpu in times]
            tail = sorted(walls)[int(0.9 * len(walls))]
            print(f"| {game} | {upper} | {len(walls)} | {1000 * statistics.median(walls):.1f} ms | "
                  f"{1000 * tail:.1f} ms | {1000 * max(walls):.0f} ms | "
                  f"{1000 * statistics.median(cpus):.1f} ms | {1000 * max(cpus):.0f} ms |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", action="append", choices=sorted(PLAYERS), help="only this game (repeatable)")
    parser.add_argument("--pair", action="append", metavar="UPPER",
                        choices=RUNGS[1:], help="only the SPRT of this rung against the one below (repeatable)")
    parser.add_argument("--against", choices=RUNGS, help="test against this rung instead of the one below")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--max-sets", type=int, default=2000, help="stop an SPRT undecided after this many sets")
    parser.add_argument("--timing", type=int, metavar="SETS",
                        help="no SPRT: play this many sets per test and print only the decision times")
    args = parser.parse_args()
    uppers = args.pair or list(RUNGS[1:])
    if args.timing:
        print_timing(args.game or sorted(PLAYERS), uppers, args.against, args.timing)
        return
    print(f"SPRT {SETTINGS}; sets of duplicate games between two bots alone; {args.jobs} jobs", flush=True)
    print(HEADER, flush=True)
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        for upper in uppers:  # the cheap rungs' tests first
            for game in args.game or sorted(PLAYERS):
                lower = args.against or RUNGS[RUNGS.index(upper) - 1]
                print(row(run_sprt(pool, args.jobs, game, upper, lower, args.max_sets)), flush=True)


if __name__ == "__main__":
    main()
