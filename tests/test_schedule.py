"""The schedule: rotations and duplicate deals, round robin and gauntlet tables, balance, determinism."""

from __future__ import annotations

import hashlib
import itertools
import random
from collections import Counter

from hypothesis import given, settings, strategies as st

from cardarena.tournament.planning.schedule import (
    GameSettings,
    balanced_groups,
    derive_seed,
    fill_seats,
    rotations,
    schedule,
)

CASINO = GameSettings("casino", players=2, deals=3)
RUMMY = GameSettings("knock-rummy", players=4, deals=2)
CUAJO = GameSettings("cuajo", players=4, deals=2, partnership=True)
QUITLOK = GameSettings("quitlok", players=5, deals=1)
ALL_GAMES = ("casino", "knock-rummy", "cuajo", "quitlok")
KEY = "a deal key"  # what a tournament's deal seeds derive from: the results file's secret, or a deal seed


def entrants(*names: str) -> dict[str, tuple[str, ...]]:
    return {name: ALL_GAMES for name in names}


def bots_by_seat(match, game):
    return [match.lineup[index] for index in game.seating]


def test_derive_seed_is_sha256_of_the_parts():
    expected = int.from_bytes(hashlib.sha256("7\x1fcasino\x1fa+b\x1f0".encode()).digest()[:8], "big") >> 1
    assert derive_seed(7, "casino", "a+b", 0) == expected


def test_rotations_seat_every_bot_in_every_seat_once():
    seatings = rotations(["a", "b", "c", "d"])
    assert len(seatings) == 4
    for seat in range(4):
        assert sorted(seating[seat] for seating in seatings) == [0, 1, 2, 3]


def test_rotations_of_a_lineup_of_copies_are_distinct():
    assert rotations(["a", "b", "a", "b"]) == [(0, 1, 2, 3), (1, 2, 3, 0)]


def test_every_rotation_of_a_deal_gets_the_same_cards_and_deals_differ():
    matches = schedule(entrants("a", "b", "c", "d"), [RUMMY], seed=5, deal_key=KEY)
    (match,) = matches
    by_deal = {}
    for game in match.games:
        by_deal.setdefault(game.deal, set()).add(game.seed)
    assert all(len(seeds) == 1 for seeds in by_deal.values())
    assert len({next(iter(seeds)) for seeds in by_deal.values()}) == RUMMY.deals
    assert len(match.games) == RUMMY.deals * 4
    for deal in range(RUMMY.deals):
        seats = [bots_by_seat(match, g) for g in match.games if g.deal == deal]
        assert all(sorted(column) == ["a", "b", "c", "d"] for column in zip(*seats))
        assert len({g.cluster for g in match.games if g.deal == deal}) == 1


def test_round_robin_plays_every_combination_once():
    matches = schedule(entrants("a", "b", "c", "d", "e"), [CASINO, GameSettings("knock-rummy", 3, 1)], seed=1,
                       deal_key=KEY)
    casino = sorted(m.lineup for m in matches if m.game == "casino")
    rummy = sorted(m.lineup for m in matches if m.game == "knock-rummy")
    assert casino == sorted(itertools.combinations("abcde", 2))
    assert rummy == sorted(itertools.combinations("abcde", 3))
    assert all(len(m.games) == 3 * 2 for m in matches if m.game == "casino")


def test_game_ids_are_unique_and_name_game_table_deal_rotation():
    matches = schedule(entrants("a", "b", "c"), [CASINO, RUMMY, CUAJO, QUITLOK], seed=2, deal_key=KEY)
    ids = [g.game_id for m in matches for g in m.games]
    assert len(ids) == len(set(ids))
    assert "casino/a+b/d2/r1" in ids


def test_fewer_bots_than_seats_fill_the_table_evenly():
    assert fill_seats(["a", "b"], 5) == [("a", "b", "a", "b", "a"), ("b", "a", "b", "a", "b")]
    matches = schedule(entrants("a", "b", "c"), [QUITLOK], seed=3, deal_key=KEY)
    seat_counts = Counter(bot for m in matches for g in m.games for bot in bots_by_seat(m, g))
    assert set(seat_counts) == {"a", "b", "c"} and len(set(seat_counts.values())) == 1


def test_partners_are_copies_by_default():
    matches = schedule(entrants("a", "b", "c"), [CUAJO], seed=4, deal_key=KEY)
    assert sorted(m.lineup for m in matches) == [("a", "b", "a", "b"), ("a", "c", "a", "c"), ("b", "c", "b", "c")]
    for match in matches:
        assert len(match.games) == CUAJO.deals * 2  # each side of the table once per deal
        for game in match.games:
            seats = bots_by_seat(match, game)
            assert seats[0] == seats[2] and seats[1] == seats[3]


def test_partners_any_seats_distinct_bots_together():
    settings_any = GameSettings("cuajo", 4, 1, partnership=True, partners="any")
    matches = schedule(entrants("a", "b", "c", "d", "e"), [settings_any], seed=4, deal_key=KEY)
    assert len(matches) == 5 and all(len(set(m.lineup)) == 4 for m in matches)


def test_bots_only_enter_the_games_they_play():
    matches = schedule({"a": ("casino",), "b": ALL_GAMES, "c": ALL_GAMES}, [CASINO, RUMMY], seed=1,
                       deal_key=KEY)
    assert all("a" not in m.lineup for m in matches if m.game == "knock-rummy")
    assert sum(m.game == "casino" for m in matches) == 3


def test_gauntlet_puts_one_challenger_at_every_table_against_the_field():
    matches = schedule(entrants("new", "x", "y", "z"), [CASINO, RUMMY], seed=1, challengers=["new"], deal_key=KEY)
    assert sorted(m.lineup for m in matches if m.game == "casino") == [("new", "x"), ("new", "y"), ("new", "z")]
    assert [m.lineup for m in matches if m.game == "knock-rummy"] == [("new", "x", "y", "z")]


def test_schedule_is_a_pure_function_of_its_inputs():
    arguments = (entrants("a", "b", "c", "d", "e", "f"), [CASINO, RUMMY, CUAJO, QUITLOK], 9)
    assert schedule(*arguments, max_tables=4, deal_key=KEY) == schedule(*arguments, max_tables=4, deal_key=KEY)
    tables = {m.lineup for m in schedule(*arguments, max_tables=4, deal_key=KEY)}
    assert tables != {m.lineup for m in schedule(arguments[0], arguments[1], 10, max_tables=4, deal_key=KEY)}


def deal_seeds(matches) -> dict[str, int]:
    return {g.game_id: g.seed for m in matches for g in m.games}


def test_the_deals_come_from_the_deal_key_and_not_from_the_seed():
    bots, games = entrants("a", "b", "c"), [CASINO, RUMMY]
    dealt = deal_seeds(schedule(bots, games, 1, deal_key=KEY))
    assert deal_seeds(schedule(bots, games, 2, deal_key=KEY)) == dealt  # the seed only samples tables
    other = deal_seeds(schedule(bots, games, 1, deal_key="another key"))
    assert other.keys() == dealt.keys() and not set(other.values()) & set(dealt.values())
    assert dealt["casino/a+b/d1/r0"] == derive_seed(KEY, "casino", "a+b", 1)


def test_adding_a_bot_keeps_every_existing_game():
    before = schedule(entrants("a", "b", "c", "d"), [CASINO, RUMMY, CUAJO], seed=6, deal_key=KEY)
    after = schedule(entrants("a", "b", "c", "d", "e"), [CASINO, RUMMY, CUAJO], seed=6, deal_key=KEY)
    old = {(g.game_id, g.seed, g.seating) for m in before for g in m.games}
    new = {(g.game_id, g.seed, g.seating) for m in after for g in m.games}
    assert old <= new
    old_tables = {m.match_id for m in before}
    assert all("e" in m.lineup for m in after if m.match_id not in old_tables)


def test_too_many_combinations_become_a_balanced_sample():
    bots = [f"bot{i:02}" for i in range(12)]
    matches = schedule(entrants(*bots), [QUITLOK], seed=1, max_tables=40, deal_key=KEY)
    assert len(matches) == 40
    pair_counts = Counter(frozenset(pair) for m in matches for pair in itertools.combinations(m.lineup, 2))
    counts = [pair_counts[frozenset(pair)] for pair in itertools.combinations(bots, 2)]
    assert max(counts) - min(counts) <= 2


def pair_and_seat_spread(names, groups):
    """max − min of how often each pair shares a group, and of how often each bot is seated."""
    pair_counts = Counter(frozenset(pair) for group in groups for pair in itertools.combinations(group, 2))
    counts = [pair_counts[frozenset(pair)] for pair in itertools.combinations(names, 2)]
    seats = Counter(bot for group in groups for bot in group)
    return max(counts) - min(counts), max(seats[name] for name in names) - min(seats[name] for name in names)


@settings(max_examples=30, deadline=None)
@given(bots=st.integers(6, 16), size=st.integers(2, 6), tables=st.integers(5, 60), seed=st.integers(0, 10**6))
def test_balanced_groups_are_deterministic_and_never_far_off(bots, size, tables, seed):
    names = [f"b{i}" for i in range(bots)]
    size = min(size, bots - 1)
    groups = balanced_groups(names, size, tables, seed)
    assert len(groups) == tables and all(len(set(group)) == size for group in groups)
    pair_spread, seat_spread = pair_and_seat_spread(names, groups)
    assert pair_spread <= 3 and seat_spread <= 1
    assert balanced_groups(names, size, tables, seed) == groups


def test_balanced_groups_share_every_pair_equally_often_within_one_almost_always():
    """Pair counts within ±1 of a common value (max − min ≤ 2) in at least 98% of 200 set-ups."""
    rng = random.Random(0)
    balanced = 0
    for trial in range(200):
        bots = rng.randint(6, 16)
        names = [f"b{i}" for i in range(bots)]
        groups = balanced_groups(names, min(rng.randint(2, 6), bots - 1), rng.randint(5, 60), trial)
        balanced += pair_and_seat_spread(names, groups)[0] <= 2
    assert balanced >= 196


def test_portions_keep_duplicate_sets_whole_and_cover_every_game_once():
    from cardarena.tournament.execution.execute import MIN_PORTION_GAMES, PORTIONS_PER_WORKER, portions

    plans = schedule({"a": ["knock-rummy"], "b": ["knock-rummy"]},
                     [GameSettings("knock-rummy", players=4, deals=40)], seed=3, deal_key=KEY)
    assert len(plans) == 1  # one four-seat table for two bots: nothing to run in parallel
    cut = portions(plans, jobs=2)
    assert 2 <= len(cut) <= 2 * PORTIONS_PER_WORKER + 1
    assert all(len(portion.games) >= MIN_PORTION_GAMES for portion in cut[:-1])
    assert [g for m in cut for g in m.games] == list(plans[0].games)
    for portion in cut:
        assert portion.match_id == plans[0].match_id and portion.lineup == plans[0].lineup
        clusters = [g.cluster for g in portion.games]
        for cluster in set(clusters):  # every set it touches, it holds entirely
            assert clusters.count(cluster) == sum(g.cluster == cluster for g in plans[0].games)
    assert portions(plans, jobs=1) == plans
