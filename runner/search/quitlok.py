"""Quitlok's deal sampler: which actions were played, and deals drawn uniformly over a superset
of the consistent ones (runner/games/quitlok.md § Sampling hidden cards).

A Quitlok deal is more than the first deck: the engine reshuffles with its own rng whenever the
deck runs down (quitlok.md § The deck), so later cards depend on those shuffles. A deal here is
what the engine's randomness chooses: the first banker (fixed through new_state's seed), the
first deck's order, and the permutation each past reshuffle applied to the cards it shuffled.
Every such deal is equally likely in a real game (`random.shuffle` permutes positions
uniformly, and how many cards each reshuffle takes is public), so uniform among consistent
deals is the seat's true posterior over the hidden cards.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from cardarena.games.base import Action
from cardarena.games.quitlok import CARD_BY_NAME, FULL_DECK, GAME, names
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


@dataclass
class DeckPlan:
    """What the seat knows of one deck (the first, or one reshuffle's): its size, the card seen at
    each seen draw index, and for each seen value at most how many copies the deck can hold."""

    size: int
    seen: dict[int, int] = field(default_factory=dict)  # draw index -> card
    most_copies: dict[int, int] = field(default_factory=dict)  # card -> upper bound over consistent deals

    def seen_by_value(self) -> dict[int, list[int]]:
        """The seen draw indexes of each seen card, in draw order."""
        grouped: dict[int, list[int]] = {}
        for index, card in sorted(self.seen.items()):
            grouped.setdefault(card, []).append(index)
        return grouped


class DrawTracer:
    """Follows the transcript's public events the way the engine moves cards (draws, discards,
    reshuffles: quitlok.md § The deck and § Engine choices), with each card known only as the
    draw that brought it, and notes every card the seat was shown, wherever it was shown."""

    def __init__(self, transcript: Transcript):
        self.seat = transcript.seat
        self.hands: list[list[DrawId]] = [[] for _ in range(transcript.players)]
        self.aside: list[DrawId] = []  # drawn, in neither a hand nor the discards yet (an eleven call's burned cards)
        self.betting = [False] * transcript.players  # bets outstanding
        self.deck_size = len(FULL_DECK)
        self.discards = 0
        self.deck_number = 0
        self.drawn = 0  # cards drawn from the current deck
        self.sizes = [len(FULL_DECK)]  # each deck's size
        self.held_at_reshuffle: list[list[DrawId]] = [[]]  # per deck: the cards outside it when it was shuffled
        self.cards: dict[DrawId, int] = {}  # every draw whose card the seat was shown
        self.reshuffles_told: list[int] = []
        self.elevens: list[list[DrawId]] = []  # the caller's hand at each eleven call, whose total was 11

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
        self.deduce_elevens()

    def deduce_elevens(self) -> None:
        """A hand called eleven totals exactly 11 (quitlok.md § A hand, 3), and a total of 11 is its
        plain sum (a 12 counts as 9 only above 21; a framed pair is 21): so a hand with one card
        the seat was not shown had 11 less the others there, a card as certain as a seen one."""
        for hand in self.elevens:
            hidden = [draw for draw in hand if draw not in self.cards]
            if len(hidden) == 1:
                card = 11 - sum(self.cards[draw] for draw in hand if draw in self.cards)
                if not 1 <= card <= 12:
                    raise SamplingError("the transcript shows an eleven call no hand could make")
                self.cards[hidden[0]] = card

    def plans(self) -> list[DeckPlan]:
        """One plan per deck: the seen draws, and for each seen value the most copies the deck can
        hold: two less the copies known to be outside it (in hands, or drawn) when it was shuffled, and no more than
        leaves room for the deck's other seen cards."""
        plans = [DeckPlan(size) for size in self.sizes]
        for (number, index), card in self.cards.items():
            plans[number].seen[index] = card
        for number, (plan, held) in enumerate(zip(plans, self.held_at_reshuffle)):
            held_known = Counter(self.cards[draw] for draw in held if draw in self.cards)
            seen = Counter(plan.seen.values())
            for card, copies in seen.items():
                plan.most_copies[card] = min(2 - held_known[card], plan.size - (len(plan.seen) - copies))
                if plan.most_copies[card] < copies:
                    raise SamplingError(f"the transcript shows more {names([card])[0]} than deck {number} can hold")
        return plans

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
            self.drawn = 0
            self.sizes.append(self.deck_size)
            self.held_at_reshuffle.append([draw for hand in self.hands for draw in hand] + self.aside)

    def discard(self, seat: int) -> None:
        self.discards += len(self.hands[seat])
        self.hands[seat] = []
        self.betting[seat] = False

    def shown(self, seat: int, cards: list[str]) -> None:
        """The seat's whole hand is shown (and then discarded)."""
        if len(cards) != len(self.hands[seat]):
            raise SamplingError(f"seat {seat} shows {len(cards)} cards but was traced holding {len(self.hands[seat])}")
        self.cards.update(zip(self.hands[seat], (CARD_BY_NAME[card] for card in cards)))
        self.discard(seat)

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
            draw = self.deal(event["seat"])
            if kind == "blot":
                self.cards[draw] = CARD_BY_NAME[event["card"]]
            self.betting[event["seat"]] |= kind == "bet"
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
        self.elevens.append(list(self.hands[seat]))
        for card in event["burned"]:
            self.cards[self.draw()] = CARD_BY_NAME[card]
        if event["received"]:
            draw = self.deal(seat)
            if event["card"] is not None:
                self.cards[draw] = CARD_BY_NAME[event["card"]]
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


class ArrangedShuffles(random.Random):
    """The engine's rng during a replay: each reshuffle's permutation is drawn when the engine
    makes it, from the cards it actually shuffles, uniformly among the permutations that put every
    seen card where the seat saw it (see `arrange`). Reshuffles beyond the plans are plain ones."""

    def __init__(self, plans: list[DeckPlan], seed: int):
        super().__init__(seed)
        self.plans = plans
        self.source = random.Random(seed + 1)  # the arrangements' own draws, apart from plain shuffles
        self.arranged: list[list[int]] = []  # every shuffled deck, as the engine holds it (top last)

    def shuffle(self, x: list[int]) -> None:  # type: ignore[override]
        number = len(self.arranged)
        if number < len(self.plans) and self.plans[number].size == len(x):
            arrange(x, self.plans[number], self.source)
        else:
            super().shuffle(x)
        self.arranged.append(list(x))


def arrange(cards: list[int], plan: DeckPlan, rng: random.Random) -> None:
    """Permute `cards` (the engine's list, drawn from the end) in place: uniform over the
    permutations that show the seat its seen cards, each such permutation equally likely
    whatever `cards` holds, so that over whole deals the proposal stays exactly uniform.

    Each card seen s times in this deck is given to its seen draws by a uniform one-to-one map
    into `most_copies` slots, the first slots being the copies `cards` really holds: the number
    of maps is the same for every consistent deal, and a map into a slot `cards` lacks is a deal
    the seat's observations exclude (likely when a hidden card in a hand was that value). The
    other cards go uniformly to the other places. An excluded deal is made visibly wrong (a seen
    draw gets another card) so that replay rejects it; that is possible because a slot can be
    lacking only when another card is there to show instead (`DeckPlan.most_copies`).
    """
    size = len(cards)
    where: dict[int, list[int]] = {}
    for position, card in enumerate(cards):
        where.setdefault(card, []).append(position)
    order: list[int | None] = [None] * size
    excluded: int | None = None  # a seen draw index whose card this deal cannot give
    for card, indexes in plan.seen_by_value().items():
        copies = where.get(card, [])
        for index, slot in zip(indexes, rng.sample(range(plan.most_copies[card]), len(indexes))):
            if slot < len(copies):
                order[size - 1 - index] = copies[slot]
            else:
                excluded = index
    if excluded is not None:
        rng.shuffle(cards)
        place, wanted = size - 1 - excluded, plan.seen[excluded]
        other = next(position for position, card in enumerate(cards) if card != wanted)
        cards[place], cards[other] = cards[other], cards[place]
        return
    placed = set(position for position in order if position is not None)
    rest = [position for position in range(size) if position not in placed]
    rng.shuffle(rest)
    fill = iter(rest)
    cards[:] = [cards[position if position is not None else next(fill)] for position in order]


@dataclass
class _Traced:
    """A transcript's trace, kept while the transcript has not grown."""

    transcript: Transcript
    length: tuple[int, int, bool]
    plans: list[DeckPlan]
    first_deck_rest: list[int]  # the first deck's cards not seen, to shuffle into its unseen places


class QuitlokSampler(DealSampler):
    """Actions from the public events; deals as the module's docstring defines them."""

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
        traced = self._trace(transcript)
        first = traced.plans[0]
        rest = list(traced.first_deck_rest)
        rng.shuffle(rest)
        fill = iter(rest)
        deck = [first.seen[index] if index in first.seen else next(fill) for index in range(first.size)]
        return Proposal(deck=names(deck), seed=seed_for_first_banker(transcript.players, self._first_banker(transcript, rng)),
                        rng=ArrangedShuffles(traced.plans[1:], rng.getrandbits(64)))

    @staticmethod
    def _first_banker(transcript: Transcript, rng: random.Random) -> int:
        """The first mover funds the first bank; before any message, every seat is as likely."""
        for event in transcript.events():
            if event["type"] == "fund":
                return event["seat"]
        if transcript.decisions:
            return transcript.decisions[0]["view"]["banker"]
        return rng.randrange(transcript.players)

    def _trace(self, transcript: Transcript) -> _Traced:
        length = (len(transcript.decisions), len(transcript.answers), transcript.game_end is not None)
        if self._traced is None or self._traced.transcript is not transcript or self._traced.length != length:
            tracer = DrawTracer(transcript)
            tracer.follow(transcript)
            plans = tracer.plans()
            rest = Counter(FULL_DECK)
            rest.subtract(plans[0].seen.values())
            self._traced = _Traced(transcript, length, plans, sorted(rest.elements()))
        return self._traced


SAMPLER = QuitlokSampler()
