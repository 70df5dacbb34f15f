"""Casino: take the most valuable capture, build only what is likely to come back, trail the cheapest card.

Every complete move gets a one-ply score in scoring points: what it puts in our pile now, what a
build is expected to bring back (minus what it gives away if an opponent takes it), or what a
trail exposes. Captures and builds are made in steps (runner/games/casino.md § Actions on the
wire), so the bot lists the complete moves itself from the view (a capped number of table-card
sets per start), starts the best one and then takes its items one step at a time. It keeps no
memory between decisions: the view's "move" says which move is under way. Cards are wire
strings ("10D", "AS", "QH").
"""

from __future__ import annotations

import random
from functools import lru_cache
from itertools import combinations

TYPE_CHECKING = False  # typing's own flag: importing typing costs every start of the bot 4 ms
if TYPE_CHECKING:
    from typing import Any, Iterator

#: the share of the 3 "most cards" points one captured card is roughly worth
CARD_WORTH = 0.2
#: the share of the 1 "most spades" point one captured spade is roughly worth
SPADE_WORTH = 0.15
#: point cards: each ace 1, big casino (10 of diamonds) 2, little casino (2 of spades) 1
POINT_CARDS = {"AC": 1.0, "AD": 1.0, "AH": 1.0, "AS": 1.0, "10D": 2.0, "2S": 1.0}
#: clearing the table scores a point with the `sweeps` variant and leaves the next player nothing to take
SWEEP_WORTH = 0.5
#: a trail always hands material to the table; this keeps any useful capture or build above it
TRAIL_COST = 0.1
NUMBER_RANKS = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "10": 10}
#: deck order, the order in which a move takes its loose cards: by rank A..K, then suit C, D, H, S
RANK_ORDER = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUIT_ORDER = "CDHS"
#: the most sets of table cards examined per started move: crowded tables have exponentially many
MAX_SELECTIONS = 600


def worth(card: str) -> float:
    """What having `card` in our capture pile is roughly worth in points."""
    return CARD_WORTH + (SPADE_WORTH if card.endswith("S") else 0.0) + POINT_CARDS.get(card, 0.0)


def number_value(card: str) -> int | None:
    """The capturing value of a number card (A = 1 .. 10), None for a face card."""
    return NUMBER_RANKS.get(card[:-1])


def opponents(view: dict[str, Any]) -> list[int]:
    """The seats playing against us (everyone else, or the other team in partnerships)."""
    me, teams = view["seat"], view["teams"]
    return [seat for seat in range(len(view["players"]))
            if seat != me and (teams is None or teams[seat] != teams[me])]


def steal_chance(view: dict[str, Any], value: int) -> float:
    """The chance that some opponent holds a card of `value`, judging from the cards we cannot see."""
    table = view["table"]
    in_sight = view["hand"] + table["loose"] + [c for build in table["builds"] for c in build["cards"]]
    copies_hidden = 4 - sum(1 for card in in_sight if number_value(card) == value)
    sides = {seat if view["teams"] is None else view["teams"][seat]: player["captured"]
             for seat, player in enumerate(view["players"])}
    unknown = 52 - len(in_sight) - sum(sides.values())
    held = sum(view["players"][seat]["hand_size"] for seat in opponents(view))
    if unknown <= 0 or copies_hidden <= 0:
        return 0.0
    return 1.0 - (1.0 - min(1.0, held / unknown)) ** copies_hidden


def build_cards(view: dict[str, Any], build_id: int) -> list[str]:
    """The cards of the table build with id `build_id`."""
    return next(build["cards"] for build in view["table"]["builds"] if build["id"] == build_id)


def build_value(view: dict[str, Any], build_id: int) -> int:
    """The announced value of the table build with id `build_id`."""
    return next(build["value"] for build in view["table"]["builds"] if build["id"] == build_id)


def capture_score(view: dict[str, Any], action: dict[str, Any]) -> float:
    """The points a capture puts in our pile, with a bonus when it clears the table."""
    taken = [action["card"], *action["loose"]]
    for build_id in action["builds"]:
        taken += build_cards(view, build_id)
    table = view["table"]
    sweeps = (len(action["loose"]) == len(table["loose"]) and len(action["builds"]) == len(table["builds"]))
    return sum(worth(card) for card in taken) + (SWEEP_WORTH if sweeps else 0.0)


def building_score(view: dict[str, Any], cards: list[str], value: int) -> float:
    """A build's expected return: its cards plus our capturing card if we keep it, their gain if stolen."""
    at_stake = sum(worth(card) for card in cards) + CARD_WORTH
    return at_stake * (1.0 - 2.0 * steal_chance(view, value))


def trail_score(action: dict[str, Any]) -> float:
    """A trail gives the played card to the table: the more it is worth, the worse."""
    return -worth(action["card"]) - TRAIL_COST


def score(view: dict[str, Any], action: dict[str, Any]) -> float:
    """The one-ply score of any Casino action."""
    kind = action["type"]
    if kind == "capture":
        return capture_score(view, action)
    if kind == "build":
        return building_score(view, [action["card"], *action["loose"]], action["value"])
    if kind in ("increase", "add"):
        cards = [action["card"], *action["loose"], *build_cards(view, action["build"])]
        value = action["value"] if kind == "increase" else build_value(view, action["build"])
        return building_score(view, cards, value)
    if kind == "trail_build":
        return building_score(view, action["loose"], action["value"]) + trail_score(action)
    return trail_score(action)


def deck_order(card: str) -> tuple[int, int]:
    """The sort key of deck order."""
    return RANK_ORDER.index(card[:-1]), SUIT_ORDER.index(card[-1])


def _removals(values: tuple[int, ...], amount: int) -> Iterator[tuple[int, ...]]:
    """What is left of the sorted `values` after taking out some of them summing to `amount`."""
    if amount == 0:
        yield values
        return
    for index, value in enumerate(values):
        if value <= amount and (index == 0 or values[index - 1] != value):
            yield from _removals(values[:index] + values[index + 1:], amount - value)


@lru_cache(maxsize=None)
def splits(values: tuple[int, ...], target: int) -> bool:
    """Whether the sorted card `values` split into groups each summing to `target`."""
    if not values:
        return True
    largest, rest = values[-1], values[:-1]
    return largest <= target and any(splits(left, target) for left in _removals(rest, target - largest))


def turn_start(view: dict[str, Any]) -> dict[str, Any]:
    """The view as at the start of the turn: the move's card back in hand, its loose cards back on the table."""
    move = view["move"]
    if move is None:
        return view
    table = dict(view["table"], loose=sorted(view["table"]["loose"] + move["loose"], key=deck_order))
    return dict(view, hand=view["hand"] + [move["card"]], table=table)


def completions(view: dict[str, Any], move: dict[str, Any]) -> list[dict[str, Any]]:
    """Complete moves that finish `move` (a first decision, or the move in progress), as the rules allow.

    `view` is the turn-start view. Loose cards are added after the last one taken, in deck order;
    a capture takes every build of its value not yet passed (each adds to the pile). At most
    MAX_SELECTIONS sets of added loose cards are examined, smallest first.
    """
    kind, card = move["type"], move["card"]
    if kind == "trail":
        return [move]
    taken = move.get("loose", [])
    last = deck_order(taken[-1]) if taken else (-1, -1)
    later = [c for c in view["table"]["loose"] if deck_order(c) > last]
    value = number_value(card)
    if value is None and kind == "capture":  # a face card captures one face card of its rank
        return [move] if taken else [dict(move, loose=[c], builds=[]) for c in later if c[:-1] == card[:-1]]
    builds = list(move.get("builds", []))
    if kind == "capture" and not taken:
        passed = builds[-1] if builds else 0
        builds += [b["id"] for b in view["table"]["builds"] if b["value"] == value and b["id"] > passed]
    later = [c for c in later if number_value(c) is not None]
    found = []
    examined = 0
    for size in range(len(later) + 1):
        for extra in combinations(later, size):
            examined += 1
            if examined > MAX_SELECTIONS:
                return found
            loose = taken + list(extra)
            if _completes(view, move, loose, builds):
                found.append(dict(move, loose=loose, builds=builds) if kind == "capture" else dict(move, loose=loose))
    return found


def _completes(view: dict[str, Any], move: dict[str, Any], loose: list[str], builds: list[int]) -> bool:
    """Whether `move` with the `loose` cards (and, for a capture, `builds`) is a complete legal move."""
    kind, card = move["type"], number_value(move["card"])
    values = sorted(number_value(c) for c in loose)
    if kind == "capture":
        return bool(loose or builds) and splits(tuple(values), card)
    if kind == "build":
        return bool(loose) and splits(tuple(sorted(values + [card])), move["value"])
    if kind == "increase":
        raised = build_value(view, move["build"]) + card
        return splits(tuple(sorted(values + [raised])), move["value"])
    if kind == "add":
        return sum(values) == build_value(view, move["build"]) - card
    return len(loose) >= 2 and splits(tuple(values), move["value"])  # trail_build


def best_completion(view: dict[str, Any], move: dict[str, Any]) -> tuple[float, dict[str, Any] | None]:
    """The best-scoring complete move finishing `move`, with its score (None if none was found)."""
    found = completions(view, move)
    if not found:
        return float("-inf"), None
    best = max(found, key=lambda complete: score(view, complete))
    return score(view, best), best


def started(entry: dict[str, Any]) -> dict[str, Any]:
    """A first decision as a move in progress with nothing taken yet (a trail is complete as it is)."""
    if entry["type"] == "trail":
        return entry
    return dict(entry, loose=[], builds=[]) if entry["type"] == "capture" else dict(entry, loose=[])


def next_step(move: dict[str, Any], target: dict[str, Any]) -> dict[str, Any]:
    """The step from the move in progress towards the complete move `target`: builds, then loose cards, then done."""
    new_builds = target.get("builds", [])[len(move.get("builds", [])):]
    if new_builds:
        return {"type": "take", "build": new_builds[0]}
    new_loose = target["loose"][len(move["loose"]):]
    if new_loose:
        return {"type": "take", "loose": new_loose[0]}
    return {"type": "done"}


def decide(view: dict[str, Any], legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """Start the best-scoring complete move, or take its next step (the first listed among equals)."""
    start = turn_start(view)
    move = view["move"]
    if move is None:
        return max(legal, key=lambda entry: best_completion(start, started(entry))[0])
    _, target = best_completion(start, move)
    step = next_step(move, target) if target is not None else None
    return step if step in legal else legal[0]
