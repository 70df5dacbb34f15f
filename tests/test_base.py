"""The generic pieces of the engine interface: option checking, action matching, results."""

import random
from fractions import Fraction

import pytest

from cardarena.protocol.actions import find_legal, match_action, random_action
from cardarena.games.base import GameSpec, Option, OptionError, Result

SPEC = GameSpec(
    name="demo", title="Demo", min_players=2, max_players=4, partnerships="optional",
    zero_sum=True, rules_version="1", summary="demo",
    options=(Option("target", 21, "points to win", choices=(11, 21, 50)),
             Option("partnerships", False, "2 v 2"),
             Option("max_bet", None, "cap", minimum=1)),
)


def test_options_default_and_validate():
    assert SPEC.resolve_options({}) == {"target": 21, "partnerships": False, "max_bet": None}
    assert SPEC.resolve_options({"max_bet": 5})["max_bet"] == 5
    with pytest.raises(OptionError, match="no option 'tagret'"):
        SPEC.resolve_options({"tagret": 11})
    with pytest.raises(OptionError, match="one of"):
        SPEC.resolve_options({"target": 12})
    with pytest.raises(OptionError, match="takes a bool"):
        SPEC.resolve_options({"partnerships": 1})
    with pytest.raises(OptionError, match="at least 1"):
        SPEC.resolve_options({"max_bet": 0})


def test_player_count_and_teams():
    SPEC.check_players(3)
    with pytest.raises(OptionError, match="2 to 4 players, not 5"):
        SPEC.check_players(5)
    for not_a_count in (2.0, "3", True, None):
        with pytest.raises(OptionError, match="must be a whole number"):
            SPEC.check_players(not_a_count)
    assert SPEC.teams(4, {"partnerships": True}) == (0, 1, 0, 1)
    assert SPEC.teams(4, {"partnerships": False}) is None


def test_match_action_is_strict_about_types_and_keys():
    entry = {"type": "discard", "card": "AS"}
    assert match_action(entry, {"type": "discard", "card": "AS"})
    assert not match_action(entry, {"type": "discard", "card": "AS", "extra": 1})
    assert not match_action(entry, {"type": "discard"})
    assert not match_action({"type": "x", "n": 1}, {"type": "x", "n": True})
    assert not match_action({"type": "x", "l": [1, 2]}, {"type": "x", "l": [2, 1]})
    assert not match_action(entry, ["discard", "AS"])


def test_ranges_accept_integers_inside_only():
    legal = [{"type": "bet", "amount": {"min": 1, "max": 10}}, {"type": "stay"}]
    assert find_legal(legal, {"type": "bet", "amount": 10}) is legal[0]
    assert find_legal(legal, {"type": "bet", "amount": 11}) is None
    assert find_legal(legal, {"type": "bet", "amount": 2.0}) is None
    assert find_legal(legal, {"type": "bet", "amount": {"min": 1, "max": 10}}) is None
    rng = random.Random(1)
    for _ in range(50):
        assert find_legal(legal, random_action(legal, rng)) is not None


def test_result_ranks_share_ties():
    result = Result.from_scores([5, -3, 5, Fraction(-7)])
    assert result.ranks == (0, 2, 0, 3)
    assert Result.from_scores([Fraction(7, 2), Fraction(-7, 2)]).to_wire()["scores"] == [[7, 2], [-7, 2]]
