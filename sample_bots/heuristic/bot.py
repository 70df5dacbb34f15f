"""A heuristic bot for every cardarena game: a rule of thumb per game, a random legal move on any doubt.

Usage: python bot.py [--seed N]
"""

import argparse
import random
import sys
import traceback
from typing import Any, Callable

from heuristic_bot import casino, cuajo, knock_rummy, quitlok
from cardarena.protocol.bot import Action, Bot, View, find_legal, random_action, run

Strategy = Callable[[View, list[Action], random.Random], Action]

STRATEGIES: dict[str, Strategy] = {
    "casino": casino.decide,
    "cuajo": cuajo.decide,
    "knock-rummy": knock_rummy.decide,
    "quitlok": quitlok.decide,
}


class HeuristicBot(Bot):
    """Plays each game's heuristic; any error or illegal answer is logged and replaced by a random legal move."""

    name = "heuristic"
    version = "1"

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.rng = random.Random(seed)
        self.strategy: Strategy | None = None
        self.game = ""

    def start_game(self, info: dict[str, Any]) -> None:
        # Reseed per game so a game's play does not depend on the games before it.
        self.rng = random.Random(f"{self.seed}:{info['game_id']}:{info['seat']}")
        self.game = info["game"]
        self.strategy = STRATEGIES.get(self.game)
        if self.strategy is None:
            print(f"heuristic: no strategy for game {self.game!r}; playing random legal moves", file=sys.stderr)

    def decide(self, view: View, legal: list[Action], request: dict[str, Any]) -> Action:
        if self.strategy is None:
            return random_action(legal, self.rng)
        try:
            action = self.strategy(view, legal, self.rng)
        except Exception:  # noqa: BLE001  (the bot must always answer; the error is logged)
            print(f"heuristic: {self.game} strategy failed at decision {request['decision']}; "
                  f"playing a random legal move:\n{traceback.format_exc()}", file=sys.stderr)
            return random_action(legal, self.rng)
        if find_legal(legal, action) is None:
            print(f"heuristic: {self.game} strategy chose the illegal action {action!r} at decision "
                  f"{request['decision']}; playing a random legal move", file=sys.stderr)
            return random_action(legal, self.rng)
        return action


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0, help="seed of the bot's choices (default 0)")
    args = parser.parse_args()
    run(HeuristicBot(args.seed))


if __name__ == "__main__":
    main()
