"""Cuajo: a four-player partnership rummy with a 112-card Spanish deck (rules: cuajo.md).

Cards are card types 0..27 inside the engine, numbered rank-major (type = rank * 4 + suit) so
that the three independent groups of a hand (aces; 3-4-5; J-H-K) are contiguous slices of a
28-entry count list. On the wire a card is rank then suit, e.g. "Ao", "3c", "He", "Kb".
"""

from __future__ import annotations

import random
from functools import cache, lru_cache
from itertools import combinations, compress, product
from typing import Any, Mapping, Sequence

from cardarena.games.base import Action, Event, Game, GameSpec, GameState, Option, Result, check_deck, shuffle

RANKS = ("A", "3", "4", "5", "J", "H", "K")
SUITS = ("o", "c", "e", "b")  # oros (coins), copas (cups), espadas (swords), bastos (batons)
TYPES = 28
COPIES = 4
ACE, KING = 0, 6
KING_OF_COINS = KING * 4
NAME = tuple(RANKS[t // 4] + SUITS[t % 4] for t in range(TYPES))
_BY_NAME = {name: t for t, name in enumerate(NAME)}
KINGS = range(KING * 4, TYPES)
NON_KINGS = range(KING * 4)

# Legal-list entries, made once: legal lists hand out these very dicts (do not mutate them).
_DRAW, _TAKE, _CLAIM, _PASS = ({"type": kind} for kind in ("draw", "take", "claim", "pass"))
_SECRET = tuple({"type": "secret", "card": name} for name in NAME)
_SOWEE_SECRET = tuple({"type": "sowee_secret", "card": name} for name in NAME)
_DISCARD = tuple({"type": "discard", "card": name} for name in NAME)

HAND_SIZE = 15
SECRET_PAYMENT = 50
SPECIAL_PAYMENT = 300
STOCK_PAYMENT = 110
#: base payment by (condition 1 met, condition 2 met) when the winning card was taken
TAKEN_PAYMENT = {(True, True): 110, (True, False): 60, (False, True): 70, (False, False): 20}
MAX_EXTRA_CARDS = 15
PENALTY_TURNS = 2
#: default of the `max_turns` house rule: far above the longest hands measured (the 50-card stock
#: lasts at most 51 turns when everyone draws; seeded random play took at most 153 in 20,000 hands)
DEFAULT_MAX_TURNS = 400
#: entries kept by each memo of 12-count groups: a tournament plays many hands in one process, and
#: unbounded memos grew by about 30 entries a hand (270,000 after 20,000 random hands, still rising)
MEMO_SIZE = 1 << 16


def rank_of(card_type: int) -> int:
    """Rank index 0..6 (A 3 4 5 J H K) of a card type."""
    return card_type // 4


def suit_of(card_type: int) -> int:
    """Suit index 0..3 (coins, cups, swords, batons) of a card type."""
    return card_type % 4


# ---------------------------------------------------------------- hand evaluation


@cache
def _rank_splits(suit_counts: tuple[int, ...]) -> bool:
    """Whether the cards of one rank (count per suit, sorted high first) split into sets and secrets."""
    if suit_counts[0] == 0:
        return True
    counts = list(suit_counts)
    if counts[0] >= COPIES:  # the first suit's cards may form a secret...
        counts[0] -= COPIES
        if _rank_splits(tuple(sorted(counts, reverse=True))):
            return True
        counts[0] += COPIES
    others = [s for s in range(1, 4) if counts[s] > 0]
    for size in (2, 3):  # ...or a set with two or three other suits
        for chosen in combinations(others, size):
            rest = counts[:]
            rest[0] -= 1
            for s in chosen:
                rest[s] -= 1
            if _rank_splits(tuple(sorted(rest, reverse=True))):
                return True
    return False


def rank_splits(suit_counts: Sequence[int]) -> bool:
    """Whether cards of one rank, given as a count per suit, split into sets and secrets."""
    return _rank_splits(tuple(sorted(suit_counts, reverse=True)))


def _sequence_choices(counts: tuple[int, ...]) -> product:
    """Every choice of how many sequences to make in each suit of a 3-rank group."""
    return product(*(range(min(counts[s], counts[4 + s], counts[8 + s]) + 1) for s in range(4)))


def _stranded(counts: tuple[int, ...], ranks: int) -> bool:
    """Whether a card among the first `ranks` ranks of a 3-rank group fits no combination at all:
    fewer than four copies (no secret), fewer than three suits of its rank (no set) and a rank of
    its suit's sequence missing. Most hands that do not split are told this fast."""
    for rank in range(ranks):
        row = counts[rank * 4:rank * 4 + 4]
        if row.count(0) <= 1:  # three or four suits: a set is possible for each
            continue
        for suit in range(4):
            if 0 < row[suit] < COPIES and not all(counts[other * 4 + suit] for other in range(3) if other != rank):
                return True
    return False


@lru_cache(maxsize=MEMO_SIZE)
def _middle_complete(counts: tuple[int, ...]) -> bool:
    """Whether the 3s, 4s and 5s (12 counts, rank-major) split into 3-4-5 sequences, sets and secrets."""
    if _stranded(counts, 3):
        return False
    for runs in _sequence_choices(counts):
        if all(rank_splits([counts[r * 4 + s] - runs[s] for s in range(4)]) for r in range(3)):
            return True
    return False


@lru_cache(maxsize=MEMO_SIZE)
def _high_complete(counts: tuple[int, ...]) -> bool:
    """Whether the Js, Hs and Ks (12 counts) split into J-H-K sequences, sets, secrets and lone kings."""
    if _stranded(counts, 2):
        return False
    for runs in _sequence_choices(counts):
        if all(rank_splits([counts[r * 4 + s] - runs[s] for s in range(4)]) for r in range(2)):
            return True
    return False


def _ace_complete(counts: tuple[int, ...]) -> bool:
    """Whether the aces (4 counts) split into sets and secrets."""
    return _rank_splits(tuple(sorted(counts, reverse=True)))


def is_complete(counts: Sequence[int]) -> bool:
    """Whether a multiset of cards (28 counts) splits entirely into combinations."""
    return (
        _ace_complete(tuple(counts[0:4]))
        and _middle_complete(tuple(counts[4:16]))
        and _high_complete(tuple(counts[16:28]))
    )


_GROUPS = ((0, 4, _ace_complete), (4, 16, _middle_complete), (16, 28, _high_complete))


def completing_cards(counts: Sequence[int]) -> list[int]:
    """The card types (ascending) that would make this multiset complete if added to it.

    Adding a card changes only its own group, so the other groups must already be complete.
    """
    keys = [tuple(counts[0:4]), tuple(counts[4:16])]
    complete = [_ace_complete(keys[0]), _middle_complete(keys[1])]
    if not complete[0] and not complete[1]:  # the usual case, known before the third group is looked at
        return []
    keys.append(tuple(counts[16:28]))
    complete.append(_high_complete(keys[2]))
    if complete.count(False) > 1:
        return []
    found = []
    for index, (lo, hi, check) in enumerate(_GROUPS):
        if not all(complete[i] for i in range(3) if i != index):
            continue
        key = list(keys[index])
        for offset in range(hi - lo):
            if counts[lo + offset] >= COPIES:
                continue
            key[offset] += 1
            if check(tuple(key)):
                found.append(lo + offset)
            key[offset] -= 1
    return found


def one_card_away(free: Sequence[int], held: Sequence[int]) -> bool:
    """Whether one more card would complete a player's 16 cards (purro): a card type that fits the
    `free` cards and of which the player does not already hold all four copies (`held`: every card,
    laid secrets included)."""
    return any(held[t] < COPIES for t in completing_cards(free))


def is_special(free: Sequence[int], laid_kings: int = 0) -> bool:
    """Whether a winning hand is the special one: no king, or one king in a J-H-K sequence.

    `free` are the complete free cards (hand and a sowee secret's fourth); `laid_kings` counts the
    kings in laid secrets, which can never be in a sequence.
    """
    free_kings = [t for t in KINGS for _ in range(free[t])]
    total_kings = len(free_kings) + laid_kings
    if total_kings != 1 or not free_kings:
        return total_kings == 0
    suit = suit_of(free_kings[0])
    high = list(free[16:28])
    if not (high[suit] and high[4 + suit]):
        return False
    for offset in (0, 4, 8):  # take out the J-H-K of the king's suit; the rest must still split
        high[offset + suit] -= 1
    return _high_complete(tuple(high))


def goes_with_two(card_type: int, pool: Sequence[int]) -> bool:
    """Payment condition test: an ace with aces of two other suits; any other card with the rest
    of its 3-4-5 or J-H-K sequence in its suit, all found in `pool` (28 counts)."""
    rank, suit = rank_of(card_type), suit_of(card_type)
    if rank == ACE:
        return sum(1 for s in range(4) if s != suit and pool[s]) >= 2
    first = 1 if rank <= 3 else 4
    return all(pool[r * 4 + suit] for r in range(first, first + 3) if r != rank)


# ---------------------------------------------------------------- wire helpers


def card_names(counts: Sequence[int]) -> list[str]:
    """Wire forms of a multiset given as 28 counts, in canonical (type) order."""
    return [NAME[t] for t in range(TYPES) for _ in range(counts[t])]


def counts_of(types: Sequence[int]) -> list[int]:
    """The 28-entry count list of a sequence of card types."""
    counts = [0] * TYPES
    for t in types:
        counts[t] += 1
    return counts


def parse_card(name: Any) -> int:
    """The card type of a wire string such as "Kb"; ValueError for anything else."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise ValueError(f"not a Cuajo card: {name!r}") from None


# ---------------------------------------------------------------- the game


class CuajoState(GameState):
    """One hand of Cuajo in progress: hands as count lists, stock and discard pile as type lists."""

    players = 4

    def __init__(self, rng: random.Random, dealer: int, order: list[int], max_turns: int):
        self.adopt_rng(rng)
        self.dealer = dealer
        self.max_turns = max_turns
        self.turn_number = 1  # the turn in progress; the dealer's opening discard is turn 1
        self.hands = [[0] * TYPES for _ in range(4)]
        for position in range(4):
            seat = (dealer + 1 + position) % 4
            for t in order[position * HAND_SIZE:(position + 1) * HAND_SIZE]:
                self.hands[seat][t] += 1
        self.hands[dealer][order[4 * HAND_SIZE]] += 1
        self.sowee = order[4 * HAND_SIZE + 1]
        self.stock = order[:4 * HAND_SIZE + 1:-1]  # top card last, so drawing is pop()
        self.pile: list[int] = []
        self.secrets: list[list[int]] = [[] for _ in range(4)]  # card type of each four-card secret
        self.fourth: list[int | None] = [None] * 4  # the chosen card of a sowee secret
        self.purro = [False] * 4
        self.penalty = [0] * 4  # turns left under a broken-purro penalty
        self.balance = [0, 0]  # net cents per partnership (seat % 2)
        self.current = dealer
        self.phase = "discard"  # "draw", "claim", "discard" or "over"
        self.shown: int | None = None  # a shown stock card awaiting claims
        self.claimants: list[int] = []
        self.turn_card: int | None = None  # the card this turn began with, and where it came from
        self.turn_source = "deal"
        self.outcome: dict[str, Any] = {}
        self.next_dealer = dealer
        if is_complete(self.hands[dealer]):
            self._win(dealer, None, "deal")

    # -------------------------------------------------------------- queries

    def free_cards(self, seat: int) -> list[int]:
        """Counts of the cards of `seat` that must still fit into combinations (hand + sowee 4th)."""
        fourth = self.fourth[seat]
        if fourth is None:
            return self.hands[seat]
        counts = self.hands[seat][:]
        counts[fourth] += 1
        return counts

    def all_cards(self, seat: int) -> list[int]:
        """Counts of every card of `seat`: hand, sowee 4th, and the cards of laid secrets."""
        counts = self.free_cards(seat)[:]
        for t in self.secrets[seat]:
            counts[t] += COPIES
        if self.fourth[seat] is not None:
            counts[self.sowee] += 3
        return counts

    def _one_card_away(self, seat: int) -> bool:
        """Whether `seat` is purro now (see `one_card_away`; the usual answer, no, is known before
        the seat's laid cards are counted)."""
        free = self.free_cards(seat)
        return bool(completing_cards(free)) and one_card_away(free, self.all_cards(seat))

    def can_win_with(self, seat: int, card_type: int) -> bool:
        """Whether `seat` (not under penalty) would hold a complete hand after adding `card_type`."""
        if self.penalty[seat]:
            return False
        counts = self.free_cards(seat)[:]
        counts[card_type] += 1
        return is_complete(counts)

    def to_move(self) -> int | None:
        if self.phase == "over":
            return None
        return self.claimants[0] if self.phase == "claim" else self.current

    def is_over(self) -> bool:
        return self.phase == "over"

    def legal_actions(self) -> list[Action]:
        if self.phase == "draw":
            return [_DRAW, _TAKE] if self.pile else [_DRAW]
        if self.phase == "claim":
            return [_CLAIM, _PASS]
        if self.phase == "discard":
            return self._discard_phase_actions()
        return []

    def _discard_phase_actions(self) -> list[Action]:
        """Secrets that leave a card to discard (or win), then every discardable card type."""
        hand = self.hands[self.current]
        size = sum(hand)
        actions: list[Action] = (
            [_SECRET[t] for t in range(TYPES) if hand[t] >= COPIES] if size > COPIES and max(hand) >= COPIES else []
        )
        # the free cards after a sowee secret are the hand less the three sowee cards, whatever the
        # fourth; one that leaves no card to discard is offered only when it wins
        if (
            self.fourth[self.current] is None
            and hand[self.sowee] >= 3
            and (size > COPIES or self._sowee_secret_wins())
        ):
            actions += [_SOWEE_SECRET[t] for t in range(TYPES) if hand[t] and t != self.sowee]
        discardable = list(compress(NON_KINGS, hand))
        if not discardable:  # only kings left: under penalty, or a sowee 4th that fits nothing (engine choice)
            discardable = [t for t in KINGS if hand[t]]
        actions += [_DISCARD[t] for t in discardable]
        return actions

    # -------------------------------------------------------------- moves

    def apply(self, action: Action) -> list[Event]:
        kind = action["type"]
        seat = self.to_move()
        events: list[Event] = []
        if kind == "draw":
            self._draw(seat, events)
        elif kind == "take":
            card_type = self.pile.pop()
            events.append({"type": "take", "seat": seat, "card": NAME[card_type]})
            self.hands[seat][card_type] += 1
            self.turn_card, self.turn_source = card_type, "discard"
            if self._complete_now(seat):
                self._win(seat, card_type, "discard", events)
            else:
                self.phase = "discard"
        elif kind == "claim":
            card_type = self.shown
            events.append({"type": "claim", "seat": seat, "card": NAME[card_type]})
            self.shown = None
            self.hands[seat][card_type] += 1
            self._win(seat, card_type, "claim", events)
        elif kind == "pass":
            events.append({"type": "pass", "seat": seat})
            self.claimants.pop(0)
            if not self.claimants:
                self.hands[self.current][self.shown] += 1
                self.shown = None
                self.phase = "discard"
        elif kind == "secret":
            card_type = parse_card(action["card"])
            self.hands[seat][card_type] -= COPIES
            self.secrets[seat].append(card_type)
            self._pay_secret(seat, "four", events)
        elif kind == "sowee_secret":
            card_type = parse_card(action["card"])
            self.hands[seat][self.sowee] -= 3
            self.hands[seat][card_type] -= 1
            self.fourth[seat] = card_type
            self._pay_secret(seat, "sowee", events)
            if self._complete_now(seat):  # the three sowee cards now form a combination
                self._win(seat, self.turn_card, self.turn_source, events)
        elif kind == "discard":
            self._discard(seat, parse_card(action["card"]), events)
        else:
            raise ValueError(f"unknown Cuajo action type {kind!r}")
        return events

    def _sowee_secret_wins(self) -> bool:
        """Whether the player to move would win by laying a sowee secret (with any fourth card)."""
        counts = self.hands[self.current][:]
        counts[self.sowee] -= 3
        return not self.penalty[self.current] and is_complete(counts)

    def _complete_now(self, seat: int) -> bool:
        """Whether `seat` holds a complete hand now and is allowed to win with it."""
        return not self.penalty[seat] and is_complete(self.free_cards(seat))

    def _draw(self, seat: int, events: list[Event]) -> None:
        """Draw from the stock; show it if anyone else is purro or the drawer is under penalty."""
        card_type = self.stock.pop()
        shown = self.penalty[seat] > 0 or any(self.purro[o] for o in range(4) if o != seat)
        self.turn_card, self.turn_source = card_type, "stock"
        event: Event = {"type": "draw", "seat": seat}
        if shown:
            event["card"] = NAME[card_type]
        events.append(event)
        if self.can_win_with(seat, card_type):
            self.hands[seat][card_type] += 1
            self._win(seat, card_type, "stock", events)
            return
        if shown:
            self.claimants = [
                o
                for o in ((seat + k) % 4 for k in range(1, 4))
                if self.purro[o] and self.can_win_with(o, card_type)
            ]
            if self.claimants:
                self.shown = card_type
                self.phase = "claim"
                return
        self.hands[seat][card_type] += 1
        self.phase = "discard"

    def _pay_secret(self, seat: int, kind: str, events: list[Event]) -> None:
        """Each opponent pays the layer of a secret at once."""
        team = seat % 2
        self.balance[team] += 2 * SECRET_PAYMENT
        self.balance[1 - team] -= 2 * SECRET_PAYMENT
        events.append({"type": "secret", "seat": seat, "kind": kind, "payment": SECRET_PAYMENT})

    def _discard(self, seat: int, card_type: int, events: list[Event]) -> None:
        """Discard, update purro (or run down a penalty), and pass the turn to the right."""
        self.hands[seat][card_type] -= 1
        self.pile.append(card_type)
        events.append({"type": "discard", "seat": seat, "card": NAME[card_type]})
        if self.penalty[seat]:
            self.penalty[seat] -= 1
        else:
            now_purro = self._one_card_away(seat)
            if self.purro[seat] and not now_purro:
                self.penalty[seat] = PENALTY_TURNS
                events.append({"type": "purro", "seat": seat, "purro": False, "broken": True})
            elif now_purro != self.purro[seat]:
                events.append({"type": "purro", "seat": seat, "purro": now_purro, "broken": False})
            self.purro[seat] = now_purro
        self._start_turn((seat + 1) % 4, events)

    def _start_turn(self, seat: int, events: list[Event]) -> None:
        """Begin `seat`'s turn. With an empty stock, or once turn `max_turns` is over (the stock then
        counts as exhausted), take the discard if it wins, else the hand is drawn."""
        self.current = seat
        if self.stock and self.turn_number < self.max_turns:
            self.turn_number += 1
            self.phase = "draw"
            return
        top = self.pile[-1]
        if self.can_win_with(seat, top):
            self.pile.pop()
            events.append({"type": "take", "seat": seat, "card": NAME[top]})
            self.hands[seat][top] += 1
            self._win(seat, top, "discard", events)
            return
        self.phase = "over"
        turn_cap = bool(self.stock)  # cards are left, so the cap ended the hand, not the stock
        self.outcome = {"drawn": True, "turn_cap": turn_cap}
        events.append({"type": "drawn", "turn_cap": turn_cap})

    def _win(self, seat: int, card_type: int | None, source: str, events: list[Event] | None = None) -> None:
        """End the hand with `seat` winning by `card_type` from `source`; settle every payment."""
        cards, free = self.all_cards(seat), self.free_cards(seat)
        laid_kings = sum(cards[t] - free[t] for t in KINGS)
        outcome: dict[str, Any] = {
            "drawn": False,
            "winner": seat,
            "card": None if card_type is None else NAME[card_type],
            "source": source,
            "special": is_special(free, laid_kings),
        }
        if outcome["special"]:
            payment = SPECIAL_PAYMENT
        else:
            king_money = sum((50 if t == KING_OF_COINS else 20) * cards[t] for t in KINGS)
            outcome["kings"] = king_money
            if source in ("stock", "deal"):
                base = STOCK_PAYMENT
            else:
                base = self._taken_base(card_type, cards, outcome)
            outcome["base"] = base
            payment = king_money + base
        outcome["payment"] = payment
        team = seat % 2
        self.balance[team] += 2 * payment
        self.balance[1 - team] -= 2 * payment
        self.outcome = outcome
        self.next_dealer = seat
        self.phase = "over"
        if events is not None:
            events.append({"type": "win", "seat": seat, **outcome})

    def _taken_base(self, card_type: int, cards: list[int], outcome: dict[str, Any]) -> int:
        """Base payment for a taken winning card: the two conditions, helped by up to 15 stock cards."""
        pool = cards[:]
        extra: list[int] = []

        def conditions() -> tuple[bool, bool]:
            return goes_with_two(card_type, pool), bool(pool[self.sowee]) and goes_with_two(self.sowee, pool)

        met = conditions()
        while met != (True, True) and len(extra) < MAX_EXTRA_CARDS and self.stock:
            turned = self.stock.pop()
            extra.append(turned)
            pool[turned] += 1
            met = conditions()
        outcome["conditions"] = list(met)
        outcome["extra_cards"] = [NAME[t] for t in extra]
        return TAKEN_PAYMENT[met]

    # -------------------------------------------------------------- what seats see

    def secret_cards(self, seat: int) -> list[list[str]]:
        """The laid secrets of `seat` as wire cards; a sowee secret is its three sowee cards, then the fourth."""
        laid = [[NAME[t]] * COPIES for t in self.secrets[seat]]
        if self.fourth[seat] is not None:
            laid.append([NAME[self.sowee]] * 3 + [NAME[self.fourth[seat]]])
        return laid

    def view(self, seat: int) -> dict[str, Any]:
        return {
            "seat": seat,
            "dealer": self.dealer,
            "turn": self.current,
            "to_move": self.to_move(),
            "phase": self.phase,
            "hand": card_names(self.hands[seat]),
            "secrets": self.secret_cards(seat),
            "secret_counts": [len(self.secrets[s]) + (self.fourth[s] is not None) for s in range(4)],
            "hand_sizes": [sum(self.hands[s]) for s in range(4)],
            "sowee": NAME[self.sowee],
            "discards": [NAME[t] for t in self.pile],
            "stock": len(self.stock),
            "shown": None if self.shown is None else NAME[self.shown],
            "purro": self.purro[:],
            "penalty": self.penalty[:],
            "balance": self.balance[:],
            "turn_number": self.turn_number,
            "max_turns": self.max_turns,
        }

    def hidden_cards(self, seat: int) -> list[str]:
        """Other seats' hands and secrets (even cards they took face up: the view never repeats
        them) and the stock; the shown card awaiting claims is on the table, so visible."""
        hidden = [NAME[t] for t in self.stock]
        for other in range(4):
            if other != seat:
                hidden += card_names(self.all_cards(other))
        return hidden

    def result(self) -> Result:
        return Result.from_scores([self.balance[s % 2] for s in range(4)], teams=(0, 1, 0, 1))

    def reveal(self) -> dict[str, Any]:
        return {
            "hands": [card_names(self.hands[s]) for s in range(4)],
            "secrets": [self.secret_cards(s) for s in range(4)],
            "sowee": NAME[self.sowee],
            "stock": [NAME[t] for t in reversed(self.stock)],
            "outcome": self.outcome,
            "balance": self.balance[:],
            "next_dealer": self.next_dealer,
        }

    def clone(self) -> "CuajoState":
        twin = object.__new__(CuajoState)
        twin.__dict__.update(self.__dict__)
        self._clone_rng_into(twin)
        twin.hands = [hand[:] for hand in self.hands]
        twin.stock = self.stock[:]
        twin.pile = self.pile[:]
        twin.secrets = [laid[:] for laid in self.secrets]
        twin.fourth = self.fourth[:]
        twin.purro = self.purro[:]
        twin.penalty = self.penalty[:]
        twin.balance = self.balance[:]
        twin.claimants = self.claimants[:]
        twin.outcome = dict(self.outcome)
        return twin


class Cuajo(Game):
    """The Cuajo rules: spec, deck, and seeded (or hand-built) deals."""

    spec = GameSpec(
        name="cuajo",
        title="Cuajo",
        min_players=4,
        max_players=4,
        partnerships="fixed",
        zero_sum=True,
        rules_version="3",
        summary="Partnership rummy with a 112-card Spanish deck: secrets, purro, and payments in cents.",
        options=(
            Option(
                "dealer",
                None,
                "seat of the dealer (0-3); none draws the dealer at random from the seed",
                minimum=0,
                maximum=3,
            ),
            Option(
                "max_turns",
                DEFAULT_MAX_TURNS,
                "turns a hand may last, the dealer's opening discard being turn 1 (a house rule so that "
                "it always ends); after that turn the stock counts as exhausted: the next player wins "
                "with the last discard if it completes their hand, else the hand is drawn",
                minimum=1,
            ),
        ),
    )

    def deck(self, players: int, options: Mapping[str, Any] | None = None) -> list[str]:
        self.spec.check_players(players)
        self.spec.resolve_options(options)
        return [NAME[t] for t in range(TYPES) for _ in range(COPIES)]

    def new_state(
        self,
        players: int,
        options: Mapping[str, Any] | None = None,
        seed: int = 0,
        deck: Sequence[str] | None = None,
    ) -> CuajoState:
        self.spec.check_players(players)
        resolved = self.spec.resolve_options(options)
        rng = random.Random(seed)
        dealer = resolved["dealer"] if resolved["dealer"] is not None else rng.randrange(4)
        if deck is None:
            order = [t for t in range(TYPES) for _ in range(COPIES)]
            shuffle(rng, order)
        else:
            order = self._parse_deck(deck)
        return CuajoState(rng, dealer, order, resolved["max_turns"])

    def _parse_deck(self, deck: Sequence[str]) -> list[int]:
        """Card types of a hand-built deck; it must hold exactly the 112 cards (OptionError)."""
        return [parse_card(name) for name in check_deck(deck, self.deck(4), "cuajo")]


GAME = Cuajo()
