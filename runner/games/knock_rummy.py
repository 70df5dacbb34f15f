"""Knock Rummy: draw, discard or knock; least deadwood wins the stakes (rules: knock_rummy.md).

One game is one round. Cards are ints (see `cardarena.cards`); hands are kept sorted. The minimum
deadwood is an exact search over every set and run of the hand, memoised on the hand's card
bitmask, and is only computed when the round ends; the cards that belong to no meld at all are
found first with a few bit operations, and the search only sees the others (in random play, few
or none). The full arrangement, melds and all, is only worked out for `reveal`.
"""

from __future__ import annotations

import bisect
import random
from fractions import Fraction
from functools import lru_cache
from typing import Any, Mapping, Sequence

from cardarena.cards import DECK, NAME, RANK
from cardarena.games.base import (
    Action, Event, Game, GameError, GameSpec, GameState, IllegalAction, Option, OptionError, Result,
    check_deck, score_to_wire,
)

KNOCK_PENALTY = 10
RUMMY_BONUS = 25
#: default of the `max_turns` house rule: far above the longest rounds measured (stock-only play
#: ends by turn 32; seeded random play that seldom knocks, by turn 92 over 40,000 rounds)
DEFAULT_MAX_TURNS = 200

#: point value of each card: A = 1, 2..10 face value, J/Q/K = 10
VALUE = tuple(min(RANK[card], 10) for card in DECK)
_CARD_BY_NAME = {name: card for card, name in enumerate(NAME)}

DRAW, DISCARD, OVER = "draw", "discard", "over"

# Legal-list entries, made once: legal lists hand out these very dicts (do not mutate them).
_DRAW_EITHER = [{"type": "draw", "source": "stock"}, {"type": "draw", "source": "discard"}]
_PASS_ONLY = [{"type": "pass"}]
_DRAW_PILE_OR_PASS = [{"type": "draw", "source": "discard"}, {"type": "pass"}]
_DISCARD = tuple({"type": "discard", "card": name} for name in NAME)
_KNOCK = tuple({"type": "knock", "card": name} for name in NAME)

SPEC = GameSpec(
    name="knock-rummy",
    title="Knock Rummy",
    min_players=2,
    max_players=5,
    partnerships="none",
    zero_sum=True,
    rules_version="2",
    summary="Draw from the stock or the discard pile, then discard or knock; "
            "the least deadwood collects the differences (one round is one game).",
    options=(
        Option("dealer", None, "seat of the dealer; none = chosen at random from the seed", minimum=0),
        Option(
            "empty_stock_pickups", None,
            "discard-pile pick-ups allowed once the stock is empty, after which the player to move "
            "must pass and the round ends; none = no limit, as the rules say (max_turns still ends the round)",
            minimum=0,
        ),
        Option(
            "max_turns", DEFAULT_MAX_TURNS,
            "turns a round may last (a house rule so that it always ends): when that turn ends with a "
            "discard, the round ends and is scored as if the stock ran out, with no knocker",
            minimum=1,
        ),
    ),
)


def _all_melds() -> tuple[tuple[int, ...], ...]:
    """Every meld of the deck as a card bitmask, grouped by the meld's lowest card."""
    by_lowest: list[list[int]] = [[] for _ in DECK]
    for rank_base in range(0, 52, 4):
        same_rank = [rank_base + suit for suit in range(4)]
        for left_out in same_rank:
            triple = [card for card in same_rank if card != left_out]
            by_lowest[triple[0]].append(sum(1 << card for card in triple))
        by_lowest[same_rank[0]].append(sum(1 << card for card in same_rank))
    for start in DECK:
        run = [start]
        # the next rank of the same suit is 4 cards on; past the king it leaves the deck (ace low only)
        while run[-1] + 4 < 52:
            run.append(run[-1] + 4)
            if len(run) >= 3:
                by_lowest[start].append(sum(1 << card for card in run))
    return tuple(tuple(melds) for melds in by_lowest)


#: MELDS_BY_LOWEST[c]: every set and run (as a bitmask) whose lowest card is c
MELDS_BY_LOWEST = _all_melds()


def _least_deadwood(mask: int, memo: dict[int, int]) -> int:
    """The least deadwood of the cards in `mask`: the lowest card is deadwood or opens a meld."""
    if not mask:
        return 0
    known = memo.get(mask)
    if known is not None:
        return known
    low = mask & -mask
    lowest = low.bit_length() - 1
    best = VALUE[lowest] + _least_deadwood(mask ^ low, memo)
    for meld in MELDS_BY_LOWEST[lowest]:
        if meld & mask == meld:
            rest = _least_deadwood(mask ^ meld, memo)
            if rest < best:
                best = rest
                if not best:
                    break
    memo[mask] = best
    return best


#: per 4-bit rank slot of a card bitmask: 0b0101.. and 0b0011.. (bit counting), 5 and 8 (a count of 3 or 4)
_ODD_BITS = int("5" * 13, 16)
_PAIR_BITS = int("3" * 13, 16)
_FIVES = int("5" * 13, 16)
_EIGHTS = int("8" * 13, 16)


def _meldable(mask: int) -> int:
    """The cards of `mask` that belong to at least one set or run of `mask`.

    A card's rank is its 4-bit slot (card = 4 * (rank - 1) + suit), so a run is a card with the
    cards 4 and 8 bits above it, and a set is a slot holding three or four cards: the slots'
    bit counts are added up in place, and a count plus 5 reaches 8 exactly from 3 cards on.
    """
    runs = mask & (mask >> 4) & (mask >> 8)
    pairs = (mask & _ODD_BITS) + ((mask >> 1) & _ODD_BITS)
    counts = (pairs & _PAIR_BITS) + ((pairs >> 2) & _PAIR_BITS)
    full_slots = ((counts + _FIVES) & _EIGHTS) >> 3
    return runs | (runs << 4) | (runs << 8) | (mask & (full_slots * 15))


#: the bit of each card in a card bitmask
_BIT = tuple(1 << card for card in DECK)
#: the cards whose point value has bit b set, for b = 0..3 (values are at most 10)
_VALUE_BITS = tuple(sum(_BIT[card] for card in DECK if VALUE[card] >> b & 1) for b in range(4))


def _points(mask: int) -> int:
    """The total point value of the cards of `mask`, bit by bit of the values."""
    one, two, four, eight = _VALUE_BITS
    return ((mask & one).bit_count() + 2 * (mask & two).bit_count() + 4 * (mask & four).bit_count()
            + 8 * (mask & eight).bit_count())


@lru_cache(maxsize=1 << 16)
def _meldable_deadwood(meldable: int) -> int:
    """The least deadwood of cards that all belong to some meld (memoised: few such sets occur)."""
    return _least_deadwood(meldable, {})


def least_deadwood(cards: Sequence[int]) -> int:
    """The least deadwood of a hand (as `best_arrangement` finds it), without the melds."""
    mask = sum(map(_BIT.__getitem__, cards))
    meldable = _meldable(mask)
    if not meldable:
        return _points(mask)
    return _points(mask ^ meldable) + _meldable_deadwood(meldable)


def _cards_of(mask: int) -> list[int]:
    """The cards of a bitmask, lowest first."""
    cards = []
    while mask:
        low = mask & -mask
        cards.append(low.bit_length() - 1)
        mask ^= low
    return cards


def best_arrangement(cards: Sequence[int]) -> tuple[int, list[list[int]], list[int]]:
    """The optimal arrangement of a hand: (deadwood, melds, deadwood cards), cards ascending.

    Only the cards that belong to some meld of the hand are searched (`_meld_arrangement`); the
    rest are deadwood.
    """
    mask = sum(map(_BIT.__getitem__, cards))
    meldable = _meldable(mask)
    if not meldable:  # most hands at a round's end in random play: nothing to search
        return _points(mask), [], sorted(cards)
    melds, left = _meld_arrangement(meldable)
    unmatched = sorted(_cards_of(mask ^ meldable) + list(left))
    return sum(VALUE[card] for card in unmatched), [list(meld) for meld in melds], unmatched


@lru_cache(maxsize=1 << 12)
def _meld_arrangement(meldable: int) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """The melds, and the cards left over, of an optimal arrangement of cards that all belong to
    some meld: the lowest card opens the first meld that keeps the least deadwood reachable, or
    is left over (memoised like `_meldable_deadwood`: few such sets occur)."""
    memo: dict[int, int] = {}
    remaining, still_owed = meldable, _least_deadwood(meldable, memo)
    melds, left = [], []
    while remaining:
        low = remaining & -remaining
        lowest = low.bit_length() - 1
        for meld in MELDS_BY_LOWEST[lowest]:
            if meld & remaining == meld and _least_deadwood(remaining ^ meld, memo) == still_owed:
                melds.append(tuple(_cards_of(meld)))
                remaining ^= meld
                break
        else:
            left.append(lowest)
            remaining ^= low
            still_owed -= VALUE[lowest]
    return tuple(melds), tuple(left)


def deadwood(cards: Sequence[int]) -> int:
    """The least deadwood of a hand over every arrangement into sets and runs."""
    return least_deadwood(cards)


def settle(deadwoods: Sequence[int], knocker: int | None) -> tuple[list[int | Fraction], list[int]]:
    """Net stake change per seat and the seats that collect, per the rules' Scoring 1-5 (exact:
    an int, or a Fraction where a share does not come out whole)."""
    players = len(deadwoods)
    if knocker is not None and deadwoods[knocker] == 0:
        payments: list[int | Fraction] = [-(deadwoods[seat] + RUMMY_BONUS) for seat in range(players)]
        payments[knocker] = -sum(payments[seat] for seat in range(players) if seat != knocker)
        return payments, [knocker]
    least = min(deadwoods)
    tied = [seat for seat in range(players) if deadwoods[seat] == least]
    # A knocker tied with others collects nothing (rule 3); alone in W it is w (rule 2).
    collectors = [seat for seat in tied if seat != knocker] if knocker in tied and len(tied) > 1 else tied
    payments = [0] * players
    pool = 0
    for seat in range(players):
        if seat in tied:
            continue
        owed = deadwoods[seat] - least + (KNOCK_PENALTY if seat == knocker else 0)
        payments[seat] = -owed
        pool += owed
    share = pool // len(collectors) if pool % len(collectors) == 0 else Fraction(pool, len(collectors))
    for seat in collectors:
        payments[seat] = share
    return payments, collectors


class KnockRummyState(GameState):
    """One round of Knock Rummy in progress; hands are sorted card lists, the stock's top is last."""

    __slots__ = (
        "players", "_rng_object", "_rng_holding", "dealer", "hands", "known", "stock", "pile", "current",
        "phase", "taken", "pickups_left", "max_turns", "turn_number", "knocker", "knock_card", "ending",
        "deadwoods", "payments", "collectors", "_legal",
    )

    def __init__(self, players: int, options: dict[str, Any], rng: random.Random, dealer: int,
                 deck: Sequence[int]):
        self.players = players
        self.adopt_rng(rng)
        self.dealer = dealer
        size = 10 if players == 2 else 7
        dealt = size * players
        self.hands = [sorted(deck[(seat - dealer - 1) % players:dealt:players]) for seat in range(players)]
        #: per seat, the cards it is publicly known to hold (taken from the discard pile)
        self.known: list[list[int]] = [[] for _ in range(players)]
        self.pile = [deck[dealt]]
        self.stock = list(deck[:dealt:-1])
        self.current = (dealer + 1) % players
        self.phase = DRAW
        self.taken: int | None = None
        self.pickups_left: int | None = options["empty_stock_pickups"]
        self.max_turns: int = options["max_turns"]
        #: the turn in progress, counted from 1 (one player's draw and discard is one turn)
        self.turn_number = 1
        self.knocker: int | None = None
        self.knock_card: int | None = None
        self.ending: str | None = None
        self.deadwoods: list[int] = []
        self.payments: list[int | Fraction] = []
        self.collectors: list[int] = []
        #: the legal list of this position once asked for
        self._legal: list[Action] | None = None

    # --- turn structure -------------------------------------------------------------------

    def to_move(self) -> int | None:
        return None if self.phase == OVER else self.current

    def is_over(self) -> bool:
        return self.phase == OVER

    def legal_actions(self) -> list[Action]:
        legal = self._legal
        if legal is None:
            legal = self._legal = self._list_legal_actions()
        return list(legal)

    def _list_legal_actions(self) -> list[Action]:
        """The legal list of this position, in canonical order."""
        if self.phase == DRAW:
            if self.stock:
                return _DRAW_EITHER
            if self.pickups_left == 0:
                return _PASS_ONLY
            return _DRAW_PILE_OR_PASS
        if self.phase == DISCARD:
            taken = self.taken
            hand = [card for card in self.hands[self.current] if card != taken]
            return [_DISCARD[card] for card in hand] + [_KNOCK[card] for card in hand]
        return []

    def apply(self, action: Action) -> list[Event]:
        kind = action.get("type")
        seat = self.current
        self._legal = None
        if self.phase == DRAW:
            if kind == "draw":
                return self._draw(seat, action.get("source"))
            if kind == "pass" and not self.stock:
                self._finish("stock_exhausted")
                return [{"type": "pass", "seat": seat}, self._round_end_event()]
        elif self.phase == DISCARD and kind in ("discard", "knock"):
            card = _CARD_BY_NAME.get(action.get("card"))
            hand = self.hands[seat]
            if card is not None and card != self.taken and card in hand:
                hand.remove(card)
                known = self.known[seat]
                if card in known:
                    known.remove(card)
                if kind == "knock":
                    self.knocker, self.knock_card = seat, card
                    self._finish("knock")
                    return [{"type": "knock", "seat": seat}, self._round_end_event()]
                self.pile.append(card)
                self.taken = None
                discarded = {"type": "discard", "seat": seat, "card": NAME[card]}
                if self.turn_number == self.max_turns:
                    self._finish("turn_cap")
                    return [discarded, self._round_end_event()]
                self.turn_number += 1
                self.phase = DRAW
                self.current = (seat + 1) % self.players
                return [discarded]
        raise IllegalAction(f"{action!r} is not a legal action for seat {seat} in the {self.phase} phase")

    def _draw(self, seat: int, source: Any) -> list[Event]:
        """Move the top of the stock or of the discard pile into `seat`'s hand."""
        if source == "stock" and self.stock:
            bisect.insort(self.hands[seat], self.stock.pop())
            self.phase = DISCARD
            return [{"type": "draw", "seat": seat, "source": "stock"}]
        if source == "discard" and (self.stock or self.pickups_left != 0):
            card = self.pile.pop()
            bisect.insort(self.hands[seat], card)
            self.known[seat].append(card)
            self.taken = card
            if not self.stock and self.pickups_left is not None:
                self.pickups_left -= 1
            self.phase = DISCARD
            return [{"type": "draw", "seat": seat, "source": "discard", "card": NAME[card]}]
        raise IllegalAction(f"seat {seat} may not draw from {source!r} now")

    def _finish(self, ending: str) -> None:
        """End the round: find every hand's least deadwood and settle the stakes."""
        self.phase = OVER
        self.ending = ending
        self.taken = None
        self.deadwoods = [least_deadwood(hand) for hand in self.hands]
        self.payments, self.collectors = settle(self.deadwoods, self.knocker)

    def _round_end_event(self) -> Event:
        return {
            "type": "round_end",
            "ending": self.ending,
            "knocker": self.knocker,
            "deadwood": list(self.deadwoods),
            "payments": [score_to_wire(payment) for payment in self.payments],
        }

    # --- what players see -----------------------------------------------------------------

    def view(self, seat: int) -> dict[str, Any]:
        # Each visible card is named once: the pile's top is its last card, and the card taken
        # from the pile this turn is given as its index in "hand".
        hand = self.hands[seat]
        known = self.known
        return {
            "seat": seat,
            "players": self.players,
            "dealer": self.dealer,
            "to_move": None if self.phase == OVER else self.current,
            "phase": self.phase,
            "hand": [NAME[card] for card in hand],
            "taken_from_discard": hand.index(self.taken) if self.taken is not None and seat == self.current else None,
            "discard_pile": [NAME[card] for card in self.pile],
            "stock": len(self.stock),
            "hand_sizes": [len(other) for other in self.hands],
            "known_cards": [
                [NAME[card] for card in sorted(known[other])] if other != seat and known[other] else []
                for other in range(self.players)
            ],
            "pickups_left": self.pickups_left if not self.stock else None,
            "turn_number": self.turn_number,
            "max_turns": self.max_turns,
            "knocker": self.knocker,
            "knock_card": NAME[self.knock_card] if self.knock_card is not None and seat == self.knocker else None,
        }

    def hidden_cards(self, seat: int) -> list[str]:
        hidden = [card for card in self.stock]
        for other in range(self.players):
            if other != seat:
                known = self.known[other]
                hidden.extend(card for card in self.hands[other] if card not in known)
        if self.knock_card is not None and seat != self.knocker:
            hidden.append(self.knock_card)
        return [NAME[card] for card in hidden]

    # --- the end --------------------------------------------------------------------------

    def result(self) -> Result:
        if self.phase != OVER:
            raise GameError("the round is not over")
        return Result.from_scores(self.payments)

    def reveal(self) -> dict[str, Any]:
        if self.phase != OVER:
            raise GameError("the round is not over")
        arrangements = [best_arrangement(hand) for hand in self.hands]
        return {
            "ending": self.ending,
            "knocker": self.knocker,
            "knock_card": None if self.knock_card is None else NAME[self.knock_card],
            "hands": [[NAME[card] for card in hand] for hand in self.hands],
            "melds": [[[NAME[card] for card in meld] for meld in melds] for _, melds, _ in arrangements],
            "deadwood_cards": [[NAME[card] for card in cards] for _, _, cards in arrangements],
            "deadwood": list(self.deadwoods),
            "collectors": list(self.collectors),
            "payments": [score_to_wire(payment) for payment in self.payments],
        }

    def clone(self) -> "KnockRummyState":
        twin = object.__new__(KnockRummyState)
        self._clone_rng_into(twin)
        twin.hands = [hand[:] for hand in self.hands]
        twin.known = [cards[:] for cards in self.known]
        twin.stock, twin.pile = self.stock[:], self.pile[:]
        twin.players, twin.dealer, twin.max_turns = self.players, self.dealer, self.max_turns
        twin.current, twin.phase, twin.taken, twin.turn_number = self.current, self.phase, self.taken, self.turn_number
        twin.pickups_left, twin.knocker, twin.knock_card = self.pickups_left, self.knocker, self.knock_card
        # the ending's figures are set once and never changed after, and the legal list is never
        # changed in place, so both are shared
        twin.ending, twin.deadwoods, twin.payments = self.ending, self.deadwoods, self.payments
        twin.collectors, twin._legal = self.collectors, self._legal
        return twin


class KnockRummy(Game):
    """Knock Rummy for 2 to 5 players, one round per game."""

    spec = SPEC

    def new_state(
        self,
        players: int,
        options: Mapping[str, Any] | None = None,
        seed: int = 0,
        deck: Sequence[str] | None = None,
    ) -> KnockRummyState:
        self.spec.check_players(players)
        resolved = self.spec.resolve_options(options)
        rng = random.Random(seed)
        dealer = rng.randrange(players)
        if resolved["dealer"] is not None:
            if resolved["dealer"] >= players:
                raise OptionError(f"option 'dealer' must be a seat below {players}, got {resolved['dealer']}")
            dealer = resolved["dealer"]
        if deck is None:
            order = _shuffled_deck(rng)
        else:
            order = _parse_deck(deck)
        return KnockRummyState(players, resolved, rng, dealer, order)

    def deck(self, players: int, options: Mapping[str, Any] | None = None) -> list[str]:
        return list(NAME)


def _shuffled_deck(rng: random.Random) -> list[int]:
    """A uniformly shuffled deck (Fisher-Yates on `rng.random()`, several times faster than
    `rng.shuffle`, which draws each index through Python-level bit sampling)."""
    order = list(DECK)
    draw = rng.random
    for top, size in _SHUFFLE_STEPS:
        pick = int(draw() * size)
        order[top], order[pick] = order[pick], order[top]
    return order


#: Fisher-Yates steps of a 52-card shuffle: (the position filled, how many cards it is drawn from)
_SHUFFLE_STEPS = tuple((top, top + 1) for top in range(51, 0, -1))


def _parse_deck(deck: Sequence[str]) -> list[int]:
    """A fixed deck order from wire forms: all 52 cards once each, else OptionError."""
    return [_CARD_BY_NAME[name] for name in check_deck(deck, NAME, "knock-rummy")]


GAME = KnockRummy()
