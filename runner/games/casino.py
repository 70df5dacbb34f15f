"""Casino for 2 to 4 players: capture, build and trail with one deck; 11 points a round.

The rules, actions, views and events are described in runner/games/casino.md. Move
enumeration works on multisets of card values packed into one int (4 bits per value 1..10),
so "which loose cards can split into groups of value v" is computed once per table shape and
cached; concrete card choices are expanded from those multisets only at the end.
"""

from __future__ import annotations

import random
from collections import Counter
from functools import lru_cache
from itertools import chain, combinations, product
from typing import Any, Mapping, Sequence

from runner import cards
from runner.cards import NAME, RANK, SUIT
from runner.games.base import Action, Event, Game, GameSpec, GameState, Option, OptionError, Result

HAND_SIZE = 4
TABLE_DEAL = 4
HIGHEST_NUMBER = 10  # A..10 are number cards; J, Q, K are face cards
SPADES = 3
BIG_CASINO = cards.card(10, 1)  # ten of diamonds
LITTLE_CASINO = cards.card(2, SPADES)

#: every key of an action, in the order the legal entries give them (casino.md § Actions on the wire)
ACTION_KEYS = ("type", "card", "build", "value", "loose", "builds")

#: the high bit of every 4-bit value slot: subtracting a part from a pool whose slots carry this
#: bit leaves it set in every slot exactly when the part fits (slots never exceed 4)
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


#: GROUPS[v]: every group of number cards worth v; GROUPS[0] is the empty group alone
GROUPS = tuple(_groups_summing_to(total) for total in range(HIGHEST_NUMBER + 1))


@lru_cache(maxsize=16384)
def _partitionable(pool: int, value: int) -> tuple[int, ...]:
    """Every sub-multiset of `pool` that splits into disjoint groups each worth `value`, empty included."""
    groups = [group for group in GROUPS[value] if _fits(group, pool)]
    seen = {0}
    frontier = [0]
    while frontier:
        used = frontier.pop()
        free = pool - used
        for group in groups:
            if _fits(group, free):
                larger = used + group
                if larger not in seen:
                    seen.add(larger)
                    frontier.append(larger)
    return tuple(sorted(seen))


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
    rules_version="1",
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
        self.rng = rng
        self.dealer = rng.randrange(players)
        self.round = 0
        self.scores = [0] * self.sides
        self.history: list[dict[str, Any]] = []
        self.next_build_id = 1
        self.turn: int | None = None
        self._legal: list[Action] | None = None
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
        self.rng.shuffle(deck)
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
        """Every legal move of the seat to move; computed once per position (see casino.md).

        The entries (and their lists) are shared with the memo: callers must not mutate them.
        """
        if self.turn is None:
            return []
        if self._legal is None:
            self._legal = MoveGenerator(self).moves()
        return list(self._legal)

    def apply(self, action: Action) -> list[Event]:
        seat = self.turn
        assert seat is not None, "the game is over"
        self._legal = None
        kind = action["type"]
        card = cards.parse(action["card"])
        self.hands[seat].remove(card)
        used = [cards.parse(name) for name in action.get("loose", [])]
        for c in used:
            self.loose.remove(c)
        # the engine's own form: the answer may order its keys otherwise, and its lists are not ours
        event: Event = {"seat": seat}
        for key in ACTION_KEYS:
            if key in action:
                value = action[key]
                event[key] = list(value) if isinstance(value, list) else value
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
        copy.rng = random.Random()
        copy.rng.setstate(self.rng.getstate())
        copy.scores = list(self.scores)
        copy.history = list(self.history)
        copy.stock = list(self.stock)
        copy.hands = [list(hand) for hand in self.hands]
        copy.loose = list(self.loose)
        copy.builds = [b.copy() for b in self.builds]
        copy.piles = [list(pile) for pile in self.piles]
        copy.spades = list(self.spades)
        copy.sweeps = list(self.sweeps)
        return copy


class MoveGenerator:
    """Enumerates the legal moves of the seat to move in one position, in canonical order.

    `held[v]` counts the hand cards of value v left after the card being considered is played,
    which is what the build obligation checks.
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
        self.loose_names: list[list[str]] = [[] for _ in range(HIGHEST_NUMBER + 1)]
        self.loose_faces: list[int] = []
        self.pool = 0
        self.choices_memo: dict[int, list[list[str]]] = {}
        for c in state.loose:
            if RANK[c] <= HIGHEST_NUMBER:
                self.loose_names[RANK[c]].append(NAME[c])
                self.pool += _unit(RANK[c])
            else:
                self.loose_faces.append(c)
        self.moves_out: list[Action] = []

    def moves(self) -> list[Action]:
        for card in self.hand:
            rank = RANK[card]
            self.held[rank] -= 1
            name = NAME[card]
            if rank > HIGHEST_NUMBER:
                self._face_captures(card, name)
            else:
                self._number_captures(rank, name)
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

    def _choices(self, code: int) -> list[list[str]]:
        """Every concrete set of loose cards (wire names, deck order) with the values of multiset `code`."""
        if code not in self.choices_memo:
            per_value = [
                combinations(self.loose_names[value], _count(code, value))
                for value in range(1, HIGHEST_NUMBER + 1)
                if _count(code, value)
            ]
            self.choices_memo[code] = [list(chain.from_iterable(parts)) for parts in product(*per_value)]
        return self.choices_memo[code]

    def _face_captures(self, card: int, name: str) -> None:
        if not self._keeps_owned():
            return
        for face in self.loose_faces:
            if RANK[face] == RANK[card]:
                self.moves_out.append({"type": "capture", "card": name, "loose": [NAME[face]], "builds": []})

    def _number_captures(self, value: int, name: str) -> None:
        if not all(self.held[b.value] for b in self.owned if b.value != value):
            return
        owned_here = {b.id for b in self.owned if b.value == value}
        keeps_value = self.held[value] > 0
        loose_sets = [chosen for code in _partitionable(self.pool, value) for chosen in self._choices(code)]
        candidates = [b.id for b in self.builds if b.value == value]
        for size in range(len(candidates) + 1):
            for taken in combinations(candidates, size):
                if not keeps_value and not owned_here.issubset(taken):
                    continue
                for loose in loose_sets[0 if taken else 1:]:  # loose_sets[0] is the empty set
                    self.moves_out.append(
                        {"type": "capture", "card": name, "loose": loose, "builds": list(taken)})

    def _creations(self, value: int, name: str) -> None:
        if not self._keeps_owned():
            return
        with_card = self.pool + _unit(value)
        for target in range(1, HIGHEST_NUMBER + 1):
            if not self.held[target]:
                continue
            for code in _partitionable(with_card, target):
                if _count(code, value) and code != _unit(value):
                    for loose in self._choices(code - _unit(value)):
                        self.moves_out.append({"type": "build", "card": name, "value": target, "loose": loose})

    def _increases(self, value: int, name: str) -> None:
        for build in self.builds:
            base = build.value + value
            if not build.single or base > HIGHEST_NUMBER or not self._keeps_owned(build):
                continue
            for target in range(base, HIGHEST_NUMBER + 1 if self.lenient else base + 1):
                if not self.held[target]:
                    continue
                codes = sorted({
                    raise_by + groups
                    for raise_by in GROUPS[target - base] if _fits(raise_by, self.pool)
                    for groups in _partitionable(self.pool - raise_by, target)
                })
                for code in codes:
                    for loose in self._choices(code):
                        self.moves_out.append(
                            {"type": "increase", "card": name, "build": build.id, "value": target, "loose": loose})

    def _additions(self, value: int, name: str) -> None:
        for build in self.builds:
            if build.value < value or not self.held[build.value] or not self._keeps_owned(build):
                continue
            for code in GROUPS[build.value - value]:
                if _fits(code, self.pool):
                    for loose in self._choices(code):
                        self.moves_out.append({"type": "add", "card": name, "build": build.id, "loose": loose})

    def _trail_builds(self, name: str) -> None:
        if not self._keeps_owned():
            return
        for target in range(1, HIGHEST_NUMBER + 1):
            if not self.held[target]:
                continue
            for code in _partitionable(self.pool, target):
                if _size(code) >= 2:
                    for loose in self._choices(code):
                        self.moves_out.append({"type": "trail_build", "card": name, "value": target, "loose": loose})

    def _trail(self, name: str) -> None:
        if not self.owned or (self.lenient and self._keeps_owned()):
            self.moves_out.append({"type": "trail", "card": name})


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
        if not isinstance(deck, (list, tuple)):
            # a set would be dealt in hash order, a string by its characters: neither is an order
            raise OptionError(f"a casino deck must be a list of the 52 cards, top first; got a {type(deck).__name__}")
        try:
            order = [cards.parse(name) for name in deck]
        except ValueError as error:
            raise OptionError(f"bad casino deck: {error}") from None
        if sorted(order) != list(cards.DECK):
            counts = Counter(order)
            problems = [
                f"{label} {', '.join(NAME[c] for c in found)}"
                for label, found in (("missing", [c for c in cards.DECK if not counts[c]]),
                                     ("repeated", sorted(c for c, n in counts.items() if n > 1)))
                if found
            ]
            raise OptionError(
                f"a casino deck must hold each of the 52 cards once, got {len(order)} cards, {'; '.join(problems)}")
        return order


GAME = Casino()
