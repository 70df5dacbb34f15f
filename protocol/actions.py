"""What a legal-action list means on the wire: exact matching, integer ranges, random choice.

Pure data helpers with no I/O, shared by the referee (which accepts exactly the legal set), the
game engines and the Python bot SDK, so all three agree on one reading of PROTOCOL.md § Actions.
"""

from __future__ import annotations

import random

TYPE_CHECKING = False  # typing's own flag without importing typing: a bot's start pays for every import
if TYPE_CHECKING:
    from typing import Any, Sequence

    Action = dict[str, Any]
else:
    Action = dict


def is_range(value: Any) -> bool:
    """True for a legal-action field that offers an inclusive integer range {"min": a, "max": b}."""
    return type(value) is dict and value.keys() == {"min", "max"}


def same_value(expected: Any, given: Any) -> bool:
    """Structural equality that also compares types, so True never passes for 1, nor 1.0 for 1."""
    kind = type(expected)
    if kind is not type(given):
        return False
    if kind is dict:
        if expected.keys() != given.keys():
            return False
        pairs = zip(expected.values(), map(given.__getitem__, expected))
    elif kind is list:
        if len(expected) != len(given):
            return False
        pairs = zip(expected, given)
    else:
        return expected == given
    for inner, other in pairs:  # flat values compared here, nested ones by recursion
        inner_kind = type(inner)
        if inner_kind is not type(other):
            return False
        if inner_kind is dict or inner_kind is list:
            if not same_value(inner, other):
                return False
        elif inner != other:
            return False
    return True


def match_action(entry: Action, action: Any) -> bool:
    """Whether `action` is the legal entry `entry` (an integer within it, where it gives a range)."""
    if type(action) is not dict or action.keys() != entry.keys():
        return False
    for key, expected in entry.items():
        given = action[key]
        if is_range(expected):
            if type(given) is not int or not expected["min"] <= given <= expected["max"]:
                return False
        elif not same_value(expected, given):
            return False
    return True


def find_legal(legal: Sequence[Action], action: Any) -> Action | None:
    """The legal entry that `action` is an instance of, or None when it is not legal."""
    try:
        # Fast path: most answers equal an entry exactly; `==` finds it at C speed. Where each of
        # its values is flat and of the type the bot gave, that is the entry: no loose match
        # (True == 1) and no range. Nested values and ranges are left to the walk below.
        entry = legal[legal.index(action)]
    except ValueError:
        pass  # not an exact entry: it may still fall inside a range
    else:
        for key, value in entry.items():
            kind = type(value)
            if kind is not type(action[key]) or kind is dict or kind is list:
                break
        else:
            return entry
    for entry in legal:
        if match_action(entry, action):
            return entry
    return None


def concrete_actions(entry: Action) -> int:
    """How many distinct concrete actions one legal entry stands for."""
    count = 1
    for value in entry.values():
        if is_range(value):
            count *= value["max"] - value["min"] + 1
    return count


def random_action(legal: Sequence[Action], rng: random.Random) -> Action:
    """A uniformly chosen legal entry, with a uniform integer drawn for every range in it."""
    entry = legal[rng.randrange(len(legal))]
    if dict not in map(type, entry.values()):  # no range in it: a copy is the action
        return dict(entry)
    return {
        key: rng.randint(value["min"], value["max"]) if is_range(value) else value
        for key, value in entry.items()
    }
