"""Cuajo deals sampled from one seat's messages (what is encoded and why: cuajo.md § Sampling
hidden cards (cardarena.search)).

A deal is the engine's deck order (wire forms, top first), the dealer, and the card of every
secret another seat laid (the seat sees only that a secret was laid). `propose` draws exactly
uniformly among the deals in which every card the seat saw is where it saw it, every hidden
hand held each card it was seen to give up (discards, secrets) when it gave it up, and a hidden hand
seen purro was one card from complete exactly when the flags said so; `replay` then checks the rest
(the other purro flags, wins, claims and passes, which moves were legal).

Cards are counted as deck orders (lists of wire names): the 4 copies of a card are identical, so
two orders differing only by swapping copies are one deal, and a hand of repeated cards has fewer
orders than a hand of distinct ones. Uniform over orders is uniform over labelled (distinguishable)
shuffles, which is what dealing a shuffled deck does.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from bisect import bisect_right
from itertools import accumulate, combinations, product
from fractions import Fraction
from math import comb, factorial, prod
from typing import Any, Sequence

from cardarena.games.base import Action
from cardarena.games.cuajo import (COPIES, DEFAULT_MAX_TURNS, HAND_SIZE, NAME, PENALTY_TURNS, TYPES, one_card_away,
                                   parse_card)
from cardarena.search.cuajo_purro import PurroHand, conditioned_fills, spread
from cardarena.search.knowledge import DealSampler, Proposal, SamplingError, Transcript, exact_sampling, proposal_deadline

DECK_SIZE = TYPES * COPIES
SOWEE_POSITION = 4 * HAND_SIZE + 1  # the card after the four hands (15 + 15 + 15 + the dealer's 16)
STOCK_START = SOWEE_POSITION + 1  # the stock's top card; the k-th draw of the hand takes STOCK_START + k
STOCK_SIZE = DECK_SIZE - STOCK_START
#: each public event that begins an action, and the action's type
ACTION_OF_EVENT = {"draw": "draw", "take": "take", "discard": "discard", "claim": "claim", "pass": "pass"}
SECRET_ACTION = {"four": "secret", "sowee": "sowee_secret"}
#: deals built in one `propose` before it gives up (SamplingError): 5-10 s here without hands dealt
#: purro, reached where three hidden hands were seen purro or one gave up very many cards
MAX_PLACEMENTS = 200_000
#: nor for longer than this (a placement that deals hands purro costs some 1-3 ms, not 30 µs); stopping
#: early biases nothing, as every placement is drawn afresh
MOST_PROPOSAL_SECONDS = 10.0
#: a hand's required copies are placed by counting (`HandCount`) while its count has at most this
#: many states at one draw; past it, one copy at a time with a coin each (`_Dealing.hand`)
MOST_COUNTED_STATES = 20_000
#: a hand seen purro is dealt purro by construction (`Plan.purro_deals`) while the copies its prefix
#: may hold come in at most this many contents (each is counted once per position: 0.05-1.5 s)
MOST_PURRO_CONTENTS = 8
#: nor when that would take more than this many counts (choices of hidden cards times hands seen purro)
MOST_PURRO_COUNTS = 16


def packet_positions(dealer: int, seat: int) -> range:
    """The deck positions dealt to `seat` (cuajo.md § Engine choices, dealing from a fixed deck)."""
    if seat == dealer:
        return range(3 * HAND_SIZE, 4 * HAND_SIZE + 1)
    offset = (seat - dealer - 1) % 4
    return range(offset * HAND_SIZE, (offset + 1) * HAND_SIZE)


@dataclass
class HiddenCard:
    """A card in another seat's move that no message showed: a secret's four identical cards, or a
    sowee secret's chosen fourth card. `candidates` are the card types it may be."""

    action_index: int
    candidates: list[int]


@dataclass
class Reading:
    """What one transcript fixes about the deal: the actions, the cards seen at deck positions, and
    per hidden hand the flow of cards in and out of it (for the cards it must have held)."""

    actions: list[tuple[int, Action]]
    dealer: int | None
    own_packet: list[int] | None  # the seat's own dealt cards (None before its first decision)
    seen_at: dict[int, int]  # deck position -> card type the seat saw there (sowee, shown draws, ...)
    #: per hidden seat, in order: ("unseen", position) | ("in", type) | ("out", type or None, count, hidden index,
    #: role: "discard", "secret", "sowee" (the three sowee cards) or "fourth") | ("purro", flag the discard left)
    flows: dict[int, list[tuple]]
    hidden_cards: list[HiddenCard] = field(default_factory=list)


def read(transcript: Transcript) -> Reading:
    """Walk the seat's events in order, rebuilding every action and where each seen card lay."""
    return _Walk(transcript).run()


class _Walk:
    """The state of `read`'s walk through the seat's events: the public flags, how many stock cards
    were drawn, whose answers were met, and the reading built so far."""

    def __init__(self, transcript: Transcript):
        self.seat, self.answers = transcript.seat, transcript.answers
        options = transcript.options
        self.max_turns = options.get("max_turns") or DEFAULT_MAX_TURNS
        self.views = [message["view"] for message in transcript.decisions]
        self.events = transcript.events()
        dealer = options.get("dealer")
        if self.views:
            dealer = self.views[0]["dealer"]
        elif dealer is None and self.events:
            dealer = self.events[0]["seat"]  # the dealer's opening is the hand's first move
        self.sowee = parse_card(self.views[0]["sowee"]) if self.views else None
        self.reading = Reading(actions=[], dealer=dealer, seen_at={},
                               own_packet=[parse_card(card) for card in self.views[0]["hand"]] if self.views else None,
                               flows={other: [] for other in range(4) if other != self.seat or not self.views})
        if self.sowee is not None:
            self.reading.seen_at[SOWEE_POSITION] = self.sowee
        self.answered = 0  # the seat's own actions met so far (its answers, in order)
        self.draws, self.turn = 0, 1
        self.purro, self.penalty = [False] * 4, [0] * 4  # the public flags, and penalty turns left (cuajo.md § Purro)
        self.automatic_take = False  # the next take is the empty stock's (or turn cap's) automatic one
        self.shown_to: list[tuple] | None = None  # the flow of a hidden seat whose draw was just shown

    def run(self) -> Reading:
        for index, event in enumerate(self.events):
            kind = event["type"]
            if (kind in ACTION_OF_EVENT or kind == "secret") and not (kind == "take" and self.automatic_take):
                self.automatic_take = False
                self.action(event)
            following = self.events[index + 1] if index + 1 < len(self.events) else {}
            self.moved(event, following)
        if self.answered < len(self.answers):  # the latest answer, whose events have not come back yet
            self.reading.actions += [(self.seat, action) for action in self.answers[self.answered:]]
        return self.reading

    def action(self, event: dict[str, Any]) -> None:
        """Record the action `event` begins: the seat's own answer, or what the event shows of another's."""
        kind, mover = event["type"], event["seat"]
        expected = SECRET_ACTION[event["kind"]] if kind == "secret" else ACTION_OF_EVENT[kind]
        if mover not in self.reading.flows:
            if self.answered >= len(self.answers) or self.answers[self.answered]["type"] != expected:
                raise SamplingError(f"seat {self.seat}'s answers do not match its own {kind} event")
            action = self.answers[self.answered]
            self.answered += 1
        elif kind == "secret":
            action = {"type": expected, "card": None}
            candidates = [t for t in range(TYPES) if event["kind"] == "four" or t != self.sowee]
            self.reading.hidden_cards.append(HiddenCard(len(self.reading.actions), candidates))
        else:
            action = {"type": expected, "card": event["card"]} if kind == "discard" else {"type": expected}
        self.reading.actions.append((mover, action))

    def moved(self, event: dict[str, Any], following: dict[str, Any]) -> None:
        """Note where the cards of `event` lay, and what it tells of the mover's hidden hand."""
        kind, mover = event["type"], event.get("seat")
        flow = self.reading.flows.get(mover)
        if kind == "draw":
            self.drawn(event, flow, following)
        elif kind in ("take", "claim") and flow is not None:
            flow.append(("in", parse_card(event["card"])))
        if kind == "claim" and self.shown_to and self.shown_to[-1] == ("in", parse_card(event["card"])):
            self.shown_to.pop()  # the claimed card never reached the drawer's hand
        elif kind == "discard":
            self.discarded(event, flow, following)
        elif kind == "secret" and flow is not None:
            hidden = len(self.reading.hidden_cards) - 1
            if event["kind"] == "four":
                flow.append(("out", None, COPIES, hidden, "secret"))
            else:
                if self.sowee is not None:
                    flow.append(("out", self.sowee, COPIES - 1, None, "sowee"))
                flow.append(("out", None, 1, hidden, "fourth"))
        elif kind == "win":
            for offset, card in enumerate(event.get("extra_cards", [])):
                self.reading.seen_at[STOCK_START + self.draws + offset] = parse_card(card)

    def drawn(self, event: dict[str, Any], flow: list[tuple] | None, following: dict[str, Any]) -> None:
        """A stock draw takes the next stock position; its card is known when shown or drawn by the seat."""
        position = STOCK_START + self.draws
        self.draws += 1
        card = event.get("card")
        if flow is None and card is None:
            card = _own_draw(self.views, self.answered, following)
        if card is not None:
            self.reading.seen_at[position] = parse_card(card)
        self.shown_to = flow if card is not None else None
        if flow is not None:
            flow.append(("in", parse_card(card)) if card is not None else ("unseen", position))

    def discarded(self, event: dict[str, Any], flow: list[tuple] | None, following: dict[str, Any]) -> None:
        """A discard left the hand, ended a turn, and was judged for purro unless in a penalty turn."""
        mover = event["seat"]
        if flow is not None:
            flow.append(("out", parse_card(event["card"]), 1, None, "discard"))
        if self.penalty[mover]:  # a penalty turn runs down: no purro judgement (cuajo.md § Engine choices, penalty turns)
            self.penalty[mover] -= 1
        else:
            if following.get("type") == "purro" and following["seat"] == mover:
                self.purro[mover] = following["purro"]
                self.penalty[mover] = PENALTY_TURNS if following["broken"] else 0
            if flow is not None and self.sowee is not None:
                flow.append(("purro", self.purro[mover]))
        if self.draws < STOCK_SIZE and self.turn < self.max_turns:
            self.turn += 1
        else:
            self.automatic_take = True


def _own_draw(views: list[dict[str, Any]], answered: int, following: dict[str, Any]) -> str:
    """The card the seat drew unshown: the one its next view gained, or the card it won with."""
    if following.get("type") == "win":
        return following["card"]
    gained = Counter(views[answered]["hand"]) - Counter(views[answered - 1]["hand"])
    if sum(gained.values()) != 1:
        raise SamplingError("the seat's hand did not gain exactly one card from its draw")
    return next(iter(gained))


@dataclass
class Choice:
    """One assignment of the hidden secret cards, with the requirements it implies and its weight."""

    cards: tuple[int, ...]
    units: list[tuple[int, int, int]]  # (seat, card type, k): one more copy lies in the seat's first k draws or its packet
    rest: list[int]  # the unseen cards left once one copy per unit is set aside
    weight: int  # (placement choices of the units) x (orders of the rest): 1 / the chance of one placement path
    #: after game_end, per hidden hand, the cards its own positions hold but for its units (the reveal
    #: fixes them hand by hand: `Plan.hand_pools`); None before, when all share `rest`
    pools: dict[int, list[int]] | None = None

    @cached_property
    def units_by_seat(self) -> dict[int, list[tuple[int, int]]]:
        """The units of each hand, (card type, k), in order of k."""
        grouped: dict[int, list[tuple[int, int]]] = {}
        for other, card, drawn in self.units:
            grouped.setdefault(other, []).append((card, drawn))
        return grouped

    @cached_property
    def groups_by_seat(self) -> dict[int, list[tuple[int, int, int]]]:
        """The units of each hand gathered by card and k, (card type, k, copies), in order of k: the
        copies of one group share one set, so which of them is which is no choice (see `_placed`)."""
        return {other: [(card, drawn, copies) for (card, drawn), copies in Counter(units).items()]
                for other, units in self.units_by_seat.items()}


class Plan:
    """Everything `propose` needs that one transcript fixes, computed once per transcript state."""

    def __init__(self, transcript: Transcript, deals_purro: bool = True):
        self.seat = transcript.seat
        self.deals_purro = deals_purro
        self.reading = read(transcript)
        reading = self.reading
        self.dealer = reading.dealer
        self.fixed: dict[int, int] = dict(reading.seen_at)
        #: after game_end, per hidden hand, how many of each card its packet and unseen draws held
        self.hand_pools: dict[int, list[int]] | None = None
        if transcript.game_end is not None and self.dealer is not None:
            self.hand_pools = self._read_reveal(transcript.game_end["reveal"])
        unseen = [COPIES] * TYPES
        for card in self.fixed.values():
            unseen[card] -= 1
        if reading.own_packet is not None:
            for card in reading.own_packet:
                unseen[card] -= 1
        if min(unseen) < 0:
            raise SamplingError("the seat's messages show a card more often than the deck holds it")
        self.unseen = unseen
        self.chains: dict[int, list[int]] = {}  # per hidden seat: packet positions, then its unseen draws
        self.packet_sizes: dict[int, int] = {}
        if self.dealer is not None:
            for other, flow in reading.flows.items():
                packet = list(packet_positions(self.dealer, other))
                self.packet_sizes[other] = len(packet)
                self.chains[other] = packet + [step[1] for step in flow if step[0] == "unseen"]
        if self.hand_pools is not None and any(sum(self.hand_pools[other]) != len(chain) or min(self.hand_pools[other]) < 0
                                               for other, chain in self.chains.items()):
            raise SamplingError("game_end's reveal does not fit the cards the hidden hands were seen to move")
        self.sowee = reading.seen_at.get(SOWEE_POSITION)
        #: hidden hands seen purro at some time: the proposal checks their purro flags itself (a random
        #: hand is one card from complete about once in 560), the other flags are left to `replay`
        self.purro_checked = {other for other, flow in reading.flows.items() if ("purro", True) in flow}
        self.choices = self._choices()
        if not self.choices:
            raise SamplingError(f"no Cuajo deal gives seat {self.seat}'s hidden hands the cards they were seen to give up")
        self.top_weight = max(choice.weight for choice in self.choices)
        own = reading.own_packet is not None and self.dealer is not None
        self.own_positions = list(packet_positions(self.dealer, self.seat)) if own else []
        self.free_positions = [p for p in range(DECK_SIZE) if p not in self.fixed and p not in self.own_positions]
        self.template: list[int | None] = [self.fixed.get(p) for p in range(DECK_SIZE)]
        #: the order `_placed` deals the hidden hands in: those it checks first (their check rejects most)
        self.seat_order = sorted(self.chains, key=lambda other: other not in self.purro_checked)

    @cached_property
    def purro_deals(self) -> dict[tuple[int, ...], dict[int, PurroHand]]:
        """Per choice of hidden cards (by its cards), the hands seen purro that `_placed` deals purro
        by construction, each at the last discard it was judged purro (cuajo.md § Sampling hidden
        cards, A hand seen purro, dealt purro): the same hands for every choice, those whose prefix may
        hold at most MOST_PURRO_CONTENTS contents of its later requirements in every choice. Empty
        after game_end (the reveal fixes the hands), when no hand was seen purro, or when the counts
        would exceed MOST_PURRO_COUNTS (choices times hands). The other hands seen purro are checked
        by rejection alone (`_keeps_purro_flags`)."""
        if (not self.deals_purro or self.hand_pools is not None or not self.purro_checked
                or len(self.choices) * len(self.purro_checked) > MOST_PURRO_COUNTS):
            return {}
        deals = {}
        for choice in self.choices:
            hands = {other: self._purro_hand(choice, other) for other in self.seat_order if other in self.purro_checked}
            deals[choice.cards] = {other: hand for other, hand in hands.items() if hand is not None}
        seats = set.intersection(*(set(hands) for hands in deals.values()))
        deals = {cards: {other: hand for other, hand in hands.items() if other in seats} for cards, hands in deals.items()}
        if any(sum(hand.prefix - sum(hand.due) for hand in hands.values()) > sum(next(iter(hands.values())).rest)
               for hands in deals.values() if hands):
            return {}  # their fills cannot all be drawn from the unseen cards (a deal replay rejects)
        return deals if seats else {}

    def _purro_hand(self, choice: Choice, other: int) -> PurroHand | None:
        """The construction of one hand seen purro under one choice: at its last judgement seen purro,
        with every judgement of the same prefix (no unseen draw between them: once another seat is
        purro, the hand's draws are shown); None past MOST_PURRO_CONTENTS. Its free cards at each:
        what it took less what it gave up (a sowee secret's fourth card stays free), beside its
        secrets laid by then (cuajo.md § Engine choices, Purro), as `_keeps_purro_flags` counts them."""
        drawn, delta, laid, judged = 0, [0] * TYPES, [0] * TYPES, []
        for step in self.reading.flows[other]:
            if step[0] == "unseen":
                drawn += 1
            elif step[0] == "in":
                delta[step[1]] += 1
            elif step[0] == "out":
                card = step[1] if step[3] is None else choice.cards[step[3]]
                delta[card] -= step[2]
                if step[4] == "secret":
                    laid[card] += COPIES
                elif step[4] == "sowee":
                    laid[card] += COPIES - 1
                elif step[4] == "fourth":
                    delta[card] += 1
            else:
                judged.append((drawn, delta[:], laid[:], step[1]))
        unseen = max((drawn for drawn, _, _, purro in judged if purro), default=None)
        if unseen is None:
            return None
        due, later, last = [0] * TYPES, [0] * TYPES, unseen
        for card, deadline in choice.units_by_seat.get(other, ()):
            (due if deadline <= unseen else later)[card] += 1
            last = max(last, deadline)
        if prod(copies + 1 for copies in later) > MOST_PURRO_CONTENTS:
            return None
        rest = [0] * TYPES
        for card in choice.rest:
            rest[card] += 1
        judgements = [(delta_then, laid_then, purro) for drawn, delta_then, laid_then, purro in judged if drawn == unseen]
        return PurroHand(self.packet_sizes[other] + unseen, judgements, due, later, last - unseen, rest)

    @cached_property
    def most_chances(self) -> dict[int, Fraction]:
        """Per hand dealt purro, its largest `PurroHand.most_chance` over the choices: one bound for
        every choice keeps the choices' weights as they are."""
        seats = next(iter(self.purro_deals.values()))
        return {other: max(hands[other].most_chance for hands in self.purro_deals.values()) for other in seats}

    @cached_property
    def most_spread(self) -> Fraction:
        """The largest `spread` of the purro hands' fills (each at its largest: no later copy in it),
        over the choices."""
        return max(spread(sum(next(iter(hands.values())).rest), [hand.prefix - sum(hand.due) for hand in hands.values()])
                   for hands in self.purro_deals.values())

    def _read_reveal(self, reveal: dict[str, Any]) -> dict[int, list[int]]:
        """game_end's reveal (cuajo.md § Engine choices, what the reveal shows): the stock left lies
        at the end of the deck, top first, and each hidden hand's final cards and laid secrets, plus
        what it discarded, less what it took or was shown drawing, are what its packet and unseen
        draws held: the hand's own cards to deal (`hand_pools`)."""
        stock = reveal["stock"]
        for offset, card in enumerate(stock):
            self.fixed[DECK_SIZE - len(stock) + offset] = parse_card(card)
        pools = {}
        for other, flow in self.reading.flows.items():
            held = [0] * TYPES
            for card in reveal["hands"][other] + [card for laid in reveal["secrets"][other] for card in laid]:
                held[parse_card(card)] += 1
            for step in flow:
                if step[0] == "in":
                    held[step[1]] -= 1
                elif step[0] == "out" and step[4] == "discard":
                    held[step[1]] += step[2]
            pools[other] = held
        self.revealed_secrets = {other: Counter(parse_card(card) for laid in reveal["secrets"][other] for card in laid)
                                 for other in self.reading.flows}
        return pools

    def _laid_as_revealed(self, cards: tuple[int | None, ...]) -> bool:
        """Whether the secret cards `cards` assigns (None: not yet) lay no card a reveal's secrets do
        not show, and, when all are assigned, exactly the secrets it shows."""
        for other, flow in self.reading.flows.items():
            laid: Counter[int] = Counter()
            for step in flow:
                if step[0] == "out" and step[4] != "discard":
                    card = step[1] if step[3] is None else cards[step[3]]
                    if card is not None:
                        laid[card] += step[2]
            if laid - self.revealed_secrets[other] or (None not in cards and laid != self.revealed_secrets[other]):
                return False
        return True

    @cached_property
    def counts(self) -> dict[int, HandCount]:
        """The hands whose required copies are placed by counting: those whose requirements every
        choice shares (no secret of theirs is face down), while the count stays small. Counted on
        the first proposal (reading the actions needs none of it)."""
        counts = {}
        for other, units in self.choices[0].units_by_seat.items():
            if not any(step[0] == "out" and step[3] is not None for step in self.reading.flows[other]):
                count = HandCount.of(self.packet_sizes[other], units)
                if count is not None:
                    counts[other] = count
        return counts

    def _units(self, cards: tuple[int | None, ...]) -> list[tuple[int, int, int]]:
        """The copies each hidden hand must have held, as (seat, type, k); an unknown hidden card (None)
        adds none (a lower bound on the requirements, used to prune candidates)."""
        units = []
        for other, flow in self.reading.flows.items():
            needed, required = [0] * TYPES, [0] * TYPES
            drawn = 0
            for step in flow:
                if step[0] == "unseen":
                    drawn += 1
                elif step[0] == "in":
                    needed[step[1]] -= 1
                elif step[0] == "out":
                    card = step[1] if step[3] is None else cards[step[3]]
                    if card is None:
                        continue
                    needed[card] += step[2]
                    while required[card] < needed[card]:
                        required[card] += 1
                        units.append((other, card, drawn))
        return units

    def _choice(self, cards: tuple[int | None, ...]) -> Choice | None:
        """The requirements and weight of one assignment of hidden cards; None when no deal meets them."""
        if self.dealer is None:
            return Choice(cards, [], [t for t in range(TYPES) for _ in range(self.unseen[t])], 1)
        units = self._units(cards)
        if self.hand_pools is not None:
            return self._revealed_choice(cards, units)
        left = self.unseen[:]
        paths = 1
        placed = Counter()
        for other, card, drawn in units:
            left[card] -= 1
            free = self.packet_sizes[other] + drawn - placed[other]
            if left[card] < 0 or free <= 0:
                return None
            paths *= free
            placed[other] += 1
        paths //= prod(factorial(copies) for copies in Counter(units).values())  # a group's copies are a set
        rest = [t for t in range(TYPES) for _ in range(left[t])]
        orders = factorial(len(rest)) // prod(factorial(count) for count in left)
        return Choice(cards, units, rest, paths * orders)

    def _revealed_choice(self, cards: tuple[int | None, ...], units: list[tuple[int, int, int]]) -> Choice | None:
        """`_choice` after game_end: each hidden hand's units are set aside from its own cards
        (`hand_pools`), whose other cards it deals in any order."""
        if not self._laid_as_revealed(cards):
            return None
        left = {other: pool[:] for other, pool in self.hand_pools.items()}
        paths, placed = 1, Counter()
        for other, card, drawn in units:
            left[other][card] -= 1
            free = self.packet_sizes[other] + drawn - placed[other]
            if left[other][card] < 0 or free <= 0:
                return None
            paths *= free
            placed[other] += 1
        paths //= prod(factorial(copies) for copies in Counter(units).values())
        orders = prod(factorial(sum(pool)) // prod(factorial(count) for count in pool) for pool in left.values())
        pools = {other: [t for t in range(TYPES) for _ in range(pool[t])] for other, pool in left.items()}
        return Choice(cards, units, [], paths * orders, pools)

    def _choices(self) -> list[Choice]:
        """Every assignment of the hidden secret cards that some deal meets (each candidate pruned alone first)."""
        hidden = self.reading.hidden_cards
        alone = []
        for index, card in enumerate(hidden):
            partial: list[int | None] = [None] * len(hidden)
            viable = []
            for candidate in card.candidates:
                partial[index] = candidate
                if self._choice(tuple(partial)) is not None:
                    viable.append(candidate)
            alone.append(viable)
        found = (self._choice(cards) for cards in product(*alone))
        return [choice for choice in found if choice is not None]


def _waiver_hint(plan: Plan, joint: bool) -> str:
    """Where the exact draw of several hands seen purro failed, how to sample all the same: the
    joint coins keep almost no deal there, and `exact=False` drops them (`fallback=True` after an
    exact try: cuajo.md § Sampling hidden cards, Its limits). Only a plan whose purro hands were
    counted already is looked at: counting them here would take seconds past a deadline."""
    counted = vars(plan).get("purro_deals")  # the cached_property's value, where it was computed
    hands = max(map(len, counted.values())) if joint and counted else 0
    if hands < 2:
        return ""
    return (f"; {hands} hidden hands were seen purro, where the exact draw keeps almost no deal: "
            "sample(..., fallback=True) draws exactly for half the time left and then with exact=False, "
            "which keeps their fills whenever they fit, consistent but not exactly uniform (protocol/SEARCH.md)")


class CuajoSampler(DealSampler):
    """Cuajo's deal sampler (see the module's docstring)."""

    def __init__(self, deals_purro: bool = True) -> None:
        #: whether hands seen purro are dealt purro by construction (`Plan.purro_deals`); without, by
        #: rejection alone (the tests compare the two)
        self.deals_purro = deals_purro
        self._last: tuple[Transcript, tuple[int, int, bool], Plan] | None = None

    def plan(self, transcript: Transcript) -> Plan:
        """The plan of `transcript` as it stands now (the last one is kept: sampling asks many times)."""
        key = transcript.progress
        if self._last is None or self._last[0] is not transcript or self._last[1] != key:
            self._last = (transcript, key, Plan(transcript, self.deals_purro))
        return self._last[2]

    def actions(self, transcript: Transcript) -> list[tuple[int, Action]]:
        return self.plan(transcript).reading.actions

    def propose(self, transcript: Transcript, rng: random.Random) -> Proposal:
        plan = self.plan(transcript)
        give_up = time.monotonic() + MOST_PROPOSAL_SECONDS
        deadline = proposal_deadline.get()
        if deadline is not None:
            give_up = min(give_up, deadline)
        joint = exact_sampling.get()  # False: the hands seen purro drawn apart, kept when they fit (see `_dealt_purro`)
        deck, placements = None, 0
        while deck is None and placements < MAX_PLACEMENTS:
            if placements % 256 == 0 and time.monotonic() > give_up:  # before the first too: its counts take time
                break
            placements += 1
            choice = plan.choices[rng.randrange(len(plan.choices))]
            if len(plan.choices) > 1 and rng.randrange(plan.top_weight) >= choice.weight:
                continue
            deck = _placed(plan, choice, rng, joint)
        if deck is None:
            raise SamplingError(f"no Cuajo deal for seat {transcript.seat} kept in {placements} placements "
                                "(its hidden hands were seen to give up too many cards, or to be purro), "
                                "or none before the deadline" + _waiver_hint(plan, joint))
        dealer = plan.dealer if plan.dealer is not None else rng.randrange(4)
        actions = plan.reading.actions
        if plan.reading.hidden_cards:
            actions = actions[:]
            for hidden, card in zip(plan.reading.hidden_cards, choice.cards):
                mover, action = actions[hidden.action_index]
                actions[hidden.action_index] = (mover, {**action, "card": NAME[card]})
        return Proposal(deck=[NAME[t] for t in deck], options={"dealer": dealer}, actions=actions)


def _placed(plan: Plan, choice: Choice, rng: random.Random, joint: bool = True) -> list[int] | None:
    """One placement path, kept with chance 1 / (the number of paths that lead to the same deck);
    None when not kept, or when a hidden hand it deals breaks a purro flag it was seen to show.

    The path: each required copy on a free position of its hand's packet or first k draws (every
    hand's requirements in order of k, so the number of free positions at each step is fixed:
    earlier copies of that hand lie inside the same or a smaller set), then every other position
    given a card drawn uniformly from the rest. The copies a hand needed of one card by the same k
    (a group: a secret's four, the three sowee cards) are one choice of a set of positions, each
    set as likely. The paths leading to one deck: a group of j copies of a card could have been
    any j of the copies of that card in its set but those the hand's earlier groups of that card
    took (the sets are nested), a product of binomials, so one coin per group decides, each tossed
    as soon as its set is filled (a rejected path costs less than a whole deal).

    Hands are dealt one at a time (most selective first, `Plan.seat_order`), each checked as soon as
    its cards are all placed. This changes no deck's chance: the required copies of different hands
    lie in disjoint positions, and a uniform draw from the rest may fill the positions in any order
    fixed beforehand. The check (`_keeps_purro_flags`) fails only for decks that `replay` rejects
    too, so the decks kept are still exactly uniform among those `replay` accepts. `joint=False`
    gives up that exactness for the hands dealt purro (see `_dealt_purro`), not for the rest.
    """
    dealing = _Dealing(plan.template[:], choice.rest[:], rng)
    units_by_seat = choice.units_by_seat
    purro_hands = plan.purro_deals.get(choice.cards, {})
    if purro_hands and not _dealt_purro(plan, choice, dealing, joint):
        return None
    for other in plan.seat_order:
        if choice.pools is not None:
            dealing.pool = choice.pools[other][:]
        placed = other in purro_hands
        if other in plan.counts:
            kept = dealing.counted_hand(plan.chains[other], plan.counts[other], placed)
        else:
            kept = dealing.hand(plan.chains[other], plan.packet_sizes[other], units_by_seat.get(other, ()),
                                choice.groups_by_seat.get(other, ()), placed)
        if not kept:
            return None
        if other in plan.purro_checked and not _keeps_purro_flags(plan, choice, other, dealing.deck):
            return None
    for position in plan.free_positions:
        dealing.fill(position)
    deck = dealing.deck
    if plan.own_positions:
        own = plan.reading.own_packet[:]
        rng.shuffle(own)
        for position, card in zip(plan.own_positions, own):
            deck[position] = card
    return deck


def _dealt_purro(plan: Plan, choice: Choice, dealing: "_Dealing", joint: bool = True) -> bool:
    """Place the requirements of the hands dealt purro (`Plan.purro_deals`) and fill the rest of
    each one's prefix with a draw that leaves it purro at its judgement (`conditioned_fills`, with
    each placement's coin: its `PurroHand.chance` over `Plan.most_chances`); False when a coin rejects. The fills are drawn
    before any other card: the order of a uniform fill is free (see `_placed`). `joint=False`: the
    fills are kept whenever they fit together, without the coins that make them one joint draw
    (not exactly uniform, and hundreds of times likelier to keep with three such hands)."""
    rng, deck = dealing.rng, dealing.deck
    placements = []
    hands = plan.purro_deals[choice.cards]
    for other, hand in hands.items():
        chain = plan.chains[other]
        if other in plan.counts:
            plan.counts[other].place(deck, chain, rng)
        else:
            dealing.place_units(chain, plan.packet_sizes[other], choice.units_by_seat.get(other, ()))
        placed, empty = [0] * TYPES, []
        for position in chain[:hand.prefix]:
            if deck[position] is None:
                empty.append(position)
            else:
                placed[deck[position]] += 1
        placements.append((hand.draw_for(placed), hand.chance(placed) / plan.most_chances[other], empty))
    rest = next(iter(hands.values())).rest
    fills = conditioned_fills(rest, [(draw, keep) for draw, keep, _ in placements], plan.most_spread, rng, joint)
    if fills is None:
        return False
    left = rest[:]
    for (_, _, empty), drawn in zip(placements, fills):
        cards = [t for t in range(TYPES) for _ in range(drawn[t])]
        rng.shuffle(cards)
        for position, card in zip(empty, cards):
            deck[position] = card
        left = [count - taken for count, taken in zip(left, drawn)]
    dealing.pool = [t for t in range(TYPES) for _ in range(left[t])]
    return True


class _Dealing:
    """One placement path under way (see `_placed`): the deck so far and the cards left to deal."""

    def __init__(self, deck: list[int | None], pool: list[int], rng: random.Random):
        self.deck, self.pool, self.rng = deck, pool, rng

    def fill(self, position: int) -> int:
        """The card at `position`, dealt uniformly from the pool if the position is still empty."""
        deck = self.deck
        if deck[position] is None:
            pool = self.pool
            index = self.rng.randrange(len(pool))
            pool[index], pool[-1] = pool[-1], pool[index]
            deck[position] = pool.pop()
        return deck[position]

    def place_units(self, chain: list[int], packet: int, units: Sequence[tuple[int, int]]) -> None:
        """Put each required copy of one hidden hand on a free position of its set (its packet and
        first k draws), one at a time in order of k."""
        deck, rng = self.deck, self.rng
        for card, drawn in units:
            size = packet + drawn
            while True:
                position = chain[rng.randrange(size)]
                if deck[position] is None:
                    break
            deck[position] = card

    def hand(self, chain: list[int], packet: int, units: Sequence[tuple[int, int]],
             groups: Sequence[tuple[int, int, int]], placed: bool = False) -> bool:
        """Deal one hidden hand's chain: each required copy on a free position of its set (unless
        `placed` already), then the rest, tossing each group's coin once its set is filled; False
        when a coin rejects the path."""
        rng = self.rng
        if not placed:
            self.place_units(chain, packet, units)
        counted = [0] * TYPES
        met = [0] * TYPES
        reached = 0
        for card, drawn, copies in groups:
            while reached < packet + drawn:
                counted[self.fill(chain[reached])] += 1
                reached += 1
            paths = comb(counted[card] - met[card], copies)
            met[card] += copies
            if paths > 1 and rng.randrange(paths):
                return False
        for position in chain[reached:]:
            self.fill(position)
        return True


    def counted_hand(self, chain: list[int], count: "HandCount", placed: bool = False) -> bool:
        """Deal one hidden hand's chain with its required copies placed by `count` (unless `placed`
        already), then the rest; False when the coin for extra copies rejects the path (see `HandCount`)."""
        if not placed:
            count.place(self.deck, chain, self.rng)
        for position in chain:
            self.fill(position)
        return count.keeps(self.deck, chain, self.rng)


class HandCount:
    """The required copies of one hidden hand placed all at once, uniformly among every way to place
    them (`Plan.counts`), instead of one copy at a time with a coin each.

    A placement gives each card the hand needed as many positions of its packet and first draws as it
    needed copies, with the j-th needed copy's draw k: at least j of them among the packet and the
    first k draws. The number of placements is counted draw by draw (a state: how many copies of each
    needed card are placed so far), so one is drawn uniformly by walking the counts. It is the same
    number for every deal, as the hand's positions are its own. A deck is then reached by as many
    placements as there are ways to pick, among the copies of each needed card in the hand's packet
    and draws, a set of that many meeting the same condition: 1 unless the hand holds extra copies of
    a needed card, so one coin per card (1 / that number) keeps the decks exactly uniform."""

    def __init__(self, cards: list[int], counted: "_Counted"):
        self.cards = cards
        self.packet, self.deadlines, self.places = counted.packet, counted.deadlines, counted.places
        self.tables, self.starts, self.running = counted.tables, counted.starts, counted.running

    @classmethod
    def of(cls, packet: int, units: list[tuple[int, int]]) -> "HandCount | None":
        """The count for these units (card, k), in order of k; None past MOST_COUNTED_STATES. The
        count depends only on the packet and each needed card's deadlines, not on which card it is,
        so the cards are ordered by their deadlines and the count kept (`_counted`) for the next
        position, seat or sample that needs the same (a hand's units change only when it gives up a
        card: 0.1-0.5 s a count late in a hand)."""
        deadlines_of: dict[int, list[int]] = {}
        for card, drawn in units:
            deadlines_of.setdefault(card, []).append(drawn)
        cards = sorted(deadlines_of, key=lambda card: (deadlines_of[card], card))
        counted = _counted(packet, tuple(tuple(deadlines_of[card]) for card in cards))
        return None if counted is None else cls(cards, counted)

    def place(self, deck: list[int | None], chain: list[int], rng: random.Random) -> None:
        """Put the needed copies on the hand's positions, every placement alike likely."""
        state, placed = self.starts[bisect_right(self.running, rng.randrange(self.running[-1]))]
        packet_places = iter(rng.sample(range(self.packet), sum(placed)))
        for card, copies in zip(self.cards, placed):
            for _ in range(copies):
                deck[chain[next(packet_places)]] = card
        for k in range(1, len(self.tables)):
            later = self.tables[k]
            pick = rng.randrange(self.tables[k - 1][state]) - later.get(state, 0)
            if pick < 0:
                continue  # draw k holds no needed copy
            for card, place, own in zip(self.cards, self.places, self.deadlines):
                if state // place % (len(own) + 1) == len(own):
                    continue  # every needed copy of this card is placed
                pick -= later.get(state + place, 0)
                if pick < 0:
                    deck[chain[self.packet + k - 1]] = card
                    state += place
                    break

    def keeps(self, deck: list[int], chain: list[int], rng: random.Random) -> bool:
        """The coin for extra copies: per needed card, kept with chance 1 / the number of sets of its
        copies in the hand's packet and draws that meet its deadlines."""
        for card, deadlines in zip(self.cards, self.deadlines):
            levels = [max(0, index - self.packet + 1) for index, position in enumerate(chain)
                      if deck[position] == card]
            if len(levels) > len(deadlines):
                sets = sum(all(level <= deadline for level, deadline in zip(chosen, deadlines))
                           for chosen in combinations(levels, len(deadlines)))
                if rng.randrange(sets):
                    return False
        return True


@dataclass(frozen=True)
class _Counted:
    """One count of `HandCount` (the cards it places are named by their index in `deadlines`): a
    state is a number, one digit per needed card (in base its copies + 1), the copies placed so far;
    `tables[k]` the placements of draws after k from each state, `starts` with `running` the
    packet's placements, their running total weighted by the ways to complete them."""

    packet: int
    deadlines: tuple[tuple[int, ...], ...]
    places: list[int]
    tables: list[dict[int, int]]
    starts: list[tuple[int, list[int]]]
    running: list[int]


@lru_cache(maxsize=16)
def _counted(packet: int, deadlines: tuple[tuple[int, ...], ...]) -> _Counted | None:
    """The count of `HandCount.of`, draw by draw from the last needed one back; None past
    MOST_COUNTED_STATES states at one draw. The last 16 are kept (up to some 30,000 table entries
    each, 3 MB: a bot's decisions in one hand need a few, one per hidden hand and change)."""
    places = list(accumulate([1] + [len(own) + 1 for own in deadlines[:-1]], lambda a, b: a * b))
    last = max(own[-1] for own in deadlines)
    tables: list[dict[int, int]] = [{} for _ in range(last + 1)]
    tables[last][sum(len(own) * place for own, place in zip(deadlines, places))] = 1
    for k in range(last, 0, -1):  # the states before draw k, from those after it
        # the cards draw k may have held a needed copy of: those with a copy needed later than k - 1
        # (a digit above what the draws up to k - 1 must hold)
        movable = [(place, len(own) + 1, sum(drawn <= k - 1 for drawn in own))
                   for own, place in zip(deadlines, places)]
        movable = [entry for entry in movable if entry[2] < entry[1] - 1]
        earlier = tables[k - 1]
        for state, ways in tables[k].items():
            earlier[state] = earlier.get(state, 0) + ways  # draw k holds no needed copy
            for place, base, required in movable:
                if state // place % base > required:  # draw k held one copy of this card
                    earlier[state - place] = earlier.get(state - place, 0) + ways
        if len(earlier) > MOST_COUNTED_STATES:
            return None
    bases = [(place, len(own) + 1) for own, place in zip(deadlines, places)]
    starts, weights = [], []
    for state, ways in tables[0].items():
        placed = [state // place % base for place, base in bases]
        if sum(placed) <= packet:
            starts.append((state, placed))
            weights.append(_packet_ways(packet, placed) * ways)
    return _Counted(packet, deadlines, places, tables, starts, list(accumulate(weights)))


#: n! for every n up to a packet's size (`_packet_ways` runs for each start of a count)
FACTORIALS = [factorial(n) for n in range(HAND_SIZE + 2)]


def _packet_ways(packet: int, placed: list[int]) -> int:
    """The ways to choose which packet positions hold the needed copies, `placed` of each card."""
    ways = FACTORIALS[packet] // FACTORIALS[packet - sum(placed)]
    for copies in placed:
        ways //= FACTORIALS[copies]
    return ways


def _keeps_purro_flags(plan: Plan, choice: Choice, seat: int, deck: list[int]) -> bool:
    """Whether the hidden hand of `seat` in `deck` is judged as seen at each of its purro judgements
    (cuajo.md § Purro: one card away from complete, or not, after a discard outside a penalty), by
    the engine's test, `one_card_away`, on the hand rebuilt from its packet, draws, takes and what
    it gave up."""
    hand = [0] * TYPES
    for position in plan.chains[seat][:plan.packet_sizes[seat]]:
        hand[deck[position]] += 1
    fourth, secrets = None, []
    for step in plan.reading.flows[seat]:
        kind = step[0]
        if kind == "unseen":
            hand[deck[step[1]]] += 1
        elif kind == "in":
            hand[step[1]] += 1
        elif kind == "out":
            card = step[1] if step[3] is None else choice.cards[step[3]]
            hand[card] -= step[2]
            if step[4] == "secret":
                secrets.append(card)
            elif step[4] == "fourth":
                fourth = card
        else:
            free = hand[:]
            if fourth is not None:
                free[fourth] += 1
            held = free[:]
            for card in secrets:
                held[card] += COPIES
            if fourth is not None:
                held[plan.sowee] += COPIES - 1
            if one_card_away(free, held) != step[1]:
                return False
    return True


SAMPLER = CuajoSampler()
