"""Determinized search as policy improvement, with common random numbers: the part every game shares.

At a decision with more than one candidate, the bot draws `determinizations` full states
consistent with what its seat knows (the game's `determinize`). In each, it plays every
candidate, then the game's rollout `policy` for every seat until the game's `horizon`, and
scores the position reached with the game's `value`. Every candidate of one determinization is
rolled out from the same state with the same random numbers (one seed per determinization for
the engine's chance and for the policy), so the difference between two candidates is theirs,
not luck's.

The policy's own choice is the default. Another candidate replaces it only when its paired
difference to the default, over the determinizations, is positive by more than `margin`
standard errors: with few samples the payoffs' spread is far larger than the differences
between good moves, and picking the best mean would replace a sound rule of thumb by noise.
This is the rollout algorithm of Bertsekas (one step of policy improvement) with a guard.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from typing import Any, Callable, Protocol

from cardarena.games.base import Action, GameState


class GamePlan(Protocol):
    """What one game gives the search: see each game's module in this package."""

    def prefilter(self, view: dict[str, Any], legal: list[Action]) -> list[Action]: ...

    def determinize(self, bot: Any) -> GameState: ...

    def policy(self, state: GameState, rng: random.Random) -> Action: ...

    def horizon(self, start: GameState, depth: int) -> Callable[[GameState], bool]: ...

    def value(self, state: GameState, seat: int) -> float: ...


@dataclass(frozen=True)
class Budget:
    """How much one decision may search: deals sampled, how far a rollout goes (`depth`, in the
    game's own unit: its `horizon` says), candidates searched at most (the first ones of the
    game's preferred order), the standard errors by which a candidate must beat the policy's
    choice to replace it, and the table size the deals are sized for (0: any), above which a
    decision samples proportionally fewer, since every seat plays in a rollout."""

    determinizations: int
    depth: int = 0
    width: int = 64
    margin: float = 1.0
    players: int = 0

    def at_table(self, players: int) -> Budget:
        """This budget at a table of `players`: its deals scaled down past its table size."""
        if not self.players or players <= self.players:
            return self
        return replace(self, determinizations=max(2, self.determinizations * self.players // players))


def search(plan: GamePlan, bot: Any, options: list[Action], budget: Budget, rng: random.Random) -> Action:
    """The policy's choice, or the candidate that beats it clearly over `budget.determinizations` deals."""
    states = [plan.determinize(bot) for _ in range(budget.determinizations)]
    default = plan.policy(states[0], random.Random(rng.getrandbits(64)))
    options = [default] + [option for option in options if option != default][:budget.width - 1]
    values = [[0.0] * len(states) for _ in options]
    for sample, state in enumerate(states):
        seed = rng.getrandbits(64)
        for index, action in enumerate(options):
            values[index][sample] = rollout(plan, state, action, bot.seat, seed, budget.depth)
    best, best_gain = 0, 0.0
    for index in range(1, len(options)):
        gains = [mine - theirs for mine, theirs in zip(values[index], values[0])]
        gain = sum(gains) / len(gains)
        if gain > best_gain and gain > budget.margin * standard_error(gains):
            best, best_gain = index, gain
    return options[best]


def standard_error(samples: list[float]) -> float:
    """The standard error of the mean of `samples` (infinite for fewer than two)."""
    count = len(samples)
    if count < 2:
        return math.inf
    mean = sum(samples) / count
    return math.sqrt(sum((sample - mean) ** 2 for sample in samples) / (count - 1) / count)


def rollout(plan: GamePlan, state: GameState, action: Action, seat: int, seed: int, depth: int) -> float:
    """The value for `seat` of playing `action` in a copy of `state`, then the policy to the horizon."""
    branch = state.clone()
    branch.adopt_rng(random.Random(seed))
    policy_rng = random.Random(seed ^ 0x5EED)
    reached = plan.horizon(branch, depth)
    branch.apply(action)
    while not branch.is_over() and not reached(branch):
        branch.apply(plan.policy(branch, policy_rng))
    return plan.value(branch, seat)
