"""A heuristic bot for every cardarena game: a rule of thumb per game, a random legal move on any doubt.

Usage: python bot.py [--seed N]
"""

from __future__ import annotations

import importlib
import random
import sys

from cardarena.protocol.bot import Action, Bot, View, find_legal, random_action, run, seed_argument

#: each game's strategy module in heuristic_bot/, imported when the bot's first game of it starts: a
#: bot process plays one game under the sandbox, and the others' imports would only slow its start
#: (Cuajo's imports the SDK's search helpers, some 35 ms)
STRATEGIES = {"casino": "casino", "cuajo": "cuajo", "knock-rummy": "knock_rummy", "quitlok": "quitlok"}


class HeuristicBot(Bot):
    """Plays each game's heuristic; any error or illegal answer is logged and replaced by a random legal move."""

    name = "heuristic"
    version = "1"

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.rng = random.Random(seed)
        self.strategy = None  # the game's decide(view, legal, rng)
        self.game = ""

    def start_game(self, info: dict) -> None:
        # Reseed per game so a game's play does not depend on the games before it.
        self.rng = random.Random(f"{self.seed}:{info['game_id']}:{info['seat']}")
        self.game = info["game"]
        module = STRATEGIES.get(self.game)
        self.strategy = None if module is None else importlib.import_module(f"heuristic_bot.{module}").decide
        if self.strategy is None:
            print(f"heuristic: no strategy for game {self.game!r}; playing random legal moves", file=sys.stderr)

    def decide(self, view: View, legal: list[Action], request: dict) -> Action:
        if self.strategy is None:
            return random_action(legal, self.rng)
        try:
            action = self.strategy(view, legal, self.rng)
        except Exception:  # noqa: BLE001  (the bot must always answer; the error is logged)
            import traceback  # only on this path: its imports would slow every start

            print(f"heuristic: {self.game} strategy failed at decision {request['decision']}; "
                  f"playing a random legal move:\n{traceback.format_exc()}", file=sys.stderr)
            return random_action(legal, self.rng)
        if find_legal(legal, action) is None:
            print(f"heuristic: {self.game} strategy chose the illegal action {action!r} at decision "
                  f"{request['decision']}; playing a random legal move", file=sys.stderr)
            return random_action(legal, self.rng)
        return action


def main() -> None:
    run(HeuristicBot(seed_argument()))


if __name__ == "__main__":
    main()
