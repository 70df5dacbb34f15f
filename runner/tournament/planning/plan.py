"""What a run plays and when it is done: a full schedule, or an SPRT that stops once it decides.

A run drives either the same way: it plays `matches` (less what is recorded already), tells the
plan each game that finishes (`record`), and stops early when the plan is `decided`. Whatever
differs between the two (the line that announces the run, the progress line's extra, the report
after the leaderboards, the exit status) is the plan's to say, so the run has no branch for it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Any, Callable, Iterable, Sequence

from cardarena.tournament.planning.league import League
from cardarena.tournament.planning.schedule import PlannedMatch, schedule, sprt_schedule
from cardarena.tournament.planning.sprt import H0, H1, DuplicateSets, SequentialTest


class RunPlan(ABC):
    """The matches of a run, and what the run tells about them."""

    def __init__(self, matches: Sequence[PlannedMatch]):
        self.matches = list(matches)

    @property
    def total(self) -> int:
        """Games planned (for an SPRT: at most)."""
        return sum(len(match.games) for match in self.matches)

    def unplayed(self, finished: set[str]) -> list[PlannedMatch]:
        """The matches with their games not in `finished`."""
        return [replace(match, games=tuple(game for game in match.games if game.game_id not in finished))
                for match in self.matches if any(game.game_id not in finished for game in match.games)]

    @abstractmethod
    def shape(self, league: League) -> str:
        """What is played, for the line that announces the run ("6 tables,", "SPRT of a against b, up to")."""

    def record(self, game_id: str, seats: Sequence[str], ranks: Sequence[int]) -> None:
        """Hear of a finished game (bot per seat, rank per seat)."""

    @property
    def decided(self) -> bool:
        """Whether the games heard of settle the run before its end."""
        return False

    def progress_extra(self) -> Callable[[], str] | None:
        """What the progress line adds to the games and the leader, if anything."""
        return None

    def report(self, played: int) -> str | None:
        """What is said after the leaderboards, once `played` games are recorded."""
        return None

    def exit_status(self) -> int:
        """The run's exit status as far as the plan goes."""
        return 0


class FullSchedule(RunPlan):
    """A round robin or a gauntlet: every game of the schedule is played."""

    def shape(self, league: League) -> str:
        return f"{len(self.matches)} table{'' if len(self.matches) == 1 else 's'},"


class SequentialPlan(RunPlan):
    """An SPRT of the league's one challenger against its baseline on duplicate sets, up to the
    league's cap of games; it is decided once the test accepts a hypothesis."""

    def __init__(self, league: League, deal_key: str):
        challenger, baseline = league.challengers[0], league.baseline
        planned = sprt_schedule({e.name: e.games for e in league.entrants}, league.games, league.seed, challenger,
                                baseline, league.max_games, league.max_tables, deal_key=deal_key)
        super().__init__(planned.matches)
        self.league = league
        self.sets = DuplicateSets(planned.set_of, challenger, baseline, SequentialTest(league.sprt))

    def shape(self, league: League) -> str:
        return f"SPRT of {league.challengers[0]} against {league.baseline}, up to"

    def record(self, game_id: str, seats: Sequence[str], ranks: Sequence[int]) -> None:
        if game_id in self.sets.set_of:
            self.sets.add(game_id, seats, ranks)

    @property
    def decided(self) -> bool:
        return self.sets.test.decision is not None

    def progress_extra(self) -> Callable[[], str]:
        return self._llr_text

    def _llr_text(self) -> str:
        test = self.sets.test
        return f"LLR {test.llr:.2f} ({test.settings.lower:.2f}, {test.settings.upper:.2f}), {test.sets} sets"

    def report(self, played: int) -> str:
        """The decision, the LLR and its bounds, the Elo difference, the games."""
        test, settings, league = self.sets.test, self.league.sprt, self.league
        challenger, baseline = league.challengers[0], league.baseline
        verdict = {H1: f"H1 accepted ({challenger} at least {settings.elo1:g} Elo stronger than {baseline})",
                   H0: f"H0 accepted ({challenger} at most {settings.elo0:g} Elo stronger than {baseline})",
                   None: f"undecided after {played} games (the cap, --max-games, is {league.max_games})"}
        estimate = test.estimate()
        elo = ("no duplicate set finished" if estimate is None else
               f"Elo difference {estimate.elo:+.1f} (95% interval {estimate.low:+.1f} to {estimate.high:+.1f})")
        return (f"SPRT {challenger} vs {baseline} ({settings}): {verdict[test.decision]}\n"
                f"LLR {test.llr:.3f} (bounds {settings.lower:.3f}, {settings.upper:.3f}) after {test.sets} duplicate "
                f"sets ({self.sets.games_counted} games); {elo}; {played} games played")

    def exit_status(self) -> int:
        """0 when H1 is accepted, 1 for H0, 3 when undecided at the cap."""
        return {H1: 0, H0: 1}.get(self.sets.test.decision, 3)


def plan_of(league: League, deal_key: str, recorded: Iterable[Any] = ()) -> RunPlan:
    """The league's plan, every deal seed derived from `deal_key`, brought up to date with the games
    already `recorded` (each with its game_id, seats and ranks)."""
    if league.sprt is None:
        return FullSchedule(schedule({e.name: e.games for e in league.entrants}, league.games, league.seed,
                                     league.challengers, league.max_tables, deal_key=deal_key))
    plan = SequentialPlan(league, deal_key)
    for game in recorded:
        plan.record(game.game_id, game.seats, game.ranks)
    return plan
