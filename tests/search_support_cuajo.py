"""Seat transcripts recorded from engine play exactly as the referee sends them (runner/referee/match.py),
and a replay that rebuilds those messages from a deal without `cardarena.search.replay`."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from cardarena.games import get_game
from cardarena.games.base import Action, GameState
from cardarena.search.knowledge import Transcript

Policy = Callable[[GameState, int, list[Action], random.Random], Action]


@dataclass
class Played:
    """One game played with the engine: every seat's transcript and the applied actions."""

    transcripts: list[Transcript]
    actions: list[tuple[int, Action]]
    state: GameState


def play_recorded(game_name: str, players: int, options: dict[str, Any], seed: int, policy: Policy,
                  deck: list[str] | None = None) -> Played:
    """Play one game, recording per seat the game_start, decision and game_end messages the
    referee would send it (events are the public events since that seat's last decision)."""
    game = get_game(game_name)
    resolved = game.spec.resolve_options(options)
    state = game.new_state(players, resolved, seed, deck=deck)
    teams = game.spec.teams(players, resolved)
    game_id = f"{game_name}-{seed}"
    transcripts = [Transcript(game_start={
        "type": "game_start", "game_id": game_id, "game": game_name, "rules_version": game.spec.rules_version,
        "seat": seat, "players": players, "names": [f"bot{s}" for s in range(players)],
        "teams": None if teams is None else list(teams), "options": resolved,
    }) for seat in range(players)]
    pending: list[list[dict[str, Any]]] = [[] for _ in range(players)]
    actions: list[tuple[int, Action]] = []
    rng = random.Random(seed)
    decision = 0
    while not state.is_over():
        seat = state.to_move()
        legal = state.legal_actions()
        decision += 1
        transcripts[seat].decisions.append({
            "type": "decision", "game_id": game_id, "decision": decision, "seat": seat,
            "view": state.view(seat), "events": pending[seat], "legal": legal, "time_ms": 1000})
        pending[seat] = []
        action = policy(state, seat, legal, rng)
        transcripts[seat].answers.append(action)
        actions.append((seat, action))
        events = state.apply(action)
        for queue in pending:
            queue.extend(events)
    reveal, result = state.reveal(), state.result().to_wire()
    for seat in range(players):
        transcripts[seat].game_end = {"type": "game_end", "game_id": game_id, "result": result, "reveal": reveal,
                                      "events": pending[seat], "faults": []}
    return Played(transcripts, actions, state)


def positions(transcript: Transcript) -> Iterator[Transcript]:
    """The seat's transcript as it stood at each of its decisions (before answering), then at the end."""
    for count in range(1, len(transcript.decisions) + 1):
        yield Transcript(game_start=transcript.game_start, decisions=transcript.decisions[:count],
                         answers=transcript.answers[:count - 1])
    yield transcript


def replayed_messages(game_name: str, transcript: Transcript, deck: list[str], options: dict[str, Any],
                      actions: list[tuple[int, Action]]) -> Transcript:
    """The messages the seat of `transcript` would have received had the game been dealt `deck` and
    played `actions` (its answers recorded as given), built by driving the engine directly."""
    queue = list(actions)

    def scripted(state: GameState, seat: int, legal: list[Action], rng: random.Random) -> Action:
        mover, action = queue.pop(0)
        assert mover == seat, f"the scripted move is seat {mover}'s, but seat {seat} is to move"
        assert action in legal, f"{action} is not legal for seat {seat}"
        return action

    game = get_game(game_name)
    state = game.new_state(transcript.players, {**transcript.options, **options}, deck=deck)
    seat = transcript.seat
    rebuilt = Transcript(game_start=transcript.game_start)
    pending: list[dict[str, Any]] = []
    while queue:
        legal = state.legal_actions()
        mover = state.to_move()
        if mover == seat:
            rebuilt.decisions.append({"view": state.view(seat), "events": pending, "legal": legal})
            pending = []
        action = scripted(state, mover, legal, random.Random(0))
        if mover == seat:
            rebuilt.answers.append(action)
        pending = pending + state.apply(action)
    if not state.is_over() and state.to_move() == seat:
        rebuilt.decisions.append({"view": state.view(seat), "events": pending, "legal": state.legal_actions()})
    elif state.is_over():
        rebuilt.game_end = {"events": pending, "reveal": state.reveal(), "result": state.result().to_wire()}
    return rebuilt
