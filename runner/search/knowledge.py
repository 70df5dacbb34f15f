"""A seat's knowledge of one game, built from its own messages only, and deals sampled from it.

**Consistent**, precisely: a full deal (the engine's deck order plus the options the deal depends
on, such as the dealer; for an engine that draws part of the deal from its seed or shuffles again
during the game, also that seed and those later shuffles) is consistent with what a seat has seen
when playing the game's recorded public actions from it, in order, is legal at every step and
gives this seat exactly the views (at each of its decisions, and now) and exactly the events
(between two of its decisions) that it received, and after the game's end the same reveal and
result. Every rule that makes a hidden card matter (a card seen to leave a hand was in it; a move
was legal for the hidden hand that made it) is thereby a constraint, without listing it.
When a recorded action carries a card the seat was never shown (the card of another seat's Cuajo
secret), that card is part of the deal: a deal then is the deck order, the options and those cards.

`SeatKnowledge.sample` draws uniformly among the consistent deals: a game's `DealSampler`
proposes deals uniformly from a set that contains every consistent deal (the cards the seat has
seen where it saw them, the rest shuffled, plus whatever the game can rule out exactly), and
`replay` keeps a proposal only when it is consistent. Rejection from a uniform superset is
uniform on the subset; the game's sampler only makes acceptance likely (and may have the replay
resume from a checkpoint that all its proposals share, see `Proposal`).
"""

from __future__ import annotations

import importlib
import random
import time
from abc import ABC, abstractmethod
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from cardarena.games import get_game
from cardarena.games.base import Action, Event, Game, GameState
from cardarena.protocol.actions import find_legal

#: proposals tried before `sample` gives up (a sampler tuned for its game accepts far sooner)
MAX_ATTEMPTS = 20_000
#: the deadline of the `first_consistent` under way (a `time.monotonic()` value, or None), for a
#: sampler whose one proposal may take long (Cuajo's builds many deals in one) to stop at as well
proposal_deadline: ContextVar[float | None] = ContextVar("proposal_deadline", default=None)
#: whether the `first_consistent` under way must draw exactly uniformly (the default), or may use a
#: game's faster proposals, consistent like every deal replay keeps but not exactly uniform, where
#: the game has some (`SeatKnowledge.sample`'s `exact`)
exact_sampling: ContextVar[bool] = ContextVar("exact_sampling", default=True)


class SamplingError(Exception):
    """No consistent deal was found in the attempts allowed (or the transcript contradicts itself)."""


@dataclass
class Transcript:
    """Everything one seat was told in one game, exactly as received, and its own answers."""

    game_start: dict[str, Any]
    decisions: list[dict[str, Any]] = field(default_factory=list)  # decision messages, in order
    answers: list[Action] = field(default_factory=list)  # this seat's answer to each decision
    game_end: dict[str, Any] | None = None

    @property
    def seat(self) -> int:
        return self.game_start["seat"]

    @property
    def players(self) -> int:
        return self.game_start["players"]

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.game_start.get("options") or {})

    def events(self) -> list[Event]:
        """Every public event the seat has been told of, in order."""
        told = [event for message in self.decisions for event in message["events"]]
        if self.game_end is not None:
            told += self.game_end["events"]
        return told

    def current_view(self) -> dict[str, Any] | None:
        """The view of the seat's latest decision, or None before its first."""
        return self.decisions[-1]["view"] if self.decisions else None

    @property
    def progress(self) -> tuple[int, int, bool]:
        """How far the transcript goes (decisions, answers, whether the game ended): it changes
        whenever the seat learns something, so work done for one position is kept under it."""
        return len(self.decisions), len(self.answers), self.game_end is not None


@dataclass(frozen=True)
class Checkpoint:
    """A replay stopped before `actions[done]`: its state, how many of the seat's decisions it
    matched, and the events since the last of them."""

    state: GameState
    done: int
    asked: int
    pending: list[Event]


@dataclass(frozen=True)
class Proposal:
    """A full deal to try: the deck order (wire forms, top card first) and the options that fix
    the rest of the deal (the dealer, say), merged over the game's own options.

    `seed` is given to `new_state`, for an engine that draws part of the deal from it (Casino's
    first dealer, Quitlok's first banker). `rng`, when set, replaces the state's generator for the
    replay, for an engine that shuffles again during the game (Casino's later rounds, Quitlok's
    reshuffles): its draws reproduce the proposed later shuffles. It is used up by one replay.
    `resume`, when set, is where the replay starts instead of the deal (a copy of its state is played on): the sampler vouches that this
    proposal's deal reaches exactly that checkpoint, as when every deal it proposes agrees up to
    there (Casino's finished rounds), so the part all proposals share is replayed once.
    `actions`, when set, are the recorded actions with the cards this deal gives those the seat
    never saw (Cuajo's face-down secrets name their cards); None: the sampler's `actions` as they are.
    """

    deck: list[str]
    options: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    rng: random.Random | None = None
    resume: Checkpoint | None = None
    actions: list[tuple[int, Action]] | None = None


class DealSampler(ABC):
    """One game's part of sampling: which actions were played, and deals to propose."""

    @abstractmethod
    def actions(self, transcript: Transcript) -> list[tuple[int, Action]]:
        """Every action applied so far (seat, action), in order, as the seat's messages tell it:
        its own answers and the public events of the others' moves. A card that no message
        shows (another seat's secret) is chosen per deal, in `Proposal.actions`."""

    @abstractmethod
    def propose(self, transcript: Transcript, rng: random.Random) -> Proposal:
        """A deal drawn uniformly from a set that holds every consistent deal."""


def sampler_for(game: str) -> DealSampler:
    """The `DealSampler` of the game with wire name `game`: the `SAMPLER` of the module
    `cardarena.search.<game with '-' as '_'>` (ValueError when there is none)."""
    name = f"cardarena.search.{game.replace('-', '_')}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise  # the sampler exists but something it imports does not
        raise ValueError(f"no deal sampler for the game {game!r}") from error
    return module.SAMPLER


def replay(game: Game, transcript: Transcript, proposal: Proposal,
           actions: list[tuple[int, Action]]) -> GameState | None:
    """The state reached by playing `actions` (or the proposal's own, when it gives them) from
    `proposal`'s deal, or None unless the deal is consistent with `transcript` (see the module's
    docstring)."""
    if proposal.actions is not None:
        actions = proposal.actions
    reached = replay_until(game, transcript, proposal, actions, len(actions))
    if reached is None:
        return None
    state, seat = reached.state, transcript.seat
    if transcript.game_end is not None:
        return state if state.is_over() and _ends_as(state, transcript.game_end, reached.pending) else None
    if reached.asked < len(transcript.decisions):  # the seat's latest decision awaits its answer
        if (state.is_over() or state.to_move() != seat
                or not _matches(state, transcript, reached.asked, reached.pending)):
            return None
    return state


def replay_until(game: Game, transcript: Transcript, proposal: Proposal,
                 actions: list[tuple[int, Action]], stop: int) -> Checkpoint | None:
    """The replay of `actions[:stop]` from `proposal` (or from its `resume`), stopped there; None
    when a step so far is illegal or shows the seat something other than the transcript."""
    seat = transcript.seat
    if proposal.resume is None:
        options = {**transcript.options, **proposal.options}
        state = game.new_state(transcript.players, options, seed=proposal.seed, deck=proposal.deck)
        done, asked, pending = 0, 0, []
    else:
        state = proposal.resume.state.clone()
        done, asked, pending = proposal.resume.done, proposal.resume.asked, list(proposal.resume.pending)
    if proposal.rng is not None:
        state.rng = proposal.rng
    for mover, action in actions[done:stop]:
        if state.is_over() or state.to_move() != mover:
            return None
        if mover == seat:
            if not _matches(state, transcript, asked, pending):
                return None
            asked += 1
            pending = []
        if find_legal(state.legal_actions(), action) is None:
            return None
        pending += state.apply(action)
    return Checkpoint(state, stop, asked, pending)


def _ends_as(state: GameState, game_end: dict[str, Any], pending: list[Event]) -> bool:
    """True when the finished `state` tells the seat what `game_end` did: the last events, and the
    reveal and result (the reveal shows cards, as Cuajo's hands and stock left, that no event did)."""
    return (pending == game_end["events"] and ("reveal" not in game_end or state.reveal() == game_end["reveal"])
            and ("result" not in game_end or state.result().to_wire() == game_end["result"]))


def _matches(state: GameState, transcript: Transcript, index: int, pending: list[Event]) -> bool:
    """True when decision `index` of the transcript is what `state` shows the seat now."""
    if index >= len(transcript.decisions):
        return False
    message = transcript.decisions[index]
    return (message["events"] == pending and message["view"] == state.view(transcript.seat)
            and message["legal"] == state.legal_actions())


class SeatKnowledge:
    """What one seat knows of one game: fed with exactly the messages it received, it returns
    full states consistent with them, the hidden cards drawn uniformly among consistent deals."""

    def __init__(self, game_start: dict[str, Any]):
        self.transcript = Transcript(game_start=game_start)
        self.game = get_game(game_start["game"])
        self._exact_failed: tuple[int, int, bool] | None = None  # the position where `fallback` waived exactness

    def observe(self, message: dict[str, Any]) -> None:
        """Take a `decision` or `game_end` message, as the seat received it."""
        kind = message.get("type")
        if kind == "decision":
            if len(self.transcript.answers) != len(self.transcript.decisions):
                raise ValueError("a decision came before the answer to the previous one was recorded")
            self.transcript.decisions.append(message)
        elif kind == "game_end":
            self.transcript.game_end = message
        else:
            raise ValueError(f"SeatKnowledge takes decision and game_end messages, not {kind!r}")

    def answered(self, action: Action) -> None:
        """Record this seat's answer to its latest decision (the action as sent)."""
        if len(self.transcript.answers) != len(self.transcript.decisions) - 1:
            raise ValueError("an answer was recorded without a decision waiting for it")
        self.transcript.answers.append(action)

    def sample(self, rng: random.Random, attempts: int = MAX_ATTEMPTS, deadline: float | None = None,
               exact: bool = True, fallback: bool = False) -> GameState:
        """A full state consistent with everything this seat observed. Its future randomness is
        drawn from `rng`. SamplingError when none is found in `attempts` proposals, or when
        `time.monotonic()` passes `deadline` (a bot's clock is the referee's): checked between two
        proposals, and inside a proposal that builds many deals (Cuajo's).

        `exact=False` trades exact uniformity for speed where a game's exact sampler can take
        seconds: the state is still consistent (every deal is replayed), its hidden cards drawn
        close to uniformly rather than exactly. Only Cuajo has such a trade (cuajo.md § Sampling
        hidden cards, Its limits: hands seen purro drawn apart, kept when they fit together); the
        other games sample exactly either way.

        `fallback=True` asks for the exact draw first and waives exactness only where it fails: the
        exact draw gets the first half of the time left to `deadline` (or `attempts` proposals),
        the waived one the rest (`attempts` more); once it has failed, later samples at the same
        position (until the next message) are waived from the start, so a search that samples many
        times per decision pays for the failure once. A bot cannot do this by catching the exact
        draw's SamplingError itself with the same deadline: that draw fails only once the deadline
        has passed, leaving the waived draw no time."""
        sampler = sampler_for(self.game.spec.name)
        if fallback and self._exact_failed == self.transcript.progress:
            exact = False  # the exact draw failed at this position already
        if fallback and exact:
            halfway = None if deadline is None else (time.monotonic() + deadline) / 2
            try:
                _, state = first_consistent(self.game, self.transcript, sampler, rng, attempts, halfway)
            except SamplingError:
                self._exact_failed = self.transcript.progress
                _, state = first_consistent(self.game, self.transcript, sampler, rng, attempts, deadline, exact=False)
        else:
            _, state = first_consistent(self.game, self.transcript, sampler, rng, attempts, deadline, exact)
        state.adopt_rng(random.Random(rng.getrandbits(64)))
        return state


def first_consistent(game: Game, transcript: Transcript, sampler: DealSampler, rng: random.Random,
                     attempts: int = MAX_ATTEMPTS, deadline: float | None = None,
                     exact: bool = True) -> tuple[Proposal, GameState]:
    """The first of `sampler`'s proposals that is consistent with `transcript`, and the state it
    reaches; SamplingError after `attempts` proposals, or once `time.monotonic()` passes `deadline`.
    `exact=False`: the sampler may propose from its faster, not exactly uniform way (`exact_sampling`)."""
    actions = sampler.actions(transcript)
    token = proposal_deadline.set(deadline)
    exact_token = exact_sampling.set(exact)
    try:
        for attempt in range(attempts):
            proposal = sampler.propose(transcript, rng)
            state = replay(game, transcript, proposal, actions)
            if state is not None:
                return proposal, state
            if deadline is not None and time.monotonic() > deadline:
                raise SamplingError(f"no consistent deal found before the deadline ({attempt + 1} proposals)")
    finally:
        exact_sampling.reset(exact_token)
        proposal_deadline.reset(token)
    raise SamplingError(f"no deal consistent with seat {transcript.seat}'s observations of "
                        f"{game.spec.name} game {transcript.game_start.get('game_id')} "
                        f"in {attempts} proposals")
