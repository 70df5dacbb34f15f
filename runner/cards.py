"""The standard 52-card French deck shared by Knock Rummy and Casino.

A card is an int 0..51 inside engines (fast to compare, hash and index); on the wire it is a
short string: rank then suit, e.g. "AS", "10D", "QH", "2C". Ranks run A(1) .. K(13); suits are
C, D, H, S.
"""

from __future__ import annotations

RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUIT_NAMES = ("C", "D", "H", "S")

DECK = tuple(range(52))

#: rank number 1..13 (A=1, J=11, Q=12, K=13) of each card
RANK = tuple(card // 4 + 1 for card in DECK)
#: suit index 0..3 (C, D, H, S) of each card
SUIT = tuple(card % 4 for card in DECK)
#: wire string of each card
NAME = tuple(RANK_NAMES[card // 4] + SUIT_NAMES[card % 4] for card in DECK)

_BY_NAME = {name: card for card, name in enumerate(NAME)}


def card(rank: int, suit: int) -> int:
    """The card of rank 1..13 and suit index 0..3."""
    return (rank - 1) * 4 + suit


def parse(name: str) -> int:
    """The card for a wire string such as "10D"; ValueError for anything else."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise ValueError(f"not a card: {name!r}") from None


def names(cards) -> list[str]:
    """Wire strings of `cards`, in the given order."""
    return [NAME[c] for c in cards]
