"""Games for people in a terminal: cards as rank and suit symbol, moves and views as short lines.

Pure text from plain data (the wire forms of views, actions and events), shared by `play`'s live
output and the human seat. The four games' card strings never collide ("10D" is French, "Ko"
Spanish, "Q7" Quitli), so a card is recognised without knowing the game.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

FRENCH_SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
SPANISH_SUITS = {"o": "◉", "c": "Ʊ", "e": "⚔", "b": "♣"}
LEGENDS = {
    "cuajo": "Spanish suits: ◉ oros (coins), Ʊ copas (cups), ⚔ espadas (swords), ♣ bastos (batons); "
             "ranks A 3 4 5 J (jack) H (horse) K (king).",
    "quitlok": "Quitli cards are numbered 1 to 12 (two of each); ▒ is a face-down card.",
}
DEFAULT_LEGEND = "Suits: ♠ spades, ♥ hearts, ♦ diamonds, ♣ clubs; ▒ is a face-down card."
_FRENCH = re.compile(r"(A|[2-9]|10|J|Q|K)([CDHS])")
_SPANISH = re.compile(r"([A345JHK])([oceb])")
_QUITLI = re.compile(r"Q(1[0-2]|[1-9])")
#: keys whose integer value is a seat, shown with the seat's name
SEAT_KEYS = frozenset({"seat", "winner", "knocker", "banker", "owner", "last_capturer", "dealer", "turn", "to_move",
                       "next_dealer"})
FACE_DOWN = "▒"
#: keys whose list holds exact scores: an int, or [numerator, denominator]
FRACTION_KEYS = frozenset({"scores", "payments", "net"})


def card_text(value: Any) -> str | None:
    """A card's short form ("10♦", "K⚔", "7" for Quitli), or None when `value` is not a card."""
    if not isinstance(value, str):
        return None
    if match := _FRENCH.fullmatch(value):
        return match.group(1) + FRENCH_SUITS[match.group(2)]
    if match := _SPANISH.fullmatch(value):
        return match.group(1) + SPANISH_SUITS[match.group(2)]
    if match := _QUITLI.fullmatch(value):
        return match.group(1)
    return None


def seat_name(seat: int, names: Sequence[str]) -> str:
    """`name (seat n)`, or `seat n` when the seat has no name."""
    return f"{names[seat]} (seat {seat})" if 0 <= seat < len(names) else f"seat {seat}"


def value_text(value: Any, key: str = "", names: Sequence[str] = ()) -> str:
    """Any wire value in card notation: cards as symbols, seats by name, lists and maps compactly."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and key in SEAT_KEYS and names:
        return seat_name(value, names)
    card = card_text(value)
    if card is not None:
        return card
    if isinstance(value, list):
        if key in FRACTION_KEYS:
            return ", ".join(f"{v[0]}/{v[1]}" if isinstance(v, list) else value_text(v) for v in value)
        if value and all(v is None or card_text(v) is not None for v in value):
            return " ".join(FACE_DOWN if v is None else card_text(v) for v in value)
        return ", ".join(value_text(v, key, names) for v in value) if value else "none"
    if isinstance(value, dict):
        if set(value) == {"min", "max"}:
            return f"{value['min']}..{value['max']}"
        return "{" + ", ".join(f"{k} {value_text(v, k, names)}" for k, v in value.items()) + "}"
    return str(value)


def action_text(data: Mapping[str, Any], names: Sequence[str] = ()) -> str:
    """An action or event in one line: `discard 3♠ · value 8` (its `seat` left to the caller)."""
    parts = [f"{key} {value_text(value, key, names)}" if key != "card" or card_text(value) is None
             else card_text(value) for key, value in data.items() if key not in ("type", "seat")]
    head = str(data.get("type", "?"))
    return f"{head} {' · '.join(parts)}" if parts else head


def move_lines(data: Mapping[str, Any], names: Sequence[str], public_only: bool) -> list[str]:
    """The lines `play` prints for one decision (`decision`, `seat`, `action`, `events`, `fallback`).

    One line for the move, then the events it caused that say more than the move itself. With
    `public_only` (a person plays at the table), the move is told by its public events alone:
    the action itself may hold what other seats must not see (a knock card, a move in progress).
    """
    seat, action, events = data["seat"], data["action"], list(data["events"])
    mover = seat_name(seat, names) + (" (fallback)" if data.get("fallback") else "")
    own = next((e for e in events if e.get("seat") == seat and e.get("type") == action.get("type")), None)
    if own is not None and all(own.get(key) == value for key, value in action.items()):
        events.remove(own)
        move = action_text(own, names)  # the event repeats the action and may add to it (a blot's card)
    elif own is not None and not public_only and all(action.get(k) == v for k, v in own.items() if k != "seat"):
        events.remove(own)
        move = action_text(action, names)  # the event only repeats part of the action (a knock without its card)
    elif public_only:
        first = next((e for e in events if e.get("seat") == seat), None)
        if first is not None:
            events.remove(first)
        move = action_text(first, names) if first is not None else "(a step of a move not yet shown)"
    else:
        move = action_text(action, names)
    lines = [f"{data['decision']:>4}  {mover}: {move}"]
    for event in events:
        who = f"{seat_name(event['seat'], names)}: " if isinstance(event.get("seat"), int) and event["seat"] != seat else ""
        lines.append(f"        {who}{action_text(event, names)}")
    return lines


def hand_of(view: Mapping[str, Any], seat: int) -> list[Any] | None:
    """The cards `view` shows for `seat`'s hand (None for face down), or None when it shows none."""
    if seat == view.get("seat") and isinstance(view.get("hand"), list):
        return view["hand"]
    hands = view.get("hands")
    if isinstance(hands, list) and seat < len(hands):
        return hands[seat]
    return None


def view_lines(view: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    """A view drawn for a person: the own hand first, then every other entry in card notation;
    lists with an entry per seat are shown one seat per line."""
    seat = view.get("seat")
    lines = []
    hand = hand_of(view, seat) if isinstance(seat, int) else None
    if hand is not None:
        lines.append(f"your hand: {value_text(hand) if hand else 'empty'}")
    for key, value in view.items():
        if key in ("seat", "hand"):
            continue
        if isinstance(value, list) and len(value) == len(names) > 1 and not all(card_text(v) for v in value):
            lines.append(f"{key}:")
            lines.extend(f"    {seat_name(s, names)}{' (you)' if s == seat else ''}: {value_text(v, key, names)}"
                         for s, v in enumerate(value))
        elif isinstance(value, dict) and all(isinstance(v, list) for v in value.values()):
            lines.append(f"{key}: " + " · ".join(f"{k} {value_text(v, k, names)}" for k, v in value.items()))
        else:
            lines.append(f"{key}: {value_text(value, key, names)}")
    return lines


def deal_lines(views: Sequence[Mapping[str, Any]], names: Sequence[str], show_hands: bool) -> list[str]:
    """What `play` prints before the first move: every hand as its seat sees it (unless a person
    plays, who must see only their own) and the table as seat 0 sees it, without its own hand."""
    lines = ["deal:"]
    if show_hands:
        for seat, view in enumerate(views):
            hand = hand_of(view, seat)
            if hand is not None:
                lines.append(f"    {seat_name(seat, names)}: {value_text(hand) if hand else 'no cards yet'}")
    table = views[0]
    for key in ("table", "discard_pile", "sowee", "discards", "stock", "dealer", "banker", "stacks"):
        if key in table:
            shown = table[key]
            text = (" · ".join(f"{k} {value_text(v, k, names)}" for k, v in shown.items()) if isinstance(shown, dict)
                    else value_text(shown, key, names))
            lines.append(f"    {key.replace('_', ' ')}: {text}")
    return lines
