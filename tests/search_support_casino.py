"""Test support for the search SDK: a seat's messages recorded from an engine-played game, exactly
as the referee sends them (runner/referee/match.py), and a chi-square tail without scipy."""

from __future__ import annotations

import itertools
import random
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import cardarena.search.casino
from cardarena.games.base import Action, Game, GameState
from cardarena.protocol.actions import random_action
from cardarena.search.knowledge import DealSampler, SeatKnowledge, Transcript

Policy = Callable[[GameState, random.Random], Action]


def random_policy(state: GameState, rng: random.Random) -> Action:
    """A uniformly random legal action."""
    return random_action(state.legal_actions(), rng)


@dataclass
class RecordedGame:
    """A whole game: every seat's full transcript, every applied action, and the final state."""

    transcripts: list[Transcript]
    actions: list[tuple[int, Action]]
    final: GameState

    def position(self, seat: int, decisions: int | None) -> Transcript:
        """Seat's transcript as it stood when it received its `decisions`-th decision (awaiting its
        answer), or at the game's end when `decisions` is None."""
        whole = self.transcripts[seat]
        if decisions is None:
            return whole
        return Transcript(game_start=whole.game_start, decisions=whole.decisions[:decisions],
                          answers=whole.answers[:decisions - 1])

    def actions_before(self, transcript: Transcript) -> list[tuple[int, Action]]:
        """The actions applied before the position `transcript` stands at (all of them at the end)."""
        if transcript.game_end is not None:
            return list(self.actions)
        number = transcript.decisions[-1]["decision"]  # the referee numbers every decision of the game
        return self.actions[:number - 1]


def record_game(game: Game, players: int, options: dict[str, Any], seed: int, policy: Policy,
                deck: list[str] | None = None, game_id: str = "g") -> RecordedGame:
    """Play one game with `policy` at every seat (its random choices seeded by `seed`), dealt from
    `seed` or from `deck`, recording what the referee would send each seat."""
    state = game.new_state(players, options, seed, deck=deck)
    resolved = game.spec.resolve_options(options)
    teams = game.spec.teams(players, resolved)
    transcripts = [Transcript(game_start={
        "type": "game_start", "game_id": game_id, "game": game.spec.name,
        "rules_version": game.spec.rules_version, "seat": seat, "players": players,
        "names": [f"p{other}" for other in range(players)], "teams": None if teams is None else list(teams),
        "options": resolved}) for seat in range(players)]
    pending: list[list[dict[str, Any]]] = [[] for _ in range(players)]
    actions: list[tuple[int, Action]] = []
    rng = random.Random(seed)
    while not state.is_over():
        seat = state.to_move()
        transcripts[seat].decisions.append({
            "type": "decision", "game_id": game_id, "decision": len(actions) + 1, "seat": seat,
            "view": state.view(seat), "events": pending[seat], "legal": state.legal_actions(), "time_ms": 1000})
        pending[seat] = []
        action = policy(state, rng)
        transcripts[seat].answers.append(action)
        actions.append((seat, action))
        events = state.apply(action)
        for queue in pending:
            queue.extend(events)
    result, reveal = state.result().to_wire(), state.reveal()
    for seat, transcript in enumerate(transcripts):
        transcript.game_end = {"type": "game_end", "game_id": game_id, "result": result, "reveal": reveal,
                               "events": pending[seat], "faults": []}
    return RecordedGame(transcripts, actions, state)


def knowledge_of(transcript: Transcript) -> SeatKnowledge:
    """A SeatKnowledge fed with the transcript's messages one by one, as a bot feeds it."""
    knowledge = SeatKnowledge(transcript.game_start)
    for message, answer in itertools.zip_longest(transcript.decisions, transcript.answers):
        knowledge.observe(message)
        if answer is not None:
            knowledge.answered(answer)
    if transcript.game_end is not None:
        knowledge.observe(transcript.game_end)
    return knowledge


@contextmanager
def sampling_casino_with(sampler: DealSampler) -> Iterator[None]:
    """SeatKnowledge samples Casino with `sampler` inside the block (it looks the game's up per sample)."""
    original = cardarena.search.casino.SAMPLER
    cardarena.search.casino.SAMPLER = sampler
    try:
        yield
    finally:
        cardarena.search.casino.SAMPLER = original
