"""Results files made fast, without bot processes: the engines play random legal actions.

The report's tests and its benchmark need tournaments of many games; playing them through bot
subprocesses would take minutes. Here each game is played by the engine alone, with a seeded
random choice per decision, and recorded exactly as the tournament records a finished game
(faults included, when asked for: the fault texts are hostile on purpose).
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Sequence

from cardarena.protocol.actions import random_action
from cardarena.games import get_game
from cardarena.games.base import score_to_wire
from cardarena.referee.match import ranks_with_faults
from cardarena.tournament.store import ResultStore

#: a fault message and stderr written to break out of any HTML they are pasted into
HOSTILE_DETAIL = "bad move </pre><script>alert('detail')</script><img src=x onerror=alert(1)> \x1b[31mred\x1b[0m \u202egnp.exe"
HOSTILE_STDERR = "Traceback\n</code></pre><iframe src='https://example.com/'></iframe>\x00\x07 done"


def play_random(game_name: str, seats: Sequence[str], seed: int, options: dict | None = None,
                fault_seat: int | None = None, fault_decision: int = 3) -> dict:
    """One game played by random legal actions, as a record dict (`GameRecord.to_dict()` shape).

    With `fault_seat`, that seat is recorded as faulting at `fault_decision` (its moves stay the
    random ones, as the referee's fallback would play them)."""
    game = get_game(game_name)
    options = game.spec.resolve_options(options or {})
    state = game.new_state(len(seats), options, seed)
    rng = random.Random(seed)
    actions = []
    while not state.is_over():
        seat = state.to_move()
        action = random_action(state.legal_actions(), rng)
        state.apply(action)
        actions.append([seat, action])
    result = state.result()
    faults = []
    if fault_seat is not None:
        decision = min(fault_decision, len(actions))
        faults.append({"kind": "illegal", "bot": seats[fault_seat], "detail": HOSTILE_DETAIL, "seat": fault_seat,
                       "game": game_name, "game_id": "", "decision": decision, "data": "3c7363726970743e",
                       "stderr_tail": HOSTILE_STDERR, "message": None, "data_length": 8})
    ranks = ranks_with_faults(result, {fault["seat"] for fault in faults})
    return {"game_id": "", "game": game.spec.name, "rules_version": game.spec.rules_version, "options": options,
            "seed": seed, "seats": list(seats), "actions": actions, "result": result.to_wire(), "ranks": ranks,
            "faults": faults, "duration": 0.001 * len(actions),
            "scores": [score_to_wire(score) for score in result.scores]}


def write_random_results(path: Path, bots: Sequence[str], games: dict[str, int], players: dict[str, int],
                         seed: int = 0, fault_every: int = 0) -> list[dict]:
    """A results file of `games[name]` random games per game, seats drawn from `bots`, rotating
    lineups deal by deal; every `fault_every`-th game records a fault. The records, in order."""
    rng = random.Random(seed)
    records = []
    counter = itertools.count(1)
    with ResultStore(path, create=True) as store:
        store.save_settings({"name": path.stem, "seed": seed})
        for name, count in games.items():
            size = players[name]
            for index in range(count):
                deal, rotation = divmod(index, size)
                lineup = [bots[(deal + k) % len(bots)] for k in range(size)]
                seats = lineup[rotation:] + lineup[:rotation]
                number = next(counter)
                faulting = 0 if fault_every and number % fault_every == 0 else None
                record = play_random(name, seats, rng.randrange(2**31), fault_seat=faulting)
                record["game_id"] = f"{name}/{'+'.join(sorted(set(lineup)))}/d{deal}/r{rotation}"
                for fault in record["faults"]:
                    fault["game_id"] = record["game_id"]
                store.add_game(record, f"{name}/{deal}", deal, rotation, f"{name}/d{deal}")
                records.append(record)
    return records
