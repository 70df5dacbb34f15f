"""The search SDK as a bot author meets it: the engines and `cardarena.search` import inside the
sandbox (bubblewrap and none), `SearchBot` keeps the seat's transcript, and the search helpers."""

from __future__ import annotations

from fractions import Fraction

import pytest
from click.testing import CliRunner

from cardarena.cli import main
from cardarena.games.base import Result
from cardarena.search.bot import candidates, payoff
from tests.conftest import python_bot_folder, skip_without_bwrap

ENGINE_USER = '''\
import random
from cardarena.games import get_game
from cardarena.protocol.bot import Bot, random_action, run
from cardarena.search import SeatKnowledge


class EngineUser(Bot):
    """Plays at random, but first rebuilds a state with the engine and feeds its knowledge."""

    name = "engine-user"

    def start_game(self, info):
        self.knowledge = SeatKnowledge(info)
        self.state = get_game(info["game"]).new_state(info["players"], info["options"], seed=1)
        self.rng = random.Random(info["game_id"])

    def decide(self, view, legal, request):
        self.knowledge.observe(request)
        assert self.state.legal_actions(), "the engine runs in the sandbox"
        action = random_action(legal, self.rng)
        self.knowledge.answered(action)
        return action


run(EngineUser())
'''


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_a_sandboxed_bot_imports_the_engines_and_the_search_sdk(mode, tmp_path):
    """protocol/SEARCH.md: the engines and cardarena.search are on a bot's path in the sandbox."""
    skip_without_bwrap(mode)
    bot = python_bot_folder(tmp_path, "engine-user", ENGINE_USER)
    result = CliRunner().invoke(main, ["check", str(bot), "--sandbox", mode, "--games-per-game", "1"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "PASS: engine-user" in result.stdout


def test_candidates_spell_out_ranges_by_their_ends_and_middle():
    legal = [{"type": "stand"}, {"type": "bet", "amount": {"min": 2, "max": 10}}, {"type": "bet", "amount": {"min": 5, "max": 5}}]
    assert candidates(legal) == [{"type": "stand"}, {"type": "bet", "amount": 2}, {"type": "bet", "amount": 6},
                                 {"type": "bet", "amount": 10}, {"type": "bet", "amount": 5}]


def test_payoff_is_the_seats_score_less_its_opponents_mean_with_partners_on_its_side():
    alone = Result.from_scores([3, -1, -2])
    assert payoff(alone, 0) == 3 - (-1 - 2) / 2
    teams = Result.from_scores([Fraction(5), Fraction(1), Fraction(5), Fraction(1)], teams=(0, 1, 0, 1))
    assert payoff(teams, 0) == 4 and payoff(teams, 1) == -4
