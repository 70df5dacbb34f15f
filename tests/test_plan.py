"""A run's plan (runner/tournament/planning/plan.py): a full schedule and an SPRT behind one interface, in memory."""

from __future__ import annotations

from pathlib import Path

from cardarena.tournament.planning.league import LeagueOverrides, build_league
from cardarena.tournament.planning.plan import FullSchedule, SequentialPlan, plan_of
from cardarena.tournament.planning.sprt import SprtSettings

BOTS = {"bots": ["new=python a.py", "old=python b.py"], "games": ["casino"], "deals": 2}


def test_a_full_schedule_plays_what_is_not_recorded_and_is_never_decided_early():
    plan = plan_of(build_league(BOTS, Path("."), "x.toml"), "key")
    assert isinstance(plan, FullSchedule) and plan.shape(None) == "1 table," and plan.total == 4
    first = plan.matches[0].games[0].game_id
    left = plan.unplayed({first})
    assert sum(len(match.games) for match in left) == 3 and first not in {g.game_id for m in left for g in m.games}
    plan.record(first, ["new", "old"], [0, 1])
    assert not plan.decided and plan.progress_extra() is None and plan.report(1) is None and plan.exit_status() == 0


def test_an_sprt_plan_counts_the_recorded_games_and_exits_3_while_undecided():
    overrides = LeagueOverrides(challengers=("new",), baseline="old", max_games=40, sprt=SprtSettings(0, 5))
    league = build_league(BOTS, Path("."), "x.toml", overrides)
    plan = plan_of(league, "key")
    assert isinstance(plan, SequentialPlan) and plan.total <= 40
    assert plan.shape(league) == "SPRT of new against old, up to"
    one_set = [game for match in plan.matches for game in match.games
               if plan.sets.set_of[game.game_id] == 0]
    for game in one_set:  # the first duplicate set finishes, the first seat winning every game
        plan.record(game.game_id, ["new", "old"] if game.seating[0] == 0 else ["old", "new"], [0, 1])
    assert plan.sets.test.sets == 1 and plan.progress_extra()().endswith("1 sets")
    assert not plan.decided and plan.exit_status() == 3
    assert "undecided after 4 games (the cap, --max-games, is 40)" in plan.report(4)
