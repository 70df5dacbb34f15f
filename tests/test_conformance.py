"""Conformance suite run against every registered game (each new game gets it for free).

Seeded random playouts must terminate, every non-terminal state must offer a legal action and
no duplicates, a seed must fix the game, results must be zero-sum (or team-symmetric), every
event and view must be plain wire data, and no view may show a card its seat may not see.
"""

from __future__ import annotations

import random
from collections import Counter

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardarena.games import all_games
from cardarena.protocol.actions import concrete_actions, find_legal, random_action, same_value

GAMES = sorted(all_games())
MAX_DECISIONS = 200_000


def player_counts(game):
    spec = game.spec
    return sorted({spec.min_players, spec.max_players, (spec.min_players + spec.max_players) // 2})


def option_sets(game):
    """The default options, plus partnerships on where the game makes them optional."""
    sets = [{}]
    if game.spec.partnerships == "optional":
        sets.append({"partnerships": True})
    return sets


def cases():
    for name in GAMES:
        game = all_games()[name]
        for players in player_counts(game):
            for options in option_sets(game):
                if options.get("partnerships") and players != 4:
                    continue
                yield pytest.param(name, players, options, id=f"{name}-{players}p-{options or 'default'}")


def strings_in(data):
    """Every str value anywhere inside plain data (keys excluded)."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for value in data.values():
            yield from strings_in(value)
    elif isinstance(data, list):
        for value in data:
            yield from strings_in(value)


def assert_view_hides(state, seat, deck_counts):
    view = state.view(seat)
    shown = Counter(s for s in strings_in(view) if s in deck_counts)
    visible_at_most = deck_counts - Counter(state.hidden_cards(seat))
    excess = shown - visible_at_most
    assert not excess, f"view of seat {seat} shows cards it may not see: {dict(excess)}"


def playout(game, players, options, seed, *, check_views=False):
    """Play a whole game with seeded random legal actions; return (record, result, events)."""
    state = game.new_state(players, options, seed)
    rng = random.Random(seed ^ 0x5EED)
    deck_counts = Counter(game.deck(players, options))
    record, events = [], []
    for _ in range(MAX_DECISIONS):
        if state.is_over():
            break
        seat = state.to_move()
        assert seat is not None and 0 <= seat < players
        legal = state.legal_actions()
        assert legal, "a non-terminal state must offer a legal action"
        for i, a in enumerate(legal):
            assert isinstance(a, dict) and isinstance(a.get("type"), str)
            for b in legal[i + 1:]:
                assert not same_value(a, b), f"duplicate legal action {a!r}"
        if check_views:
            for s in range(players):
                assert_view_hides(state, s, deck_counts)
            msgpack.packb(state.view(seat))  # views are plain wire data
        action = random_action(legal, rng)
        assert find_legal(legal, action) is not None
        record.append((seat, action))
        new_events = state.apply(action)
        msgpack.packb(new_events)
        events.extend(new_events)
    else:
        pytest.fail(f"game did not end within {MAX_DECISIONS} decisions")
    assert state.to_move() is None
    return record, state.result(), events, state


@pytest.mark.parametrize("name,players,options", list(cases()))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**63 - 1))
def test_random_playout_is_sound(name, players, options, seed):
    game = all_games()[name]
    record, result, events, final = playout(game, players, options, seed, check_views=True)
    assert len(result.scores) == len(result.ranks) == players
    teams = game.spec.teams(players, game.spec.resolve_options(options))
    assert result.teams == teams
    if game.spec.zero_sum:
        assert sum(result.scores) == 0
    if teams is not None:
        for a in range(players):
            for b in range(players):
                if teams[a] == teams[b]:
                    assert result.scores[a] == result.scores[b] and result.ranks[a] == result.ranks[b]
    for seat in range(players):
        better = sum(1 for other in result.scores if other > result.scores[seat])
        assert result.ranks[seat] == better
    msgpack.packb(final.reveal())
    msgpack.packb(result.to_wire())


@pytest.mark.parametrize("name,players,options", list(cases()))
def test_same_seed_same_game_and_replay(name, players, options):
    game = all_games()[name]
    record, result, events, _ = playout(game, players, options, 1234)
    record2, result2, events2, _ = playout(game, players, options, 1234)
    assert record == record2 and result == result2 and events == events2
    # Replay from the record alone (seed + actions) reproduces the game.
    state = game.new_state(players, options, 1234)
    replayed_events = []
    for seat, action in record:
        assert state.to_move() == seat
        replayed_events.extend(state.checked_apply(action))
    assert state.is_over() and state.result() == result and replayed_events == events


@pytest.mark.parametrize("name,players,options", list(cases()))
def test_different_seeds_deal_differently(name, players, options):
    game = all_games()[name]
    views = {repr(game.new_state(players, options, seed).view(0)) for seed in range(6)}
    assert len(views) > 1


@pytest.mark.parametrize("name,players,options", list(cases()))
def test_clone_is_independent(name, players, options):
    game = all_games()[name]
    state = game.new_state(players, options, 99)
    rng = random.Random(7)
    for _ in range(5):
        if state.is_over():
            break
        state.apply(random_action(state.legal_actions(), rng))
    if state.is_over():
        return
    copy = state.clone()
    before = repr(state.view(state.to_move()))
    copy.apply(random_action(copy.legal_actions(), rng))
    assert repr(state.view(state.to_move())) == before


@pytest.mark.parametrize("name", GAMES)
def test_spec_is_complete(name):
    spec = all_games()[name].spec
    assert spec.name == name and spec.title and spec.rules_version and spec.summary
    assert 2 <= spec.min_players <= spec.max_players
    assert spec.partnerships in ("none", "fixed", "optional")
    defaults = spec.resolve_options({})
    assert set(defaults) == {o.name for o in spec.options}


def test_every_legal_entry_counts_its_concrete_actions():
    assert concrete_actions({"type": "bet", "amount": {"min": 1, "max": 5}}) == 5
    assert concrete_actions({"type": "stay"}) == 1
