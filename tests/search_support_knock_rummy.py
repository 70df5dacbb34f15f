"""Knock Rummy games played in-process with every seat's messages recorded exactly as the referee
(runner/referee/match.py) would send them, through msgpack, for the search sampler's tests; and,
run as a script (`python search_support_knock_rummy.py [seed]`), a random bot that records its own
messages from a real match."""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from cardarena.games.knock_rummy import GAME
from cardarena.protocol.bot import Bot, run
from cardarena.protocol.framing import HEADER, decode_body, encode
from cardarena.search import SeatKnowledge, Transcript

Policy = Callable[[dict[str, Any], list[dict[str, Any]], random.Random], dict[str, Any]]


def wire(message: dict[str, Any]) -> dict[str, Any]:
    """`message` as a bot decodes it: through a msgpack frame and back."""
    return decode_body(encode(message)[HEADER.size:], budget=False)


@dataclass
class RecordedGame:
    """One played game: the deck it was dealt from, the actions applied, and each seat's messages."""

    deck: list[str]
    options: dict[str, Any]
    actions: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    transcripts: list[Transcript] = field(default_factory=list)

    def positions(self, seat: int) -> list[Transcript]:
        """The seat's transcript at each of its decisions (before its answer), then after game_end."""
        whole = self.transcripts[seat]
        cuts = [Transcript(whole.game_start, whole.decisions[:index + 1], whole.answers[:index])
                for index in range(len(whole.decisions))]
        return cuts + [whole]


def play_recorded(players: int, options: dict[str, Any], deck: Sequence[str], policy: Policy,
                  rng: random.Random, game_id: str = "knock-rummy-test") -> RecordedGame:
    """Play one game from `deck` with `policy` in every seat, recording what the referee sends."""
    resolved = GAME.spec.resolve_options(options)
    state = GAME.new_state(players, resolved, deck=list(deck))
    game = RecordedGame(list(deck), resolved)
    names = [f"bot{seat}" for seat in range(players)]
    for seat in range(players):
        game.transcripts.append(Transcript(wire({
            "type": "game_start", "game_id": game_id, "game": GAME.spec.name,
            "rules_version": GAME.spec.rules_version, "seat": seat, "players": players,
            "names": names, "teams": None, "options": resolved,
        })))
    pending: list[list[dict[str, Any]]] = [[] for _ in range(players)]
    decision = 0
    while not state.is_over():
        seat = state.to_move()
        legal = state.legal_actions()
        decision += 1
        message = wire({"type": "decision", "game_id": game_id, "decision": decision, "seat": seat,
                        "view": state.view(seat), "events": pending[seat], "legal": legal, "time_ms": 1000})
        pending[seat] = []
        action = policy(message["view"], message["legal"], rng)
        game.transcripts[seat].decisions.append(message)
        game.transcripts[seat].answers.append(action)
        game.actions.append((seat, action))
        events = state.apply(action)
        for queue in pending:
            queue.extend(events)
    result, reveal = state.result().to_wire(), state.reveal()
    for seat in range(players):
        game.transcripts[seat].game_end = wire({"type": "game_end", "game_id": game_id, "result": result,
                                                "reveal": reveal, "events": pending[seat], "faults": []})
    return game


def fed_knowledge(transcript: Transcript) -> SeatKnowledge:
    """A SeatKnowledge given the transcript's messages and answers, as a bot would give them."""
    knowledge = SeatKnowledge(transcript.game_start)
    for index, message in enumerate(transcript.decisions):
        knowledge.observe(message)
        if index < len(transcript.answers):
            knowledge.answered(transcript.answers[index])
    if transcript.game_end is not None:
        knowledge.observe(transcript.game_end)
    return knowledge


def random_policy(knock_chance: float) -> Policy:
    """Uniformly random legal play, except that a knock is chosen with only `knock_chance` (so
    that games also run long enough to empty the stock)."""
    def decide(view: dict[str, Any], legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
        knocks = [action for action in legal if action["type"] == "knock"]
        if knocks and rng.random() < knock_chance:
            return rng.choice(knocks)
        return rng.choice([action for action in legal if action["type"] != "knock"])
    return decide


RECORD_PREFIX = "RECORD "


class RecordingBot(Bot):
    """A bot playing `random_policy(0.05)` that writes every message it receives, and each answer
    it sends, to its stderr (one line each: RECORD, then the msgpack body in hex), so that a test
    can rebuild its transcripts."""

    name = "recording"

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.policy = random_policy(0.05)

    def _record(self, message: dict[str, Any]) -> None:
        print(RECORD_PREFIX + encode(message)[HEADER.size:].hex(), file=sys.stderr, flush=True)

    def start_game(self, info: dict[str, Any]) -> None:
        self.rng = random.Random(f"{self.seed}:{info['game_id']}:{info['seat']}")
        self._record(info)

    def decide(self, view: dict[str, Any], legal: list[dict[str, Any]], request: dict[str, Any]) -> dict[str, Any]:
        self._record(request)
        action = self.policy(view, legal, self.rng)
        self._record({"type": "answer", "action": action})
        return action

    def end_game(self, info: dict[str, Any]) -> None:
        self._record(info)


def recorded_transcripts(log: str) -> list[Transcript]:
    """The transcript of each game in a RecordingBot's stderr log."""
    transcripts: list[Transcript] = []
    for line in log.splitlines():
        if not line.startswith(RECORD_PREFIX):
            continue
        message = decode_body(bytes.fromhex(line[len(RECORD_PREFIX):]), budget=False)
        if message["type"] == "game_start":
            transcripts.append(Transcript(message))
        elif message["type"] == "decision":
            transcripts[-1].decisions.append(message)
        elif message["type"] == "answer":
            transcripts[-1].answers.append(message["action"])
        else:
            transcripts[-1].game_end = message
    return transcripts


if __name__ == "__main__":
    run(RecordingBot(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
