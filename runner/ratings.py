"""Maximum-likelihood Elo: Bradley–Terry on the logistic 400 scale, with duplicate-set bootstrap intervals.

Pure numbers in, numbers out (no database, no games): a game becomes pairwise comparisons
between the distinct bots at its table (`comparisons_from_ranks`), comparisons are tallied per
pair, and `rate` fits the ratings that make the observed pairwise scores most likely. Draws
count as half a point each way. A few virtual draws on every pair that met keep perfect scores
finite. Each connected part of the comparison graph is fitted and anchored on its own, since
bots that never met (even indirectly) cannot be placed on one scale. Without virtual draws
(`prior=0`) a group has finite ratings only if every split of it into two sides has each side
taking points from the other (its "scored against" graph is strongly connected); that is
decided from the results before fitting, so a refusal never depends on names or rounding.

Intervals come from a bootstrap that resamples whole clusters (a duplicate set: every seat
rotation of one deal), because the pairwise results of one game, and the games of one
duplicate set, are not independent. Written in pure Python: a fit is a few Newton steps on
at most a few dozen bots, and the bootstrap resamples distinct cluster tallies, so 100,000
games rate in seconds without numpy.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import repeat
from operator import mul
from typing import Hashable, Iterable, Sequence

from cardarena.errors import CardarenaError

ELO_PER_NAT = 400 / math.log(10)  # rating points per unit of natural log-odds
DEFAULT_MEAN = 1500.0
FIT_STEPS = 200  # Newton steps before a fit gives up

Pair = tuple[str, str]
#: pair (a, b) with a < b -> [points scored by a, comparisons]
Tally = dict[Pair, list[float]]


Z95 = 1.959963984540054  # two-sided 95% quantile of the standard normal


def expected_score(elo: float) -> float:
    """The expected score of a side `elo` points stronger, on the logistic 400 scale."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_of_score(score: float) -> float:
    """The Elo difference whose expected score is `score` (±inf at 1 and 0)."""
    if score >= 1.0:
        return math.inf
    if score <= 0.0:
        return -math.inf
    return 400.0 * math.log10(score / (1.0 - score))


def _effective_size(score: float, error: float, units: int) -> float:
    """The number of independent results that would give a mean `score` the standard error `error`
    (`units` when the spread says nothing: a perfect score, or no spread at all)."""
    spread = score * (1.0 - score)
    return spread / (error * error) if spread > 0 and error > 0 else units


def score_interval(score: float, error: float, units: int, z: float = Z95) -> tuple[float, float]:
    """An interval for a mean score in [0, 1] with standard error `error`, measured over `units` independent units.

    Wilson's score interval on the effective sample size (`_effective_size`), so it stays inside
    [0, 1] and keeps a finite side after a perfect score.
    """
    effective = _effective_size(score, error, units)
    shrink = 1.0 + z * z / effective
    centre = (score + z * z / (2 * effective)) / shrink
    half = z * math.sqrt(score * (1.0 - score) / effective + z * z / (4 * effective * effective)) / shrink
    # at a perfect score one end is exactly the score (rounding would make it a finite Elo)
    return (0.0 if score <= 0.0 else max(centre - half, 0.0)), (1.0 if score >= 1.0 else min(centre + half, 1.0))


def score_superiority(score: float, error: float, units: int) -> float:
    """Likelihood that the side with this mean score is the stronger: the normal probability of the
    score test of "even" (½), so it passes 97.5% exactly when `score_interval` leaves out ½."""
    effective = _effective_size(score, error, units)
    return 0.5 * (1.0 + math.erf((score - 0.5) * 2.0 * math.sqrt(effective) / math.sqrt(2.0)))


class RatingError(CardarenaError, ValueError):
    """Ratings that cannot be computed (an anchor bot that never played, no finite maximum-likelihood fit)."""


def comparisons_from_ranks(
    seats: Sequence[str], ranks: Sequence[int], teams: Sequence[int] | None = None
) -> list[tuple[str, str, float]]:
    """Pairwise results `(a, b, score of a)` between the distinct bots of one game.

    Without teams, every two seats held by different bots compare their ranks (lower is
    better, equal is a draw). With teams, the game is one team against another: every bot of
    one team meets every different bot of the other once, at the teams' ranks. Copies of one
    bot are never compared with each other.
    """
    if teams is None:
        sides = [(frozenset([name]), rank) for name, rank in zip(seats, ranks)]
    else:
        members: dict[int, set[str]] = defaultdict(set)
        team_rank: dict[int, int] = {}
        for name, rank, team in zip(seats, ranks, teams):
            members[team].add(name)
            team_rank[team] = min(rank, team_rank.get(team, rank))
        sides = [(frozenset(members[team]), team_rank[team]) for team in sorted(members)]
    results: list[tuple[str, str, float]] = []
    for index, (bots_x, rank_x) in enumerate(sides):
        for bots_y, rank_y in sides[index + 1:]:
            score_x = 1.0 if rank_x < rank_y else 0.5 if rank_x == rank_y else 0.0
            results.extend((a, b, score_x) for a in sorted(bots_x) for b in sorted(bots_y) if a != b)
    return results


def tally(comparisons: Iterable[tuple[str, str, float]]) -> Tally:
    """Points and comparison counts per unordered pair (keyed with the smaller name first)."""
    totals: Tally = {}
    for a, b, score in comparisons:
        key, points = ((a, b), score) if a < b else ((b, a), 1.0 - score)
        entry = totals.setdefault(key, [0.0, 0])
        entry[0] += points
        entry[1] += 1
    return totals


def components(pairs: Iterable[Pair], bots: Iterable[str] = ()) -> list[list[str]]:
    """Connected groups of bots (each sorted), largest first, then by first name."""
    parent: dict[str, str] = {}

    def root(bot: str) -> str:
        parent.setdefault(bot, bot)
        while parent[bot] != bot:
            parent[bot] = parent[parent[bot]]
            bot = parent[bot]
        return bot

    for bot in bots:
        root(bot)
    for a, b in pairs:
        parent[root(a)] = root(b)
    groups: dict[str, list[str]] = defaultdict(list)
    for bot in sorted(parent):
        groups[root(bot)].append(bot)
    return sorted(groups.values(), key=lambda group: (-len(group), group[0]))


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Solve `matrix · x = vector` by Gaussian elimination with partial pivoting."""
    size = len(vector)
    rows = [row[:] + [value] for row, value in zip(matrix, vector)]
    for column in range(size):
        pivot = max(range(column, size), key=lambda r: abs(rows[r][column]))
        if abs(rows[pivot][column]) < 1e-300:
            raise RatingError("the ratings are not determined: results too lopsided for floating point "
                              "(a prior above zero keeps them closer)")
        rows[column], rows[pivot] = rows[pivot], rows[column]
        pivot_row = rows[column]
        for r in range(column + 1, size):
            factor = rows[r][column] / pivot_row[column]
            if factor:
                row = rows[r]
                for c in range(column, size + 1):
                    row[c] -= factor * pivot_row[c]
    solution = [0.0] * size
    for r in range(size - 1, -1, -1):
        row = rows[r]
        solution[r] = (row[size] - sum(row[c] * solution[c] for c in range(r + 1, size))) / row[r]
    return solution


def _scored_against(totals: Tally, prior: float) -> dict[str, set[str]]:
    """Each bot's opponents it took points from, virtual draws included (the edges of the existence test)."""
    scored: dict[str, set[str]] = defaultdict(set)
    for (a, b), (points, count) in totals.items():
        if points + prior / 2 > 0:
            scored[a].add(b)
        if count - points + prior / 2 > 0:
            scored[b].add(a)
    return scored


def _reachable(start: str, edges: dict[str, set[str]]) -> set[str]:
    """Bots reachable from `start` along `edges` (including `start`)."""
    seen, frontier = {start}, [start]
    while frontier:
        for nxt in edges.get(frontier.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    return seen


def _scoreless_parts(group: list[str], totals: Tally, prior: float) -> list[tuple[list[str], list[str]]]:
    """The parts of a connected group that never scored against the rest of it, each with the opponents it met there.

    A finite maximum-likelihood fit exists exactly when there are none (Zermelo, Ford): such a
    part's ratings would fall without bound below the rest. Empty when the scored-against graph
    is strongly connected, which every group is once `prior` virtual draws are added.
    """
    met: dict[str, set[str]] = defaultdict(set)
    for a, b in totals:
        met[a].add(b)
        met[b].add(a)
    scored = _scored_against(totals, prior)
    reach = {bot: _reachable(bot, scored) for bot in group}
    parts = []
    for bot in group:
        part = sorted(other for other in reach[bot] if bot in reach[other])  # bot's strongly connected part
        # reported once (by its first bot), and only if it is not the whole group yet scored nowhere outside
        if part[0] == bot and len(reach[bot]) == len(part) < len(group):
            inside = set(part)
            parts.append((part, sorted(set().union(*(met[m] for m in part)) - inside)))
    return parts


def _fit_group(bots: list[str], totals: Tally, prior: float) -> dict[str, float]:
    """Log-strengths (mean zero) of one connected group maximising the Bradley–Terry likelihood."""
    if len(bots) == 1:
        return {bots[0]: 0.0}
    index = {bot: i for i, bot in enumerate(bots)}
    pairs = [(index[a], index[b], points + prior / 2, count + prior)
             for (a, b), (points, count) in totals.items()]
    size = len(bots)
    theta = [0.0] * size
    for _ in range(FIT_STEPS):
        gradient = [0.0] * size
        hessian = [[0.0] * size for _ in range(size)]
        for i, j, points, count in pairs:
            expected = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
            residual = points - count * expected
            gradient[i] += residual
            gradient[j] -= residual
            weight = count * expected * (1.0 - expected)
            hessian[i][i] += weight
            hessian[j][j] += weight
            hessian[i][j] -= weight
            hessian[j][i] -= weight
        # the last bot's strength is held at zero: ratings are only defined up to a constant
        step = _solve([row[:-1] for row in hessian[:-1]], gradient[:-1]) + [0.0]
        largest = max(abs(s) for s in step)
        scale = min(1.0, 2.0 / largest) if largest else 1.0  # keep early steps from overshooting
        theta = [t + scale * s for t, s in zip(theta, step)]
        if largest < 1e-10:
            break
    else:
        raise RatingError(f"the fit did not converge in {FIT_STEPS} steps: results too lopsided "
                          "(a prior above zero keeps them closer)")
    mean = sum(theta) / size
    return {bot: theta[index[bot]] - mean for bot in bots}


def fit(totals: Tally, bots: Iterable[str] = (), prior: float = 2.0) -> tuple[dict[str, float], list[list[str]]]:
    """Elo ratings (mean 0 within each connected group) and the groups; `prior` virtual draws per pair."""
    if not (math.isfinite(prior) and prior >= 0):
        raise RatingError(f"the prior must be a number of virtual draws, zero or more, not {prior}")
    totals = {pair: entry for pair, entry in totals.items() if entry[1]}
    groups = components(totals, bots)
    group_of = {bot: index for index, group in enumerate(groups) for bot in group}
    group_totals: list[Tally] = [{} for _ in groups]
    for pair, entry in totals.items():
        group_totals[group_of[pair[0]]][pair] = entry
    scoreless = [part for group, group_tally in zip(groups, group_totals)
                 for part in _scoreless_parts(group, group_tally, prior)]
    if scoreless:
        reasons = "; ".join(f"{', '.join(part)} never scored against {', '.join(opponents)}"
                            for part, opponents in sorted(scoreless))
        raise RatingError(f"no finite ratings without a prior: {reasons} (a prior above zero keeps them finite)")
    ratings: dict[str, float] = {}
    for group, group_tally in zip(groups, group_totals):
        for bot, strength in _fit_group(group, group_tally, prior).items():
            ratings[bot] = strength * ELO_PER_NAT
    return ratings, groups


def _anchored(ratings: dict[str, float], groups: list[list[str]], anchor: tuple[str, float] | None,
              mean: float) -> dict[str, float]:
    """Shift each group to average `mean`, except the anchor's group, which puts the anchor at its rating."""
    shifted: dict[str, float] = {}
    for group in groups:
        if anchor is not None and anchor[0] in group:
            offset = anchor[1] - ratings[anchor[0]]
        else:
            offset = mean - sum(ratings[bot] for bot in group) / len(group)
        for bot in group:
            shifted[bot] = ratings[bot] + offset
    return shifted


@dataclass
class Ratings:
    """Fitted ratings with 95% bootstrap intervals, connected groups, and the bootstrap samples."""

    rating: dict[str, float]
    interval: dict[str, tuple[float, float] | None]  # None: fewer than two distinct duplicate sets (or no bootstrap)
    groups: list[list[str]]
    samples: list[dict[str, float]] = field(default_factory=list)

    def group_of(self, bot: str) -> int:
        """Index of the connected group holding `bot` (0 is the largest)."""
        return next(i for i, group in enumerate(self.groups) if bot in group)

    def superiority(self, a: str, b: str) -> float | None:
        """Likelihood that `a` is stronger than `b`: the share of bootstrap fits ranking it higher."""
        both = [sample for sample in self.samples if a in sample and b in sample]
        if not both or self.group_of(a) != self.group_of(b):
            return None
        wins = sum(1.0 if s[a] > s[b] else 0.5 if s[a] == s[b] else 0.0 for s in both)
        return wins / len(both)


def _percentile(values: list[float], fraction: float) -> float:
    """The `fraction` quantile of sorted `values`, interpolating linearly between order statistics."""
    position = fraction * (len(values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


def _bootstrap_samples(signature_count: Counter, bootstrap: int, seed: int, prior: float,
                       anchor: tuple[str, float] | None, mean: float) -> list[dict[str, float]]:
    """Anchored ratings of `bootstrap` resamples of the clusters, drawn with replacement.

    Clusters with the same tally (a "signature") are interchangeable, so a resample is a count
    per signature; each pair's resampled totals are then sums of count × signature totals,
    computed with C-level `map`s so a resample of tens of thousands of clusters takes milliseconds.
    """
    signatures = sorted(signature_count)
    population = [i for i, signature in enumerate(signatures) for _ in range(signature_count[signature])]
    pairs = sorted({pair for signature in signatures for pair, _, _ in signature})
    pair_index = {pair: i for i, pair in enumerate(pairs)}
    #: per pair: the signatures holding it, with the points and comparisons each adds
    columns: list[tuple[list[int], list[float], list[int]]] = [([], [], []) for _ in pairs]
    for i, signature in enumerate(signatures):
        for pair, points, count in signature:
            holders, pair_points, pair_counts = columns[pair_index[pair]]
            holders.append(i)
            pair_points.append(points)
            pair_counts.append(count)
    rng = random.Random(seed)
    samples: list[dict[str, float]] = []
    for number in range(1, (bootstrap if population else 0) + 1):
        drawn = Counter(rng.choices(population, k=len(population)))
        times = list(map(drawn.get, range(len(signatures)), repeat(0)))
        resampled: Tally = {}
        for pair, (holders, pair_points, pair_counts) in zip(pairs, columns):
            weights = list(map(times.__getitem__, holders))
            count = sum(map(mul, weights, pair_counts))
            if count:
                resampled[pair] = [sum(map(mul, weights, pair_points)), count]
        try:
            sample_raw, sample_groups = fit(resampled, (), prior)
        except RatingError as error:
            raise RatingError(f"bootstrap resample {number} of {bootstrap}: {error}") from error
        if anchor is None or anchor[0] in sample_raw:
            samples.append(_anchored(sample_raw, sample_groups, anchor, mean))
    return samples


def rate(
    games: Iterable[tuple[Hashable, Sequence[tuple[str, str, float]]]],
    prior: float = 2.0,
    anchor: tuple[str, float] | None = None,
    mean: float = DEFAULT_MEAN,
    bootstrap: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
) -> Ratings:
    """Ratings from `(cluster, comparisons)` per game; games sharing a cluster are resampled together.

    The result does not depend on the order of `games`: clusters are tallied and sorted before
    the bootstrap draws from them.
    """
    cluster_tallies: dict[Hashable, Tally] = {}
    for cluster, comparisons in games:
        target = cluster_tallies.setdefault(cluster, {})
        for pair, (points, count) in tally(comparisons).items():
            entry = target.setdefault(pair, [0.0, 0])
            entry[0] += points
            entry[1] += count
    totals: Tally = {}
    signature_count: Counter = Counter()
    for cluster_total in cluster_tallies.values():
        signature = tuple(sorted((pair, points, count) for pair, (points, count) in cluster_total.items()))
        signature_count[signature] += 1
        for pair, points, count in signature:
            entry = totals.setdefault(pair, [0.0, 0])
            entry[0] += points
            entry[1] += count
    bots = sorted({bot for pair in totals for bot in pair})
    if anchor is not None and anchor[0] not in bots:
        raise RatingError(f"anchor bot {anchor[0]!r} has no rated games")
    raw, groups = fit(totals, bots, prior)
    rating = _anchored(raw, groups, anchor, mean)

    # A bootstrap over fewer than two clusters, or over clusters that all came out alike, only
    # redraws the same data: it says nothing of the uncertainty (it would print `1587 to 1587`),
    # so there is no interval rather than a falsely exact one.
    enough = len(signature_count) >= 2
    samples = _bootstrap_samples(signature_count, bootstrap if enough else 0, seed, prior, anchor, mean)
    tail = (1 - confidence) / 2
    interval: dict[str, tuple[float, float] | None] = {}
    for bot in bots:
        values = sorted(sample[bot] for sample in samples if bot in sample)
        interval[bot] = (_percentile(values, tail), _percentile(values, 1 - tail)) if values else None
    return Ratings(rating=rating, interval=interval, groups=groups, samples=samples)
