"""Knock Rummy: PIMC over the SDK's exact deals, short greedy rollouts scored by deadwood.

Rollouts stop after a few moves (or at the end of the round) and score the deadwood the hands
hold (or the real payoff): a whole round's payoff is far noisier. The rollout policy works on
the engine's own cards (ints) for speed: take the discard when it lowers the least deadwood,
discard the card that leaves the least, knock at 10 or less (7 with more than two players).
Candidates are the draws, a knock with the best discard (up to 16 deadwood) and the discards of
the four cards that leave the least deadwood, in that order (a rung that searches fewer weighs
knocking or not against the policy's choice first).
"""

from __future__ import annotations

import random
from typing import Any, Callable

from cardarena.games.base import Action, GameState
from cardarena.games.knock_rummy import NAME, VALUE, least_deadwood
from cardarena.search.bot import payoff

#: discards searched: the ones leaving the least deadwood
DISCARDS_SEARCHED = 4
#: a knock (with the best discard) is searched up to this deadwood: the rollouts knock at 10 or
#: less, the search weighs an earlier or later knock against the sampled hands
KNOCKS_SEARCHED = 16
CARD = {name: card for card, name in enumerate(NAME)}


def knock_limit(players: int) -> int:
    """Knock at this deadwood or less: lower with more opponents, who may hold less."""
    return 10 if players == 2 else 7


def ranked_discards(hand: list[int], allowed: list[int]) -> list[tuple[int, int]]:
    """(deadwood left, card) for each allowed discard, least deadwood then highest card value first."""
    return sorted((least_deadwood([c for c in hand if c != card]), -VALUE[card], card) for card in allowed)


class KnockRummyPlan:
    def prefilter(self, view: dict[str, Any], legal: list[Action]) -> list[Action]:
        if view["phase"] != "discard":
            return legal
        allowed = [CARD[action["card"]] for action in legal if action["type"] == "discard"]
        hand = [CARD[name] for name in view["hand"]]
        ranked = ranked_discards(hand, allowed)[:DISCARDS_SEARCHED]
        options = [{"type": "discard", "card": NAME[card]} for _, _, card in ranked]
        deadwood, _, card = ranked[0]
        if deadwood <= KNOCKS_SEARCHED:
            options.insert(0, {"type": "knock", "card": NAME[card]})
        return options

    def determinize(self, bot: Any) -> GameState:
        return bot.sample()

    def policy(self, state: GameState, rng: random.Random) -> Action:
        seat = state.current
        hand = state.hands[seat]
        if state.phase == "draw":
            if not state.stock:
                return state.legal_actions()[0] if state.pickups_left != 0 else {"type": "pass"}
            top = state.pile[-1]
            best_now = least_deadwood(hand)
            if ranked_discards(hand + [top], hand)[0][0] < best_now:
                return {"type": "draw", "source": "discard"}
            return {"type": "draw", "source": "stock"}
        allowed = [card for card in hand if card != state.taken]
        deadwood, _, card = ranked_discards(hand, allowed)[0]
        kind = "knock" if deadwood <= knock_limit(state.players) else "discard"
        return {"type": kind, "card": NAME[card]}

    def horizon(self, start: GameState, depth: int) -> Callable[[GameState], bool]:
        """After `depth` moves (a draw or a discard each), or at the end of the round when `depth` is 0."""
        moves = [-1]

        def reached(state: GameState) -> bool:
            moves[0] += 1
            return 0 < depth <= moves[0]

        return reached

    def value(self, state: GameState, seat: int) -> float:
        """The payoff at the end of the round; before it, the others' mean deadwood less this seat's
        (what a knock would roughly settle)."""
        if state.is_over():
            return payoff(state.result(), seat)
        deadwoods = [least_deadwood(hand) for hand in state.hands]
        others = [deadwoods[other] for other in range(state.players) if other != seat]
        return sum(others) / len(others) - deadwoods[seat]


PLAN = KnockRummyPlan()
