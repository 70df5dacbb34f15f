"""Casino's deal sampler: the actions a seat saw played, and deals that fit what it saw.

What a seat knows, by the rules (runner/games/casino.md):
- A round's deck is dealt in blocks of four, to each player from the dealer's left, then (first
  deal of the round only) to the table (casino.md § Deal, § Engine choices). Every hand card is played face
  up before the next deal (casino.md § Events on the wire), so a finished deal, and a finished round, is
  known whole: which cards each block held, only not their order inside the block. What is hidden
  is the current deal's unplayed cards of the other hands, and the stock.
- The build obligation (casino.md § Build, § Trail): after each of their moves, a player holds a card of
  the value of every build they own. For another player's move in the current deal, that card is
  one they played later in this deal, or one still in their hidden hand: the proposal puts one
  there (`counts_table`). Every other rule is left to `replay`'s check, which rejects nothing
  in practice (see the section "Sampling hidden cards" of casino.md).
- The engine draws the first dealer from its seed and shuffles each later round from its
  generator (casino.md § Engine choices): a proposal names a seed that draws the right dealer and a
  generator whose shuffles lay out the later rounds' decks (`Proposal.seed`, `Proposal.rng`).
- Every proposal deals the finished rounds alike (up to the order inside blocks, which no state
  shows), so the replay resumes from the start of the last round seen (`Proposal.resume`).

Cards are the engine's ints (cardarena.cards) inside this module, wire strings on the way out.
"""

from __future__ import annotations

import random
import weakref
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from itertools import count, product
from math import factorial
from typing import Any

from cardarena.cards import DECK, NAME, RANK, parse
from cardarena.games.base import Action, Event
from cardarena.games.casino import GAME, HAND_SIZE, HIGHEST_NUMBER, TABLE_DEAL
from cardarena.search.knowledge import Checkpoint, DealSampler, Proposal, SamplingError, Transcript, replay_until

#: the event types of complete moves (casino.md § Events on the wire)
MOVE_KINDS = frozenset({"trail", "capture", "build", "increase", "add", "trail_build"})
#: a block filled from the stock, in `Knowledge.blocks`
STOCK = -1


def move_actions(event: Event) -> list[Action]:
    """The decisions that made the complete move `event`: its start, its takes in the canonical
    order (builds by id, then loose cards in deck order, as the event lists them), then done."""
    if event["type"] == "trail":
        return [{"type": "trail", "card": event["card"]}]
    start = {key: event[key] for key in ("type", "card", "build", "value") if key in event}
    takes = [{"type": "take", "build": build} for build in event.get("builds", ())]
    takes += [{"type": "take", "loose": card} for card in event["loose"]]
    return [start, *takes, {"type": "done"}]


@dataclass
class Round:
    """One round as the seat saw it: who dealt, the table's block, and each deal's plays."""

    dealer: int
    table: list[int]
    deals: list[dict[int, list[int]]]  # per deal, the cards each seat has played, in order
    #: after each move: (mover, deal, cards the mover had played in that deal, values of the builds it owns)
    owned_after: list[tuple[int, int, int, frozenset[int]]]


@dataclass
class Knowledge:
    """What `propose` needs, read once per transcript: known blocks, hidden cards, constraints."""

    dealer: int | None  # the first round's dealer; None before the seat's first decision
    finished: list[list[list[int]]]  # the finished rounds' blocks, in deck order
    blocks: list[tuple[list[int], int | None]]  # the current round's: known cards, and what fills the
    # rest: the hidden hand of that seat, STOCK (a block of four from the stock) or None (known whole)
    hidden: list[int]  # the cards the seat has not seen, in the current round
    hands: dict[int, int]  # hidden cards per other seat
    required: dict[int, frozenset[int]]  # values a seat's hidden hand holds a card of (build obligation)


@dataclass
class Reading:
    """A transcript read once: the actions played and the knowledge; `key` says how much was read.

    `last_round_start` is the index of the action that ended the round before the last one seen
    (None while the first round is played), `checkpoint` the replay stopped just before it, shared
    by every proposal (see `CasinoSampler.propose`).
    """

    key: tuple[int, int, bool]
    actions: list[tuple[int, Action]]
    last_round_start: int | None
    knowledge: Knowledge
    checkpoint: Checkpoint | None = None


class LaterDecks(random.Random):
    """A generator whose shuffles lay out the proposed decks of the rounds after the first, in
    order, from the deck of round `first` + 2 (`decks` holds them all: a replay of the whole deal
    starts at 0)."""

    def __init__(self, decks: list[list[int]], first: int = 0):
        super().__init__(0)
        self.decks = decks
        self.next = first

    def shuffle(self, x: list[int]) -> None:  # type: ignore[override]
        if self.next >= len(self.decks) or len(x) != len(DECK):
            raise SamplingError("the Casino engine shuffled something other than a new round's deck")
        x[:] = self.decks[self.next]
        self.next += 1


@lru_cache(maxsize=None)
def seed_for_dealer(players: int, dealer: int) -> int:
    """The smallest seed from which the engine draws `dealer` as the first dealer."""
    return next(seed for seed in count()
                if GAME.new_state(players, seed=seed, deck=NAME).view(0)["dealer"] == dealer)


def value_of(card: int) -> int:
    """A card's value as a build counts it: its rank for A..10, 0 for a face card."""
    return RANK[card] if RANK[card] <= HIGHEST_NUMBER else 0


class CasinoSampler(DealSampler):
    """Casino's `DealSampler` (see the module's docstring)."""

    def __init__(self) -> None:
        self._readings: dict[int, tuple[weakref.ref, Reading]] = {}

    def actions(self, transcript: Transcript) -> list[tuple[int, Action]]:
        return list(self._reading(transcript).actions)

    def propose(self, transcript: Transcript, rng: random.Random) -> Proposal:
        known = self._reading(transcript).knowledge
        players = transcript.players
        hands, stock = deal_hidden(known, rng)
        decks = [[card for block in blocks for card in shuffled(block, rng)] for blocks in known.finished]
        current: list[int] = []
        for cards, filler in known.blocks:
            if filler == STOCK:
                block, stock = stock[:HAND_SIZE], stock[HAND_SIZE:]
            else:
                block = cards + hands[filler] if filler is not None else list(cards)
            current += shuffled(block, rng)
        if known.blocks:
            decks.append(current)
        dealer = rng.randrange(players) if known.dealer is None else known.dealer
        proposal = Proposal(deck=[NAME[card] for card in decks[0]], seed=seed_for_dealer(players, dealer),
                            rng=LaterDecks(decks[1:]))
        return self._resumed(transcript, proposal)

    def _resumed(self, transcript: Transcript, proposal: Proposal) -> Proposal:
        """`proposal`, replayed from the start of the last round seen when there was one before.

        Every proposal holds the same finished rounds up to the order of cards inside a block,
        which the engine's sorted hands and table do not see: they all reach the same state just
        before the action that starts the last round. That checkpoint is replayed once, from the
        first proposal, which also checks the finished rounds against the transcript.
        """
        reading = self._reading(transcript)
        if reading.last_round_start is None:
            return proposal
        if reading.checkpoint is None:
            reading.checkpoint = replay_until(GAME, transcript, proposal, reading.actions, reading.last_round_start)
            if reading.checkpoint is None:
                raise SamplingError(f"seat {transcript.seat}'s Casino transcript contradicts itself: "
                                    "its finished rounds cannot be replayed")
        later = proposal.rng.decks
        return Proposal(deck=proposal.deck, seed=proposal.seed, rng=LaterDecks(later, len(later) - 1),
                        resume=reading.checkpoint)

    def _reading(self, transcript: Transcript) -> Reading:
        """The transcript read, from the cache while it has not grown (a bot samples many times per decision)."""
        key = transcript.progress
        cached = self._readings.get(id(transcript))
        if cached is not None and cached[0]() is transcript and cached[1].key == key:
            return cached[1]
        reading = Reading(key, *played_actions(transcript), read_knowledge(transcript))
        readings = self._readings
        self._readings[id(transcript)] = (weakref.ref(transcript, lambda _, i=id(transcript): readings.pop(i, None)),
                                          reading)
        return reading


def shuffled(block: list[int], rng: random.Random) -> list[int]:
    """`block` in a uniformly random order (a new list)."""
    block = list(block)
    rng.shuffle(block)
    return block


def played_actions(transcript: Transcript) -> tuple[list[tuple[int, Action]], int | None]:
    """Every action applied so far (the others' moves from the events, the seat's own answers),
    and the index of the one that ended the round before the last one seen (None in round 1)."""
    seat = transcript.seat
    actions: list[tuple[int, Action]] = []
    last_round_start = None

    def others(events: list[Event]) -> None:
        nonlocal last_round_start
        for event in events:
            if event["type"] in MOVE_KINDS and event["seat"] != seat:
                actions.extend((event["seat"], action) for action in move_actions(event))
            elif event["type"] == "deal" and event["table"]:  # a round's first deal: the action before ended a round
                last_round_start = len(actions) - 1

    for index, message in enumerate(transcript.decisions):
        others(message["events"])
        if index < len(transcript.answers):
            actions.append((seat, transcript.answers[index]))
    if transcript.game_end is not None:
        others(transcript.game_end["events"])
    return actions, last_round_start


def read_knowledge(transcript: Transcript) -> Knowledge:
    """What the seat's messages say about the deal (see the module's docstring)."""
    if not transcript.decisions:
        return Knowledge(None, [], [([], STOCK)] * (len(DECK) // HAND_SIZE), list(DECK), {}, {})
    seat, players = transcript.seat, transcript.players
    first = transcript.decisions[0]
    rounds = [Round(first["view"]["dealer"], opening_table(first), [{}], [])]
    builds: dict[int, tuple[int, int]] = {}  # build id: (value, owner)
    for event in transcript.events():
        kind, current = event["type"], rounds[-1]
        if kind in MOVE_KINDS:
            mover = event["seat"]
            played = current.deals[-1].setdefault(mover, [])
            played.append(parse(event["card"]))
            update_builds(builds, event)
            owned = frozenset(value for value, owner in builds.values() if owner == mover)
            current.owned_after.append((mover, len(current.deals) - 1, len(played), owned))
        elif kind == "deal" and event["round"] == len(rounds):
            current.deals.append({})
        elif kind == "deal":
            rounds.append(Round(event["dealer"], [parse(card) for card in event["table"]], [{}], []))
            builds = {}
    over = transcript.game_end is not None
    finished = [round_blocks(one, players, None) for one in (rounds if over else rounds[:-1])]
    if over:
        return Knowledge(rounds[0].dealer, finished, [], [], {}, {})
    view = transcript.decisions[-1]["view"]
    current = rounds[-1]
    hands = {other: view["players"][other]["hand_size"] for other in range(players) if other != seat}
    own = list(current.deals[-1].get(seat, []))
    if view["move"] is not None:
        own.append(parse(view["move"]["card"]))
    own += [parse(card) for card in view["hand"]]
    blocks = round_blocks(current, players, (seat, own))
    known = {card for cards, _ in blocks for card in cards}
    hidden = [card for card in DECK if card not in known]
    if len(hidden) != sum(hands.values()) + view["stock"] or len(known) != sum(len(cards) for cards, _ in blocks):
        raise SamplingError(f"seat {seat}'s Casino transcript contradicts itself: its views and events do not "
                            f"account for the {len(DECK)} cards")
    return Knowledge(rounds[0].dealer, finished, blocks, hidden, hands, obligations(current, seat))


def opening_table(first: dict[str, Any]) -> list[int]:
    """The game's first table, which no event names: the cards on the table at the seat's first
    decision, or taken from it before, that no one played."""
    table = first["view"]["table"]
    seen = set(table["loose"]) | {card for build in table["builds"] for card in build["cards"]}
    played = set()
    for event in first["events"]:
        if event["type"] in MOVE_KINDS:
            played.add(event["card"])
            seen.update(event.get("loose", ()))
    return sorted(parse(card) for card in seen - played)


def update_builds(builds: dict[int, tuple[int, int]], event: Event) -> None:
    """Apply a move's effect on the builds' values and owners (casino.md § Build, § Capture)."""
    kind, mover = event["type"], event["seat"]
    if kind in ("build", "trail_build"):
        builds[event["build_id"]] = (event["value"], mover)
    elif kind in ("increase", "add"):
        builds[event["build"]] = (event.get("value", builds[event["build"]][0]), mover)
    elif kind == "capture":
        for build in event["builds"]:
            del builds[build]


def round_blocks(one: Round, players: int, ongoing: tuple[int, list[int]] | None) -> list[tuple[list[int], int | None]]:
    """The round's deck in blocks of four, top first: per deal a block per seat from the dealer's
    left, then (first deal) the table. `ongoing` is (seat, its current deal's cards) for the round
    in play: its current deal's other hands are completed by hidden cards, its later deals by the
    stock. A finished round's blocks are returned as plain card lists."""
    order = [(one.dealer + offset) % players for offset in range(1, players + 1)]
    deals = (len(DECK) - TABLE_DEAL) // (HAND_SIZE * players)
    blocks: list[tuple[list[int], int | None]] = []
    for deal in range(deals):
        for seat in order:
            if ongoing is None or deal < len(one.deals) - 1:
                blocks.append((one.deals[deal].get(seat, []), None))
            elif deal >= len(one.deals):
                blocks.append(([], STOCK))
            elif seat == ongoing[0]:
                blocks.append((ongoing[1], None))
            else:
                blocks.append((one.deals[deal].get(seat, []), seat))
        if deal == 0:
            blocks.append((one.table, None))
    if ongoing is None:
        if any(len(cards) != HAND_SIZE for cards, _ in blocks):
            raise SamplingError("a finished Casino round in the transcript does not account for every card")
        return [cards for cards, _ in blocks]  # type: ignore[misc]
    return blocks


def obligations(current: Round, seat: int) -> dict[int, frozenset[int]]:
    """Per other seat, the values its hidden hand must hold a card of: the value of a build it
    owned after one of its moves in this deal, unless it played a card of that value since."""
    deal = len(current.deals) - 1
    required: dict[int, set[int]] = {}
    for mover, when, played, owned in current.owned_after:
        if when != deal or mover == seat or not owned:
            continue
        later = {value_of(card) for card in current.deals[deal][mover][played:]}
        required.setdefault(mover, set()).update(owned - later)
    return {mover: frozenset(values) for mover, values in required.items() if values}


def deal_hidden(known: Knowledge, rng: random.Random) -> tuple[dict[int, list[int]], list[int]]:
    """The hidden cards dealt uniformly among the deals that meet the build obligations: a hidden
    hand per other seat, and the stock (top first).

    With obligations, a count table is drawn first: how many cards of each required value (and of
    the rest) each bound seat gets, with probability proportional to the number of deals having
    those counts; then the cards inside each value class are dealt uniformly. Every deal meeting
    the obligations has one count table, and all deals with the same table are equally many
    (`counts_table`), so each is drawn with the same probability.
    """
    bound = sorted(known.required)
    values = sorted(set().union(*known.required.values()))
    classes: list[list[int]] = [[] for _ in range(len(values) + 1)]  # per required value, then the rest
    for card in known.hidden:
        value = value_of(card)
        classes[values.index(value) if value in values else -1].append(card)
    hands: dict[int, list[int]] = {}
    if bound:
        demands = tuple((known.hands[seat], tuple(values.index(v) for v in sorted(known.required[seat])))
                        for seat in bound)
        cumulative, tables = counts_table(demands, tuple(len(cards) for cards in classes))
        if not tables:
            raise SamplingError("no Casino deal meets the build obligations of the transcript")
        table = tables[bisect_right(cumulative, rng.randrange(cumulative[-1]))]
        for cards in classes:
            rng.shuffle(cards)
        for seat, row in zip(bound, table):
            hands[seat] = [classes[index].pop() for index, taken in enumerate(row) for _ in range(taken)]
    rest = [card for cards in classes for card in cards]
    rng.shuffle(rest)
    for seat, size in known.hands.items():
        if seat not in hands:
            hands[seat], rest = rest[:size], rest[size:]
    return hands, rest


@lru_cache(maxsize=1024)
def counts_table(demands: tuple[tuple[int, tuple[int, ...]], ...],
                 sizes: tuple[int, ...]) -> tuple[list[int], list[tuple[tuple[int, ...], ...]]]:
    """Every count table meeting `demands` (per bound seat: its hand size and the classes it needs
    a card of), with the cumulative number of deals having each.

    `sizes[c]` is the number of hidden cards in class c. A table gives k[s][c] cards of class c to
    seat s; the deals having it number prod_c sizes[c]! / (prod_s k[s][c]! * (sizes[c] - sum_s k[s][c])!)
    (which cards of each class go to each bound seat) times the ways to lay the remaining cards in
    the other hands and the stock, which do not depend on the table: their number is fixed.
    """
    rows_per_seat = [[row for row in compositions(hand, sizes) if all(row[c] for c in needed)]
                     for hand, needed in demands]
    cumulative: list[int] = []
    tables: list[tuple[tuple[int, ...], ...]] = []
    total = 0
    for table in product(*rows_per_seat):
        columns = [sum(column) for column in zip(*table)]
        if any(used > size for used, size in zip(columns, sizes)):
            continue
        ways = 1
        for c, size in enumerate(sizes):
            ways *= factorial(size) // factorial(size - columns[c])
            for row in table:
                ways //= factorial(row[c])
        total += ways
        cumulative.append(total)
        tables.append(table)
    return cumulative, tables


def compositions(total: int, caps: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every way to write `total` as a sum of len(caps) counts, count c at most caps[c]."""
    if not caps:
        return [()] if total == 0 else []
    return [(first, *rest) for first in range(min(total, caps[0]) + 1)
            for rest in compositions(total - first, caps[1:])]


SAMPLER = CasinoSampler()
