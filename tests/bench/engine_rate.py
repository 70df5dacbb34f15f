"""Engine speed: random legal playouts of Knock Rummy in decisions per second, beside OpenSpiel's gin_rummy.

Both are played the same way, in-process: a new game, uniformly random legal decisions until it
ends, again until time runs out. Only player decisions count (OpenSpiel's chance moves, the deal
and the draws, are sampled and timed but not counted). Run: python tests/bench/engine_rate.py [seconds]
"""

from __future__ import annotations

import random
import sys
import time

from cardarena.protocol.actions import random_action
from cardarena.games.knock_rummy import GAME


def knock_rummy_rate(seconds: float, players: int = 2) -> float:
    """Decisions per second of random legal Knock Rummy playouts, as the referee would drive them."""
    rng = random.Random(1)
    decisions = 0
    seed = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = GAME.new_state(players, seed=seed)
        while not state.is_over():
            state.apply(random_action(state.legal_actions(), rng))
            decisions += 1
        seed += 1
    return decisions / (time.perf_counter() - start)


def openspiel_gin_rummy_rate(seconds: float) -> float | None:
    """Decisions per second of random legal OpenSpiel gin_rummy playouts; None without pyspiel."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(1)
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probabilities = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probabilities)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
    return decisions / (time.perf_counter() - start)


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
