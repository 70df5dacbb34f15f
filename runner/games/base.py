"""The engine interface every game implements: a `Game` (rules and options) makes `GameState`s.

A game knows nothing of processes, pipes or msgpack. Everything it hands out (actions, views,
events) is plain data: dicts with str keys whose values are str, int, bool, None, lists or dicts
of the same. That data goes on the wire exactly as it is, so it is the canonical form.

Actions are dicts with a "type" key. A legal-action entry may give an integer field as a range,
``{"min": a, "max": b}`` (inclusive); a bot answers with one integer from it. `match_action`
is the one place that decides whether an answer is one of the legal entries.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, cached_property
from typing import Any, Mapping, Sequence

from cardarena.errors import CardarenaError, UsageError
from cardarena.protocol.actions import find_legal

Action = dict[str, Any]
Event = dict[str, Any]


class GameError(CardarenaError):
    """Base class of errors raised by game engines."""


class OptionError(GameError, UsageError):
    """A game option or player count is not acceptable; the message says which and why."""


class IllegalAction(GameError):
    """An action that is not in the legal set was applied to a state."""


@dataclass(frozen=True)
class Option:
    """One named rule option of a game, with its default and what values it accepts."""

    name: str
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None

    def check(self, value: Any) -> Any:
        """Return `value` if acceptable for this option, else raise OptionError saying why."""
        expected = type(self.default)
        if self.default is None:
            ok_type = value is None or (isinstance(value, int) and not isinstance(value, bool))
        elif expected is bool:
            ok_type = isinstance(value, bool)
        elif expected is int:
            ok_type = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok_type = isinstance(value, expected)
        if not ok_type:
            raise OptionError(
                f"option {self.name!r} takes a {'integer or none' if self.default is None else expected.__name__}, "
                f"got {value!r}"
            )
        if self.choices is not None and value not in self.choices:
            raise OptionError(f"option {self.name!r} must be one of {list(self.choices)}, got {value!r}")
        if isinstance(value, int) and not isinstance(value, bool):
            if self.minimum is not None and value < self.minimum:
                raise OptionError(f"option {self.name!r} must be at least {self.minimum}, got {value}")
            if self.maximum is not None and value > self.maximum:
                raise OptionError(f"option {self.name!r} must be at most {self.maximum}, got {value}")
        return value


@dataclass(frozen=True)
class GameSpec:
    """What the referee and the tournament may know about a game without looking inside it."""

    name: str  # the wire and command-line name, e.g. "knock-rummy"
    title: str
    min_players: int
    max_players: int
    partnerships: str  # "none", "fixed" (always 0+2 v 1+3) or "optional" (option "partnerships")
    zero_sum: bool  # payoffs sum to zero; otherwise only team-symmetric (Casino's points)
    rules_version: str
    summary: str
    options: tuple[Option, ...] = field(default_factory=tuple)

    @cached_property
    def _defaults(self) -> dict[str, Any]:
        """Every option at its default (checked once, as `resolve_options` checks given values)."""
        return {option.name: option.check(option.default) for option in self.options}

    def resolve_options(self, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Validate `given` options and fill in defaults; unknown names are an error."""
        if not given:
            return dict(self._defaults)
        given = dict(given)
        known = {option.name: option for option in self.options}
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise OptionError(
                f"{self.name} has no option {', '.join(map(repr, unknown))}"
                f" (options: {', '.join(known) or 'none'})"
            )
        return {name: option.check(given.get(name, option.default)) for name, option in known.items()}

    def check_players(self, players: int) -> None:
        """Raise OptionError unless `players` is a player count this game allows."""
        if type(players) is not int:
            raise OptionError(f"the number of players must be a whole number, got {players!r}")
        if not self.min_players <= players <= self.max_players:
            allowed = (
                str(self.min_players)
                if self.min_players == self.max_players
                else f"{self.min_players} to {self.max_players}"
            )
            raise OptionError(f"{self.name} is played by {allowed} players, not {players}")

    def teams(self, players: int, options: Mapping[str, Any]) -> tuple[int, ...] | None:
        """Team number per seat (partners s and s+2 share one), or None when everyone plays alone."""
        if self.partnerships == "fixed" or (self.partnerships == "optional" and options.get("partnerships")):
            return tuple(seat % 2 for seat in range(players))
        return None


@dataclass(frozen=True)
class Result:
    """The outcome of one game: a score per seat and the ranking derived from it (0 = best)."""

    scores: tuple[Fraction, ...]
    ranks: tuple[int, ...]
    teams: tuple[int, ...] | None = None

    @classmethod
    def from_scores(cls, scores: Sequence[Fraction | int], teams: tuple[int, ...] | None = None) -> "Result":
        """Rank seats by score, higher first; equal scores share the best of their ranks (1224 style).
        The ranks compare the scores as given: ints and Fractions compare exactly with each other,
        and ints 20 times faster than Fractions (every game's end ranks its seats)."""
        given = tuple(scores)
        ranks = tuple(sum(other > score for other in given) for score in given)
        exact = tuple(score if type(score) is Fraction else Fraction(score) for score in given)
        return cls(scores=exact, ranks=ranks, teams=teams)

    def to_wire(self) -> dict[str, Any]:
        """Plain-data form: scores as ints where whole, else [numerator, denominator]."""
        return {
            "scores": [score_to_wire(score) for score in self.scores],
            "ranks": list(self.ranks),
            "teams": None if self.teams is None else list(self.teams),
        }


def score_to_wire(score: Fraction) -> int | list[int]:
    """An exact score as plain data: an int when whole, otherwise [numerator, denominator]."""
    return score.numerator if score.denominator == 1 else [score.numerator, score.denominator]


_ONLY_STR = {str}


def check_deck(deck: Any, full_deck: Sequence[str], game: str) -> list[str]:
    """A hand-built deck (wire forms, top card first), checked to be exactly `full_deck` reordered.

    Only a list or tuple is an order: a set would deal in hash order, a mapping by its keys and a
    string letter by letter. Every engine reads its `deck` argument through this, so a bad deck
    gets the same specific OptionError in every game, naming the missing and extra cards.
    """
    if isinstance(deck, (list, tuple)) and set(map(type, deck)) == _ONLY_STR and sorted(deck) == sorted(full_deck):
        return list(deck)  # the usual case, decided fast; any other deck gets the checks below
    size = len(full_deck)
    if not isinstance(deck, (list, tuple)):
        raise OptionError(f"a {game} deck must be a list of its {size} cards, top first; "
                          f"got a {type(deck).__name__}")
    known = set(full_deck)
    for name in deck:
        if not isinstance(name, str) or name not in known:
            raise OptionError(f"a {game} deck holds {name!r}, which is not one of its cards")
    given, expected = Counter(deck), Counter(full_deck)
    if given != expected:
        missing, extra = expected - given, given - expected
        problems = [f"{label} {', '.join(name for name in expected if surplus[name] for _ in range(surplus[name]))}"
                    for label, surplus in (("missing", missing), ("extra", extra)) if surplus]
        raise OptionError(f"a {game} deck must be exactly its {size} cards, got {len(deck)}: {'; '.join(problems)}")
    return list(deck)


#: how a state holds its random generator (see `GameState.rng`)
_RNG_OWN, _RNG_SHARED, _RNG_EXPOSED = 0, 1, 2


@cache
def _shuffle_steps(size: int) -> tuple[tuple[int, int, int], ...]:
    """The steps of `random.Random.shuffle` on `size` items: (position, draw below, bits to draw)."""
    return tuple((position, position + 1, (position + 1).bit_length()) for position in range(size - 1, 0, -1))


def _inline_shuffle(rng: random.Random, items: list[Any]) -> None:
    """`rng.shuffle(items)` with each index drawn inline, as `Random._randbelow` draws it."""
    getrandbits = rng.getrandbits
    for position, below, bits in _shuffle_steps(len(items)):
        pick = getrandbits(bits)
        while pick >= below:
            pick = getrandbits(bits)
        items[position], items[pick] = items[pick], items[position]


def _inline_shuffle_matches() -> bool:
    """Whether `_inline_shuffle` gives exactly what this Python's `Random.shuffle` gives."""
    for seed in range(8):
        ours, theirs = random.Random(seed), random.Random(seed)
        inlined, stdlib = list(range(60)), list(range(60))
        _inline_shuffle(ours, inlined)
        theirs.shuffle(stdlib)
        if inlined != stdlib or ours.getstate() != theirs.getstate():
            return False
    return True


#: checked once, so that a Python whose `shuffle` draws differently keeps its own, seeds and all
_SHUFFLE_INLINED = _inline_shuffle_matches()


def shuffle(rng: random.Random, items: list[Any]) -> None:
    """Shuffle `items` in place exactly as `rng.shuffle(items)` does (same order, same draws),
    twice as fast on a plain `random.Random`: it saves a method call per card."""
    if _SHUFFLE_INLINED and type(rng) is random.Random:
        _inline_shuffle(rng, items)
    else:
        rng.shuffle(items)


def copy_random(rng: random.Random) -> random.Random:
    """An independent `random.Random` in the same state as `rng` (without seeding one first)."""
    twin = random.Random.__new__(random.Random)
    twin.setstate(rng.getstate())
    return twin


class GameState(ABC):
    """One game in progress. Mutable: `apply` advances it in place (use `clone` to branch).

    Every random choice comes from the seed given to `Game.new_state`, so the seed plus the
    sequence of applied actions reproduces the game exactly.

    The random generator is copied by `clone` only when it must be: copying one costs more than
    copying a whole Knock Rummy state, and most engines never draw from it after the deal. A
    clone shares a plain `random.Random` with its original until either side draws from it
    (`_private_rng`) or hands it out (`rng`); that side copies it first. A generator that was
    handed out or set as `rng` may be held and drawn from elsewhere, so `clone` copies it at once
    (as it does any other kind of generator); `adopt_rng` sets one that nothing else holds.
    """

    __slots__ = ()
    players: int
    _rng_object: random.Random
    _rng_holding: int

    def adopt_rng(self, rng: random.Random) -> None:
        """Make `rng` the state's generator, as setting `rng` does, for a generator that nothing
        else holds or draws from: clones of the state may then share it until one of them draws."""
        self._rng_object, self._rng_holding = rng, _RNG_OWN

    @property
    def rng(self) -> random.Random:
        """The generator of the state's future random events (the deals still to come, reshuffles)."""
        if self._rng_holding == _RNG_SHARED:
            self._rng_object = copy_random(self._rng_object)
        self._rng_holding = _RNG_EXPOSED
        return self._rng_object

    @rng.setter
    def rng(self, rng: random.Random) -> None:
        self._rng_object, self._rng_holding = rng, _RNG_EXPOSED

    def _private_rng(self) -> random.Random:
        """The generator for the engine's own draws, copied first if a clone still shares it."""
        if self._rng_holding == _RNG_SHARED:
            self._rng_object, self._rng_holding = copy_random(self._rng_object), _RNG_OWN
        return self._rng_object

    def _clone_rng_into(self, twin: "GameState") -> None:
        """Give the clone `twin` this state's generator: shared until first use, or copied now."""
        if self._rng_holding == _RNG_EXPOSED or type(self._rng_object) is not random.Random:
            twin._rng_object, twin._rng_holding = copy_random(self._rng_object), _RNG_OWN
        else:
            self._rng_holding = _RNG_SHARED
            twin._rng_object, twin._rng_holding = self._rng_object, _RNG_SHARED

    @abstractmethod
    def to_move(self) -> int | None:
        """The seat that must decide now, or None when the game is over."""

    @abstractmethod
    def legal_actions(self) -> list[Action]:
        """Every legal action of the seat to move, in canonical order, without duplicates.

        This is the game's single statement of legality: the referee accepts exactly these.
        The list is the caller's own, but its entries may be shared with the engine, across
        calls and states: do not mutate them.
        """

    @abstractmethod
    def apply(self, action: Action) -> list[Event]:
        """Apply an action already checked against `legal_actions`; return the public events."""

    @abstractmethod
    def view(self, seat: int) -> dict[str, Any]:
        """Everything `seat` may see now, and nothing more; enough to decide from it alone."""

    @abstractmethod
    def is_over(self) -> bool:
        """True once the game has ended."""

    @abstractmethod
    def result(self) -> Result:
        """Scores and ranking of a finished game."""

    @abstractmethod
    def reveal(self) -> dict[str, Any]:
        """What is shown to everyone when the game ends (hands, scoring details)."""

    @abstractmethod
    def hidden_cards(self, seat: int) -> list[str]:
        """Wire forms of every card whose identity `seat` may not know now (with repeats).

        Used by the conformance tests: a view may never show more copies of a card than the
        deck holds minus those hidden from the seat.
        """

    @abstractmethod
    def clone(self) -> "GameState":
        """An independent copy, random generator included."""

    def checked_apply(self, action: Action) -> list[Event]:
        """Apply `action` after checking it against the legal set (raises IllegalAction)."""
        if find_legal(self.legal_actions(), action) is None:
            raise IllegalAction(f"{action!r} is not a legal action for seat {self.to_move()}")
        return self.apply(action)


class Game(ABC):
    """A card game's rules: its spec, and a factory of seeded initial states."""

    spec: GameSpec

    @abstractmethod
    def new_state(
        self,
        players: int,
        options: Mapping[str, Any] | None = None,
        seed: int = 0,
        deck: Sequence[str] | None = None,
    ) -> GameState:
        """A new game. The deal comes from `seed` alone; `deck` (wire forms, top card first)
        fixes the card order instead, for tests built from hand-made deals."""

    @abstractmethod
    def deck(self, players: int, options: Mapping[str, Any] | None = None) -> list[str]:
        """Wire forms of every card the game uses (with repeats for identical copies)."""
