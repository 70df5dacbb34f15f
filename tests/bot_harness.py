"""Bots played in-process: the referee's messages (runner/referee/match.py) handed straight to SDK
`Bot` objects, without processes or pipes, for tests of a bot's play and strength."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any, Callable, Sequence

from cardarena.games.base import Game, Result
from cardarena.protocol.actions import find_legal
from cardarena.protocol.bot import Bot, RandomBot, Request
from cardarena.search.bot import payoff

PIMC = Path(__file__).resolve().parent.parent / "sample_bots" / "search" / "pimc" / "bot.py"


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
        request = Request({"type": "decision", "game_id": game_id, "decision": decision, "seat": seat,
                           "view": state.view(seat), "events": pending[seat], "legal": legal, "time_ms": time_ms,
                           "bank_ms": 0})
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


def duplicate_gains(game: Game, challenger: Callable[[int], Bot], players: int, options: dict[str, Any],
                    deals: int, seed: int = 10_000) -> list[float]:
    """The challenger's gain over random play, seat by seat, in duplicate format: each seat of each
    deal is played twice, once by `challenger(deal)` and once by a random bot, the other seats by
    the same random bots both times; a gain is the difference of the seat's two payoffs
    (cardarena.search.bot.payoff: its score less its opponents' mean)."""
    gains = []
    for deal in range(deals):
        for seat in range(players):
            payoffs = []
            for player in (challenger(deal), RandomBot(seed=-1 - deal)):
                bots: list[Bot] = [RandomBot(seed=deal * players + other) for other in range(players)]
                bots[seat] = player
                result = play_in_process(game, bots, seed=seed + deal, options=options, time_ms=60_000)
                payoffs.append(payoff(result, seat))
            gains.append(payoffs[0] - payoffs[1])
    return gains


def sign_test_p(better: int, worse: int) -> float:
    """One-sided p-value of at least `better` successes in better + worse fair coin flips."""
    trials = better + worse
    return sum(math.comb(trials, k) for k in range(better, trials + 1)) / 2 ** trials


def load_pimc() -> type[Bot]:
    """The PimcBot class of protocol/SEARCH.md's example, sample_bots/search/pimc/bot.py."""
    spec = importlib.util.spec_from_file_location("pimc_bot", PIMC)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PimcBot
