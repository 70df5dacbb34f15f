"""Casino for 2 to 4 players: capture, build and trail with one deck; 11 points a round.

The rules, actions, views and events are described in runner/games/casino.md. A capture or
build can take exponentially many sets of table cards, so such a move is made in steps: the
card and kind first, then one table item at a time, then "done" (casino.md § Actions on the
wire); every legal list stays small. Whether a selection can still be completed is decided
on multisets of card values packed into one int (4 bits per value 1..10), memoised.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

from cardarena import cards
from cardarena.cards import NAME, RANK, SUIT
from cardarena.games.base import (
    Action, Event, Game, GameSpec, GameState, Option, OptionError, Result, check_deck, shuffle,
)

HAND_SIZE = 4
TABLE_DEAL = 4
HIGHEST_NUMBER = 10  # A..10 are number cards; J, Q, K are face cards
SPADES = 3
BIG_CASINO = cards.card(10, 1)  # ten of diamonds
LITTLE_CASINO = cards.card(2, SPADES)

#: the high bit of every 4-bit value slot: subtracting a part from a pool whose slots carry this
#: bit leaves it set in every slot exactly when the part fits (slots stay below 8: four cards of a
#: value at most, plus one standing for a raised build)
_GUARD = sum(8 << (4 * slot) for slot in range(HIGHEST_NUMBER))


def _unit(value: int) -> int:
    """The multiset code holding one card of `value` (1..10)."""
    return 1 << (4 * (value - 1))


def _count(code: int, value: int) -> int:
    """How many cards of `value` the multiset `code` holds."""
    return (code >> (4 * (value - 1))) & 15


def _fits(part: int, pool: int) -> bool:
    """Whether multiset `part` is contained in multiset `pool`."""
    return ((pool | _GUARD) - part) & _GUARD == _GUARD


@lru_cache(maxsize=None)
def _total(code: int) -> int:
    """Sum of the values in the multiset `code`."""
    return sum(value * _count(code, value) for value in range(1, HIGHEST_NUMBER + 1))


@lru_cache(maxsize=None)
def _size(code: int) -> int:
    """Number of cards in the multiset `code`."""
    return sum(_count(code, value) for value in range(1, HIGHEST_NUMBER + 1))


def _groups_summing_to(total: int) -> tuple[int, ...]:
    """Codes of every multiset of values 1..10 (at most four of each) summing to `total`."""
    found: list[int] = []

    def extend(remaining: int, smallest: int, code: int) -> None:
        if remaining == 0:
            found.append(code)
            return
        for value in range(smallest, min(remaining, HIGHEST_NUMBER) + 1):
            if _count(code, value) < 4:
                extend(remaining - value, value, code + _unit(value))

    extend(total, 1, 0)
    return tuple(found)


#: CARD_UNIT[c]: the multiset code of the number card c alone (0 for a face card)
CARD_UNIT = tuple(_unit(RANK[c]) if RANK[c] <= HIGHEST_NUMBER else 0 for c in cards.DECK)

#: GROUPS[v]: every group of number cards worth v; GROUPS[0] is the empty group alone
GROUPS = tuple(_groups_summing_to(total) for total in range(HIGHEST_NUMBER + 1))


class Build:
    """A build on the table: cards captured together only by a card of `value`."""

    __slots__ = ("id", "value", "single", "owner", "cards")

    def __init__(self, build_id: int, value: int, single: bool, owner: int, build_cards: list[int]):
        self.id = build_id
        self.value = value
        self.single = single
        self.owner = owner
        self.cards = build_cards

    def copy(self) -> "Build":
        return Build(self.id, self.value, self.single, self.owner, list(self.cards))

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "value": self.value,
            "kind": "single" if self.single else "multiple",
            "owner": self.owner,
            "cards": [NAME[c] for c in sorted(self.cards)],
        }


SPEC = GameSpec(
    name="casino",
    title="Casino",
    min_players=2,
    max_players=4,
    partnerships="optional",
    zero_sum=False,
    rules_version="2",
    summary="Fishing game: capture table cards by value or sum, build for later, 11 points a round, first to the target.",
    options=(
        Option("partnerships", False, "with 4 players, seats 0+2 against 1+3 sharing one pile and score"),
        Option("target", 21, "points that end the game at the end of a round", choices=(11, 21, 50)),
        Option("sweeps", False, "a capture that clears the table scores 1 point"),
        Option("lenient_builds", False, "trail while building from table cards; owners may trail; "
               "table cards may help a hand card raise a single build"),
        Option("max_rounds", 12, "safety stop: the game ends after this many rounds whatever the scores",
               minimum=1),
    ),
)


class CasinoState(GameState):
    """One game of Casino in progress: the round being played and the totals so far."""

    def __init__(self, players: int, options: dict[str, Any], rng: random.Random):
        self.players = players
        self.options = options
        self.teams = SPEC.teams(players, options)
        self.side_of = self.teams if self.teams is not None else tuple(range(players))
        self.sides = len(set(self.side_of))
        self.adopt_rng(rng)
        self.dealer = rng.randrange(players)
        self.round = 0
        self.scores = [0] * self.sides
        self.history: list[dict[str, Any]] = []
        self.next_build_id = 1
        self.turn: int | None = None
        self._legal: list[Action] | None = None
        self.move: Move | None = None  # the move in progress, between its first decision and "done"
        # round state, laid by _start_round
        self.stock: list[int] = []
        self.hands: list[list[int]] = []
        self.loose: list[int] = []
        self.builds: list[Build] = []
        self.piles: list[list[int]] = []
        self.spades: list[int] = []
        self.sweeps: list[int] = []
        self.last_capturer: int | None = None

    # ----- dealing and rounds -----

    def _start_round(self, deck_top_first: list[int]) -> list[Event]:
        """Lay a fresh round from `deck_top_first` and deal its first hands and the table."""
        self.round += 1
        self.stock = deck_top_first[::-1]
        self.hands = [[] for _ in range(self.players)]
        self.loose = []
        self.builds = []
        self.piles = [[] for _ in range(self.sides)]
        self.spades = [0] * self.sides
        self.sweeps = [0] * self.sides
        self.last_capturer = None
        self._deal_hands()
        self.loose = sorted(self.stock.pop() for _ in range(TABLE_DEAL))
        self.turn = (self.dealer + 1) % self.players
        return [self._deal_event(table=[NAME[c] for c in self.loose])]

    def _deal_hands(self) -> None:
        """Four cards to each player, starting at the dealer's left, in blocks of four."""
        for offset in range(1, self.players + 1):
            seat = (self.dealer + offset) % self.players
            self.hands[seat] = sorted(self.stock.pop() for _ in range(HAND_SIZE))

    def _deal_event(self, table: list[str]) -> Event:
        return {
            "type": "deal",
            "round": self.round,
            "dealer": self.dealer,
            "table": table,
            "stock": len(self.stock),
            "last": not self.stock,
        }

    def _shuffled_deck(self) -> list[int]:
        deck = list(cards.DECK)
        shuffle(self._private_rng(), deck)
        return deck

    def _end_round(self) -> list[Event]:
        """Give the rest of the table to the last capturer, score the round, then go on or stop."""
        events: list[Event] = []
        remainder = self.loose + [c for build in self.builds for c in build.cards]
        if remainder:
            if self.last_capturer is not None:
                self._take(self.side_of[self.last_capturer], remainder)
            events.append({"type": "remainder", "seat": self.last_capturer, "cards": [NAME[c] for c in remainder]})
            self.loose = []
            self.builds = []
        breakdown = self.round_points()
        for side, points in enumerate(breakdown):
            self.scores[side] += points["points"]
        self.history.append({"round": self.round, "dealer": self.dealer, "points": breakdown})
        events.append({
            "type": "round_end",
            "round": self.round,
            "points": [breakdown[self.side_of[seat]] for seat in range(self.players)],
            "scores": self._seat_scores(),
        })
        if self._game_decided():
            self.turn = None
            events.append({"type": "game_end", "scores": self._seat_scores(), "rounds": self.round})
        else:
            self.dealer = (self.dealer + 1) % self.players
            events.extend(self._start_round(self._shuffled_deck()))
        return events

    def _game_decided(self) -> bool:
        """The target is reached by one leader alone, or the safety stop is reached."""
        if self.round >= self.options["max_rounds"]:
            return True
        best = max(self.scores)
        return best >= self.options["target"] and self.scores.count(best) == 1

    def round_points(self) -> list[dict[str, int]]:
        """This round's points per side from the capture piles, with their breakdown."""
        counts = [len(pile) for pile in self.piles]
        most_cards = max(counts)
        most_spades = max(self.spades)
        breakdown = []
        for side, pile in enumerate(self.piles):
            items = {
                "cards": 3 if counts[side] == most_cards and counts.count(most_cards) == 1 else 0,
                "spades": 1 if self.spades[side] == most_spades and self.spades.count(most_spades) == 1 else 0,
                "aces": sum(1 for c in pile if RANK[c] == 1),
                "big_casino": 2 if BIG_CASINO in pile else 0,
                "little_casino": 1 if LITTLE_CASINO in pile else 0,
                "sweeps": self.sweeps[side] if self.options["sweeps"] else 0,
            }
            items["points"] = sum(items.values())
            breakdown.append(items)
        return breakdown

    def _seat_scores(self) -> list[int]:
        return [self.scores[self.side_of[seat]] for seat in range(self.players)]

    def _take(self, side: int, taken: list[int]) -> None:
        self.piles[side].extend(taken)
        self.spades[side] += sum(1 for c in taken if SUIT[c] == SPADES)

    # ----- the interface -----

    def to_move(self) -> int | None:
        return self.turn

    def is_over(self) -> bool:
        return self.turn is None

    def legal_actions(self) -> list[Action]:
        """Every legal decision of the seat to move; computed once per position (see casino.md).

        At the start of a turn: a trail, or the start of a move (card and kind); while a move is
        in progress: its selection steps. The entries are shared with the memo: do not mutate them.
        """
        if self.turn is None:
            return []
        if self._legal is None:
            generator = MoveGenerator(self)
            self._legal = generator.first_decisions() if self.move is None else generator.selection_steps(self.move)
        return list(self._legal)

    def apply(self, action: Action) -> list[Event]:
        seat = self.turn
        assert seat is not None, "the game is over"
        self._legal = None
        kind = action["type"]
        if kind == "trail":
            card = cards.parse(action["card"])
            self.hands[seat].remove(card)
            return self._complete(seat, {"type": "trail", "card": action["card"]})
        if kind == "take":
            if "build" in action:
                self.move.builds.append(action["build"])
            else:  # a taken loose card leaves the table for the move (views show it there)
                taken = cards.parse(action["loose"])
                self.loose.remove(taken)
                self.move.loose.append(taken)
            return []
        if kind == "done":
            move, self.move = self.move, None
            return self._complete(seat, move.to_wire())
        card = cards.parse(action["card"])
        self.hands[seat].remove(card)  # in play from now on: the views show it in "move"
        self.move = Move(kind, card, action.get("value"), action.get("build"))
        return []

    def _complete(self, seat: int, action: Action) -> list[Event]:
        """Carry out a complete move (its card and loose cards already off the hand and table); pass the turn on."""
        kind = action["type"]
        card = cards.parse(action["card"])
        used = [cards.parse(name) for name in action.get("loose", [])]
        event: Event = {"seat": seat, **action}
        if kind == "capture":
            taken_ids = set(action["builds"])
            taken_builds = [b for b in self.builds if b.id in taken_ids]
            self.builds = [b for b in self.builds if b.id not in taken_ids]
            side = self.side_of[seat]
            self._take(side, [card] + used + [c for b in taken_builds for c in b.cards])
            self.last_capturer = seat
            swept = not self.loose and not self.builds
            if swept:
                self.sweeps[side] += 1
            event["sweep"] = swept
        elif kind == "trail":
            self._lay_loose(card)
        elif kind == "trail_build":
            self._lay_loose(card)
            event["build_id"] = self._new_build(action["value"], seat, used)
        elif kind == "build":
            event["build_id"] = self._new_build(action["value"], seat, [card] + used)
        else:  # "increase" or "add" an existing build
            build = next(b for b in self.builds if b.id == action["build"])
            build.cards.extend([card] + used)
            build.value = action.get("value", build.value)
            build.single = sum(RANK[c] for c in build.cards) == build.value
            build.owner = seat
            event["kind"] = "single" if build.single else "multiple"
        events = [event]
        self.turn = (seat + 1) % self.players
        if not self.hands[self.turn]:
            if self.stock:
                self._deal_hands()
                events.append(self._deal_event(table=[]))
            else:
                events.extend(self._end_round())
        return events

    def _lay_loose(self, card: int) -> None:
        self.loose.append(card)
        self.loose.sort()

    def _new_build(self, value: int, owner: int, build_cards: list[int]) -> int:
        build = Build(self.next_build_id, value, sum(RANK[c] for c in build_cards) == value, owner, build_cards)
        self.next_build_id += 1
        self.builds.append(build)
        return build.id

    def view(self, seat: int) -> dict[str, Any]:
        return {
            "seat": seat,
            "round": self.round,
            "dealer": self.dealer,
            "to_move": self.turn,
            "hand": [NAME[c] for c in self.hands[seat]],
            "table": {"loose": [NAME[c] for c in self.loose], "builds": [b.to_wire() for b in self.builds]},
            "players": [
                {
                    "hand_size": len(self.hands[other]),
                    "captured": len(self.piles[self.side_of[other]]),
                    "spades": self.spades[self.side_of[other]],
                    "sweeps": self.sweeps[self.side_of[other]],
                    "score": self.scores[self.side_of[other]],
                }
                for other in range(self.players)
            ],
            "teams": None if self.teams is None else list(self.teams),
            "stock": len(self.stock),
            "last": not self.stock,
            "last_capturer": self.last_capturer,
            "target": self.options["target"],
            "move": None if self.move is None else self.move.to_wire(),
        }

    def result(self) -> Result:
        return Result.from_scores(self._seat_scores(), self.teams)

    def reveal(self) -> dict[str, Any]:
        return {
            "scores": self._seat_scores(),
            "rounds": self.history,
            "hands": [[NAME[c] for c in hand] for hand in self.hands],
            "captured": [[NAME[c] for c in self.piles[self.side_of[seat]]] for seat in range(self.players)],
        }

    def hidden_cards(self, seat: int) -> list[str]:
        hidden = [NAME[c] for c in self.stock]
        for other, hand in enumerate(self.hands):
            if other != seat:
                hidden.extend(NAME[c] for c in hand)
        return hidden

    def clone(self) -> "CasinoState":
        copy = CasinoState.__new__(CasinoState)
        copy.__dict__.update(self.__dict__)
        self._clone_rng_into(copy)
        copy.scores = list(self.scores)
        copy.history = list(self.history)
        copy.stock = list(self.stock)
        copy.hands = [list(hand) for hand in self.hands]
        copy.loose = list(self.loose)
        copy.builds = [b.copy() for b in self.builds]
        copy.piles = [list(pile) for pile in self.piles]
        copy.spades = list(self.spades)
        copy.sweeps = list(self.sweeps)
        copy.move = None if self.move is None else self.move.copy()
        return copy


class Move:
    """A move being made in steps: the played card, its kind and the table items taken so far.

    `kind` is "capture", "build", "increase", "add" or "trail_build"; `value` is the announced
    value (build, increase, trail_build) and `build` the build played onto (increase, add).
    `loose` holds the loose cards taken in deck order, `builds` the build ids taken, ascending.
    """

    __slots__ = ("kind", "card", "value", "build", "loose", "builds")

    def __init__(self, kind: str, card: int, value: int | None, build: int | None):
        self.kind = kind
        self.card = card
        self.value = value
        self.build = build
        self.loose: list[int] = []
        self.builds: list[int] = []

    def copy(self) -> "Move":
        move = Move(self.kind, self.card, self.value, self.build)
        move.loose = list(self.loose)
        move.builds = list(self.builds)
        return move

    def to_wire(self) -> Action:
        """The complete action's form, with the items taken so far (casino.md § Actions on the wire)."""
        wire: Action = {"type": self.kind, "card": NAME[self.card]}
        if self.build is not None:
            wire["build"] = self.build
        if self.value is not None:
            wire["value"] = self.value
        wire["loose"] = [NAME[c] for c in self.loose]
        if self.kind == "capture":
            wire["builds"] = list(self.builds)
        return wire


def _common(first: int, second: int) -> int:
    """The multiset of values held by both `first` and `second` (slot-wise minimum).

    A slot of `first | _GUARD` less the same slot of `second` keeps its guard bit exactly where
    `first` holds at least as many (slots stay below 8), and there the minimum is `second`'s.
    """
    second_is_less = ((((first | _GUARD) - second) & _GUARD) >> 3) * 15
    return (second & second_is_less) | (first & ~second_is_less)


#: GROUPS_HOLDING[v][w]: the groups worth v that hold a card of value w, in the order of GROUPS[v]
GROUPS_HOLDING = tuple(
    tuple(tuple(group for group in GROUPS[total] if _count(group, value)) if value else ()
          for value in range(HIGHEST_NUMBER + 1))
    for total in range(HIGHEST_NUMBER + 1)
)


@lru_cache(maxsize=65536)
def _completable(required: int, available: int, value: int, extra: int) -> bool:
    """Whether some cards of `available`, at least `extra` of them, join all of `required` into groups of `value`.

    The selection-step feasibility check (casino.md § Actions on the wire): `required` is what
    the move already holds (taken loose cards, plus the played card or a build's raised value
    where those must share a group), `available` the loose cards it may still take. Cards of one
    value are interchangeable, so a group covers `required` before borrowing from `available`;
    the group of the lowest required value is chosen first, which makes the search canonical.
    """
    guarded = available | _GUARD  # `_fits`, inline: this is the hottest loop of the engine
    if required == 0:
        if extra <= 0:
            return True
        for group in GROUPS[value]:
            if (guarded - group) & _GUARD == _GUARD and _completable(
                    0, available - group, value, extra - _size(group)):
                return True
        return False
    lowest = ((required & -required).bit_length() + 3) // 4  # the lowest value held: its 4-bit slot, from 1
    for group in GROUPS_HOLDING[value][lowest]:
        # covered = _common(group, required), inline
        required_is_less = ((((group | _GUARD) - required) & _GUARD) >> 3) * 15
        covered = (required & required_is_less) | (group & ~required_is_less)
        borrowed = group - covered
        if (guarded - borrowed) & _GUARD == _GUARD and _completable(
                required - covered, available - borrowed, value, extra - _size(borrowed)):
            return True
    return False


@lru_cache(maxsize=16384)
def _sum_reachable(available: int, amount: int) -> bool:
    """Whether some cards of the multiset `available` sum exactly to `amount` (none for 0)."""
    return amount == 0 or (0 < amount <= HIGHEST_NUMBER and any(_fits(group, available) for group in GROUPS[amount]))


class MoveGenerator:
    """The legal list of one position, in canonical order: a turn's first decision or a selection step.

    `held[v]` counts the hand cards of value v left after the card being considered is played
    (during a move's steps its card has left the hand already), which is what the build
    obligation checks. A move's table items are taken builds first (by
    id), then loose cards (deck order), each after the last one taken; an item is offered only
    if the selection can still be completed, and "done" only when it is complete.
    """

    def __init__(self, state: CasinoState):
        self.seat = state.turn
        self.hand = state.hands[self.seat]
        self.builds = state.builds
        self.owned = [b for b in state.builds if b.owner == self.seat]
        self.lenient = state.options["lenient_builds"]
        self.held = [0] * 14
        for c in self.hand:
            self.held[RANK[c]] += 1
        self.loose_numbers = [c for c in state.loose if RANK[c] <= HIGHEST_NUMBER]
        self.loose_faces = [c for c in state.loose if RANK[c] > HIGHEST_NUMBER]
        self.pool = sum(map(CARD_UNIT.__getitem__, self.loose_numbers))
        self.moves_out: list[Action] = []

    # ----- the first decision of a turn -----

    def first_decisions(self) -> list[Action]:
        """Per hand card: capture, builds, increases, additions, trail builds, then the trail."""
        for card in self.hand:
            rank = RANK[card]
            self.held[rank] -= 1
            name = NAME[card]
            if rank > HIGHEST_NUMBER:
                if self._keeps_owned() and any(RANK[face] == rank for face in self.loose_faces):
                    self.moves_out.append({"type": "capture", "card": name})
            else:
                if self._number_capture_exists(rank):
                    self.moves_out.append({"type": "capture", "card": name})
                self._creations(rank, name)
                self._increases(rank, name)
                self._additions(rank, name)
            if self.lenient:
                self._trail_builds(name)
            self._trail(name)
            self.held[rank] += 1
        return self.moves_out

    def _keeps_owned(self, except_build: Build | None = None) -> bool:
        """Whether every build the mover owns (bar `except_build`) still has its card in hand."""
        return all(self.held[b.value] for b in self.owned if b is not except_build)

    def _bound_builds(self, value: int) -> list[int]:
        """Ids of the mover's builds of `value` that a capture with a card of `value` must take.

        The build obligation: with no other card of `value` left in hand, the owner must capture them.
        """
        return [] if self.held[value] else [b.id for b in self.owned if b.value == value]

    def _number_capture_exists(self, value: int) -> bool:
        if not all(self.held[b.value] for b in self.owned if b.value != value):
            return False
        return any(b.value == value for b in self.builds) or _completable(0, self.pool, value, 1)

    def _creations(self, value: int, name: str) -> None:
        if not self._keeps_owned():
            return
        unit = CARD_UNIT[4 * (value - 1)]
        for target in range(1, HIGHEST_NUMBER + 1):
            if self.held[target] and _completable(unit, self.pool, target, 1):
                self.moves_out.append({"type": "build", "card": name, "value": target})

    def _increases(self, value: int, name: str) -> None:
        for build in self.builds:
            base = build.value + value
            if not build.single or base > HIGHEST_NUMBER or not self._keeps_owned(build):
                continue
            for target in range(base, HIGHEST_NUMBER + 1 if self.lenient else base + 1):
                if self.held[target] and _completable(_unit(base), self.pool, target, 0):
                    self.moves_out.append({"type": "increase", "card": name, "build": build.id, "value": target})

    def _additions(self, value: int, name: str) -> None:
        for build in self.builds:
            if build.value < value or not self.held[build.value] or not self._keeps_owned(build):
                continue
            if _sum_reachable(self.pool, build.value - value):
                self.moves_out.append({"type": "add", "card": name, "build": build.id})

    def _trail_builds(self, name: str) -> None:
        if not self._keeps_owned():
            return
        for target in range(1, HIGHEST_NUMBER + 1):
            if self.held[target] and _completable(0, self.pool, target, 2):
                self.moves_out.append({"type": "trail_build", "card": name, "value": target})

    def _trail(self, name: str) -> None:
        if not self.owned or (self.lenient and self._keeps_owned()):
            self.moves_out.append({"type": "trail", "card": name})

    # ----- the selection steps of a move in progress -----

    def selection_steps(self, move: Move) -> list[Action]:
        """Build takes, loose takes, then "done": each offered only where the move can still be completed."""
        if move.kind == "capture" and RANK[move.card] > HIGHEST_NUMBER:  # takes one face card of its rank
            if move.loose:
                return [{"type": "done"}]
            return [{"type": "take", "loose": NAME[face]} for face in self.loose_faces
                    if RANK[face] == RANK[move.card]]
        taken = sum(map(CARD_UNIT.__getitem__, move.loose))
        after = move.loose[-1] if move.loose else -1
        steps: list[Action] = []
        if move.kind == "capture":
            value = RANK[move.card]
            bound = [b for b in self._bound_builds(value) if b not in move.builds]
            if not move.loose:
                last_build = move.builds[-1] if move.builds else 0
                steps += [{"type": "take", "build": b.id} for b in self.builds
                          if b.value == value and b.id > last_build and not any(x < b.id for x in bound)]
            if not bound:
                steps += self._loose_takes(after, taken, lambda chosen, rest: _completable(chosen, rest, value, 0))
            complete = not bound and bool(move.loose or move.builds) and _completable(taken, 0, value, 0)
        elif move.kind == "add":
            build = next(b for b in self.builds if b.id == move.build)
            missing = build.value - RANK[move.card]
            steps += self._loose_takes(
                after, taken, lambda chosen, rest: _sum_reachable(rest, missing - _total(chosen)))
            complete = _total(taken) == missing
        else:
            if move.kind == "build":  # the played card is in one of the groups
                fixed, minimum = CARD_UNIT[move.card], 1
            elif move.kind == "increase":  # the build's raised value is in one of the groups
                build = next(b for b in self.builds if b.id == move.build)
                fixed, minimum = _unit(build.value + RANK[move.card]), 0
            else:  # "trail_build": two or more loose cards
                fixed, minimum = 0, 2
            value = move.value
            steps += self._loose_takes(after, taken, lambda chosen, rest: _completable(
                fixed + chosen, rest, value, minimum - _size(chosen)))
            complete = _size(taken) >= minimum and _completable(fixed + taken, 0, value, 0)
        if complete:
            steps.append({"type": "done"})
        return steps

    def _loose_takes(self, after: int, taken: int, completable: Callable[[int, int], bool]) -> list[Action]:
        """Takes of the loose number cards after card `after` that `completable(chosen, rest)` allows."""
        later = [c for c in self.loose_numbers if c > after]
        rest = sum(map(CARD_UNIT.__getitem__, later))
        steps = []
        for c in later:
            unit = CARD_UNIT[c]
            rest -= unit
            if completable(taken + unit, rest):
                steps.append({"type": "take", "loose": NAME[c]})
        return steps


class Casino(Game):
    """The Casino rules and its seeded deals."""

    spec = SPEC

    def new_state(
        self,
        players: int,
        options: Mapping[str, Any] | None = None,
        seed: int = 0,
        deck: Sequence[str] | None = None,
    ) -> CasinoState:
        resolved = self.spec.resolve_options(options)
        self.spec.check_players(players)
        if resolved["partnerships"] and players != 4:
            raise OptionError(f"option 'partnerships' needs 4 players, not {players}")
        state = CasinoState(players, resolved, random.Random(seed))
        first_deck = self._parse_deck(deck) if deck is not None else state._shuffled_deck()
        state._start_round(first_deck)  # the opening deal is in the views; no one is told events yet
        return state

    def deck(self, players: int, options: Mapping[str, Any] | None = None) -> list[str]:
        return list(NAME)

    @staticmethod
    def _parse_deck(deck: Sequence[str]) -> list[int]:
        """The fixed deal order as cards; it must be a list (or tuple) of the 52 cards, each once."""
        return [cards.parse(name) for name in check_deck(deck, NAME, "casino")]


GAME = Casino()
