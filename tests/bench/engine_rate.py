"""Engine speed: random legal playouts of Knock Rummy in decisions per second, beside OpenSpiel's gin_rummy.

Both are played the same way, in-process: a new game, uniformly random legal decisions until it
ends, again until time runs out. Only player decisions count (OpenSpiel's chance moves, the deal
and the draws, are sampled and timed but not counted). Time is the process's CPU time, so that
other work on a shared machine does not count. Run: python tests/bench/engine_rate.py [seconds]
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any, Callable

from cardarena.games.base import Action, Game
from cardarena.games.knock_rummy import GAME
from cardarena.protocol.actions import random_action


def playout_rate(game: Game, players: int, options: dict[str, Any] | None, seconds: float,
                 choose: Callable[[list[Action], random.Random], Action] = random_action,
                 first_seed: int = 0) -> float:
    """Decisions per CPU second of seeded random legal playouts of `game` from seed `first_seed`
    on, as the referee would drive them (`choose` picks each action from the legal list)."""
    rng = random.Random(first_seed)
    decisions = 0
    seed = first_seed
    start = time.process_time()
    while time.process_time() - start < seconds:
        state = game.new_state(players, options, seed)
        while not state.is_over():
            state.apply(choose(state.legal_actions(), rng))
            decisions += 1
        seed += 1
    return decisions / (time.process_time() - start)


def knock_rummy_rate(seconds: float, players: int = 2) -> float:
    """Decisions per CPU second of random legal Knock Rummy playouts."""
    return playout_rate(GAME, players, None, seconds)


def openspiel_gin_rummy_rate(seconds: float) -> float | None:
    """Decisions per CPU second of random legal OpenSpiel gin_rummy playouts; None without pyspiel."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(1)
    decisions = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probabilities = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probabilities)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
    return decisions / (time.process_time() - start)


def main() -> None:
    """Print both rates and their ratio."""
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    ours = knock_rummy_rate(seconds)
    print(f"knock-rummy (2 players): {ours:,.0f} decisions/s")
    theirs = openspiel_gin_rummy_rate(seconds)
    if theirs is None:
        print("open_spiel gin_rummy: pyspiel is not installed (pip install open_spiel)")
        return
    print(f"open_spiel gin_rummy:    {theirs:,.0f} decisions/s")
    print(f"ratio knock-rummy / gin_rummy: {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
