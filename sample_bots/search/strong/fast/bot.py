"""The search rungs of cardarena's ladder of reference bots: determinized search (PIMC) with a
rollout policy per game, budgeted by iterations so that a game replays exactly.

Usage: python bot.py --rung fast|strong [--seed N]

README.md (one folder up) says what each game's search does and why, and what each rung costs.
"""

import argparse
import sys
import traceback

from rung_search import casino, cuajo, knock_rummy, quitlok
from rung_search.core import Budget, search
from cardarena.protocol.bot import random_action, run
from cardarena.search.bot import SearchBot

#: per rung, each game's plan: the strong rung's Cuajo deals also read the purro flags
PLANS = {"fast": {"casino": casino.PLAN, "cuajo": cuajo.PLAN, "knock-rummy": knock_rummy.PLAN, "quitlok": quitlok.PLAN},
         "strong": {"casino": casino.PLAN, "cuajo": cuajo.READING_PLAN, "knock-rummy": knock_rummy.PLAN,
                    "quitlok": quitlok.PLAN}}

#: per rung and game, the deals sampled per decision and the rollout length, sized so that the
#: median decision stays well inside the rung's time (20 ms fast, 200 ms strong) on a loaded core;
#: Quitlok's are sized for 5 players (the ladder's table) and shrink at larger tables, where the
#: largest decisions of the strong rung reached the 1 s limit of `check` on a loaded machine
RUNGS = {
    "fast": {"casino": Budget(2, depth=2, width=4), "cuajo": Budget(6, depth=8, width=2),
             "knock-rummy": Budget(8, depth=8, width=2, margin=1.5), "quitlok": Budget(20, margin=1.5, players=5)},
    "strong": {"casino": Budget(12, depth=3, width=8), "cuajo": Budget(18, depth=8, width=3),
               "knock-rummy": Budget(40, depth=12, width=3, margin=1.0), "quitlok": Budget(100, margin=1.0, players=5)},
}


class RungBot(SearchBot):
    """A search rung: each decision searched with its rung's budget for the game."""

    version = "1"

    def __init__(self, seed: int, rung: str):
        super().__init__(seed)
        self.rung = rung
        self.name = f"search-{rung}"
        self.game, self.players = "", 0

    def start_game(self, info):
        super().start_game(info)
        self.game, self.players = info["game"], info["players"]

    def choose(self, view, legal, request):
        plan = PLANS[self.rung].get(self.game)
        if plan is None:
            return random_action(legal, self.rng)
        options = plan.prefilter(view, legal)
        if len(options) == 1:
            return options[0]
        try:
            return search(plan, self, options, RUNGS[self.rung][self.game].at_table(self.players), self.rng)
        except Exception:  # noqa: BLE001  (the bot must always answer; the error is logged)
            print(f"{self.name}: {self.game} search failed at decision {request['decision']}; "
                  f"playing its first candidate:\n{traceback.format_exc()}", file=sys.stderr)
            return options[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rung", choices=sorted(RUNGS), required=True, help="the search budget")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bot's choices (default 0)")
    args = parser.parse_args()
    run(RungBot(args.seed, args.rung))


if __name__ == "__main__":
    main()
