"""A sequential probability ratio test of a challenger against a baseline, on duplicate sets.

Pure numbers in, decision out: each finished duplicate set gives one score in [0, 1] (how the
challenger did against the baseline in the same seats on the same deals, `duplicate_score`),
and `SequentialTest` turns the scores into the log-likelihood ratio of "the challenger is elo1
better" against "it is elo0 better", accepting one hypothesis when the ratio crosses a Wald
bound. Sets may be reported in any order; they are counted in schedule order, so stopping
early cannot favour whatever happens to finish first. The derivation and its assumptions are
in runner/tournament/sprt.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from cardarena.errors import UsageError
from cardarena.ratings import elo_of_score, expected_score, score_interval

H0 = "H0"
H1 = "H1"
#: the variance of the set scores is estimated as if this many more sets of the largest
#: variance a score in [0, 1] can have had been seen (see sprt.md, "Small samples")
PRIOR_SETS = 1.0
PRIOR_VARIANCE = 0.25


class SprtError(UsageError, ValueError):
    """SPRT settings that make no test (elo0 not below elo1, an error rate outside (0, 1))."""


@dataclass(frozen=True)
class SprtSettings:
    """The two hypotheses (Elo differences elo0 < elo1) and the error rates alpha (false H1) and beta (false H0)."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        values = (self.elo0, self.elo1, self.alpha, self.beta)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
            raise SprtError(f"elo0, elo1, alpha and beta must be finite numbers, got {values}")
        if self.elo0 >= self.elo1:
            raise SprtError(f"elo0 must be below elo1, got elo0={self.elo0:g}, elo1={self.elo1:g}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 0.5:
                raise SprtError(f"{name} must be above 0 and below 0.5, got {value:g}")

    @property
    def lower(self) -> float:
        """Wald's lower bound: at or below it H0 is accepted."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Wald's upper bound: at or above it H1 is accepted."""
        return math.log((1.0 - self.beta) / self.alpha)

    def to_dict(self) -> dict[str, float]:
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta}

    def __str__(self) -> str:
        return f"elo0={self.elo0:g},elo1={self.elo1:g},alpha={self.alpha:g},beta={self.beta:g}"


SPRT_KEYS = ("elo0", "elo1", "alpha", "beta")


def sprt_settings(data: Mapping[str, Any], where: str = "sprt") -> SprtSettings:
    """Settings from a mapping (a league file's `[sprt]` table); elo0 and elo1 are required."""
    unknown = sorted(set(data) - set(SPRT_KEYS))
    if unknown:
        raise SprtError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(SPRT_KEYS)})")
    missing = [key for key in ("elo0", "elo1") if key not in data]
    if missing:
        raise SprtError(f"{where}: {' and '.join(missing)} must be given (e.g. elo0=0,elo1=10)")
    try:
        return SprtSettings(**data)
    except SprtError as error:
        raise SprtError(f"{where}: {error}") from None


def parse_sprt(text: str) -> SprtSettings:
    """Settings from the command line: `elo0=0,elo1=10[,alpha=0.05,beta=0.05]`."""
    data: dict[str, float] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not key:
            raise SprtError(f"--sprt takes KEY=VALUE pairs separated by commas "
                            f"(elo0=0,elo1=10[,alpha=0.05,beta=0.05]), got {part.strip()!r}")
        if key in data:
            raise SprtError(f"--sprt: {key} given twice")
        try:
            data[key] = float(value)
        except ValueError:
            raise SprtError(f"--sprt: {key} must be a number, got {value.strip()!r}") from None
    return sprt_settings(data, "--sprt")


def log_likelihood_ratio(sets: int, total: float, total_squares: float, settings: SprtSettings) -> float:
    """The generalized log-likelihood ratio of H1 over H0 after `sets` scores with these sums.

    The normal approximation of the GSPRT: sets · (s1 − s0)(2·mean − s0 − s1) / (2·variance),
    with s0, s1 the expected scores of elo0 and elo1 and the variance estimated from the scores,
    stabilised by PRIOR_SETS sets of variance PRIOR_VARIANCE (derivation in sprt.md).
    """
    if sets == 0:
        return 0.0
    mean = total / sets
    variance = (max(total_squares - sets * mean * mean, 0.0) + PRIOR_SETS * PRIOR_VARIANCE) / (sets + PRIOR_SETS)
    s0, s1 = expected_score(settings.elo0), expected_score(settings.elo1)
    return sets * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)


@dataclass(frozen=True)
class EloEstimate:
    """The Elo difference of the challenger over the baseline, with its 95% interval (±inf when unbounded)."""

    elo: float
    low: float
    high: float


class SequentialTest:
    """The running SPRT: set scores in (any order, by schedule index), LLR and decision out.

    A score reported ahead of an unfinished earlier set waits in a buffer; once the LLR crosses
    a bound the decision is fixed and later sets are no longer counted.
    """

    def __init__(self, settings: SprtSettings):
        self.settings = settings
        self.sets = 0
        self.total = 0.0
        self.total_squares = 0.0
        self.llr = 0.0
        self.decision: str | None = None
        self._waiting: dict[int, float] = {}

    @property
    def waiting(self) -> int:
        """Scores held back until an earlier set finishes."""
        return len(self._waiting)

    def record(self, index: int, score: float) -> None:
        """Report the score of the set at `index` in schedule order (0, 1, 2 ...)."""
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"a set score is in [0, 1], got {score}")
        if index < 0:
            raise ValueError(f"a set index is 0 or more, got {index}")
        if index < self.sets or index in self._waiting:
            raise ValueError(f"set {index} was already recorded")
        self._waiting[index] = score
        while self.decision is None and self.sets in self._waiting:
            self._count(self._waiting.pop(self.sets))

    def _count(self, score: float) -> None:
        self.sets += 1
        self.total += score
        self.total_squares += score * score
        self.llr = log_likelihood_ratio(self.sets, self.total, self.total_squares, self.settings)
        if self.llr >= self.settings.upper:
            self.decision = H1
        elif self.llr <= self.settings.lower:
            self.decision = H0

    def estimate(self) -> EloEstimate | None:
        """The Elo difference from the counted sets, with a 95% interval (None before any set)."""
        if self.sets == 0:
            return None
        mean = self.total / self.sets
        error = math.sqrt(max(self.total_squares / self.sets - mean * mean, 0.0) / self.sets)
        low, high = score_interval(mean, error, self.sets)
        return EloEstimate(elo_of_score(mean), elo_of_score(low), elo_of_score(high))


def duplicate_score(games: Sequence[tuple[Sequence[str], Sequence[int]]], challenger: str, baseline: str) -> float:
    """The challenger's score against the baseline in one duplicate set, in [0, 1].

    `games` are the set's games as (bot per seat, rank per seat; 0 is best). Every game in which
    the challenger holds a seat has a twin with the challenger and the baseline exchanged and
    all else equal; each seat the challenger holds is compared with the same seat of the twin,
    where the baseline holds it: 1 when the challenger ranked better there, ½ when equal, 0 when
    worse. The score is the mean over those comparisons. Between the two bots alone (a two-seat
    game) this is the score of the game pair, as in a chess engine's pentanomial test.
    """
    swap = {challenger: baseline, baseline: challenger}
    ranks_by_seats: dict[tuple[str, ...], Sequence[int]] = {}
    for seats, ranks in games:
        ranks_by_seats[tuple(seats)] = ranks
    points = 0.0
    comparisons = 0
    for seats, ranks in ranks_by_seats.items():
        if challenger not in seats:
            continue
        twin = tuple(swap.get(name, name) for name in seats)
        if twin not in ranks_by_seats:
            raise ValueError(f"the set has no twin of the game seating {', '.join(seats)}")
        twin_ranks = ranks_by_seats[twin]
        for seat, name in enumerate(seats):
            if name == challenger:
                mine, theirs = ranks[seat], twin_ranks[seat]
                points += 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
                comparisons += 1
    if comparisons == 0:
        raise ValueError(f"the set has no game with {challenger} in it")
    return points / comparisons


class DuplicateSets:
    """Gathers finished games into their duplicate sets and gives each complete set's score to the test.

    `set_of` maps every scheduled game id to its set's number in schedule order.
    """

    def __init__(self, set_of: Mapping[str, int], challenger: str, baseline: str, test: SequentialTest):
        self.set_of = set_of
        self.challenger, self.baseline = challenger, baseline
        self.test = test
        self.size: dict[int, int] = {}
        for index in set_of.values():
            self.size[index] = self.size.get(index, 0) + 1
        self._open: dict[int, list[tuple[Sequence[str], Sequence[int]]]] = {}

    def add(self, game_id: str, seats: Sequence[str], ranks: Sequence[int]) -> None:
        """One finished game (bot per seat, rank per seat); the test hears of its set once the set is complete."""
        index = self.set_of[game_id]
        games = self._open.setdefault(index, [])
        games.append((seats, ranks))
        if len(games) == self.size[index]:
            del self._open[index]
            self.test.record(index, duplicate_score(games, self.challenger, self.baseline))

    @property
    def games_counted(self) -> int:
        """Games in the sets the test has counted."""
        return sum(self.size[index] for index in range(self.test.sets))
