"""Cuajo: lay every secret, claim every win, keep the hand closest to complete when discarding.

A hand's closeness (cardarena.search.evaluate) is, in order: how many of its cards the best split
into combinations covers, how many unseen cards would complete it at once ("outs"), and how many
two-card beginnings of a set or sequence it holds.
"""

from __future__ import annotations

import random

TYPE_CHECKING = False  # typing's own flag: importing typing costs every start of the bot 4 ms
if TYPE_CHECKING:
    from typing import Any

# the hand-closeness measure lives in the SDK, where search bots use it as a leaf evaluation
from cardarena.search.evaluate import (card_type, closeness, counts_of, covered, outs, pool_cards, unseen_copies,
                                       with_card)

__all__ = ["closeness", "counts_of", "covered", "decide", "outs"]  # outs: for the tests


def best_discard(pool: list[str], allowed: list[str], unseen: list[int]) -> str:
    """The allowed card whose removal leaves the pool closest to complete (first such in card order)."""
    counts = counts_of(pool)
    return max(dict.fromkeys(allowed),
               key=lambda card: closeness(with_card(counts, card_type(card), -1), unseen))


def sowee_fourth(pool: list[str], allowed: list[str], unseen: list[int]) -> str:
    """The fourth card for a sowee secret: a king (a combination on its own) or the card we would keep longest."""
    kings = [card for card in allowed if card[0] == "K"]
    if kings:
        return kings[0]
    counts = counts_of(pool)
    return min(dict.fromkeys(allowed),
               key=lambda card: closeness(with_card(counts, card_type(card), -1), unseen))


def choose_draw(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Take the last discard when it completes the hand or starts a new combination; else draw."""
    if {"type": "take"} in legal and view["discards"]:
        counts = counts_of(pool_cards(view))
        top = card_type(view["discards"][-1])
        gain = covered(with_card(counts, top, 1)) - covered(counts)
        if gain >= 2:
            return {"type": "take"}
    return {"type": "draw"} if {"type": "draw"} in legal else legal[0]


def choose_discard(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Lay a secret when one is offered (each opponent pays 50), else discard the least useful card."""
    unseen = unseen_copies(view)
    pool = pool_cards(view)
    for action in legal:
        if action["type"] == "secret":
            return action
    sowee_cards = [action["card"] for action in legal if action["type"] == "sowee_secret"]
    if sowee_cards:
        return {"type": "sowee_secret", "card": sowee_fourth(pool, sowee_cards, unseen)}
    allowed = [action["card"] for action in legal if action["type"] == "discard"]
    return {"type": "discard", "card": best_discard(pool, allowed, unseen)}


def decide(view: dict[str, Any], legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """The heuristic's action in a Cuajo position (deterministic: `rng` is not needed)."""
    phase = view["phase"]
    if phase == "claim":
        return {"type": "claim"} if {"type": "claim"} in legal else {"type": "pass"}
    if phase == "draw":
        return choose_draw(view, legal)
    return choose_discard(view, legal)
