"""Casino: PIMC over the SDK's exact deals; short rollouts of greedy one-move lookahead.

Only a move's first decision (which card, and capture, build or trail) is searched: the steps
that follow take every table item the move can still use, then `done`, the most cards a move
can gather (rollouts complete moves the same way). The rollout policy looks one move ahead with
the engine: it completes each first decision on a copy of the state and plays the one that adds
the most to its side's pile, in points (casino.md § Scoring: an ace 1, the ten of diamonds 2,
the two of spades 1) plus a share of the most-cards and most-spades points per card; a build is
credited with part of what it will bring back, a trail costs what it gives away. A rollout
stops after the rung's number of moves (the searching seat's, the replies, and its next move),
and the position is scored by that same worth, side against side: this is a shallow expectimax
over deals, in which the opponents' replies see the sampled hands.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from cardarena.cards import NAME, RANK, SUIT
from cardarena.games.base import Action, GameState
from cardarena.games.casino import BIG_CASINO, LITTLE_CASINO, SPADES
from cardarena.search.bot import payoff

CARD = {name: card for card, name in enumerate(NAME)}
#: what a captured card is worth in points: its own points, a share of "most cards" (3 points) and
#: of "most spades" (1 point)
WORTH = tuple(2 * (card == BIG_CASINO) + (card == LITTLE_CASINO) + (RANK[card] == 1)
              + 0.15 * (SUIT[card] == SPADES) + 0.2 for card in range(52))
#: the share of a build's worth counted when it is made (it may be stolen, and it may come back)
BUILD_SHARE = 0.4
#: a trail gives the table material: this much on top of the card's worth
TRAIL_COST = 0.1
#: clearing the table leaves the next player nothing to take
SWEEP_WORTH = 0.5


def next_step(legal: list[Action]) -> Action:
    """Within a move: take the first item offered, else carry the move out."""
    return next((action for action in legal if action["type"] == "take"), legal[-1])


def completed(state: GameState, first: Action) -> GameState:
    """A copy of `state` after the move begun by `first`, its items taken greedily."""
    branch = state.clone()
    branch.apply(first)
    while branch.move is not None:
        branch.apply(next_step(branch.legal_actions()))
    return branch


def pile_worth(state: GameState, side: int) -> float:
    return sum(WORTH[card] for card in state.piles[side])


def move_score(state: GameState, first: Action) -> float:
    """What the move begun by `first` adds for the mover's side, in points (see the module's docstring)."""
    kind = first["type"]
    card = CARD[first["card"]]
    if kind == "trail":
        return -WORTH[card] - TRAIL_COST
    side = state.side_of[state.turn]
    after = completed(state, first)
    if kind == "capture":
        swept = not after.loose and not after.builds
        return pile_worth(after, side) - pile_worth(state, side) + SWEEP_WORTH * swept
    made = [build for build in after.builds if build.owner == state.turn]
    return BUILD_SHARE * sum(WORTH[c] for build in made for c in build.cards)


def greedy(state: GameState, rng: random.Random) -> Action:
    """The first decision whose move scores best (ties at random), or the next step of a move."""
    legal = state.legal_actions()
    if state.move is not None:
        return next_step(legal)
    return max(legal, key=lambda first: (move_score(state, first), rng.random()))


class CasinoPlan:
    def prefilter(self, view: dict[str, Any], legal: list[Action]) -> list[Action]:
        if view["move"] is not None:
            return [next_step(legal)]
        return legal

    def determinize(self, bot: Any) -> GameState:
        return bot.sample()

    def policy(self, state: GameState, rng: random.Random) -> Action:
        return greedy(state, rng)

    def horizon(self, start: GameState, depth: int) -> Callable[[GameState], bool]:
        """After `depth` complete moves (the turn passing), or at the end of the round."""
        turns = [start.turn, 0]
        round_number = start.round

        def reached(state: GameState) -> bool:
            if state.turn != turns[0]:
                turns[0] = state.turn
                turns[1] += 1
            return turns[1] >= depth or state.round != round_number

        return reached

    def value(self, state: GameState, seat: int) -> float:
        if state.is_over():
            return payoff(state.result(), seat)
        worth = [state.scores[side] + pile_worth(state, side) for side in range(state.sides)]
        mine = state.side_of[seat]
        others = [worth[side] for side in range(state.sides) if side != mine]
        return worth[mine] - sum(others) / len(others)


PLAN = CasinoPlan()
