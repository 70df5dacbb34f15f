"""A cheater that knows the league file's seed and the code: from each game id
(`game/table/d<deal>/r<rotation>`) it computes the seed the deal would have if deals derived from
the league seed, deals that game with the engine, and, at its first decision, compares the hand
it predicted with the hand it holds. It plays random legal moves and reports on stderr, one line
per game: `seed-cheater game=<id> predicted=<yes|no>`.

Usage: python seed_cheater.py --league-seed N
"""

import argparse

from cardarena.protocol.bot import RandomBot, run
from cardarena.games import get_game
from known_schedule import derive_seed  # a copy of runner/tournament/planning/schedule.py beside it


class SeedCheater(RandomBot):
    """The random bot, plus a prediction of its own hand from the game id and a known seed."""

    name = "seed-cheater"

    def __init__(self, league_seed: int):
        super().__init__(0)
        self.league_seed = league_seed
        self.game_id = self.predicted = None

    def start_game(self, info):
        super().start_game(info)
        self.game_id = info["game_id"]
        game, table, deal, _rotation = self.game_id.split("/")
        seed = derive_seed(self.league_seed, game, table, int(deal.removeprefix("d")))
        state = get_game(game).new_state(info["players"], info["options"], seed)
        self.predicted = sorted(state.view(info["seat"])["hand"])

    def decide(self, view, legal, request):
        if self.predicted is not None:
            hit = sorted(view["hand"]) == self.predicted
            print(f"seed-cheater game={self.game_id} predicted={'yes' if hit else 'no'}", flush=True)
            self.predicted = None
        return super().decide(view, legal, request)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--league-seed", type=int, required=True)
    run(SeedCheater(parser.parse_args().league_seed))


if __name__ == "__main__":
    main()
