"""Quitlok: bet only on cards that cannot bust, stay at a threshold, bank modestly, retire when ahead.

A player bets a small unit while its total is low enough that no card can bust it (and more on an
"eleven" call, which never busts), takes free face-up cards otherwise, and stays once the total
reaches a threshold. The banker draws to a threshold, funds a quarter of its stack and takes the
bank when it is up on the session. Cards are "Q1".."Q12"; the view gives our best total.
"""

from __future__ import annotations

import random

TYPE_CHECKING = False  # typing's own flag: importing typing costs every start of the bot 4 ms
if TYPE_CHECKING:
    from typing import Any

#: a player stays once its total reaches this (against random, 15 scored a little better than 16 or 17)
PLAYER_STAYS_AT = 15
#: the banker stands once its total reaches this
BANKER_STANDS_AT = 17
#: with this total or less no card can bust the hand (the worst card adds 11: a 12 counts as 9)
CANNOT_BUST_AT = 10
#: a plain bet is this share of our stack; an eleven call (which never busts) bets three times as much
BET_SHARE = 20
ELEVEN_UNITS = 3
#: a new banker puts up this share of its stack (at least the minimum bank)
FUND_SHARE = 4


def clamp(amount: int, bounds: dict[str, int]) -> int:
    """`amount` moved into the legal range `bounds` ({"min", "max"})."""
    return max(bounds["min"], min(bounds["max"], amount))


def find(legal: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    """The legal entry of type `kind`, or None."""
    return next((action for action in legal if action["type"] == kind), None)


def bet(entry: dict[str, Any], units: int, stack: int) -> dict[str, Any]:
    """A bet action from the legal entry `entry`: `units` bet units of `stack`, within its range."""
    return {**entry, "amount": clamp(units * max(1, stack // BET_SHARE), entry["amount"])}


def play_turn(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A player's turn: bet safe cards, call eleven with a bigger bet, draw free cards, stay at the threshold."""
    total = view["total"] or 0
    stack = view["stacks"][view["seat"]]
    has_bet = view["bets"][view["seat"]] > 0
    if (eleven := find(legal, "eleven_bet")) is not None:
        return bet(eleven, ELEVEN_UNITS, stack)
    if (eleven_free := find(legal, "eleven_blot")) is not None:
        return eleven_free
    if total >= PLAYER_STAYS_AT:
        return {"type": "stay"}
    if total <= CANNOT_BUST_AT and (plain := find(legal, "bet")) is not None:
        return bet(plain, 1, stack)
    if (free := find(legal, "blot")) is not None and (has_bet or total <= CANNOT_BUST_AT):
        return free
    return {"type": "stay"}


def play_banker(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    """The banker's turn: draw below the threshold, then stand."""
    if (view["total"] or 0) < BANKER_STANDS_AT and find(legal, "draw") is not None:
        return {"type": "draw"}
    return {"type": "stand"}


def fund(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Put up a modest bank: a share of the stack, within the legal range."""
    entry = legal[0]
    return {**entry, "amount": clamp(view["stacks"][view["seat"]] // FUND_SHARE, entry["amount"])}


def retire_or_keep(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Retire with the bank, where the card allows it, when stack plus bank is more than our share of the
    table's money (the banker is asked at every card from the 4th hand, so `retire` is not always legal)."""
    if find(legal, "retire") is None:
        return {"type": "keep"}
    stacks = view["stacks"]
    # no bet is outstanding when retiring is offered, so stacks and bank hold all the money
    fair_share = (sum(stacks) + view["bank"]) / len(stacks)
    ahead = stacks[view["seat"]] + view["bank"] > fair_share
    return {"type": "retire" if ahead else "keep"}


def decide(view: dict[str, Any], legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """The heuristic's action in a Quitlok position (deterministic: `rng` is not needed)."""
    phase = view["phase"]
    if phase == "fund":
        return fund(view, legal)
    if phase == "retire":
        return retire_or_keep(view, legal)
    if phase == "banker":
        return play_banker(view, legal)
    return play_turn(view, legal)
