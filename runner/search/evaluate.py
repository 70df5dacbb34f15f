"""Quick values of a state where random playouts say little, for a search's leaves.

Random play almost never completes a Cuajo hand, so a random playout gives a search no signal
there; a hand's closeness to complete does. A hand's closeness is, in order: how many of its cards
the best split into combinations covers, how many unseen cards would complete it at once ("outs"),
and how many two-card beginnings of a set or sequence it holds (runner/games/cuajo.md §
Combinations). Cards are rank letter + suit letter ("Jo", "Kc"); a card type is the index
rank*4 + suit, and a hand is a tuple of counts per type, so the search memoises well.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

TYPE_CHECKING = False  # typing's own flag: the heuristic bot imports this module, and a start pays for typing
if TYPE_CHECKING:
    from typing import Any

    from cardarena.games.base import GameState

RANKS = "A345JHK"
SUITS = "oceb"
ACE, THREE, FOUR, FIVE, JACK, HORSE, KING = range(7)
TYPES = 28
#: a card that joins the hand raises the covered count by at most this much (a new set of 4)
MOST_ONE_CARD_GAIN = 4
#: what one more covered card of a Cuajo hand is worth in `estimate`, in cents: less than a secret
#: (100 to the side, 200 in the difference) and far less than a win, so those still come first
CENTS_PER_COVERED_CARD = 10


def card_type(card: str) -> int:
    """The type index rank*4 + suit of a wire card such as "Jo"."""
    return RANKS.index(card[0]) * 4 + SUITS.index(card[1])


def counts_of(cards: list[str]) -> tuple[int, ...]:
    """The hand `cards` as a tuple of counts per card type."""
    counts = [0] * TYPES
    for card in cards:
        counts[card_type(card)] += 1
    return tuple(counts)


def with_card(counts: tuple[int, ...], index: int, change: int) -> tuple[int, ...]:
    """`counts` with `change` copies of type `index` added (negative: removed)."""
    changed = list(counts)
    changed[index] += change
    return tuple(changed)


#: the card groups below the kings that no combination crosses: aces; 3-4-5; jacks and horses (whose
#: runs end in a king). Each is searched apart, so a hand that changes in one group finds the other
#: groups' answers in the cache (a discard's every candidate, an out's every card).
GROUPS = ((0, 4), (4, 16), (16, KING * 4))
NO_KINGS = (0, 0, 0, 0)


@lru_cache(maxsize=1 << 17)
def covered(counts: tuple[int, ...]) -> int:
    """How many cards of the hand `counts` the best split into combinations covers.

    Kings are covered by themselves; in each group the search takes the lowest remaining type and
    either leaves one copy loose or puts it in a secret, a set or a sequence starting with it.
    """
    kings = counts[KING * 4:]
    total = sum(kings)
    for low, high in GROUPS:
        alone = (0,) * low + counts[low:high] + (0,) * (KING * 4 - high)
        total += _covered_below_kings(alone, kings if high == KING * 4 else NO_KINGS)
    return total


@lru_cache(maxsize=1 << 17)
def _covered_below_kings(counts: tuple[int, ...], kings: tuple[int, ...]) -> int:
    """The covered count of the non-king cards `counts`, with `kings` per suit free to end J-H-K runs."""
    lowest = next((index for index, count in enumerate(counts) if count), None)
    if lowest is None:
        return 0
    rank, suit = divmod(lowest, 4)
    best = _covered_below_kings(with_card(counts, lowest, -1), kings)
    if counts[lowest] >= 4:
        best = max(best, 4 + _covered_below_kings(with_card(counts, lowest, -4), kings))
    # a set: this card with 2 or 3 cards of the same rank in higher suits (lower ones are used up)
    others = [rank * 4 + other for other in range(suit + 1, 4) if counts[rank * 4 + other]]
    for size in (2, 3):
        for chosen in combinations(others, size):
            rest = with_card(counts, lowest, -1)
            for index in chosen:
                rest = with_card(rest, index, -1)
            best = max(best, size + 1 + _covered_below_kings(rest, kings))
    if rank == THREE and counts[FOUR * 4 + suit] and counts[FIVE * 4 + suit]:
        rest = with_card(with_card(with_card(counts, lowest, -1), FOUR * 4 + suit, -1), FIVE * 4 + suit, -1)
        best = max(best, 3 + _covered_below_kings(rest, kings))
    if rank == JACK and counts[HORSE * 4 + suit] and kings[suit]:
        rest = with_card(with_card(counts, lowest, -1), HORSE * 4 + suit, -1)
        # the king was already counted as covered on its own, so the run adds the jack and horse
        best = max(best, 2 + _covered_below_kings(rest, with_card(kings, suit, -1)))
    return best


def unseen_copies(view: dict[str, Any]) -> list[int]:
    """Per card type, the copies (of 4) a Cuajo view has not seen: not its own, not the sowee, not in the pile."""
    seen = list(counts_of(view["hand"] + [c for secret in view["secrets"] for c in secret]
                          + view["discards"] + [view["sowee"]]))
    return [max(0, 4 - count) for count in seen]


def pool_cards(view: dict[str, Any]) -> list[str]:
    """The cards of a Cuajo view that still have to fit into combinations: the free hand plus a
    sowee secret's fourth card."""
    fourths = [secret[3] for secret in view["secrets"] if len(set(secret)) > 1]
    return view["hand"] + fourths


def outs(counts: tuple[int, ...], unseen: list[int]) -> int:
    """How many unseen cards would make the hand `counts` complete."""
    size = sum(counts)
    if size - covered(counts) > MOST_ONE_CARD_GAIN - 1:
        return 0
    return sum(unseen[index] for index in range(TYPES)
               if unseen[index] and covered(with_card(counts, index, 1)) == size + 1)


def beginnings(counts: tuple[int, ...]) -> int:
    """How many two-card beginnings of a set or sequence the hand holds (a measure of its promise)."""
    total = 0
    for rank in range(KING):
        suits_held = sum(1 for suit in range(4) if counts[rank * 4 + suit])
        total += suits_held * (suits_held - 1) // 2
    for suit in range(4):
        for run in ((THREE, FOUR, FIVE), (JACK, HORSE, KING)):
            held = sum(1 for rank in run if counts[rank * 4 + suit])
            total += 1 if held == 2 else 0
    return total


def closeness(counts: tuple[int, ...], unseen: list[int]) -> tuple[int, int, int]:
    """How close the hand is to complete: covered cards, then outs, then beginnings (larger is closer)."""
    return covered(counts), outs(counts, unseen), beginnings(counts)


def estimate(state: GameState, seat: int) -> float | None:
    """What `state` is worth to `seat`, in the unit of `payoff`, where the game has a quick
    estimate (Cuajo: the money so far plus the seat's hand closeness), else None: play it out."""
    from cardarena.games.cuajo import CuajoState  # here, not at the top: see TYPE_CHECKING above
    from cardarena.search.bot import payoff

    if state.is_over():
        return payoff(state.result(), seat)
    if not isinstance(state, CuajoState):
        return None
    view = state.view(seat)
    ours, theirs = view["balance"][seat % 2], view["balance"][1 - seat % 2]
    hand_covered, hand_outs, hand_beginnings = closeness(counts_of(pool_cards(view)), unseen_copies(view))
    # outs and beginnings break ties of the covered count, as in the order of `closeness`
    promise = hand_covered + min(hand_outs, 40) / 50 + min(hand_beginnings, 40) / 2500
    return ours - theirs + CENTS_PER_COVERED_CARD * promise
