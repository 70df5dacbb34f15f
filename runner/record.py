"""One game record: what the referee writes as it plays, what the results file stores, what
`play --record` writes as JSON and what `replay` and the HTML viewer read back.

A game is kept in one shape, `GameRecord`; its forms for elsewhere are methods on it: `to_dict` /
`from_dict` (the JSON form, an exact round trip) and `storage_row` / `from_row` (the columns of the
results file's games table, which files written by earlier versions share). The seed and the
actions reproduce the game; the rest is its result and the evidence of what went wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping, Sequence

from cardarena.errors import CardarenaError
from cardarena.games.base import Result, score_to_wire
from cardarena.referee.faults import Fault


class RecordError(CardarenaError, ValueError):
    """Data that is not a game record; the message says where and why (`reason`: why alone)."""

    def __init__(self, reason: str, source: str = "not a game record"):
        super().__init__(f"{source} ({reason})")
        self.reason = reason


@dataclass(frozen=True)
class Placement:
    """Where a tournament put a game: its match, its deal and rotation, and its duplicate set."""

    match_id: str
    deal: int
    rotation: int
    cluster: str


@dataclass
class GameRecord:
    """Everything needed to score, audit and replay one game: seed + actions reproduce it.

    A record read from a results file has its actions only when asked for them
    (`ResultStore.games(actions=True)`: ratings and reports need none), and no decision times (the
    file keeps none).
    """

    game_id: str
    game: str
    rules_version: str
    options: dict[str, Any]
    seed: int
    seats: list[str]  # bot name per seat
    actions: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    result: Result | None = None
    ranks: list[int] = field(default_factory=list)  # after faults: faulters ranked last
    faults: list[Fault] = field(default_factory=list)
    decision_times: list[tuple[int, float]] = field(default_factory=list)  # (seat, seconds)
    duration: float = 0.0
    placement: Placement | None = None  # set for a tournament's game

    @property
    def scores(self) -> list[Any]:
        """The scores in wire form (an int, or [numerator, denominator]); [] before the game ends."""
        return [] if self.result is None else [score_to_wire(score) for score in self.result.scores]

    @property
    def teams(self) -> list[int] | None:
        """Each seat's team, or None when every seat plays for itself."""
        return None if self.result is None or self.result.teams is None else list(self.result.teams)

    @property
    def match_id(self) -> str | None:
        """The tournament match the game was played in (None outside a tournament)."""
        return None if self.placement is None else self.placement.match_id

    def placed(self, placement: Placement) -> "GameRecord":
        """The same record, placed in a tournament."""
        return replace(self, placement=placement)

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-safe data: what `play --record` writes and `--json` prints."""
        data = {
            "game_id": self.game_id, "game": self.game, "rules_version": self.rules_version,
            "options": self.options, "seed": self.seed, "seats": self.seats,
            "actions": [[seat, action] for seat, action in self.actions],
            "result": None if self.result is None else self.result.to_wire(),
            "ranks": self.ranks, "faults": [fault.to_dict() for fault in self.faults],
            "decision_times": [[seat, seconds] for seat, seconds in self.decision_times],
            "duration": self.duration,
        }
        if self.placement is not None:
            data["placement"] = {"match_id": self.placement.match_id, "deal": self.placement.deal,
                                 "rotation": self.placement.rotation, "cluster": self.placement.cluster}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "GameRecord":
        """The record `to_dict` gave, or that an earlier `play --record` wrote (without decision times);
        RecordError when `data` is not a game record."""
        if not isinstance(data, Mapping):
            raise RecordError(f"a {type(data).__name__}, not a JSON object")
        try:
            placement = data.get("placement")
            return cls(game_id=data["game_id"], game=data["game"], rules_version=data["rules_version"],
                       options=dict(data["options"]), seed=data["seed"], seats=list(data["seats"]),
                       actions=_actions(data["actions"]), result=_result(data["result"]), ranks=list(data["ranks"]),
                       faults=[Fault.from_dict(fault) for fault in data.get("faults", ())],
                       decision_times=[(seat, seconds) for seat, seconds in data.get("decision_times", ())],
                       duration=data.get("duration", 0.0), placement=None if placement is None else Placement(**placement))
        except KeyError as error:
            raise RecordError(f"no {error} in it") from None
        except (TypeError, ValueError, AttributeError, ZeroDivisionError) as error:
            raise RecordError(str(error)) from None

    @classmethod
    def read_json(cls, path: Path) -> "GameRecord":
        """A record written by `cardarena play --record`; RecordError naming the file when it is not one."""
        problem = f"{path}: not a game record written by 'cardarena play --record'"
        try:
            return cls.from_dict(json.loads(Path(path).read_text()))
        except RecordError as error:
            raise RecordError(error.reason, problem) from None
        except (OSError, ValueError) as error:  # JSON's errors are ValueErrors
            raise RecordError(str(error), problem) from None
        except RecursionError:  # json descends once per level of nesting
            raise RecordError("nested too deeply to read", problem) from None

    def storage_row(self) -> tuple[Any, ...]:
        """The row of the results file's games table (its columns in schema order); the actions go
        in a table of their own (`actions_text`)."""
        if self.placement is None or self.result is None:
            raise RecordError("only a finished game placed in a tournament is stored",
                              f"{self.game_id}: cannot be stored")
        place = self.placement
        return (self.game_id, place.match_id, self.game, self.rules_version, json.dumps(self.options, sort_keys=True),
                self.seed, place.deal, place.rotation, place.cluster, json.dumps(self.seats), json.dumps(self.scores),
                json.dumps(self.ranks), None if self.teams is None else json.dumps(self.teams),
                json.dumps([fault.to_dict() for fault in self.faults]), self.duration)

    def actions_text(self) -> str:
        """The actions as the results file's actions table keeps them."""
        return json.dumps([[seat, action] for seat, action in self.actions])

    @classmethod
    def from_row(cls, row: Sequence[Any], actions_text: str | None = None) -> "GameRecord":
        """A row of the games table (any version of the file: the columns have not changed), with its
        actions when `actions_text` is given."""
        (game_id, match_id, game, rules_version, options, seed, deal, rotation, cluster,
         seats, scores, ranks, teams, faults, duration) = row
        return cls(game_id=game_id, game=game, rules_version=rules_version, options=json.loads(options), seed=seed,
                   seats=json.loads(seats), actions=[] if actions_text is None else _actions(json.loads(actions_text)),
                   result=_result({"scores": json.loads(scores), "teams": None if teams is None else json.loads(teams)}),
                   ranks=json.loads(ranks), faults=[Fault.from_dict(fault) for fault in json.loads(faults)],
                   duration=duration, placement=Placement(match_id, deal, rotation, cluster))


def _actions(pairs: Sequence[Sequence[Any]]) -> list[tuple[int, dict[str, Any]]]:
    """[seat, action] pairs as (seat, action), refusing anything else."""
    if not all(isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], int)
               and isinstance(pair[1], dict) for pair in pairs):
        raise ValueError("actions must be [seat, action] pairs")
    return [(seat, action) for seat, action in pairs]


def _result(wire: Mapping[str, Any] | None) -> Result | None:
    """A result from its wire form. Every engine ranks by score as `Result.from_scores` does, so the
    scores give back its ranks, which the results file keeps only as ranked after faults. They are
    counted here on the wire scores (ints where whole): comparing Fractions would make reading a
    large results file twice as slow."""
    if wire is None:
        return None
    exact = [Fraction(*score) if isinstance(score, list) else score for score in wire["scores"]]
    ranks = tuple(sum(1 for other in exact if other > score) for score in exact)
    teams = wire.get("teams")
    result = Result(tuple(map(Fraction, exact)), ranks, None if teams is None else tuple(teams))
    if "ranks" in wire and list(wire["ranks"]) != list(result.ranks):
        raise ValueError(f"ranks {wire['ranks']} are not those of scores {wire['scores']}")
    return result
