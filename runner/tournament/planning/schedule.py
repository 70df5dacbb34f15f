"""The schedule of a tournament: a pure function of entrants, settings, seed and deal key → matches of games.

A *table* is a lineup of bots (one per seat, copies allowed). Each table plays `deals` deals,
and each deal once per distinct seat rotation of the lineup with the same cards (duplicate
format), so every bot at the table meets the same luck from every seat. A *match* is one
table's games; the executor plays them rotation by rotation with fresh bot processes for each,
so that no process plays a deal twice.

The seed shapes only which tables a large league samples. Deal seeds come from SHA-256 of the
deal key, the game, the table's lineup and the deal number: the key is a secret kept in the
results file (so no bot can compute a deal from a game id and the league file), or an explicit
deal seed the organiser chose for a demo or a test. A table's games do not depend on which other
tables exist: adding a bot to a league adds tables and leaves the finished ones valid.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence

from cardarena.errors import CardarenaError

ROUND_ROBIN = "round-robin"
GAUNTLET = "gauntlet"
FORMATS = (ROUND_ROBIN, GAUNTLET)
PARTNERS_COPY = "copy"  # in partnership games a bot partners its own copy
PARTNERS_ANY = "any"  # partnership games seat any bots together, like other games
#: table sizes used when a league does not set one (other games: their minimum)
DEFAULT_PLAYERS = {"casino": 2, "knock-rummy": 4, "cuajo": 4, "quitlok": 5}


@dataclass(frozen=True)
class GameSettings:
    """How one game is played in a tournament: table size, deals per table, rule options."""

    name: str
    players: int
    deals: int
    options: Mapping[str, Any] = field(default_factory=dict)
    partnership: bool = False  # seats s and s+2 form a team
    partners: str = PARTNERS_COPY


@dataclass(frozen=True)
class PlannedGame:
    """One game of a match: its id, deal, rotation, seed, and the bot index (in the lineup) per seat."""

    game_id: str
    deal: int
    rotation: int
    seed: int
    seating: tuple[int, ...]

    @property
    def cluster(self) -> str:
        """The duplicate set this game belongs to: the same deal at the same table."""
        return self.game_id.rsplit("/", 1)[0]


@dataclass(frozen=True)
class PlannedMatch:
    """A table's games: the game, its options, the lineup of bots and every planned game."""

    match_id: str
    game: str
    options: Mapping[str, Any]
    lineup: tuple[str, ...]
    games: tuple[PlannedGame, ...]


def derive_seed(*parts: Any) -> int:
    """A 63-bit seed from SHA-256 of the parts (stable across runs, unlike Python's `hash`)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def rotations(lineup: Sequence[str]) -> list[tuple[int, ...]]:
    """Distinct seat rotations of a lineup, as seatings (lineup index per seat).

    Rotation r puts lineup member (seat + r) mod n in each seat; rotations that give the same
    bots per seat as an earlier one (a lineup of copies repeats) are left out.
    """
    size = len(lineup)
    seen: set[tuple[str, ...]] = set()
    seatings: list[tuple[int, ...]] = []
    for shift in range(size):
        seating = tuple((seat + shift) % size for seat in range(size))
        names = tuple(lineup[index] for index in seating)
        if names not in seen:
            seen.add(names)
            seatings.append(seating)
    return seatings


def fill_seats(members: Sequence[str], seats: int) -> list[tuple[str, ...]]:
    """Lineups seating fewer bots than seats: members repeat in turn, each starting once, so
    every member holds the extra seats equally often across the lineups."""
    if len(members) >= seats:
        return [tuple(members)]
    filled: list[tuple[str, ...]] = []
    for offset in range(len(members)):
        lineup = tuple(members[(offset + seat) % len(members)] for seat in range(seats))
        if all(lineup[shift:] + lineup[:shift] not in filled for shift in range(seats)):
            filled.append(lineup)
    return filled


def balanced_groups(bots: Sequence[str], size: int, count: int, seed: int,
                    attempts: int = 30) -> list[tuple[str, ...]]:
    """`count` groups of `size` bots in which every pair shares a group equally often (±1).

    Seeded attempts of `_balanced_attempt`, stopping at the first whose pair counts are all
    within one of a common value (max − min ≤ 2) and seat counts within one; otherwise the
    most even attempt.
    """
    rng = random.Random(seed)
    best: tuple[tuple[int, int, int], list[tuple[str, ...]]] | None = None
    for _ in range(attempts):
        groups = _balanced_attempt(bots, size, count, rng)
        pairs = Counter(frozenset(p) for group in groups for p in itertools.combinations(group, 2))
        pair_counts = [pairs[frozenset(p)] for p in itertools.combinations(bots, 2)]
        seats = Counter(bot for group in groups for bot in group)
        seat_counts = [seats[bot] for bot in bots]
        unevenness = (max(max(pair_counts) - min(pair_counts) - 2, 0) + max(max(seat_counts) - min(seat_counts) - 1, 0),
                      max(pair_counts) - min(pair_counts), sum(c * c for c in pair_counts))
        if best is None or unevenness < best[0]:
            best = (unevenness, groups)
        if unevenness[0] == 0:
            break
    return best[1]


def _balanced_attempt(bots: Sequence[str], size: int, count: int, rng: random.Random) -> list[tuple[str, ...]]:
    """One try at balanced groups: a greedy start (each group adds the bot whose pairs with the
    members are rarest, ties broken by `rng`), improved by swapping single members while that
    lowers the sum of squared pair and seat counts, which evens both out."""
    pair_count: Counter = Counter()
    seat_count: Counter = Counter()
    groups: list[list[str]] = []
    for _ in range(count):
        order = list(bots)
        rng.shuffle(order)
        group = [min(order, key=lambda bot: seat_count[bot])]
        while len(group) < size:
            group.append(min((bot for bot in order if bot not in group), key=lambda bot: (
                sum(pair_count[frozenset((bot, member))] for member in group), seat_count[bot])))
        for a, b in itertools.combinations(group, 2):
            pair_count[frozenset((a, b))] += 1
        for bot in group:
            seat_count[bot] += 1
        groups.append(group)
    improved = True
    while improved:
        improved = False
        for group in groups:
            for position, leaving in enumerate(group):
                others = [bot for bot in group if bot != leaving]
                for joining in bots:
                    if joining in group:
                        continue
                    change = 2 * (seat_count[joining] - seat_count[leaving] + 1) + sum(
                        2 * (pair_count[frozenset((joining, o))] - pair_count[frozenset((leaving, o))] + 1)
                        for o in others)
                    if change < 0:
                        for o in others:
                            pair_count[frozenset((leaving, o))] -= 1
                            pair_count[frozenset((joining, o))] += 1
                        seat_count[leaving] -= 1
                        seat_count[joining] += 1
                        group[position] = leaving = joining
                        improved = True
    return sorted(tuple(sorted(group)) for group in groups)


def _groups(bots: Sequence[str], size: int, challengers: Sequence[str], max_tables: int,
            seed: int, game: str) -> list[tuple[str, ...]]:
    """The sets of bots that meet at a table: every combination, or a balanced sample of them."""
    if challengers:
        field_bots = [bot for bot in bots if bot not in challengers]
        if not field_bots:
            return []
        return [(challenger, *others) for challenger in sorted(challengers)
                for others in _groups(field_bots, size - 1, (), max_tables, seed, f"{game}/{challenger}")]
    if len(bots) <= size:
        return [tuple(bots)]
    if math.comb(len(bots), size) <= max_tables:
        return list(itertools.combinations(bots, size))
    return balanced_groups(bots, size, max_tables, derive_seed(seed, game, "sample"))


def lineups(bots: Sequence[str], settings: GameSettings, challengers: Sequence[str],
            max_tables: int, seed: int) -> list[tuple[str, ...]]:
    """Every lineup (bot per seat) of one game: groups of bots, seated to fill the table."""
    bots = sorted(bots)
    copy_partners = settings.partnership and settings.partners == PARTNERS_COPY
    # with copy partners a group is one bot per team, and the lineup repeats it round the table
    group_size = 2 if copy_partners else settings.players
    lineups: list[tuple[str, ...]] = []
    for group in _groups(bots, group_size, challengers, max_tables, seed, settings.name):
        lineups.extend(fill_seats(group, settings.players))
    return lineups


def schedule(entrants: Mapping[str, Sequence[str]], games: Sequence[GameSettings], seed: int,
             challengers: Sequence[str] = (), max_tables: int = 200, *, deal_key: str) -> list[PlannedMatch]:
    """Every match of a tournament: `entrants` maps bot name → the games it plays.

    Round robin when `challengers` is empty; otherwise a gauntlet, where each table holds one
    challenger and bots of the field. Tables with a single distinct bot are left out (nothing
    would be rated). `seed` picks the sampled tables; every deal seed derives from `deal_key`.
    """
    matches: list[PlannedMatch] = []
    for settings, lineup in _tables(entrants, games, seed, challengers, max_tables):
        table = "+".join(lineup)
        match_id = f"{settings.name}/{table}"
        planned = tuple(
            PlannedGame(game_id=f"{match_id}/d{deal}/r{rotation}", deal=deal, rotation=rotation,
                        seed=derive_seed(deal_key, settings.name, table, deal), seating=seating)
            for deal in range(settings.deals)
            for rotation, seating in enumerate(rotations(lineup))
        )
        matches.append(PlannedMatch(match_id, settings.name, dict(settings.options), lineup, planned))
    return matches


def game_count(entrants: Mapping[str, Sequence[str]], games: Sequence[GameSettings], seed: int,
               challengers: Sequence[str] = (), max_tables: int = 200) -> int:
    """How many games `schedule` plans, counted from its tables without listing the games (a size
    check before anything is built)."""
    return sum(settings.deals * len(rotations(lineup))
               for settings, lineup in _tables(entrants, games, seed, challengers, max_tables))


def _tables(entrants: Mapping[str, Sequence[str]], games: Sequence[GameSettings], seed: int,
            challengers: Sequence[str], max_tables: int) -> Iterator[tuple[GameSettings, tuple[str, ...]]]:
    """Every table of a tournament, with its game's settings: lineups holding two different bots."""
    for settings in games:
        bots = sorted(name for name, plays in entrants.items() if settings.name in plays)
        seated_challengers = [bot for bot in challengers if bot in bots]
        if challengers and not seated_challengers:
            continue
        for lineup in lineups(bots, settings, seated_challengers, max_tables, seed):
            if len(set(lineup)) >= 2:
                yield settings, lineup


SPRT_DEALS_PER_MATCH = 4  # deals a bot process set plays before the next table's turn (sets finish in order)


class ScheduleError(CardarenaError, ValueError):
    """A schedule that cannot be made from these settings (an SPRT whose bots share no game, say)."""


@dataclass(frozen=True)
class SprtPlan:
    """The schedule of an SPRT: matches in the order they should be played, and each game's duplicate set.

    Sets are numbered in schedule order, which is the order the test counts them in.
    """

    matches: tuple[PlannedMatch, ...]
    set_of: Mapping[str, int]  # game id -> duplicate set


def twin_tables(bots: Sequence[str], settings: GameSettings, challenger: str, baseline: str,
                max_tables: int, seed: int) -> list[tuple[tuple[str, ...], ...]]:
    """The tables of an SPRT in one game, each as its sides: a lineup and its twin with challenger and
    baseline exchanged (a single side when the exchange is one of the lineup's own rotations).

    With a field (other bots playing the game), the challenger's gauntlet lineups against it;
    without one, the two bots' own lineups.
    """
    field_bots = [bot for bot in bots if bot not in (challenger, baseline)]
    if field_bots:
        base = lineups([challenger, *field_bots], settings, [challenger], max_tables, seed)
    else:
        base = lineups([challenger, baseline], settings, (), max_tables, seed)
    swap = {challenger: baseline, baseline: challenger}
    tables: list[tuple[tuple[str, ...], ...]] = []
    taken: set[tuple[str, ...]] = set()
    for lineup in base:
        if lineup in taken or len(set(lineup)) < 2:
            continue
        twin = tuple(swap.get(name, name) for name in lineup)
        own = {tuple(lineup[index] for index in seating) for seating in rotations(lineup)}
        sides = (lineup,) if twin in own else (lineup, twin)
        taken.update(sides)
        tables.append(sides)
    return tables


SprtTables = list[tuple[GameSettings, tuple[tuple[str, ...], ...]]]


def sprt_tables(entrants: Mapping[str, Sequence[str]], games: Sequence[GameSettings], challenger: str,
                baseline: str, max_tables: int, seed: int) -> SprtTables:
    """Every table of an SPRT, with its game's settings: `twin_tables` of each game both bots play."""
    tables = [(settings, sides)
              for settings in games if settings.name in entrants.get(challenger, ())
              and settings.name in entrants.get(baseline, ())
              for sides in twin_tables(sorted(b for b, plays in entrants.items() if settings.name in plays),
                                       settings, challenger, baseline, max_tables, seed)]
    if not tables:
        raise ScheduleError(f"the challenger {challenger} and the baseline {baseline} have no game in common")
    return tables


def sprt_rounds(tables: SprtTables, max_games: int) -> int:
    """How many whole rounds (a deal at every table, on each side, in every rotation) fit in `max_games`."""
    per_round = sum(len(sides) * len(rotations(sides[0])) for _, sides in tables)
    if per_round > max_games:
        raise ScheduleError(f"one round of duplicate sets (a deal at every table) takes {per_round} games, "
                            f"more than max_games {max_games}")
    return max_games // per_round


def sprt_schedule(entrants: Mapping[str, Sequence[str]], games: Sequence[GameSettings], seed: int,
                  challenger: str, baseline: str, max_games: int, max_tables: int = 200, *,
                  deal_key: str) -> SprtPlan:
    """The matches of an SPRT of `challenger` against `baseline`: up to `max_games` games in whole rounds.

    A round is one deal at every table of every game both bots play; each deal is played on both
    sides of a table (the same seed: the same cards in the same seats, challenger and baseline
    exchanged), in every rotation, and makes one duplicate set. Matches hold a few deals of one
    side, ordered round after round, so sets finish roughly in schedule order.
    """
    tables = sprt_tables(entrants, games, challenger, baseline, max_tables, seed)
    rounds = sprt_rounds(tables, max_games)
    matches: list[PlannedMatch] = []
    set_of: dict[str, int] = {}
    next_set = 0
    for first in range(0, rounds, SPRT_DEALS_PER_MATCH):
        deals = range(first, min(first + SPRT_DEALS_PER_MATCH, rounds))
        for settings, sides in tables:
            key = "+".join(sides[0])
            # a match plays rotation by rotation, so its sets finish together, in deal order
            number = {deal: next_set + index for index, deal in enumerate(deals)}
            next_set += len(deals)
            for lineup in sides:
                match_id = f"{settings.name}/{'+'.join(lineup)}"
                planned = tuple(
                    PlannedGame(game_id=f"{match_id}/d{deal}/r{rotation}", deal=deal, rotation=rotation,
                                seed=derive_seed(deal_key, settings.name, key, deal), seating=seating)
                    for deal in deals for rotation, seating in enumerate(rotations(lineup)))
                matches.append(PlannedMatch(match_id, settings.name, dict(settings.options), lineup, planned))
                set_of.update((game.game_id, number[game.deal]) for game in planned)
    return SprtPlan(tuple(matches), set_of)
