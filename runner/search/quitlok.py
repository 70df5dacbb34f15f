"""Quitlok's deal sampler: which actions were played, and deals drawn uniformly among the
consistent ones by counting them exactly (`HiddenCards`; runner/games/quitlok.md § Sampling
hidden cards), replay's check then accepting every proposal in practice.

A Quitlok deal is more than the first deck: the engine reshuffles with its own rng whenever the
deck runs down (quitlok.md § The deck), so later cards depend on those shuffles. A deal here is
what the engine's randomness chooses: the first banker (fixed through new_state's seed), the
first deck's order, and the permutation each past reshuffle applied to the cards it shuffled.
Every such deal is equally likely in a real game (`random.shuffle` permutes positions
uniformly, and how many cards each reshuffle takes is public), so uniform among consistent
deals is the seat's true posterior over the hidden cards.
"""

from __future__ import annotations

import gc
import random
from bisect import bisect_right
from contextlib import contextmanager
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterator, Sequence

from cardarena.games.base import Action
from cardarena.games.quitlok import CARD_BY_NAME, FRAMED, FULL_DECK, TWENTY_ONE, names
from cardarena.search.knowledge import DealSampler, Proposal, SamplingError, Transcript

DrawId = tuple[int, int]  # (deck number: 0 for the first deck, k after the k-th reshuffle; draw index in it)

#: events that are a player's or banker's action, and the action each stands for
ACTION_EVENTS = ("fund", "keep", "retire", "blot", "bet", "eleven", "stay", "draw", "stand")


def action_of(event: dict[str, Any]) -> Action:
    """The action whose public event is `event` (one of ACTION_EVENTS)."""
    kind = event["type"]
    if kind in ("fund", "bet"):
        return {"type": kind, "amount": event["amount"]}
    if kind == "eleven":
        return {"type": "eleven_bet", "amount": event["amount"]} if event["amount"] else {"type": "eleven_blot"}
    return {"type": kind}


@lru_cache(maxsize=None)
def seed_for_first_banker(players: int, banker: int) -> int:
    """The smallest new_state seed whose first banker is `banker` (quitlok.md § Engine choices:
    the first banker is Random(seed).randrange(players), drawn before anything else)."""
    seed = 0
    while random.Random(seed).randrange(players) != banker:
        seed += 1
    return seed


#: what a hand's first n cards did, as a check (kind, n, card) that `holds` evaluates
NOT_SHOWN = "not_shown"  # a player's hand went on unshown: below 21 (quitlok.md § A hand, 3)
BANKER_NOT_BUST = "banker_not_bust"  # the banker drew and was not shown at once: 21 or less (quitlok.md § Engine choices)
ELEVEN = "eleven"  # the player called eleven: exactly 11 (quitlok.md § Engine choices, Eleven)
BURNS = "burns"  # the eleven call burned `card`: it would have busted the hand
Check = tuple[str, int, int]
#: what hand_value needs of a hand's cards: whether the first (after one card) or the first two
#: (after more) are framed, their sum, and how many are 12s
HandSummary = tuple[bool, int, int]
EMPTY_HAND: HandSummary = (False, 0, 0)


def with_card(summary: HandSummary, held: int, card: int) -> HandSummary:
    """The summary of a hand of `held` cards once `card` joins it."""
    framed, total, twelves = summary
    framed = card in FRAMED if held == 0 else framed and card in FRAMED if held == 1 else framed
    return framed, total + card, twelves + (card == 12)


def summary_value(summary: HandSummary, held: int, framed_pair_counts: bool) -> int:
    """hand_value of the `held` cards that `summary` sums up (the same rule, on the summary)."""
    framed, total, twelves = summary
    if framed_pair_counts and held >= 2 and framed:
        return TWENTY_ONE
    while total > TWENTY_ONE and twelves:
        total -= 3
        twelves -= 1
    return total


def holds(check: Check, summary: HandSummary) -> bool:
    """Whether a hand of `check`'s count of cards, summed up by `summary`, passes `check`."""
    kind, count, card = check
    if kind == NOT_SHOWN:
        return summary_value(summary, count, True) < TWENTY_ONE
    if kind == BANKER_NOT_BUST:
        return summary_value(summary, count, False) <= TWENTY_ONE
    if kind == ELEVEN:
        return summary_value(summary, count, True) == 11
    return summary_value(with_card(summary, count, card), count + 1, True) > TWENTY_ONE


def read_cards(summary: HandSummary, held: int, cards: list[int],
               checks: dict[int, list[Check]]) -> HandSummary | None:
    """A hand of `held` cards summed up by `summary`, once `cards` join it, each check (by the
    count of cards it looks at) tested as soon as those cards are in; None when one fails."""
    for card in cards:
        summary = with_card(summary, held, card)
        held += 1
        if not all(holds(check, summary) for check in checks.get(held, ())):
            return None
    return summary


@dataclass
class HandRecord:
    """A hand the seat never saw whole: its draws in order, and the checks its cards passed."""

    draws: list[DrawId]
    checks: list[Check]


class DrawTracer:
    """Follows the transcript's public events the way the engine moves cards (draws, discards,
    reshuffles: quitlok.md § The deck and § Engine choices), with each card known only as the
    draw that brought it, and notes every card the seat was shown, wherever it was shown."""

    def __init__(self, transcript: Transcript):
        self.seat = transcript.seat
        self.hands: list[list[DrawId]] = [[] for _ in range(transcript.players)]
        self.checks: list[list[Check]] = [[] for _ in range(transcript.players)]  # per hand held, see `holds`
        self.unshown: list[HandRecord] = []  # every hand discarded without being shown, and every hand held now
        self.aside: list[DrawId] = []  # drawn, in neither a hand nor the discards yet (an eleven call's burned cards)
        self.betting = [False] * transcript.players  # bets outstanding
        self.deck_size = len(FULL_DECK)
        self.discards = 0
        self.deck_number = 0
        self.drawn = 0  # cards drawn from the current deck
        self.drawn_from: list[int] = []  # per earlier deck, how many cards were drawn from it
        self.sizes = [len(FULL_DECK)]  # each deck's size
        self.held_at_reshuffle: list[list[DrawId]] = [[]]  # per deck: the cards outside it when it was shuffled
        self.cards: dict[DrawId, int] = {}  # every draw whose card the seat was shown
        self.reshuffles_told: list[int] = []

    def follow(self, transcript: Transcript) -> None:
        """Trace every message, checking the trace against each view as it goes."""
        for message in transcript.decisions:
            for event in message["events"]:
                self.event(event)
            self.check_view(message["view"])
        if transcript.game_end is not None:
            for event in transcript.game_end["events"]:
                self.event(event)
        if self.reshuffles_told != self.sizes[1:]:
            raise SamplingError(f"the transcript's reshuffles {self.reshuffles_told} are not the deck's {self.sizes[1:]}")
        self.unshown += [HandRecord(hand, checks) for hand, checks in zip(self.hands, self.checks) if hand]

    def drawn_per_deck(self) -> list[int]:
        """How many cards were drawn from each deck, the current one included."""
        return self.drawn_from + [self.drawn]

    # ----- cards, as the engine moves them -------------------------------------------------

    def draw(self) -> DrawId:
        """The next card, set aside: a reshuffle its draw causes leaves it out of the new deck."""
        self.reshuffle_if_due()
        if not self.deck_size:
            raise SamplingError("the transcript draws from an empty deck")
        draw = (self.deck_number, self.drawn)
        self.drawn += 1
        self.deck_size -= 1
        self.aside.append(draw)
        self.reshuffle_if_due()
        return draw

    def deal(self, seat: int) -> DrawId:
        """Draw the next card into the seat's hand."""
        self.draw()
        draw = self.aside.pop()
        self.hands[seat].append(draw)
        return draw

    def reshuffle_if_due(self) -> None:
        if self.deck_size <= 1 and self.discards:
            self.deck_size += self.discards
            self.discards = 0
            self.deck_number += 1
            self.drawn_from.append(self.drawn)
            self.drawn = 0
            self.sizes.append(self.deck_size)
            self.held_at_reshuffle.append([draw for hand in self.hands for draw in hand] + self.aside)

    def discard(self, seat: int, shown: bool = False) -> None:
        """The seat's hand goes to the discards; one not shown is kept with what its cards did."""
        if self.hands[seat] and not shown:
            self.unshown.append(HandRecord(self.hands[seat], self.checks[seat]))
        self.discards += len(self.hands[seat])
        self.hands[seat] = []
        self.checks[seat] = []
        self.betting[seat] = False

    def shown(self, seat: int, cards: list[str]) -> None:
        """The seat's whole hand is shown (and then discarded)."""
        if len(cards) != len(self.hands[seat]):
            raise SamplingError(f"seat {seat} shows {len(cards)} cards but was traced holding {len(self.hands[seat])}")
        self.cards.update(zip(self.hands[seat], (CARD_BY_NAME[card] for card in cards)))
        self.discard(seat, shown=True)

    def event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "hand":
            for seat in range(len(self.hands)):
                self.discard(seat)
            for seat in event["order"] + [event["banker"]]:
                self.deal(seat)
        elif kind == "bank_ends":
            for seat in range(len(self.hands)):
                self.discard(seat)
        elif kind in ("blot", "bet", "draw", "banker_fresh_card"):
            seat = event["seat"]
            draw = self.deal(seat)
            if kind == "blot":
                self.cards[draw] = CARD_BY_NAME[event["card"]]
            self.betting[seat] |= kind == "bet"
            if kind != "banker_fresh_card":  # a banker's fresh card is a hand of one, never checked
                self.checks[seat].append((BANKER_NOT_BUST if kind == "draw" else NOT_SHOWN, len(self.hands[seat]), 0))
        elif kind == "eleven":
            self.eleven(event)
        elif kind == "stay" and not self.betting[event["seat"]]:
            self.discard(event["seat"])
        elif kind in ("bust", "twenty_one", "banker_shows", "settle"):
            self.shown(event["seat"], event["cards"])
        elif kind == "retire":
            self.shown(event["seat"], [event["card"]])
        elif kind == "reshuffle":
            self.reshuffles_told.append(event["deck_size"])

    def eleven(self, event: dict[str, Any]) -> None:
        """Burned cards are drawn (and shown) before the card kept; they reach the discards only
        after the call (quitlok.md § Engine choices, Eleven)."""
        seat = event["seat"]
        held = len(self.hands[seat])
        self.checks[seat].append((ELEVEN, held, 0))
        for card in event["burned"]:
            self.cards[self.draw()] = CARD_BY_NAME[card]
            self.checks[seat].append((BURNS, held, CARD_BY_NAME[card]))
        if event["received"]:
            draw = self.deal(seat)
            if event["card"] is not None:
                self.cards[draw] = CARD_BY_NAME[event["card"]]
            self.checks[seat].append((NOT_SHOWN, held + 1, 0))
        self.discards += len(self.aside)
        self.aside = []
        self.betting[seat] |= event["amount"] > 0

    def check_view(self, view: dict[str, Any]) -> None:
        """Note the seat's own cards; the table as traced must be the table the view shows."""
        own = view["hands"][self.seat]
        if [len(hand) for hand in view["hands"]] != [len(hand) for hand in self.hands]:
            raise SamplingError("the traced hands do not match the view's")
        if view["deck_size"] != self.deck_size or view["discards_unseen"] + len(view["discards_seen"]) != self.discards:
            raise SamplingError("the traced deck or discards do not match the view's")
        self.cards.update(zip(self.hands[self.seat], (CARD_BY_NAME[card] for card in own)))


NUMBERS = tuple(range(1, 13))
COPIES = (0,) + tuple(FULL_DECK.count(card) for card in NUMBERS)  # a full deck's copies of each number, by number
#: a deck's copies of each number, as the base-3 digits of one int (digit number - 1): see `copies`
PLACE = {card: 3 ** (card - 1) for card in NUMBERS}
#: a counted draw's choice of any card whose number matters nowhere (see `HiddenCards`, Relevance)
ANON = 0
LOOSE = -1  # in `HiddenCards._walk`, a drawn place whose card is not chosen yet
#: what the count carries past the current deck: each later deck's free copies (as in State) less
#: the counted cards already drawn that its shuffle will find in a hand, and each hand being read
Rest = tuple[tuple[tuple[int, int, int], ...], tuple[tuple[int, HandSummary], ...]]
#: the count's state between two counted draws: the current deck's free copies (digits of the
#: numbers that matter there, and how many of the others), and its Rest by its number in
#: `HiddenCards.rests` (a small int hashes at once; the Rest tuples are long and repeat)
State = tuple[int, int, int]
START: State = (0, 0, 0)
#: a state's choices at a counted draw that some completion follows: the running totals of the
#: completions' weight, and per choice the number drawn (or ANON) and the state after, as
#: `HiddenCards._walk` reads them (a state with one choice draws nothing from the rng)
Choices = tuple[list[int], list[int], list[State]]
#: what `CountedDraw.moved` holds for a (rest, card) it never saw
UNSEEN = object()


def copies(counts: int, card: int) -> int:
    """The copies of `card` that `counts` holds (its digit)."""
    return counts // PLACE[card] % 3


#: the most states a layer of the count may hold: past it, the hand whose cards made it grow is
#: tested by redrawing instead (`HiddenCards.sample`), which keeps the count small and exact
MOST_STATES = 2000
#: the most hidden cards of hands with several, per deck, that the count reads (each adds a number
#: to the state, which grows with every one); the others' hands are tested by redrawing
MOST_JOINT_DRAWS = 8
#: the most fillings of a hand's hidden places tried to find the numbers each can hold
MOST_FILLINGS = 12 ** 4
#: redraws `HiddenCards.sample` tries before it counts again with limits four and two times larger
#: (a redraw fills only the decks the tested hands read, 0.1-0.2 ms late in an 8-player session;
#: counting again takes seconds there and may gain little: 5e-5 of redraws passed at one position
#: at the first limits, none at the next, 1e-3 at the third after a 17 s count)
MOST_REDRAWS = 20_000


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector: the count allocates tuples by the hundred thousand, none
    in a cycle, and the collections they trigger (each walking the count's growing layers) cost
    about two fifths of its time; refcounting still frees everything as usual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class ConstrainedHand:
    """An unshown hand whose checks can rule out a hidden card: its draws, the cards the seat saw
    in it (0 where hidden), the hidden places, its checks by the count of cards they look at, and
    the numbers each hidden card can hold by them (all that the count uses of a hand that it reads
    card by card, not whole: see `HiddenCards`)."""

    draws: list[DrawId]
    cards: list[int]
    hidden: list[int]
    checks: dict[int, list[Check]]
    fits: list[tuple[int, ...]]  # per hidden place, the numbers it can hold by the hand's checks

    def passes(self, decks: list[list[int]]) -> bool:
        """Whether the hand's checks hold with the cards `decks` put in its draws."""
        return read_cards(EMPTY_HAND, 0, [decks[number][index] for number, index in self.draws],
                          self.checks) is not None


class _TooManyStates(Exception):
    """A layer of the count grew past MOST_STATES: the hands to read card by card (`loosened`)
    and those to leave out of the count (`dropped`), each tested by redrawing instead."""

    def __init__(self, loosened: set[int], dropped: set[int]):
        super().__init__(loosened, dropped)
        self.loosened = loosened
        self.dropped = dropped


@dataclass
class HandStep:
    """A counted draw's part in a hand with several hidden cards: its place in the hand, the
    cards the seat saw there just before it (for the first) and after it up to the next hidden
    one, and the hand's checks by the number of cards they look at (see `read_cards`)."""

    hand: int
    place: int
    first: bool
    last: bool
    seen_before: list[int]
    seen_after: list[int]
    checks: dict[int, list[Check]]
    #: the hand's summary once the card and the seen ones after it are read, by (summary before,
    #: or None for the first, card): a layer reaches the same few partial hands from many states
    read: dict[tuple[HandSummary | None, int], HandSummary | None] = field(default_factory=dict, repr=False)


@dataclass
class CountedDraw:
    """A hidden draw the count decides: the numbers it may hold, the later decks whose shuffle
    finds it in a hand, its hand's part, and the numbers no later counted draw of its deck takes."""

    deck: int
    draw: DrawId
    numbers: tuple[int, ...]
    held_at: tuple[int, ...]
    hand_of: int | None  # the constrained hand it belongs to
    hand: HandStep | None  # its part in that hand, when the hand has several hidden cards
    done_with: tuple[int, ...] = ()
    #: the number of the Rest after drawing a card (None: no deal), by (number of the Rest
    #: before, card): states differ mostly in the current deck's counts, so these repeat
    moved: dict[tuple[int, int], int | None] = field(default_factory=dict, repr=False)


class HiddenCards:
    """The exact distribution of the hidden drawn cards, over deals drawn the engine's way and
    kept when their hidden hands pass the checks the trace wrote down; `sample` draws from it
    (and `replay` checks the rest, which no hidden card changes).

    **Weights.** A deal is the first deck's order and each reshuffle's permutation of the list it
    shuffles, all equally likely. Telling the two copies of each number apart, each deck is a
    uniform order of its labelled cards, those not in a hand (or set aside) when it was shuffled:
    deck k holds `C_k(v) = 2 - (copies of v held then)` copies of v. Given which number each
    drawn place of deck k holds (`D_k(v)` places hold v), the labelled orders that agree number
    `prod_v C_k(v)!/(C_k(v) - D_k(v))!` (the copies put into those places) times the orders of the
    undrawn rest, a count that depends only on the deck's size and how many were drawn. So the
    deals giving one assignment of numbers to all drawn places number, up to a constant factor,
    `W = prod_k prod_v C_k(v)!/(C_k(v) - D_k(v))!`, and a deal uniform among the consistent ones
    assigns numbers with probability W times the indicator of consistency, normalized.

    **Counted and loose draws.** A hidden draw is counted when its hand rules some numbers out
    (the hand was never shown: its totals stayed below 21, it called eleven, it burned cards) or
    a later shuffle finds it in a hand (it changes that deck's C). Every other hidden draw is
    loose: summing W over its number multiplies by the copies left in its deck, whatever the
    counted draws hold, so loose draws take the cards left in their deck uniformly, after the
    counted ones (and the undrawn places take what remains, uniformly, which is the same thing).

    **Counting.** Counted draws are taken deck by deck (the order inside a deck is free, W being
    a product over its draws: a draw of v multiplies by the copies of v still free there, then
    frees one less). A deck's seen places are taken when it is entered: a number seen once in a
    deck holding C copies gives the factor C (seen twice: 2, a constant). The state carries what
    is still to be read: the current deck's free copies; each later deck's free copies less the
    counted cards already drawn that it will find held; the summary of each hand with several
    hidden cards being read (its checks are tested as soon as the cards they look at are known).
    The forward pass lists the reachable states before each counted draw, the backward pass each
    state's total weight of completions, so `sample` draws each counted card from its exact
    conditional in one walk.

    **Relevance.** A deck's state keeps the digits only of the numbers that matter there: those
    its constrained draws can take, and, for its draws that a later deck finds held, the numbers
    that deck tracks (the ones it reads, those seen once in it, and those whose free copies a
    hidden held card could exhaust); the other copies are counted together. A held draw no hand
    constrains takes a number that matters or ANON, any other card, weighted by how many there
    are; which one is chosen uniformly afterwards, exact because no weight or check reads it.

    **Limits.** A hand with several hidden cards is read whole only while its deck's count stays
    under MOST_STATES states and MOST_JOINT_DRAWS such cards; past them it is read card by card
    (each card kept to the numbers it holds in some passing filling), or left out, and `sample`
    tests its checks by redrawing: rejection on top of a draw exact for every other check is exact.
    """

    def __init__(self, tracer: DrawTracer):
        seen = tracer.cards
        self.drawn = tracer.drawn_per_deck()
        self.seen_by_deck: list[dict[int, int]] = [{} for _ in self.drawn]
        for (number, index), card in seen.items():
            self.seen_by_deck[number][index] = card
        self.held_at_reshuffle = tracer.held_at_reshuffle
        #: each deck's drawn places: the seen cards where they were seen, the others LOOSE
        self.seen_decks = [tuple(self.seen_by_deck[number].get(index, LOOSE) for index in range(count))
                           for number, count in enumerate(self.drawn)]
        self.free: list[int] = []  # per deck: copies of each number neither seen there nor seen held at its shuffle
        self.once: list[list[int]] = []  # per deck: the numbers seen there exactly once
        self.seen_in: list[Counter[int]] = []  # per deck: the copies of each number seen there
        held_at: dict[DrawId, list[int]] = {}
        for number, held in enumerate(tracer.held_at_reshuffle):
            outside = Counter(seen[draw] for draw in held if draw in seen)
            inside = Counter(self.seen_by_deck[number].values())
            if any(outside[card] + inside[card] > 2 for card in NUMBERS):
                raise SamplingError(f"the transcript shows more copies of a card than deck {number} can hold")
            self.free.append(sum((2 - outside[card] - inside[card]) * PLACE[card] for card in NUMBERS))
            self.once.append([card for card in NUMBERS if inside[card] == 1])
            self.seen_in.append(inside)
            for draw in held:
                if draw not in seen:
                    held_at.setdefault(draw, []).append(number)
        self.hands = self._constrained_hands(tracer)
        self.held_at = held_at
        self._count(MOST_STATES, MOST_JOINT_DRAWS)

    def _count(self, most_states: int, most_joint_draws: int) -> None:
        """Count the hidden cards within these limits (see MOST_STATES and MOST_JOINT_DRAWS)."""
        self.most_states, self.most_joint_draws = most_states, most_joint_draws
        # hands the count reads card by card, each card only kept to the numbers it can hold;
        # `sample` tests their checks whole by redrawing
        self.loosened = self._beyond_joint_limit()
        self.dropped: set[int] = set()  # hands the count leaves out; `sample` tests them by redrawing
        while True:
            self.rests: list[Rest] = [((), ())]  # each Rest met, by its number (START's is 0)
            self.rest_numbers: dict[Rest, int] = {self.rests[0]: 0}
            self.entered: dict[tuple[int, int, int], tuple[int, State]] = {}  # `_enter`'s, by (rest, decks)
            self.counted = self._counted_draws(self.held_at)
            self._relevance()
            try:
                with no_cycle_collection():
                    self.layers = self._layers()
                self.places = [step.draw for step in self.counted]  # where `_walk` puts each counted card
                return
            except _TooManyStates as overflow:
                self.loosened |= overflow.loosened
                self.dropped |= overflow.dropped

    def _constrained_hands(self, tracer: DrawTracer) -> dict[int, ConstrainedHand]:
        """The unshown hands whose checks can rule out a hidden card, by their index in `tracer.unshown`."""
        hands: dict[int, ConstrainedHand] = {}
        for index, record in enumerate(tracer.unshown):
            cards = [tracer.cards.get(draw, 0) for draw in record.draws]
            hidden = [place for place, card in enumerate(cards) if not card]
            if not hidden or not record.checks:
                continue
            checks: dict[int, list[Check]] = {}
            for check in record.checks:
                checks.setdefault(check[1], []).append(check)
            fits = self._fits(checks, cards, hidden)
            if len(hidden) > 1 or len(fits[0]) < len(NUMBERS):
                hands[index] = ConstrainedHand(record.draws, cards, hidden, checks, fits)
        return hands

    def _beyond_joint_limit(self) -> set[int]:
        """The hands with several hidden cards that would take a deck past MOST_JOINT_DRAWS
        counted draws of such hands (taken in the order they were dealt)."""
        joint: Counter[int] = Counter()
        beyond: set[int] = set()
        for index, hand in self.hands.items():
            if len(hand.hidden) < 2:
                continue
            decks = Counter(hand.draws[place][0] for place in hand.hidden)
            if any(joint[deck] + count > self.most_joint_draws for deck, count in decks.items()):
                beyond.add(index)
            else:
                joint.update(decks)
        return beyond

    def _counted_draws(self, held_at: dict[DrawId, list[int]]) -> list[CountedDraw]:
        """The counted draws, deck by deck; inside a deck, hands read on from an earlier deck
        first and hands that go on into a later deck last, so few hands are open at once."""
        numbers: dict[DrawId, tuple[int, ...]] = {}
        hand_of: dict[DrawId, int] = {}
        hand_steps: dict[DrawId, HandStep] = {}
        spans: dict[DrawId, tuple[int, int]] = {}  # draw -> (first deck of its hand, last deck)
        for index, hand in self.hands.items():
            if index in self.dropped:
                continue
            hidden = hand.hidden
            for order, (place, end) in enumerate(zip(hidden, hidden[1:] + [len(hand.cards)])):
                draw = hand.draws[place]
                if len(hidden) == 1 or index in self.loosened:
                    if len(hand.fits[order]) == len(NUMBERS):
                        continue
                    numbers[draw] = hand.fits[order]
                hand_of[draw] = index
                spans[draw] = (hand.draws[hidden[0]][0], hand.draws[hidden[-1]][0])
                if len(hidden) > 1 and index not in self.loosened:
                    hand_steps[draw] = HandStep(index, place, order == 0, order == len(hidden) - 1,
                                                hand.cards[:place] if order == 0 else [], hand.cards[place + 1:end],
                                                hand.checks)
        counted = [CountedDraw(draw[0], draw, numbers.get(draw, NUMBERS), tuple(held_at.get(draw, ())),
                               hand_of.get(draw), hand_steps.get(draw))
                   for draw in sorted(set(hand_of) | set(held_at))]

        def reading_order(step: CountedDraw) -> tuple[int, int, int, int]:
            first, last = spans.get(step.draw, (step.deck, step.deck))
            hand = -1 if step.hand_of is None else step.hand_of
            return step.deck, 0 if first < step.deck else 2 if last > step.deck else 1, hand, step.draw[1]

        counted.sort(key=reading_order)
        return counted

    def _relevance(self) -> None:
        """Which numbers matter in each deck, the choices of held draws that no hand constrains,
        and the numbers each counted draw is the last in its deck to read (see the class's
        docstring, Relevance)."""
        decks = len(self.drawn)
        by_deck: list[list[CountedDraw]] = [[] for _ in range(decks)]
        takers: list[Counter[int]] = [Counter() for _ in range(decks)]  # per deck: counted draws found held, by deck drawn
        for step in self.counted:
            by_deck[step.deck].append(step)
            for deck in step.held_at:
                takers[deck][step.deck] += 1
        self.relevant: list[frozenset[int]] = [frozenset()] * decks
        self.tracked: list[frozenset[int]] = [frozenset()] * decks
        for deck in reversed(range(decks)):
            relevant: set[int] = set()
            for step in by_deck[deck]:
                relevant.update(NUMBERS if step.hand is not None else step.numbers if step.hand_of is not None else ())
                for later in step.held_at:
                    relevant |= self.tracked[later]
            # a number some hidden held cards may hold more often than the deck's free copies allow
            # (at most the copies not seen held: those free plus those seen in the deck)
            risky = {card for card in NUMBERS
                     if copies(self.free[deck], card) < min(
                         sum(min(count, copies(self.free[source], card)) for source, count in takers[deck].items()),
                         copies(self.free[deck], card) + self.seen_in[deck][card])}
            self.relevant[deck] = frozenset(relevant)
            self.tracked[deck] = frozenset(relevant | risky | set(self.once[deck]))
        self.entry = [(sum(copies(free, card) * PLACE[card] for card in tracked),
                       sum(copies(free, card) for card in NUMBERS if card not in tracked))
                      for free, tracked in zip(self.free, self.tracked)]
        for steps, relevant in zip(by_deck, self.relevant):
            for step in steps:
                if step.hand_of is None:
                    step.numbers = tuple(sorted(relevant)) + ((ANON,) if len(relevant) < len(NUMBERS) else ())
            for position, step in enumerate(steps):
                read_later = {card for other in steps[position + 1:] for card in other.numbers}
                step.done_with = tuple(card for card in step.numbers if card != ANON and card not in read_later)

    @staticmethod
    def _fits(checks: dict[int, list[Check]], cards: list[int], hidden: list[int]) -> list[tuple[int, ...]]:
        """Per hidden place, the numbers it holds in some filling of the hidden places that
        passes every check (each number for every place when there are too many fillings): a
        search through the cards in order that meets each (cards read, summary) once."""
        if len(NUMBERS) ** len(hidden) > MOST_FILLINGS:
            return [NUMBERS] * len(hidden)
        fits: dict[int, set[int]] = {place: set() for place in hidden}
        passing: dict[tuple[int, HandSummary], bool] = {}

        def completes(held: int, summary: HandSummary) -> bool:
            """Whether the cards after the first `held` (summed up by `summary`) can pass every
            check, noting each hidden number that leads to a pass."""
            if held == len(cards):
                return True
            if (held, summary) not in passing:
                found = False
                for card in NUMBERS if held in fits else (cards[held],):
                    after = with_card(summary, held, card)
                    if all(holds(check, after) for check in checks.get(held + 1, ())) and completes(held + 1, after):
                        found = True
                        if held in fits:
                            fits[held].add(card)
                passing[held, summary] = found
            return passing[held, summary]

        completes(0, EMPTY_HAND)
        return [tuple(sorted(fits[place])) for place in hidden]

    def _layers(self) -> list[dict[State, Choices]]:
        """Per counted draw, each reachable state's choices with running totals, as `sample` reads
        them (a state is taken after the previous counted draw: decks shuffled since are entered
        on the way to the next one)."""
        layers: list[dict[State, list[tuple[int, int, State]]]] = []
        states: set[State] = {START}
        deck = -1
        for step in self.counted:
            entering = range(deck + 1, step.deck + 1)
            deck = step.deck
            layer: dict[State, list[tuple[int, int, State]]] = {}
            reached: set[State] = set()
            overflowing = False
            for state in states:
                weight, inside = self._enter(state, entering)
                layer[state] = choices = self._choices(inside, step, weight)
                reached.update(after for _, _, after in choices)
                if len(reached) > self.most_states and not overflowing:
                    overflowing = True
                    self._too_many(deck)
            layers.append(layer)
            states = reached
        rest = range(deck + 1, len(self.drawn))
        totals = {state: self._enter(state, rest)[0] for state in states}
        counted: list[dict[State, Choices]] = []
        for layer in reversed(layers):
            earlier: dict[State, int] = {}
            cumulative: dict[State, Choices] = {}
            for state, choices in layer.items():
                running = 0
                runnings: list[int] = []  # of the choices some completion follows: no other is drawn
                cards: list[int] = []
                afters: list[State] = []
                for weight, card, after in choices:
                    if weight * totals.get(after, 0):
                        running += weight * totals[after]
                        runnings.append(running)
                        cards.append(card)
                        afters.append(after)
                cumulative[state] = runnings, cards, afters
                earlier[state] = running
            counted.append(cumulative)
            totals = earlier
        if not totals.get(START, 0):
            raise SamplingError("no deal gives the seat's transcript: its hidden cards fit no hand they were in")
        return counted[::-1]

    def _too_many(self, deck: int) -> None:
        """Raise _TooManyStates naming a hand to count less, as the count of `deck` grew too
        large: of the hands with counted draws there (else in the later decks whose numbers made
        its held draws count numbers), the one with the most hidden cards, loosened if it is
        read whole, else dropped (none: the count goes on, held cards must be counted)."""
        for decks in ({deck}, {later for step in self.counted if step.deck == deck for later in step.held_at}):
            hands = {step.hand_of for step in self.counted if step.deck in decks and step.hand_of is not None}
            whole = [hand for hand in hands if len(self.hands[hand].hidden) > 1 and hand not in self.loosened]
            if whole or hands:
                largest = max(whole or hands, key=lambda hand: (len(self.hands[hand].hidden), hand))
                raise _TooManyStates({largest} if whole else set(), set() if whole else {largest})

    def _rest_number(self, rest: Rest) -> int:
        """`rest`'s number in `self.rests`, given when first met."""
        number = self.rest_numbers.get(rest)
        if number is None:
            number = self.rest_numbers[rest] = len(self.rests)
            self.rests.append(rest)
        return number

    def _enter(self, state: State, decks: range) -> tuple[int, State]:
        """The state once `decks` are shuffled in turn, and the weight of their seen places (which
        depend on the Rest only: the first deck entered replaces the current one)."""
        if not decks:
            return 1, state
        key = (state[2], decks.start, decks.stop)
        if key not in self.entered:
            later, hands = self.rests[state[2]]
            weight = 1
            for deck in decks:
                touched = {number: (digits, others) for number, digits, others in later}
                current, anon = touched.pop(deck, self.entry[deck])
                later = tuple((number, *counts) for number, counts in sorted(touched.items()))
                for card in self.once[deck]:
                    weight *= copies(current, card) + 1
                for card in self.tracked[deck] - self.relevant[deck]:
                    anon += copies(current, card)
                    current -= copies(current, card) * PLACE[card]
            self.entered[key] = weight, (current, anon, self._rest_number((later, hands)))
        return self.entered[key]

    def _choices(self, state: State, step: CountedDraw, weight: int) -> list[tuple[int, int, State]]:
        """`step`'s choices from `state`, each number (or ANON) it may draw with its weight (the
        free copies of it, times `weight`) and the state after; none where no copy is free, a
        later shuffle finding it held has none, or a check fails."""
        current, anon, rest = state
        cleared = current  # the copies left once the numbers no later draw of this deck reads are let go
        for done in step.done_with:
            cleared -= cleared // PLACE[done] % 3 * PLACE[done]
        moves = step.held_at or step.hand is not None
        choices: list[tuple[int, int, State]] = []
        for card in step.numbers:
            if card == ANON:
                free, after = anon, cleared
            else:
                free = current // PLACE[card] % 3
                after = cleared if card in step.done_with else cleared - PLACE[card]
            if not free:
                continue
            moved: int | None = rest
            if moves:
                moved = step.moved.get((rest, card), UNSEEN)  # type: ignore[assignment]
                if moved is UNSEEN:
                    moved = step.moved[rest, card] = self._move(rest, step, card)
            if moved is not None:
                choices.append((weight * free, card, (after, anon - (card == ANON), moved)))
        return choices

    def _move(self, rest: int, step: CountedDraw, card: int) -> int | None:
        """The number of the Rest once `step` draws `card`, or None when a later shuffle finding
        it held has no copy of it free, or a check fails."""
        later, hands = self.rests[rest]
        if step.held_at:
            touched = {number: [digits, others] for number, digits, others in later}
            for deck in step.held_at:
                counts = touched.setdefault(deck, list(self.entry[deck]))
                if card != ANON and card in self.tracked[deck]:
                    if not counts[0] // PLACE[card] % 3:
                        return None
                    counts[0] -= PLACE[card]
                elif counts[1]:
                    counts[1] -= 1
                else:
                    return None
            later = tuple((number, *counts) for number, counts in sorted(touched.items()))
        if step.hand is not None:
            read = self._read_hand(step.hand, dict(hands), card)
            if read is None:
                return None
            hands = read
        return self._rest_number((later, hands))

    @staticmethod
    def _read_hand(part: HandStep, hands: dict[int, HandSummary], card: int
                   ) -> tuple[tuple[int, HandSummary], ...] | None:
        """The open hands once `card` and the seen cards after it join hand `part.hand`, or None
        when a check that can now be tested fails."""
        before = None if part.first else hands.pop(part.hand)
        if (before, card) not in part.read:
            if before is None:
                summary = read_cards(EMPTY_HAND, 0, part.seen_before + [card] + part.seen_after, part.checks)
            else:
                summary = read_cards(before, part.place, [card] + part.seen_after, part.checks)
            part.read[before, card] = summary
        summary = part.read[before, card]
        if summary is None:
            return None
        if not part.last:
            hands[part.hand] = summary
        return tuple(sorted(hands.items()))

    def sample(self, rng: random.Random) -> list[list[int]]:
        """Each deck's drawn cards, top first, from the exact distribution: the seen ones where
        they were seen, the counted ones from their exact distribution (one walk through the
        layers, `_walk`), and the loose ones uniformly from the cards left in their deck (`_fill`),
        drawn until the hands left out of the count pass their checks (rejection keeps it exact: the
        draw is exact for every check but theirs, so keeping those that pass conditions on them).
        A redraw copies and fills only the decks those hands read (`_decks_read_by`); the others
        are once it passes, from the same conditionals, since no deck read depends on them."""
        while True:
            tested = [self.hands[hand] for hand in self.loosened | self.dropped]
            read = self._decks_read_by(tested)
            unread = [number for number in range(len(self.drawn)) if number not in read]
            for _ in range(MOST_REDRAWS):
                cards = self._walk(rng)
                decks: list[Sequence[int]] = list(self.seen_decks)
                self._place(decks, cards, read)
                self._fill(decks, read, rng)
                if all(hand.passes(decks) for hand in tested):
                    self._place(decks, cards, unread)
                    self._fill(decks, unread, rng)
                    return decks  # type: ignore[return-value]  # every deck is a list by now
            # so rare a pass: count more exactly (with no hand tested, the first draw passes)
            self._count(self.most_states * 4, self.most_joint_draws * 2)

    def _decks_read_by(self, hands: list[ConstrainedHand]) -> list[int]:
        """The decks, in order, whose filling the `hands`' checks read: those their cards were
        drawn from, and every deck whose unseen draws a deck read found held at its shuffle."""
        read = {number for hand in hands for number, _ in hand.draws}
        waiting = list(read)
        while waiting:
            for number, index in self.held_at_reshuffle[waiting.pop()]:
                if number not in read and index not in self.seen_by_deck[number]:
                    read.add(number)
                    waiting.append(number)
        return sorted(read)

    def _walk(self, rng: random.Random) -> list[int]:
        """The counted draws' cards, in the count's order (`self.places` says where each goes)."""
        cards: list[int] = []
        state = START
        for layer in self.layers:
            runnings, numbers, afters = layer[state]
            chosen = bisect_right(runnings, rng.randrange(runnings[-1])) if len(runnings) > 1 else 0
            cards.append(numbers[chosen])
            state = afters[chosen]
        return cards

    def _place(self, decks: list[Sequence[int]], cards: list[int], numbers: Sequence[int]) -> None:
        """Make the decks `numbers` lists of their drawn cards, the seen and the counted (`cards`,
        from `_walk`) in place and the others LOOSE."""
        wanted = set(numbers)
        for number in numbers:
            decks[number] = list(self.seen_decks[number])
        for (number, index), card in zip(self.places, cards):
            if number in wanted:
                decks[number][index] = card  # type: ignore[index]

    def _fill(self, decks: list[Sequence[int]], numbers: Sequence[int], rng: random.Random) -> None:
        """Fill the ANON and loose places of the decks `numbers`, in order, uniformly from the cards
        left in each (every deck an earlier one found held at its shuffle already filled)."""
        for number in numbers:
            deck: list[int] = decks[number]  # type: ignore[assignment]  # `_place` made it a list
            left = list(COPIES)  # copies left of each number, by number
            for held_number, index in self.held_at_reshuffle[number]:
                left[decks[held_number][index]] -= 1
            for card in deck:
                if card > ANON:
                    left[card] -= 1
            anonymous_places = [place for place, card in enumerate(deck) if card == ANON]
            if anonymous_places:
                anonymous = [card for card in NUMBERS if card not in self.relevant[number] for _ in range(left[card])]
                for place, card in zip(anonymous_places, rng.sample(anonymous, len(anonymous_places))):
                    deck[place] = card
                    left[card] -= 1
            loose = [card for card in NUMBERS for _ in range(left[card])]
            fill = iter(rng.sample(loose, deck.count(LOOSE)))  # an ordered draw: as uniform as a shuffle's top
            deck[:] = [next(fill) if card == LOOSE else card for card in deck]


class PlannedShuffles(random.Random):
    """The engine's rng during a replay: reshuffle k puts the sampled cards of deck k in its drawn
    places, top first, and the rest of the list it is given, uniformly shuffled, below them. A
    shuffle this plan does not fit (the replay already left the transcript) is a plain one."""

    def __init__(self, drawn: list[list[int]], seed: int):
        super().__init__(seed)
        self.drawn = drawn
        self.arranged: list[list[int]] = []  # every shuffled deck, as the engine holds it (top last)

    def shuffle(self, x: list[int]) -> None:  # type: ignore[override]
        number = len(self.arranged)
        rest = Counter(x)
        if number < len(self.drawn):
            rest.subtract(self.drawn[number])
        if number < len(self.drawn) and min(rest.values(), default=0) >= 0:
            below = list(rest.elements())
            super().shuffle(below)
            x[:] = (self.drawn[number] + below)[::-1]
        else:
            super().shuffle(x)
        self.arranged.append(list(x))


@dataclass
class _Traced:
    """A transcript's hidden cards, kept while the transcript has not grown."""

    transcript: Transcript
    length: tuple[int, int, bool]
    hidden: HiddenCards


class QuitlokSampler(DealSampler):
    """Actions from the public events; deals as the module's docstring defines them, every drawn
    card from `HiddenCards` and every card not drawn yet uniformly shuffled."""

    def __init__(self) -> None:
        self._traced: _Traced | None = None

    def actions(self, transcript: Transcript) -> list[tuple[int, Action]]:
        seat = transcript.seat
        answers = iter(transcript.answers)
        played: list[tuple[int, Action]] = []
        for event in transcript.events():
            if event["type"] in ACTION_EVENTS:
                mover = event["seat"]
                if mover == seat:
                    answer = next(answers, None)
                    if answer is None:
                        raise SamplingError(f"the events show more actions of seat {seat} than it answered")
                    played.append((seat, answer))
                else:
                    played.append((mover, action_of(event)))
        played += [(seat, answer) for answer in answers]  # the latest answer, before its events arrive
        return played

    def propose(self, transcript: Transcript, rng: random.Random) -> Proposal:
        decks = self.hidden_cards(transcript).sample(rng)
        first = decks[0]
        rest = Counter(FULL_DECK)
        rest.subtract(first)
        below = list(rest.elements())
        rng.shuffle(below)
        return Proposal(deck=names(first + below),
                        seed=seed_for_first_banker(transcript.players, self._first_banker(transcript, rng)),
                        rng=PlannedShuffles(decks[1:], rng.getrandbits(64)))

    @staticmethod
    def _first_banker(transcript: Transcript, rng: random.Random) -> int:
        """The first mover funds the first bank; before any message, every seat is as likely."""
        for event in transcript.events():
            if event["type"] == "fund":
                return event["seat"]
        if transcript.decisions:
            return transcript.decisions[0]["view"]["banker"]
        return rng.randrange(transcript.players)

    def hidden_cards(self, transcript: Transcript) -> HiddenCards:
        """The transcript traced and its hidden cards counted, once while it has not grown."""
        length = transcript.progress
        if self._traced is None or self._traced.transcript is not transcript or self._traced.length != length:
            tracer = DrawTracer(transcript)
            tracer.follow(transcript)
            self._traced = _Traced(transcript, length, HiddenCards(tracer))
        return self._traced.hidden


SAMPLER = QuitlokSampler()
