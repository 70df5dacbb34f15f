"""Knock Rummy: keep melds, minimise deadwood, take the discard only when it lowers deadwood, knock low.

Cards are wire strings ("AS", "10D"); internally a card is an index rank*4 + suit (ace low) so a
hand is a bitmask and the least deadwood is an exact memoised search over its sets and runs.
"""

from __future__ import annotations

import random
from functools import lru_cache

TYPE_CHECKING = False  # typing's own flag: importing typing costs every start of the bot 4 ms
if TYPE_CHECKING:
    from typing import Any

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = "CDHS"
#: point value per card index: A = 1, 2..10 face value, J/Q/K = 10
VALUE = tuple(min(index // 4 + 1, 10) for index in range(52))
#: knock when the deadwood left is at most this (two players; more players knock lower, see below)
KNOCK_DEADWOOD = 10


def card_index(card: str) -> int:
    """The index rank*4 + suit of a wire card such as "10D"."""
    return RANKS.index(card[:-1]) * 4 + SUITS.index(card[-1])


def hand_mask(cards: list[str]) -> int:
    """The bitmask of a list of wire cards."""
    mask = 0
    for card in cards:
        mask |= 1 << card_index(card)
    return mask


def _melds_by_lowest() -> tuple[tuple[int, ...], ...]:
    """Every set (3 or 4 of a rank) and run (3+ consecutive of a suit) as a bitmask, by its lowest card."""
    by_lowest: list[list[int]] = [[] for _ in range(52)]
    for rank in range(13):
        same_rank = [rank * 4 + suit for suit in range(4)]
        for left_out in same_rank:
            triple = [card for card in same_rank if card != left_out]
            by_lowest[triple[0]].append(sum(1 << card for card in triple))
        by_lowest[same_rank[0]].append(sum(1 << card for card in same_rank))
    for start in range(52):
        run = [start]
        while run[-1] + 4 < 52:
            run.append(run[-1] + 4)
            if len(run) >= 3:
                by_lowest[start].append(sum(1 << card for card in run))
    return tuple(tuple(melds) for melds in by_lowest)


MELDS_BY_LOWEST = _melds_by_lowest()


@lru_cache(maxsize=1 << 16)
def least_deadwood(mask: int) -> int:
    """The least deadwood of the hand `mask`: its lowest card is either deadwood or opens a meld."""
    if not mask:
        return 0
    lowest = (mask & -mask).bit_length() - 1
    best = VALUE[lowest] + least_deadwood(mask & ~(1 << lowest))
    for meld in MELDS_BY_LOWEST[lowest]:
        if meld & mask == meld:
            best = min(best, least_deadwood(mask & ~meld))
    return best


def connections(index: int, mask: int) -> int:
    """How many cards of `mask` could meld with card `index`: same rank, or same suit within two ranks."""
    rank, suit = divmod(index, 4)
    near = [rank * 4 + other for other in range(4) if other != suit]
    near += [(rank + step) * 4 + suit for step in (-2, -1, 1, 2) if 0 <= rank + step < 13]
    return sum(1 for card in near if mask >> card & 1)


def wanted_by_opponents(view: dict[str, Any]) -> int:
    """The bitmask of cards that would meld with what opponents are known to have taken from the pile."""
    wanted = 0
    for seat, cards in enumerate(view["known_cards"]):
        if seat == view["seat"]:
            continue
        for card in cards:
            rank, suit = divmod(card_index(card), 4)
            wanted |= sum(1 << (rank * 4 + other) for other in range(4))
            for step in (-1, 1):
                if 0 <= rank + step < 13:
                    wanted |= 1 << ((rank + step) * 4 + suit)
    return wanted


def best_discard(cards: list[str], allowed: list[str], wanted: int = 0) -> tuple[str, int]:
    """The allowed card whose discard leaves the least deadwood, and that deadwood.

    Ties go to the card opponents are not known to want, then the one with fewest meld chances,
    then the highest value (so it stops costing points).
    """
    mask = hand_mask(cards)

    def cost(card: str) -> tuple[int, int, int, int]:
        index = card_index(card)
        rest = mask & ~(1 << index)
        return least_deadwood(rest), wanted >> index & 1, connections(index, rest), -VALUE[index]

    card = min(allowed, key=cost)
    return card, least_deadwood(mask & ~(1 << card_index(card)))


def knock_limit(players: int) -> int:
    """The deadwood at or below which to knock: lower with more opponents, who may hold less."""
    return KNOCK_DEADWOOD if players == 2 else KNOCK_DEADWOOD - 3


def choose_draw(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Take the top discard when keeping it lowers the deadwood; otherwise draw from the stock (or pass)."""
    take = {"type": "draw", "source": "discard"}
    if take in legal and view["discard_pile"]:
        top = view["discard_pile"][-1]
        hand = view["hand"]
        now = least_deadwood(hand_mask(hand))
        _, after = best_discard(hand + [top], hand)
        if after < now:
            return take
    for preferred in ({"type": "draw", "source": "stock"}, {"type": "pass"}):
        if preferred in legal:
            return preferred
    return legal[0]


def choose_discard(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Discard the card that leaves the least deadwood, knocking with it when that deadwood is low."""
    allowed = [action["card"] for action in legal if action["type"] == "discard"]
    card, deadwood = best_discard(view["hand"], allowed, wanted_by_opponents(view))
    knock = {"type": "knock", "card": card}
    if deadwood <= knock_limit(view["players"]) and knock in legal:
        return knock
    return {"type": "discard", "card": card}


def decide(view: dict[str, Any], legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """The heuristic's action in a Knock Rummy position (deterministic: `rng` is not needed)."""
    if view["phase"] == "draw":
        return choose_draw(view, legal)
    return choose_discard(view, legal)
