"""Casino: take the most valuable capture, build only what is likely to come back, trail the cheapest card.

Every legal action gets a one-ply score in scoring points: what it puts in our pile now, what a
build is expected to bring back (minus what it gives away if an opponent takes it), or what a
trail exposes. Cards are wire strings ("10D", "AS", "QH").
"""

from __future__ import annotations

import random
from typing import Any

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


def decide(view: dict[str, Any], legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """The best-scoring legal action (the first listed among equals, so play is deterministic)."""
    return max(legal, key=lambda action: score(view, action))
