"""Bots played in-process: the referee's messages (runner/referee/match.py) handed straight to SDK
`Bot` objects, without processes or pipes, for tests of a bot's play and strength."""

from __future__ import annotations

from typing import Any, Sequence

from cardarena.games.base import Game, Result
from cardarena.protocol.actions import find_legal
from cardarena.protocol.bot import Bot


def play_in_process(game: Game, bots: Sequence[Bot], seed: int, options: dict[str, Any] | None = None,
                    game_id: str | None = None, time_ms: int = 1000) -> Result:
    """One game of `game` between `bots` (one per seat), each told exactly what the referee would
    tell it; an illegal answer fails with AssertionError naming it."""
    players = len(bots)
    resolved = game.spec.resolve_options(options)
    state = game.new_state(players, resolved, seed=seed)
    game_id = game_id or f"{game.spec.name}-{seed}"
    teams = game.spec.teams(players, resolved)
    for seat, bot in enumerate(bots):
        bot.start_game({"type": "game_start", "game_id": game_id, "game": game.spec.name,
                        "rules_version": game.spec.rules_version, "seat": seat, "players": players,
                        "names": [bot.name for bot in bots], "teams": None if teams is None else list(teams),
                        "options": resolved})
    pending: list[list[dict[str, Any]]] = [[] for _ in range(players)]
    decision = 0
    while not state.is_over():
        seat, legal = state.to_move(), state.legal_actions()
        decision += 1
        request = {"type": "decision", "game_id": game_id, "decision": decision, "seat": seat,
                   "view": state.view(seat), "events": pending[seat], "legal": legal, "time_ms": time_ms}
        pending[seat] = []
        action = bots[seat].decide(request["view"], legal, request)
        assert find_legal(legal, action) is not None, f"{bots[seat].name} answered the illegal {action!r}"
        for queue, event in ((queue, event) for event in state.apply(action) for queue in pending):
            queue.append(event)
    result = state.result()
    for seat, bot in enumerate(bots):
        bot.end_game({"type": "game_end", "game_id": game_id, "result": result.to_wire(),
                      "reveal": state.reveal(), "events": pending[seat], "faults": []})
    return result
