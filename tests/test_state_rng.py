"""A state's random generator under `clone`: shared lazily, yet every state behaves as if it had
its own copy from the moment of the clone (runner/games/base.py, `GameState`)."""

from __future__ import annotations

import random

import pytest

from cardarena.games import all_games
from cardarena.protocol.actions import random_action

GAMES = sorted(all_games())
PLAYERS = {"knock-rummy": 2, "casino": 2, "cuajo": 4, "quitlok": 5}


def started(name: str, seed: int = 3):
    """A state a few random moves into a seeded game."""
    state = all_games()[name].new_state(PLAYERS[name], {}, seed)
    rng = random.Random(seed)
    for _ in range(4):
        if not state.is_over():
            state.apply(random_action(state.legal_actions(), rng))
    return state


def finish(state, seed: int = 11) -> list:
    """Every event of the rest of the game under seeded random moves, then the result."""
    rng, events = random.Random(seed), []
    while not state.is_over():
        events += state.apply(random_action(state.legal_actions(), rng))
    return [events, state.result().to_wire(), state.reveal()]


@pytest.mark.parametrize("name", GAMES)
def test_a_clone_and_its_original_play_on_alike_whoever_draws_first(name):
    original = started(name)
    twin = original.clone()
    assert finish(twin) == finish(original)


@pytest.mark.parametrize("name", GAMES)
def test_drawing_from_one_side_does_not_move_the_other(name):
    original = started(name)
    expected = random.Random()
    expected.setstate(original.clone().rng.getstate())
    twin = original.clone()
    original.rng.random()  # the original hands its generator out and draws
    assert twin.rng.getstate() == expected.getstate()
    before = original.rng.getstate()
    twin.rng.random()
    assert original.rng.getstate() == before


@pytest.mark.parametrize("name", GAMES)
def test_a_generator_held_outside_is_copied_by_clone_at_once(name):
    original = started(name)
    held = original.rng
    twin = original.clone()
    snapshot = twin.rng.getstate()
    held.random()
    assert twin.rng.getstate() == snapshot and original.rng is held


def test_a_set_generator_keeps_its_kind_and_identity_through_clones():
    class Scripted(random.Random):
        pass

    state = started("casino")
    scripted = Scripted(5)
    state.rng = scripted
    twin = state.clone()
    assert state.rng is scripted and type(twin.rng) is random.Random
    assert twin.rng.getstate() == scripted.getstate()
    adopted = Scripted(6)
    state.adopt_rng(adopted)
    state.clone()
    assert state.rng is adopted
