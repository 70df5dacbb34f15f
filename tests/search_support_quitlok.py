"""Quitlok transcripts as the referee would send them to one seat, and direct checks of sampled
deals against them (tests/test_search_quitlok.py and tests/bench/bench_sampling_quitlok.py)."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any, Callable

from cardarena.games.base import Action
from cardarena.games.quitlok import GAME, QuitlokState
from cardarena.protocol.actions import find_legal, random_action
from cardarena.search.knowledge import Proposal, Transcript

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sample_bots" / "heuristic"))

from heuristic_bot import quitlok as heuristic  # noqa: E402  (the bot's folder is not a package)

Policy = Callable[[dict[str, Any], list[Action], random.Random], Action]


def random_policy(view: dict[str, Any], legal: list[Action], rng: random.Random) -> Action:
    return random_action(legal, rng)


POLICIES: dict[str, Policy] = {"random": random_policy, "heuristic": heuristic.decide}


class RecordedShuffles(random.Random):
    """An rng whose shuffles record the order they leave, so a deal's reshuffles can be replayed."""

    def __init__(self, seed: int | None = None):
        super().__init__(seed)
        self.orders: list[list[int]] = []

    def shuffle(self, x: list[int]) -> None:  # type: ignore[override]
        super().shuffle(x)
        self.orders.append(list(x))


class ReplayedShuffles(random.Random):
    """An rng whose shuffles leave the given orders, one per call (the same cards, reordered)."""

    def __init__(self, orders: list[list[int]]):
        super().__init__(0)
        self.orders = iter(orders)

    def shuffle(self, x: list[int]) -> None:  # type: ignore[override]
        order = next(self.orders)
        assert sorted(order) == sorted(x), "a replayed reshuffle must reorder the same cards"
        x[:] = order


def play_game(players: int, options: dict[str, Any], seed: int, seat: int, policy: Policy,
              ) -> tuple[Transcript, list[QuitlokState], list[tuple[int, Action]], RecordedShuffles]:
    """A whole game played by `policy` at every seat, recorded as `seat` receives it
    (runner/referee/match.py: game_start, each decision with the view, the public events since
    the seat's last decision and the legal list, game_end with the events after the last one).
    Also the true state at each of the seat's decisions, every action, and the game's rng, which
    recorded every reshuffle's order."""
    game_start = {"type": "game_start", "game_id": f"g{seed}", "game": "quitlok",
                  "rules_version": GAME.spec.rules_version, "seat": seat, "players": players,
                  "names": [f"p{index}" for index in range(players)], "teams": None, "options": options}
    transcript = Transcript(game_start=game_start)
    state = GAME.new_state(players, options, seed=seed)
    recorder = RecordedShuffles()
    recorder.setstate(state.rng.getstate())
    state.rng = recorder
    rng = random.Random(seed)
    truths: list[QuitlokState] = []
    actions: list[tuple[int, Action]] = []
    pending: list[dict[str, Any]] = []
    while not state.is_over():
        mover, legal = state.to_move(), state.legal_actions()
        action = policy(state.view(mover), legal, rng)
        if mover == seat:
            transcript.decisions.append({"type": "decision", "game_id": game_start["game_id"],
                                         "decision": len(actions) + 1, "seat": seat, "view": state.view(seat),
                                         "events": pending, "legal": legal, "time_ms": 1000})
            transcript.answers.append(action)
            truths.append(state.clone())
            pending = []
        actions.append((mover, action))
        pending = pending + state.apply(action)
    transcript.game_end = {"type": "game_end", "game_id": game_start["game_id"], "result": state.result().to_wire(),
                           "reveal": state.reveal(), "events": pending, "faults": []}
    return transcript, truths, actions, recorder


def at_decision(transcript: Transcript, count: int) -> Transcript:
    """The transcript as it stood when the seat received its `count`-th decision (not yet answered)."""
    return Transcript(game_start=transcript.game_start, decisions=transcript.decisions[:count],
                      answers=transcript.answers[:count - 1])


def reproduces(transcript: Transcript, proposal: Proposal, orders: list[list[int]],
               actions: list[tuple[int, Action]]) -> QuitlokState:
    """Play `actions` from the proposal's deal, its reshuffles leaving `orders`, asserting that the
    seat is shown exactly what its transcript holds (every view, legal list and event); the state reached."""
    seat = transcript.seat
    state = GAME.new_state(transcript.players, {**transcript.options, **proposal.options},
                           seed=proposal.seed, deck=proposal.deck)
    state.rng = ReplayedShuffles(orders)
    told: list[dict[str, Any]] = []
    asked = 0
    for mover, action in actions:
        assert state.to_move() == mover
        if mover == seat:
            message = transcript.decisions[asked]
            assert told == message["events"]
            assert state.view(seat) == message["view"]
            assert state.legal_actions() == message["legal"]
            asked += 1
            told = []
        assert find_legal(state.legal_actions(), action) is not None
        told += state.apply(action)
    if transcript.game_end is not None:
        assert state.is_over() and told == transcript.game_end["events"]
    else:
        assert asked == len(transcript.decisions) - 1, "the seat's latest decision is the one awaiting an answer"
        message = transcript.decisions[-1]
        assert told == message["events"] and state.view(seat) == message["view"]
        assert state.legal_actions() == message["legal"]
    return state
