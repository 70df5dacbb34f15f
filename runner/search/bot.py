"""A bot that keeps its seat's knowledge and searches: determinize, simulate, choose.

    from cardarena.protocol.bot import run
    from cardarena.search.bot import SearchBot

    class MyBot(SearchBot):
        def choose(self, view, legal, request):
            state = self.sample()            # a full state consistent with what this seat saw
            ...                              # simulate with state.clone(), apply, legal_actions
            return legal[0]

    run(MyBot(seed=1))

`SearchBot` feeds every message of a game to a `SeatKnowledge` and records its own answers, so
`sample()` always reflects the game so far. `candidates`, `playout` and `payoff` are the small
pieces every simple search needs; sample_bots/pimc/bot.py puts them together (Perfect Information
Monte Carlo), and protocol/SEARCH.md walks through it.
"""

from __future__ import annotations

import random
from typing import Any

from cardarena.games.base import Action, GameState, Result
from cardarena.protocol.actions import is_range, random_action
from cardarena.protocol.bot import Bot, View
from cardarena.search.knowledge import SeatKnowledge


class SearchBot(Bot):
    """A Bot with its seat's knowledge of the current game: override `choose`; call `sample()`."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.rng = random.Random(seed)
        self.knowledge: SeatKnowledge | None = None
        self.seat = 0

    def start_game(self, info: dict[str, Any]) -> None:
        # Seeded per game and seat, so a game replays exactly whatever came before it.
        self.rng = random.Random(f"{self.seed}:{info['game_id']}:{info['seat']}")
        self.knowledge = SeatKnowledge(info)
        self.seat = info["seat"]

    def decide(self, view: View, legal: list[Action], request: dict[str, Any]) -> Action:
        assert self.knowledge is not None, "a decision came before game_start"
        self.knowledge.observe(request)
        action = self.choose(view, legal, request)
        self.knowledge.answered(action)
        return action

    def end_game(self, info: dict[str, Any]) -> None:
        if self.knowledge is not None:
            self.knowledge.observe(info)

    def choose(self, view: View, legal: list[Action], request: dict[str, Any]) -> Action:
        """This seat's action: a legal entry, with an integer chosen inside every range it gives."""
        raise NotImplementedError

    def sample(self, deadline: float | None = None, exact: bool = True, fallback: bool = False) -> GameState:
        """A full game state consistent with everything this seat has seen, hidden cards drawn
        uniformly among the consistent deals (see cardarena.search.knowledge); SamplingError when
        none is found before `deadline` (a `time.monotonic()` value) or, without one, within the
        game's own budget (in Cuajo 200,000 deals, 5-10 s: pass a deadline; protocol/SEARCH.md).
        `exact=False`: still consistent, but drawn close to uniformly where exact sampling is slow;
        `fallback=True`: exactly in the first half of the time, close to uniformly after, where the
        exact draw found nothing (`SeatKnowledge.sample`)."""
        assert self.knowledge is not None, "sample() needs a game in progress"
        return self.knowledge.sample(self.rng, deadline=deadline, exact=exact, fallback=fallback)


def candidates(legal: list[Action], per_range: int = 3) -> list[Action]:
    """Concrete actions to try: every entry, and for an entry with ranges its lowest, highest and
    middle values (a search cannot try every bet of a wide range)."""
    found: list[Action] = []
    for entry in legal:
        choices: list[Action] = [{}]
        for key, value in entry.items():
            if is_range(value):
                low, high = value["min"], value["max"]
                picks = sorted({low, high, (low + high) // 2})[:per_range]
                choices = [{**choice, key: pick} for choice in choices for pick in picks]
            else:
                choices = [{**choice, key: value} for choice in choices]
        found += choices
    return found


def payoff(result: Result, seat: int) -> float:
    """What a finished game is worth to `seat`: its score minus the mean score of its opponents
    (its partners' scores are its own side's), so zero-sum and points games read alike."""
    scores = [float(score) for score in result.scores]
    teams = result.teams
    opponents = [other for other in range(len(scores))
                 if other != seat and (teams is None or teams[other] != teams[seat])]
    if not opponents:
        return scores[seat]
    return scores[seat] - sum(scores[other] for other in opponents) / len(opponents)


def playout(state: GameState, rng: random.Random) -> Result:
    """Play `state` to the end with uniformly random legal actions (in place), and its result."""
    while not state.is_over():
        state.apply(random_action(state.legal_actions(), rng))
    return state.result()
