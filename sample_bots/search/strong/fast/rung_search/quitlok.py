"""Quitlok: PIMC over cheap deals rebuilt from the view, threshold rollouts to the end of the hand.

The SDK's exact sampler replays the whole session and counts deals (12 ms a sample at the median
at 5 players, far more late in 10-player sessions), too slow for the fast rung's 20 ms. The view
shows everything but the face-down cards, so a deal here is the view's state with the unseen cards
(the deck's order, the face-down discards and the other players' face-down cards) shuffled anew,
keeping only the hard constraint that is cheap to check: a player still in the hand has not bust.
It ignores what a player's bets and stays suggest about its face-down cards (the SDK's sampler
ignores that too: it draws uniformly among the deals the public actions allow).

A session is long and its chips swing with every hand, so rollouts stop at the end of the current
hand and score the chips each seat controls (stack, plus the bank for the banker) against the
others' mean. The rollout policy bets small on cards that cannot bust, stays at 15, calls eleven
with a larger bet, banks a quarter of the stack, and draws as banker below 17.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from cardarena.games.base import Action, GameState
from cardarena.games.quitlok import (ANTICLOCKWISE, CARD_BY_NAME, CLOCKWISE, FULL_DECK, GAME, OVER, TURN,
                                     QuitlokState, hand_value)
from cardarena.search.bot import payoff

#: a player stays at this total; the banker stands at BANKER_STANDS
PLAYER_STAYS, BANKER_STANDS = 15, 17
#: at or below this total no card busts the hand (the worst card adds 11: a 12 may count 9)
CANNOT_BUST = 10
#: shuffles tried for a deal in which every player still in the hand is under 22
SHUFFLES = 20
WAITING, PLAYING, STAYED = "waiting", "playing", "stayed"


def rebuilt(bot: Any, rng: random.Random) -> QuitlokState:
    """A full state consistent with the seat's latest view: the unseen cards shuffled into the unseen places."""
    view = bot.knowledge.transcript.current_view()
    options = GAME.spec.resolve_options(bot.knowledge.transcript.options)
    seat = view["seat"]
    known = [CARD_BY_NAME[card] for hand in view["hands"] for card in hand if card is not None]
    known += [CARD_BY_NAME[card] for card in view["discards_seen"]]
    unseen = list(FULL_DECK)
    for card in known:
        unseen.remove(card)
    for _ in range(SHUFFLES):
        rng.shuffle(unseen)
        pool = iter(unseen)
        hands = [[CARD_BY_NAME[card] if card is not None else next(pool) for card in hand] for hand in view["hands"]]
        if all(other == seat or view["status"][other] not in (PLAYING, STAYED)
               or hand_value(hands[other], other != view["banker"]) <= 21 for other in range(len(hands))):
            break
    state = object.__new__(QuitlokState)
    state.players = len(view["stacks"])
    state.options = options
    state.adopt_rng(random.Random(rng.getrandbits(64)))
    rest = list(pool)
    state.face_down_discards = rest[:view["discards_unseen"]]
    state.deck = rest[view["discards_unseen"]:]
    state.face_up_discards = [CARD_BY_NAME[card] for card in view["discards_seen"]]
    state.stacks, state.bank, state.bets = list(view["stacks"]), view["bank"], list(view["bets"])
    state.hands, state.face_up = hands, [list(flags) for flags in view["face_up"]]
    state.eleven_called, state.status = list(view["eleven_called"]), list(view["status"])
    state.banker, state.banks_held, state.hand_number = view["banker"], view["banks_held"], view["hand_number"]
    state.direction = CLOCKWISE if view["direction"] == "clockwise" else ANTICLOCKWISE
    state.turn_order = list(view["turn_order"])
    # the players before the one to move (or all who have played, outside a player's turn)
    state.turn_index = (state.turn_order.index(seat) if view["phase"] == TURN
                        else sum(view["status"][other] != WAITING for other in state.turn_order))
    state.phase = view["phase"]
    state.events = []
    return state


def amount(kind: str, stack: int) -> int:
    """The policy's amount for an action of type `kind` with `stack` chips: a bank of a quarter of
    the stack, a bet of a twentieth, an eleven call of three twentieths."""
    if kind == "fund":
        return stack // 4
    unit = max(1, stack // 20)
    return 3 * unit if kind == "eleven_bet" else unit


def find(legal: list[Action], kind: str) -> Action | None:
    return next((action for action in legal if action["type"] == kind), None)


def sized(entry: Action, amount: int) -> Action:
    """`entry` with its amount range replaced by `amount`, moved inside the range."""
    bounds = entry["amount"]
    return {**entry, "amount": max(bounds["min"], min(bounds["max"], amount))}


class QuitlokPlan:
    def prefilter(self, view: dict[str, Any], legal: list[Action]) -> list[Action]:
        """Every legal entry, an amount sized as the policy sizes it: the search chooses whether to
        bet, draw or stay, not how much (a bet as large as the bank's cover won in a few sampled
        hands would stake the session on them)."""
        stack = view["stacks"][view["seat"]]
        return [sized(entry, amount(entry["type"], stack)) if "amount" in entry else entry for entry in legal]

    def determinize(self, bot: Any) -> GameState:
        return rebuilt(bot, bot.rng)

    def policy(self, state: GameState, rng: random.Random) -> Action:
        legal = state.legal_actions()
        seat = state.to_move()
        stack = state.stacks[seat]
        phase = state.phase
        if phase == "fund":
            return sized(legal[0], amount("fund", stack))
        if phase == "retire":
            ahead = stack + state.bank > (sum(state.stacks) + state.bank) / state.players
            return {"type": "retire"} if ahead and find(legal, "retire") else {"type": "keep"}
        total = hand_value(state.hands[seat], seat != state.banker)
        if phase == "banker":
            return {"type": "draw"} if total < BANKER_STANDS and find(legal, "draw") else {"type": "stand"}
        if (eleven := find(legal, "eleven_bet")) is not None:
            return sized(eleven, amount("eleven_bet", stack))
        if (eleven := find(legal, "eleven_blot")) is not None:
            return eleven
        if total >= PLAYER_STAYS:
            return {"type": "stay"}
        if total <= CANNOT_BUST and (bet := find(legal, "bet")) is not None:
            return sized(bet, amount("bet", stack))
        if find(legal, "blot") is not None and (state.bets[seat] > 0 or total <= CANNOT_BUST):
            return {"type": "blot"}
        return {"type": "stay"}

    def horizon(self, start: GameState, depth: int) -> Callable[[GameState], bool]:
        """The end of the current hand, whatever `depth`."""
        banker, hand = start.banker, start.hand_number
        return lambda state: state.banker != banker or state.hand_number != hand

    def value(self, state: GameState, seat: int) -> float:
        if state.phase == OVER:
            return payoff(state.result(), seat)
        money = list(state.stacks)
        money[state.banker] += state.bank
        others = [money[other] for other in range(state.players) if other != seat]
        return money[seat] - sum(others) / len(others)


PLAN = QuitlokPlan()
