"""Pearson's chi-square test for the samplers' uniformity tests, computed here (scipy is not a
test dependency): the statistic, and its upper tail by the regularized incomplete gamma function."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence


def chi_square_p_value(observed: Sequence[int], expected: Sequence[float]) -> float:
    """The p-value of Pearson's chi-square statistic for `observed` counts against `expected` ones
    (same cells, same total), with one degree of freedom fewer than cells."""
    statistic = sum((seen - wanted) ** 2 / wanted for seen, wanted in zip(observed, expected))
    return upper_regularized_gamma((len(observed) - 1) / 2, statistic / 2)


def chi_square_uniform_p_value(counts: Sequence[int]) -> float:
    """The p-value of the test that `counts` came from equally likely cells."""
    return chi_square_p_value(counts, [sum(counts) / len(counts)] * len(counts))


def chi_square_pooled_p_value(observed: Mapping[Any, int], probabilities: Mapping[Any, float]) -> float:
    """The p-value for `observed` counts per cell against each cell's exact `probabilities`, cells
    expected fewer than 5 times pooled into one (as the test requires); an observed cell of
    probability 0 goes into that pool too, which then fails the test clearly."""
    samples = sum(observed.values())
    cells, pooled_seen, pooled_wanted = [], 0, 0.0
    for key, chance in probabilities.items():
        if chance * samples >= 5:
            cells.append((observed.get(key, 0), chance * samples))
        else:
            pooled_seen, pooled_wanted = pooled_seen + observed.get(key, 0), pooled_wanted + chance * samples
    pooled_seen += sum(count for key, count in observed.items() if key not in probabilities)
    if pooled_seen or pooled_wanted:
        cells.append((pooled_seen, max(pooled_wanted, 1e-12)))
    return chi_square_p_value([seen for seen, _ in cells], [wanted for _, wanted in cells])


def upper_regularized_gamma(a: float, x: float) -> float:
    """Q(a, x) = 1 - P(a, x): by P's power series below x = a + 1, by Q's continued fraction above
    (Numerical Recipes' gser and gcf, to 1e-15 relative)."""
    if x <= 0:
        return 1.0
    prefactor = math.exp(-x + a * math.log(x) - math.lgamma(a))
    if x < a + 1:
        term = total = 1.0 / a
        n = 0
        while abs(term) > abs(total) * 1e-15:
            n += 1
            term *= x / (a + n)
            total += term
        return max(0.0, 1.0 - prefactor * total)
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    fraction = d
    for n in range(1, 10_000):
        an = -n * (n - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        step = d * c
        fraction *= step
        if abs(step - 1) < 1e-15:
            break
    return prefactor * fraction
