"""A bot's strength on the ladder's fixed Elo scale (`cardarena check --strength`).

The bot plays duplicate sets against the ladder's rungs (sample_bots/README.md § The ladder): one
deal at the game's table, the bot and a rung seated alternately, played twice with the two
exchanged, scored by the SPRT's `duplicate_score` (each seat compared with its twin). The games
run as real processes through the same executor, referee and sandbox as `check` and a league,
so the figures are what a league would see.

The rungs' ratings are fixed: measured once in a reference run between the rungs
(tests/bench/ladder_ratings.py), shipped in ladder_ratings.json, random = 1000 in every game.
A game's rating is the maximum-likelihood Elo R with which the expected set scores
`expected_score(R - rung)` best explain the scores against those fixed ratings; its 95% interval
is a normal one from the sandwich variance whose unit is the duplicate set (the two games of a set
are correlated, the sets are not). Each next batch of sets goes to the rung that gives the most
information per second at the running estimate (a rung the bot surely beats, or surely loses
to, tells little), and to the game whose interval narrows the overall figure most. "Overall" is
the mean of the per-game ratings, with the interval of a mean of independent estimates.
"""

from __future__ import annotations

import json
import math
import time
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from cardarena.checking import Seating, finding, reproduce_command
from cardarena.config import BotSpec, Limits
from cardarena.errors import CardarenaError
from cardarena.fault_report import CHECK_TEXT, FaultEntry, json_entry, junit_failure, text_lines
from cardarena.manifest import load_manifest
from cardarena.ratings import ELO_PER_NAT, Z95, expected_score
from cardarena.referee.faults import Fault, printable
from cardarena.samples import SAMPLE_BOTS
from cardarena.tournament.execution.events import EventSink, FinishedGame, WorkerLost, drive
from cardarena.tournament.execution.execute import LocalExecutor
from cardarena.tournament.planning.schedule import PlannedGame, PlannedMatch, derive_seed
from cardarena.tournament.planning.sprt import duplicate_score

#: the shipped ratings of the rungs (tests/bench/ladder_ratings.py writes it)
LADDER_FILE = Path(__file__).with_name("ladder_ratings.json")
#: the rungs, weakest first, and their folders (bot.toml inside)
RUNG_FOLDERS = {"random": SAMPLE_BOTS / "random", "heuristic": SAMPLE_BOTS / "heuristic",
                "search-fast": SAMPLE_BOTS / "search" / "strong" / "fast",
                "search-strong": SAMPLE_BOTS / "search" / "strong"}
#: the table each game is measured at (its smallest, except that Quitlok starts at 5)
PLAYERS = {"casino": 2, "cuajo": 4, "knock-rummy": 2, "quitlok": 5}
CHALLENGER, BASELINE = "challenger", "baseline"
#: virtual sets scoring ½, shared among the rungs played in proportion to the sets against each:
#: they keep a perfect score finite, and their pull towards the rungs (a set's worth in all, so a
#: few Elo after a few dozen sets) stays small where a rung far away had a few sets
PRIOR_SETS = 1.0
#: the squared residual of one set at the largest variance a score can have, added once to the
#: observed ones, so that a few identical scores do not make an interval of zero width
PRIOR_VARIANCE = 0.25
#: sets played against one rung at a time (two matches: the seatings and their twins)
BATCH_SETS = 4
#: expected set scores worth playing for (a rung about 380 Elo away or nearer); see `choose_rung`
USEFUL_SCORES = (0.1, 0.9)
#: the rung a game starts against, before anything is known: a new bot is expected near it
START_RUNG = "heuristic"
#: the rungs' own limit per decision: generous, so that a loaded machine never makes a rung fault
RUNG_TIMEOUT = 30.0


class StrengthError(CardarenaError):
    """No strength can be measured (a missing or unreadable ladder file, a game the ladder lacks)."""


def lineups(players: int, index: int) -> list[tuple[str, ...]]:
    """The seatings of duplicate set `index`: the two bots alternating, rotated by `index`, and the
    twin seating with the two exchanged (two games, whatever the table's size)."""
    base = tuple(CHALLENGER if (seat + index) % 2 == 0 else BASELINE for seat in range(players))
    if players % 2 == 1:  # an odd table: the rotation also moves the seat that holds a bot twice
        shift = index % players
        base = base[shift:] + base[:shift]
    swap = {CHALLENGER: BASELINE, BASELINE: CHALLENGER}
    return [base, tuple(swap[name] for name in base)]


# -- the shipped scale ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Rung:
    """A rung's shipped rating in one game, its 95% interval, and the sets that measured it."""

    name: str
    elo: float
    low: float
    high: float
    sets: int


@dataclass(frozen=True)
class Scale:
    """The ladder's fixed ratings per game (rungs weakest first), and how they were measured."""

    games: dict[str, tuple[Rung, ...]]
    measured: str
    commit: str
    command: str

    def rungs(self, game: str) -> tuple[Rung, ...]:
        if game not in self.games:
            raise StrengthError(f"the ladder has no ratings for {game} ({LADDER_FILE})")
        return self.games[game]

    def overall(self, games: Sequence[str]) -> tuple[Rung, ...]:
        """Each rung's mean rating over `games` (what a bot's overall rating is compared with)."""
        per_game = [{rung.name: rung for rung in self.rungs(game)} for game in games]
        names = [rung.name for rung in self.rungs(games[0])]
        return tuple(Rung(name, *(sum(getattr(table[name], key) for table in per_game) / len(games)
                                  for key in ("elo", "low", "high")), min(table[name].sets for table in per_game))
                     for name in names)


def load_scale(path: Path = LADDER_FILE) -> Scale:
    """The shipped scale (StrengthError when the file is missing or malformed)."""
    try:
        data = json.loads(path.read_text())
        games = {game: tuple(Rung(name, float(entry["elo"]), float(entry["low"]), float(entry["high"]),
                                  int(entry["sets"])) for name, entry in rungs.items())
                 for game, rungs in data["games"].items()}
        return Scale(games, str(data["measured"]), str(data["commit"]), str(data["command"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise StrengthError(f"cannot read the ladder's ratings from {path}: {error}") from None


# -- the estimator -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Estimate:
    """A rating with its standard error and the sets behind it; the 95% interval is ±1.96 errors."""

    elo: float
    error: float
    sets: int

    @property
    def low(self) -> float:
        return self.elo - Z95 * self.error

    @property
    def high(self) -> float:
        return self.elo + Z95 * self.error

    @property
    def half_width(self) -> float:
        return Z95 * self.error


def fit_rating(results: Sequence[tuple[float, float]], prior: float = PRIOR_SETS) -> Estimate:
    """The maximum-likelihood rating from (fixed opponent rating, set score in [0, 1]) pairs.

    Solves sum(score - expected_score(R - opponent)) = 0, with `prior` virtual sets scoring ½
    shared among the opponents as the sets are (finite even after perfect scores), by Newton's
    method on a function that only decreases. The error is the sandwich one, sets as the unit: the spread of
    the scores around their expectations (plus PRIOR_VARIANCE once) over the squared information.
    """
    if not results:
        raise ValueError("a rating needs at least one set")
    weighted = [(opponent, score, 1.0) for opponent, score in results]
    counts = Counter(opponent for opponent, _ in results)
    weighted += [(opponent, 0.5, prior * count / len(results)) for opponent, count in sorted(counts.items())]
    rating = sum(opponent for opponent, _, _ in weighted) / len(weighted)
    for _ in range(200):
        expected = [(expected_score(rating - opponent), score, weight) for opponent, score, weight in weighted]
        gradient = sum(weight * (score - p) for p, score, weight in expected)
        information = sum(weight * p * (1.0 - p) for p, _, weight in expected) / ELO_PER_NAT
        step = max(-400.0, min(400.0, gradient / max(information, 1e-12)))
        rating += step
        if abs(step) < 1e-9:
            break
    expected = [(expected_score(rating - opponent), score, weight) for opponent, score, weight in weighted]
    information = sum(weight * p * (1.0 - p) for p, _, weight in expected) / ELO_PER_NAT
    spread = sum((score - p) ** 2 for p, score, _ in expected[:len(results)]) + PRIOR_VARIANCE
    return Estimate(rating, math.sqrt(spread) / information, len(results))


def mean_rating(estimates: Sequence[Estimate]) -> Estimate:
    """The mean of independent per-game ratings, with the error of that mean."""
    count = len(estimates)
    return Estimate(sum(e.elo for e in estimates) / count,
                    math.sqrt(sum(e.error ** 2 for e in estimates)) / count, sum(e.sets for e in estimates))


def neighbours(rungs: Sequence[Rung], elo: float) -> tuple[Rung | None, Rung | None]:
    """The nearest rung at or below `elo` and the nearest above (None past either end of the ladder)."""
    below = [rung for rung in rungs if rung.elo <= elo]
    above = [rung for rung in rungs if rung.elo > elo]
    return (max(below, key=lambda r: r.elo) if below else None,
            min(above, key=lambda r: r.elo) if above else None)


def information(opponent: float, estimate: Estimate | None) -> float:
    """Fisher information of one set against `opponent`, averaged over the estimate's ±1 error."""
    if estimate is None:
        return 0.25
    points = (estimate.elo - estimate.error, estimate.elo, estimate.elo + estimate.error)
    return sum(expected_score(point - opponent) * (1.0 - expected_score(point - opponent)) for point in points) / 3


def choose_rung(rungs: Sequence[Rung], estimate: Estimate | None, seconds: dict[str, float],
                swept: Mapping[str, float] | None = None) -> Rung:
    """The rung whose next set tells most about the bot per second of play: START_RUNG before
    anything is known, else, among the rungs whose expected score at the estimate is not near
    certain (within USEFUL_SCORES; the nearest rung when none is), the most information at the
    estimate over the rung's measured seconds per set (their mean for a rung not played yet). A
    near-certain score is left out, although the logistic curve claims a little information in it,
    because it rests wholly on that curve's tail: a rung that loses every set says little. For the
    same reason, after a clean sweep (`swept`: rung -> 1.0 when the bot won every set against it,
    0.0 when it lost every one) only the rungs beyond it are played while there are any: the
    estimate then rests on the prior alone, and the bot is surely on that side."""
    if estimate is None:
        return next((rung for rung in rungs if rung.name == START_RUNG), rungs[0])
    swept = swept or {}
    floor = max((rung.elo for rung in rungs if swept.get(rung.name) == 1.0), default=-math.inf)
    ceiling = min((rung.elo for rung in rungs if swept.get(rung.name) == 0.0), default=math.inf)
    rungs = [rung for rung in rungs if floor < rung.elo < ceiling] or list(rungs)
    low, high = USEFUL_SCORES
    useful = [rung for rung in rungs if low <= expected_score(estimate.elo - rung.elo) <= high]
    if not useful:
        return min(rungs, key=lambda rung: abs(rung.elo - estimate.elo))
    typical = sum(seconds.values()) / len(seconds) if seconds else 1.0
    return max(useful, key=lambda rung: information(rung.elo, estimate) / seconds.get(rung.name, typical))


# -- playing sets --------------------------------------------------------------------------------

@dataclass(frozen=True)
class StrengthSettings:
    """How much to play: stop once the overall 95% half-width is at most `target` Elo (after
    `min_sets` sets in each game) or after `max_sets` sets in each game; `jobs` matches at once."""

    target: float = 60.0
    min_sets: int = 2 * BATCH_SETS
    max_sets: int = 64
    jobs: int = 2
    seed: int = 0
    min_elo: float | None = None


@dataclass
class GameStrength:
    """One game's sets against the rungs: (rung, set score) in play order, faults, time spent."""

    game: str
    rungs: tuple[Rung, ...]
    scores: list[tuple[Rung, float]] = field(default_factory=list)
    findings: list[FaultEntry] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # per rung: mean wall seconds per set
    duration: float = 0.0

    @property
    def failures(self) -> list[FaultEntry]:
        return [entry for entry in self.findings if not entry.opponent]

    @property
    def estimate(self) -> Estimate | None:
        if not self.scores or self.failures:
            return None
        return fit_rating([(rung.elo, score) for rung, score in self.scores])

    @property
    def swept(self) -> dict[str, float]:
        """The rungs against which every set so far was a whole win (1.0), or every one a whole loss (0.0)."""
        by_rung: dict[str, set[float]] = {}
        for rung, score in self.scores:
            by_rung.setdefault(rung.name, set()).add(score)
        return {name: scores.pop() for name, scores in by_rung.items() if scores in ({0.0}, {1.0})}

    def record_seconds(self, rung: str, sets: int, seconds: float) -> None:
        played = sum(1 for played_rung, _ in self.scores if played_rung.name == rung) - sets
        previous = self.seconds.get(rung, 0.0) * played
        self.seconds[rung] = (previous + seconds) / (played + sets)


class _SetScores(EventSink):
    """Gathers a batch's games into duplicate sets (by the set index in the game id) and the
    checked bot's and the rungs' faults."""

    def __init__(self, bot: str, game: str, replay: Callable[[Sequence[str], int], str]):
        self.bot, self.game, self.replay = bot, game, replay
        self.games: dict[int, list[tuple[tuple[str, ...], list[int]]]] = {}
        self.findings: list[FaultEntry] = []

    def game_finished(self, event: FinishedGame) -> bool:
        record = event.record
        index = int(event.game_id.rsplit("/", 2)[1])
        roles = tuple(CHALLENGER if name == self.bot else BASELINE for name in record.seats)
        self.games.setdefault(index, []).append((roles, list(record.ranks)))
        replay = self.replay(record.seats, record.seed)
        self.findings += [finding(fault, None, record.seed, replay, opponent=fault.bot != self.bot)
                          for fault in record.faults]
        return False

    def worker_lost(self, event: WorkerLost) -> None:
        if event.name is not None and event.disqualified is None:
            self.findings.append(finding(Fault("sabotage", event.name, f"the referee's process was {event.reason} "
                                               "while it waited on this bot; the game was played again",
                                               game=self.game, game_id=event.game_id), None, None, None,
                                         opponent=event.name != self.bot))

    def scores(self) -> list[float]:
        """The complete sets' scores, in set order."""
        return [duplicate_score(games, CHALLENGER, BASELINE) for _, games in sorted(self.games.items())
                if len(games) == 2]


def rung_spec(rung: str, taken: str) -> BotSpec:
    """The rung's bot as an opponent: named `rung-NAME` (`ladder-rung-NAME` if the checked bot is
    called that), with RUNG_TIMEOUT as its own decision limit."""
    folder = RUNG_FOLDERS[rung]
    if not (folder / "bot.toml").is_file():
        raise StrengthError(f"the ladder's rung {rung} is missing: {folder}")
    name = f"rung-{rung}" if taken != f"rung-{rung}" else f"ladder-rung-{rung}"
    return replace(load_manifest(str(folder)).spec, name=name, decision_timeout=RUNG_TIMEOUT)


def rung_specs(taken: str) -> list[BotSpec]:
    """Every rung's bot as an opponent (for the sandbox's preflight, which trusts them)."""
    return [rung_spec(rung, taken) for rung in RUNG_FOLDERS]


def play_batch(bot: BotSpec, game: str, rung: Rung, first: int, limits: Limits,
               settings: StrengthSettings) -> tuple[list[float], list[FaultEntry]]:
    """BATCH_SETS duplicate sets (indices `first`...) of `bot` against `rung` in `game`: one match
    for the batch's seating and one for its twin, each with its own bot processes."""
    opponent = rung_spec(rung.name, bot.name)
    players = PLAYERS[game]
    specs = {bot.name: bot, opponent.name: opponent}
    name_of = {CHALLENGER: bot.name, BASELINE: opponent.name}
    matches = []
    for twin, roles in enumerate(lineups(players, first // BATCH_SETS)):
        planned = tuple(PlannedGame(f"strength-{game}-{rung.name}/{index}/{twin}", index, 0,
                                    derive_seed("strength", settings.seed, game, index), tuple(range(players)))
                        for index in range(first, first + BATCH_SETS))
        matches.append(PlannedMatch(f"{game} against {rung.name} ({'twin' if twin else 'seating'} of sets "
                                    f"{first}-{first + BATCH_SETS - 1})", game, {},
                                    tuple(name_of[role] for role in roles), planned))

    def replay(seats: Sequence[str], seed: int) -> str:
        seating = Seating(game, players, {}, list(seats).index(bot.name))
        return reproduce_command(bot, [specs[name] for name in seats], seating, seed, limits)

    sink = _SetScores(bot.name, game, replay)
    drive(LocalExecutor(settings.jobs, pin_cores=False).run(matches, specs, limits), sink)
    return sink.scores(), sink.findings


# -- the whole measurement -----------------------------------------------------------------------

@dataclass
class StrengthReport:
    """A bot's strength per game and overall, against the shipped scale."""

    bot: str
    scale: Scale
    settings: StrengthSettings
    games: list[GameStrength] = field(default_factory=list)

    @property
    def failures(self) -> list[FaultEntry]:
        return [entry for game in self.games for entry in game.failures]

    @property
    def overall(self) -> Estimate | None:
        """The mean of the per-game ratings (None when a game has none)."""
        estimates = [game.estimate for game in self.games]
        if not estimates or any(estimate is None for estimate in estimates):
            return None
        return mean_rating([estimate for estimate in estimates if estimate is not None])

    @property
    def below_min_elo(self) -> bool:
        """True when --min-elo was given and the overall interval lies wholly below it (or there is no rating)."""
        if self.settings.min_elo is None:
            return False
        overall = self.overall
        return overall is None or overall.high < self.settings.min_elo

    @property
    def passed(self) -> bool:
        return not self.failures and not self.below_min_elo

    def overall_rungs(self) -> tuple[Rung, ...]:
        return self.scale.overall([game.game for game in self.games])


def next_game(games: Sequence[GameStrength], settings: StrengthSettings) -> GameStrength | None:
    """The game whose next batch narrows the overall interval most per second, or None when done:
    the target is met (each game with its minimum of sets), or every game has its maximum."""
    open_games = [game for game in games if len(game.scores) < settings.max_sets and not game.failures]
    if not open_games:
        return None
    starving = [game for game in open_games if len(game.scores) < settings.min_sets]
    if starving:
        return min(starving, key=lambda game: len(game.scores))
    estimates = [game.estimate for game in games]
    if all(estimate is not None for estimate in estimates) and \
            mean_rating([e for e in estimates if e is not None]).half_width <= settings.target:
        return None

    def gain(game: GameStrength) -> float:
        estimate = game.estimate
        per_set = sum(game.seconds.values()) / len(game.seconds) if game.seconds else 1.0
        return (estimate.error ** 2 / estimate.sets if estimate is not None else math.inf) / per_set
    return max(open_games, key=gain)


def measure_strength(bot: BotSpec, games: Iterable[str], limits: Limits, settings: StrengthSettings,
                     scale: Scale | None = None,
                     progress: Callable[[list[str]], None] | None = None) -> StrengthReport:
    """Play batches of duplicate sets against the rungs until `settings` says stop (see `next_game`
    and `choose_rung`); a game in which the bot faults stops there and gets no rating."""
    scale = scale or load_scale()
    report = StrengthReport(bot.name, scale, settings, [GameStrength(game, scale.rungs(game)) for game in games])
    while (game := next_game(report.games, settings)) is not None:
        rung = choose_rung(game.rungs, game.estimate, game.seconds, game.swept)
        started = time.monotonic()
        scores, findings = play_batch(bot, game.game, rung, len(game.scores), limits, settings)
        elapsed = time.monotonic() - started
        game.duration += elapsed
        game.findings += findings
        game.scores += [(rung, score) for score in scores]
        game.record_seconds(rung.name, len(scores), elapsed)
        if progress is not None:
            progress([f"  {game.game}: {len(scores)} sets against {rung.name} in {elapsed:.1f} s, mean score "
                      f"{sum(scores) / max(len(scores), 1):.2f}; {estimate_text(game.estimate)}"])
    return report


# -- rendering -----------------------------------------------------------------------------------

def estimate_text(estimate: Estimate | None) -> str:
    """`1612 [1580, 1644]`, or `no rating`."""
    if estimate is None:
        return "no rating"
    return f"{estimate.elo:.0f} [{estimate.low:.0f}, {estimate.high:.0f}]"


def rung_text(rung: Rung | None, end: str) -> str:
    return f"{end} the top rung" if rung is None else f"{rung.name} {rung.elo:.0f}"


def placement(rungs: Sequence[Rung], estimate: Estimate) -> str:
    """`between heuristic 1600 and search-fast 1701`, naming the ends of the ladder when past them."""
    below, above = neighbours(rungs, estimate.elo)
    if below is None:
        return f"below the bottom rung ({rungs[0].name} {rungs[0].elo:.0f})"
    if above is None:
        return f"above the top rung ({below.name} {below.elo:.0f})"
    return f"between {below.name} {below.elo:.0f} and {above.name} {above.elo:.0f}"


def sets_text(game: GameStrength) -> str:
    """`heuristic 16 sets (score 0.52), search-fast 8 sets (0.31)`."""
    by_rung: dict[str, list[float]] = {}
    for rung, score in game.scores:
        by_rung.setdefault(rung.name, []).append(score)
    return ", ".join(f"{name} {len(scores)} (mean score {sum(scores) / len(scores):.2f})"
                     for name, scores in by_rung.items())


def describe_strength(report: StrengthReport) -> list[str]:
    """The strength section of `check`'s text report: per game, overall, and the --min-elo verdict."""
    scale = report.scale
    lines = [f"strength on the ladder's scale (random = 1000; rungs measured {scale.measured} at "
             f"commit {scale.commit[:12]}), 95% intervals:"]
    for game in report.games:
        estimate = game.estimate
        where = "" if estimate is None else f", {placement(game.rungs, estimate)}"
        lines.append(f"  {game.game}: {estimate_text(estimate)}{where}; {len(game.scores)} sets in "
                     f"{game.duration:.0f} s: {sets_text(game) or 'none'}")
        for entry in game.findings:
            lines += ["    " + line for line in text_lines(entry, CHECK_TEXT)]
    overall = report.overall
    if overall is None:
        lines.append("  overall: no rating (the bot faulted in a game's sets)")
    else:
        lines.append(f"  overall (the mean of {len(report.games)} game(s)): {estimate_text(overall)} "
                     f"(±{overall.half_width:.0f}), {placement(report.overall_rungs(), overall)}")
    if report.settings.min_elo is not None:
        verdict = "FAIL" if report.below_min_elo else "ok"
        lines.append(f"  --min-elo {report.settings.min_elo:g}: {verdict}: "
                     + ("the rating is below it with 95% confidence" if report.below_min_elo
                        else "the rating is not below it with 95% confidence"))
    return [printable(line) for line in lines]


def strength_verdict(report: StrengthReport) -> str:
    """The last line of a strength that fails the check: the bot faulted in its sets, or is below --min-elo."""
    if report.failures:
        failed = [game.game for game in report.games if game.failures]
        return printable(f"FAIL: {report.bot}: {len(report.failures)} fault(s) in the sets against the ladder "
                         f"in {', '.join(failed)}, so no rating")
    return printable(f"FAIL: {report.bot}: its rating {estimate_text(report.overall)} is below --min-elo "
                     f"{report.settings.min_elo:g} with 95% confidence")


def estimate_dict(estimate: Estimate | None, rungs: Sequence[Rung]) -> dict[str, Any] | None:
    if estimate is None:
        return None
    below, above = neighbours(rungs, estimate.elo)
    return {"elo": estimate.elo, "low": estimate.low, "high": estimate.high, "sets": estimate.sets,
            "rung_below": None if below is None else below.name, "rung_above": None if above is None else above.name}


def strength_dict(report: StrengthReport) -> dict[str, Any]:
    """Plain data for `check --json`'s "strength" key."""
    scale, settings = report.scale, report.settings
    return {
        "scale": {"anchor": "random = 1000", "measured": scale.measured, "commit": scale.commit},
        "target": settings.target, "min_elo": settings.min_elo, "below_min_elo": report.below_min_elo,
        "passed": report.passed,
        "overall": estimate_dict(report.overall, report.overall_rungs()),
        "games": [{
            "game": game.game, "rating": estimate_dict(game.estimate, game.rungs), "duration": game.duration,
            "sets": [{"rung": rung.name, "rung_elo": rung.elo, "score": score} for rung, score in game.scores],
            "faults": [json_entry(entry) for entry in game.findings],
        } for game in report.games],
    }


def junit_cases(suite: ET.Element, report: StrengthReport) -> int:
    """Add a `strength` testcase per game and one for the overall rating, each with its figures as
    properties, to a check's JUnit suite; the overall one fails when --min-elo does. Returns the failures."""
    failed = 0
    classname = f"cardarena.check.{printable(report.bot)}.strength"
    cases = [(game.game, game.estimate, game.rungs, game.duration, game.failures) for game in report.games]
    cases.append(("overall", report.overall, report.overall_rungs(), 0.0, []))  # its time is the games' already
    for name, estimate, rungs, seconds, faults in cases:
        case = ET.SubElement(suite, "testcase", classname=classname, name=name, time=f"{seconds:.3f}")
        properties = ET.SubElement(case, "properties")
        for key, value in (estimate_dict(estimate, rungs) or {"elo": "none"}).items():
            if value is None:  # past an end of the ladder: no rung there
                continue
            ET.SubElement(properties, "property", name=key,
                          value=f"{value:.1f}" if isinstance(value, float) else str(value))
        if faults:
            failed += 1
            junit_failure(case, faults)
        elif name == "overall" and report.below_min_elo:
            failed += 1
            ET.SubElement(case, "failure", type="min-elo",
                          message=f"the rating {estimate_text(estimate)} is below --min-elo "
                                  f"{report.settings.min_elo:g} with 95% confidence")
    return failed
