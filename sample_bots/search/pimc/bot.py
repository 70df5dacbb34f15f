"""A search bot for every cardarena game: Perfect Information Monte Carlo on cardarena's engines.

At each decision it samples full deals consistent with everything its seat has seen
(determinization), plays every candidate action out to the end at random in each (in Cuajo, where
random play almost never wins a hand, it values the hand's closeness to complete instead), and
picks the action with the best mean payoff. Budgeted by determinizations (deterministic) and optionally by
time. protocol/SEARCH.md explains each step.

Usage: python bot.py [--seed N] [--determinizations N] [--seconds S]
"""

import argparse
import sys
import time

from cardarena.protocol.bot import run
from cardarena.search import SamplingError
from cardarena.search.bot import SearchBot, candidates, payoff, playout
from cardarena.search.evaluate import estimate


class PimcBot(SearchBot):
    name = "pimc"
    version = "1"

    def __init__(self, seed: int, determinizations: int, seconds: float | None):
        super().__init__(seed)
        self.determinizations = determinizations
        self.seconds = seconds

    def choose(self, view, legal, request):
        options = candidates(legal)  # every legal entry; low, middle and high values of a range
        if len(options) == 1:
            return options[0]
        # never more than a quarter of the referee's limit (time_ms), whatever --seconds says
        seconds = min(self.seconds or float("inf"), request["time_ms"] / 4000)
        deadline = time.monotonic() + seconds
        totals = [0.0] * len(options)
        for done in range(self.determinizations):
            try:
                # determinize: a full state consistent with this seat's view (drawn exactly uniformly,
                # or, where the exact draw finds none in half the time left, close to uniformly)
                state = self.sample(deadline, fallback=True)
            except SamplingError as error:  # out of time: choose from what was simulated so far
                print(f"pimc: decision {request['decision']}: {error}; choosing after {done} deals", file=sys.stderr)
                break
            scores = []
            for action in options:
                branch = state.clone()  # simulate: this action, then random play to the end
                branch.apply(action)
                value = estimate(branch, self.seat)  # or the game's quick estimate, where it has one
                scores.append(payoff(playout(branch, self.rng), self.seat) if value is None else value)
                if time.monotonic() > deadline:
                    break
            if len(scores) < len(options):
                break  # out of time: a determinization counts only when every option was tried in it
            totals = [total + score for total, score in zip(totals, scores)]
        return options[max(range(len(options)), key=totals.__getitem__)]  # choose


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0, help="seed of the bot's choices (default 0)")
    parser.add_argument("--determinizations", type=int, default=8, help="deals sampled per decision (default 8)")
    parser.add_argument("--seconds", type=float, default=None, help="also stop sampling after this long")
    args = parser.parse_args()
    run(PimcBot(args.seed, args.determinizations, args.seconds))


if __name__ == "__main__":
    main()
