"""The replay viewer's data: a game record replayed through its engine, every seat's view per step.

A record holds only the seed and the actions; the views are recomputed here, in Python, by the
engine itself, so the browser re-implements no rule: it only draws the states it is given. Each
seat's view is stored in full at the deal and then as the top-level keys that changed at each
step, which with gzip keeps a long game to a few kilobytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from cardarena.protocol.actions import find_legal
from cardarena.games import get_game
from cardarena.games.base import GameError, score_to_wire
from cardarena.html import esc, neutralise, pack, page
from cardarena.record import GameRecord

#: fault fields shown by the viewer (the record may hold more: evidence bytes, stderr)
FAULT_FIELDS = ("bot", "kind", "seat", "decision", "detail")


class ReplayError(GameError):
    """A record that cannot be replayed through this engine; the message says why."""


def _changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level entries of `after` that differ from `before`."""
    return {key: value for key, value in after.items() if key not in before or before[key] != value}


def replay_data(record: GameRecord) -> dict[str, Any]:
    """Everything the viewer draws for one game record (with its actions).

    Raises ReplayError when the engine has another rules version, refuses a recorded action, or
    scores the game otherwise than the record.
    """
    game = get_game(record.game)
    spec = game.spec
    if spec.rules_version != record.rules_version:
        raise ReplayError(f"played under rules v{record.rules_version}; this engine implements v{spec.rules_version}")
    seats = list(record.seats)
    players = len(seats)
    state = game.new_state(players, record.options, record.seed)
    faults = [{key: getattr(fault, key) for key in FAULT_FIELDS} for fault in record.faults]
    # A faulting seat is played by the referee's random fallback from its fault on; a fault
    # before the first decision (at the start of the game) covers every move of that seat.
    fallback_from = {}
    for fault in faults:
        if isinstance(fault["seat"], int):
            start = fault["decision"] if isinstance(fault["decision"], int) else 0
            fallback_from[fault["seat"]] = min(start, fallback_from.get(fault["seat"], start))
    views = [state.view(seat) for seat in range(players)]
    frames: list[dict[str, Any]] = [{"views": views}]
    for number, (seat, action) in enumerate(record.actions, 1):
        if state.is_over() or state.to_move() != seat or find_legal(state.legal_actions(), action) is None:
            raise ReplayError(f"decision {number}: the record has seat {seat} play {action!r}, which the engine "
                              "does not allow: the record does not match the engine")
        frame: dict[str, Any] = {"seat": seat, "action": action, "events": state.apply(action)}
        after = [state.view(s) for s in range(players)]
        frame["views"] = [_changed(before, now) for before, now in zip(views, after)]
        views = after
        if seat in fallback_from and number >= fallback_from[seat]:
            frame["fallback"] = True
        marked = [fault for fault in faults if fault["decision"] == number]
        if marked:
            frame["faults"] = marked
        frames.append(frame)
    if not state.is_over():
        raise ReplayError(f"the record ends after {len(record.actions)} decisions but the game is not over")
    result = state.result()
    scores = [score_to_wire(score) for score in result.scores]
    if scores != record.scores:
        raise ReplayError(f"the engine scores {scores}, the record {record.scores}: they do not match")
    return {
        "game": spec.name, "title": spec.title, "rules_version": spec.rules_version,
        "game_id": neutralise(record.game_id), "seed": record.seed, "options": record.options,
        "seats": neutralise(seats), "teams": None if result.teams is None else list(result.teams),
        "frames": frames, "reveal": state.reveal(),
        "result": {"scores": scores, "ranks": list(record.ranks)},
        "faults": neutralise(faults),
    }


def replay_page(data: Mapping[str, Any], assets_beside: str | None = None, back_link: str | None = None) -> str:
    """The viewer page of one game (from `replay_data`), self-contained unless `assets_beside`."""
    back = f'<a class="back" href="{esc(back_link)}">← report</a> ' if back_link else ""
    body = (f'<main id="replay" class="replay">{back}<noscript>The replay viewer needs JavaScript.</noscript></main>\n'
            f'<script id="replay-data" type="application/octet-stream">{pack(data)}</script>')
    return page(f"{data['title']} {data['game_id']}: cardarena replay", body, assets_beside)


def write_replay_page(record: GameRecord, path: Path) -> dict[str, Any]:
    """Replay `record` and write its self-contained viewer page to `path`; the replay data back."""
    data = replay_data(record)
    path.write_text(replay_page(data), encoding="utf-8")
    return data
