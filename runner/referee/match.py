"""One table of bots playing a series of games: the decision loop, validation, faults, fallback.

A `Match` keeps each seat's bot process alive from game to game (an interpreter starts once per
match, not once per game). A bot that faults loses that game: its seat is played out by a
seeded random fallback so the others' game completes, its process is killed, and it is started
afresh before the next game. No exception from a bot ever escapes `Match.play`.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence
from urllib.parse import quote

from cardarena.protocol.actions import find_legal, is_range, random_action, same_value
from cardarena.protocol.framing import FrameError, FrameReader, decode_body
from cardarena.protocol.messages import ProtocolViolation, brief, check_message
from cardarena.games.base import Game, GameState, Result
from cardarena.referee.faults import BotFault, Fault
from cardarena.config import BotSpec, Limits
from cardarena.record import GameRecord
from cardarena.referee.pipes import PipeTransport
from cardarena.referee.process import BotSession
from cardarena.referee.transport import Transport

UNSOLICITED_GRACE = 0.05  # seconds the last decider has to read its game_end before its pipe is looked at

#: observer(kind, data) hears "game_start", "decision" and "game_end" as they happen (the CLI's live
#: log; a worker's supervisor learns from "game_start" which game is in flight)
Observer = Callable[[str, dict[str, Any]], None]
#: heartbeat(index) is called before the match waits on bot `index` and with None after: a supervisor
#: watching the beats can tell a stuck referee from a slow bot, and whom to blame if it dies
Heartbeat = Callable[[int | None], None]
#: connect(spec, limits, log_path, log_note) is the channel to a new start of a bot: its process's pipes
#: (`PipeTransport`), or for tests a script in memory (`scripted.ScriptedTransport`)
Connect = Callable[[BotSpec, Limits, Path | None, str], Transport]


def ranks_with_faults(result: Result, faulted_seats: set[int]) -> list[int]:
    """The ranking after faults: every faulting seat (and its whole team) below everyone else."""
    if not faulted_seats:
        return list(result.ranks)  # the game's own ranking (most games end without a fault)
    teams = result.teams
    losers = {s for s in range(len(result.scores))
              if s in faulted_seats or (teams is not None and any(teams[f] == teams[s] for f in faulted_seats))}
    keys = [(seat in losers, -result.scores[seat]) for seat in range(len(result.scores))]
    return [sum(1 for other in keys if other < key) for key in keys]


def log_file_name(bot: str) -> str:
    """The file name of a bot's stderr log: its name, made safe for any file system."""
    return f"{quote(bot, safe='')}.stderr.log"


def first_message(data: bytes) -> Any:
    """The message in the first frame of `data` when it is a whole, decodable one (evidence), else None."""
    reader = FrameReader()
    reader.feed(data)
    try:
        body = reader.next_body()
        return None if body is None else decode_body(body)
    except FrameError:
        return None  # the raw bytes are the evidence then


class BadAnswer(Exception):
    """A bot's answer to a decision that is not a legal action; `kind` is the fault kind."""

    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind = kind


LEGAL_SHOWN = 5  # legal entries quoted when an answer is not among them


def why_illegal(action: Any, legal: list[dict[str, Any]]) -> str:
    """Why `action` is not legal, for the bot's author: the range it missed, where it matches an
    entry but for a number outside (or not) in the entry's range; else the first few legal entries."""
    if type(action) is dict:
        for entry in legal:
            if entry.keys() != action.keys():
                continue
            ranges = [key for key, value in entry.items() if is_range(value)]
            if not ranges or any(not same_value(value, action[key]) for key, value in entry.items()
                                 if key not in ranges):
                continue
            for key in ranges:
                bounds, given = entry[key], action[key]
                if type(given) is not int:
                    return (f"{key} must be an integer from {bounds['min']} to {bounds['max']}, got {brief(given)} "
                            f"(legal entry {brief(entry)})")
                if not bounds["min"] <= given <= bounds["max"]:
                    return (f"{key} {given} is outside the range {bounds['min']} to {bounds['max']} offered "
                            f"(legal entry {brief(entry)})")
    shown = ", ".join(brief(entry) for entry in legal[:LEGAL_SHOWN])
    more = f" and {len(legal) - LEGAL_SHOWN} more" if len(legal) > LEGAL_SHOWN else ""
    return f"action {brief(action)} is not among the {len(legal)} legal actions: {shown}{more}"


def checked_action(message: dict[str, Any], decision: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
    """The legal action a bot's answer to `decision` names, as the engine's own entry with the bot's
    integer only where it offered a range: the game and the record never hold objects built by a
    bot (its key order, its lists). BadAnswer("protocol" or "illegal") otherwise."""
    try:
        check_message(message, "action")
    except ProtocolViolation as error:
        raise BadAnswer("protocol", str(error)) from None
    if message["decision"] != decision:
        raise BadAnswer("protocol", f"answered decision {message['decision']}, but decision {decision} was asked")
    action = message["action"]
    entry = find_legal(legal, action)
    if entry is None:
        raise BadAnswer("illegal", why_illegal(action, legal))
    if dict not in map(type, entry.values()):
        return dict(entry)  # no range in it
    return {key: action[key] if is_range(value) else value for key, value in entry.items()}


@dataclass
class GameInPlay:
    """One game under way at a table: its state and record, and what the referee keeps per seat
    between decisions (its time bank, who has faulted, the fallback's generators, the events not yet sent)."""

    game: Game
    seed: int
    seating: list[int]  # seating[seat]: the index of the bot in that seat
    state: GameState
    record: GameRecord
    banks: list[float]  # per seat: the seconds left of its time bank in this game
    decision: int = 0  # the number of the latest decision asked
    faulted: dict[int, Fault] = field(default_factory=dict)  # seat -> its fault in this game
    fallback: dict[int, random.Random] = field(default_factory=dict)  # per faulted seat, seeded from the game seed
    pending_events: list[list[dict[str, Any]]] = field(init=False)  # per seat: the events since its last message

    def __post_init__(self) -> None:
        self.pending_events = [[] for _ in self.seating]

    def fallback_action(self, seat: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
        """The seeded random fallback's action for a seat whose bot has faulted."""
        if seat not in self.fallback:
            self.fallback[seat] = random.Random(f"{self.seed}:{seat}")
        return random_action(legal, self.fallback[seat])

    def game_end(self, seat: int, result: dict[str, Any], reveal: dict[str, Any]) -> dict[str, Any]:
        """The game_end message for `seat`: the result (wire form), what was hidden, its unsent events,
        the faults so far."""
        return {"type": "game_end", "game_id": self.record.game_id, "result": result,
                "reveal": reveal, "events": self.pending_events[seat],
                "faults": [{"seat": f.seat, "bot": f.bot, "kind": f.kind} for f in self.record.faults]}


class Match:
    """A fixed set of bots (one process each) that plays games in turn at one table."""

    def __init__(
        self,
        bots: Sequence[BotSpec],
        limits: Limits = Limits(),
        log_dir: Path | None = None,
        observer: Observer | None = None,
        log_label: str = "",
        heartbeat: Heartbeat | None = None,
        barred: Mapping[int, Fault] | None = None,
        connect: Connect = PipeTransport,
    ):
        """`log_dir` gets one stderr log per bot (`log_file_name`), shared with every other match
        of the run that logs there; `log_label` names this match in each start's header line.
        `barred` maps the index of a disqualified bot to its fault: it is never started, and its
        seats are played by the fallback from the first decision, with that fault recorded. `connect`
        makes the channel to each start of a bot."""
        self.bots = list(bots)
        self.limits = limits
        self.log_dir = log_dir
        self.log_label = log_label
        self.observer = observer
        self.heartbeat = heartbeat or (lambda index: None)
        self.barred = dict(barred or {})
        self.connect = connect
        self._processes: list[BotSession | None] = [None] * len(self.bots)
        self.shutdown_faults: list[Fault] = []
        self._last_game_id: str | None = None  # the game that shutdown faults follow
        self._turn: int | None = None  # the bot that was last given the turn, every other one frozen since

    def __enter__(self) -> "Match":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def close(self) -> None:
        """Shut every bot down, killing those that do not exit in time (recorded as faults, as are
        bytes a bot sent after its last game's end check that no request asked for); a later
        `play` starts them afresh, with nothing in memory from the games before."""
        for index, process in enumerate(self._processes):
            self.heartbeat(index)
            unsolicited = b"" if process is None else process.unsolicited()
            if unsolicited:
                self.shutdown_faults.append(Fault(
                    "protocol", process.spec.name,
                    f"sent {len(unsolicited)} bytes after its last game ended that no request asked for "
                    "(one action per decision, and nothing else)",
                    game_id=self._last_game_id, data=unsolicited, message=first_message(unsolicited),
                    stderr_tail=process.stderr_tail(),
                ))
            if process is not None and not process.stop():
                self.shutdown_faults.append(Fault(
                    "crash", process.spec.name,
                    f"did not exit with status 0 within {self.limits.shutdown_grace} s of shutdown",
                    game_id=self._last_game_id, stderr_tail=process.stderr_tail(),
                ))
            self._processes[index] = None
        self._turn = None
        self.heartbeat(None)

    def play(
        self,
        game: Game,
        seed: int,
        options: Mapping[str, Any] | None = None,
        seating: Sequence[int] | None = None,
        game_id: str | None = None,
    ) -> GameRecord:
        """Play one game; `seating[seat]` is the index in `bots` of the bot in that seat."""
        table = self._deal(game, seed, options, seating, game_id)
        record = table.record
        if self.observer is not None:
            self.observer("game_start", {"game_id": record.game_id, "seats": record.seats})
        started = time.monotonic()
        self._last_game_id = record.game_id
        self._seat_bots(table)
        while not table.state.is_over():
            self._decide(table)
        record.result = table.state.result()
        reveal = table.state.reveal()
        self._end_game(table, reveal)
        record.ranks = ranks_with_faults(record.result, set(table.faulted))
        record.duration = time.monotonic() - started
        if self.observer is not None:
            self.observer("game_end", {"record": record, "reveal": reveal})
        return record

    def _deal(self, game: Game, seed: int, options: Mapping[str, Any] | None, seating: Sequence[int] | None,
              game_id: str | None) -> GameInPlay:
        """A new game at this table, its seating checked and its options resolved."""
        players = len(self.bots)
        seating = list(range(players)) if seating is None else list(seating)
        if sorted(seating) != list(range(players)):
            raise ValueError(f"seating {seating} is not a permutation of the {players} bots")
        game.spec.check_players(players)
        options = game.spec.resolve_options(options)
        record = GameRecord(
            game_id=game_id or f"{game.spec.name}-{seed}",
            game=game.spec.name,
            rules_version=game.spec.rules_version,
            options=options,
            seed=seed,
            seats=[self.bots[index].name for index in seating],
        )
        return GameInPlay(game, seed, seating, game.new_state(players, options, seed), record,
                          banks=[self.limits.time_bank] * players)

    def _seat_bots(self, table: GameInPlay) -> None:
        """Start (where needed) each seat's bot and tell it the game begins; a bot that cannot start
        faults this game."""
        record, spec, players = table.record, table.game.spec, len(table.seating)
        teams = spec.teams(players, record.options)
        for seat, index in enumerate(table.seating):
            try:
                process = self._process(index, f"game {record.game_id} seat {seat}")
                process.post({
                    "type": "game_start", "game_id": record.game_id, "game": spec.name,
                    "rules_version": spec.rules_version, "seat": seat, "players": players,
                    "names": record.seats, "teams": None if teams is None else list(teams),
                    "options": record.options,
                })
            except BotFault as error:
                self._fault(table, seat, error)

    def _decide(self, table: GameInPlay) -> None:
        """One decision: the bot to move answers (the fallback plays a faulted seat), and the action
        is applied, its events queued for every seat's next message."""
        state = table.state
        seat = state.to_move()
        legal = state.legal_actions()
        table.decision += 1
        action = None
        if seat not in table.faulted:
            try:
                action = self._ask(table, seat, legal)
            except BotFault as error:
                self._fault(table, seat, error, table.decision)
        table.pending_events[seat] = []
        if action is None:
            action = table.fallback_action(seat, legal)
        events = state.apply(action)
        table.record.actions.append((seat, action))
        for queue in table.pending_events:
            queue.extend(events)
        if self.observer is not None:
            self.observer("decision", {"seat": seat, "decision": table.decision, "action": action,
                                       "events": events, "fallback": seat in table.faulted})

    def _end_game(self, table: GameInPlay, reveal: dict[str, Any]) -> None:
        """Fault bytes no request asked for, then send every bot still in the game its game_end.

        Such bytes are a fault of this game (PROTOCOL.md § Deadlines). The bot that made the last
        decision is looked at last, after reading its game_end (so the others' faults are in it):
        anything it sent after its answer has then arrived."""
        record = table.record
        result = record.result.to_wire()
        last = record.actions[-1][0] if record.actions else None
        for seat in sorted(range(len(table.seating)), key=lambda seat: seat == last):
            process = self._processes[table.seating[seat]]
            if seat in table.faulted or process is None:
                continue
            if seat == last:
                process.post(table.game_end(seat, result, reveal))
                unsolicited = process.settle(UNSOLICITED_GRACE)
            else:
                unsolicited = process.unsolicited()
            if unsolicited:
                self._fault(table, seat, self._unsolicited(process, unsolicited, record, seat))
        for seat in range(len(table.seating)):
            process = self._processes[table.seating[seat]]
            if seat not in table.faulted and seat != last and process is not None:
                process.post(table.game_end(seat, result, reveal))

    def _fault(self, table: GameInPlay, seat: int, error: BotFault, decision: int | None = None) -> None:
        """Record the fault of the bot in `seat` (at `decision`, when it is one) and kill that bot:
        the fallback plays its seat for the rest of the game."""
        recorded = error.fault.at(seat=seat, game=table.game.spec.name, game_id=table.record.game_id,
                                  decision=error.fault.decision if decision is None else decision)
        table.record.faults.append(recorded)
        table.faulted[seat] = recorded
        self._discard(table.seating[seat])

    def _ask(self, table: GameInPlay, seat: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
        """Send the bot in `seat` its decision request and return its legal action (BotFault otherwise).
        A decision may run past the limit by what is left of the seat's time bank, which is charged
        with the time the bot took beyond the limit and nothing else (PROTOCOL.md § 5)."""
        index = table.seating[seat]
        process = self._processes[index]  # running: a seat whose bot did not start or faulted is the fallback's
        allowed = process.spec.decision_timeout or self.limits.decision_timeout
        bank = table.banks[seat]
        request = {"type": "decision", "game_id": table.record.game_id, "decision": table.decision, "seat": seat,
                   "view": table.state.view(seat), "events": table.pending_events[seat], "legal": legal,
                   "time_ms": round(allowed * 1000), "bank_ms": int(bank * 1000)}
        self._give_turn(index)  # the bot deciding is thawed by `ask`, once its request is in its pipe
        self.heartbeat(index)
        message, raw, seconds = process.ask(request, allowed, bank)
        self.heartbeat(None)
        table.record.decision_times.append((seat, seconds))
        table.banks[seat] = max(0.0, bank - max(0.0, seconds - allowed))
        try:
            return checked_action(message, table.decision, legal)
        except BadAnswer as error:
            kind, detail = error.kind, str(error)
        except Exception as error:  # bot data that no check foresaw: the bot's fault all the same
            kind, detail = "protocol", f"the referee could not check this message ({type(error).__name__}: {error})"
        raise BotFault(Fault(kind, process.spec.name, detail, data=raw, message=message,
                             stderr_tail=process.stderr_tail()))

    @staticmethod
    def _unsolicited(process: BotSession, data: bytes, record: GameRecord, seat: int) -> BotFault:
        """The fault for bytes a bot sent after its last answer in this game, when nothing asked for them."""
        answered = [number for number, (by, _) in enumerate(record.actions, 1) if by == seat]
        after = f"after its answer to decision {answered[-1]}" if answered else "without being asked to decide"
        return BotFault(Fault("protocol", process.spec.name,
                              f"sent {len(data)} bytes {after} that no request asked for, before the game ended "
                              "(one action per decision, and nothing else)",
                              decision=answered[-1] if answered else None, data=data,
                              message=first_message(data), stderr_tail=process.stderr_tail()))

    def _process(self, index: int, where: str = "") -> BotSession:
        """The running process of bot `index`, started (with its handshake) if it is not running;
        `where` (game and seat) goes into its log's header line."""
        process = self._processes[index]
        if process is not None and not process.alive:
            # It died after its last decision: a crash, noticed now, so it costs this game.
            self._discard(index)
            raise BotFault(Fault("crash", process.spec.name,
                                 f"the bot exited between games ({process.exit_status()})",
                                 stderr_tail=process.stderr_tail()))
        if process is None:
            if index in self.barred:
                raise BotFault(self.barred[index])
            spec = self.bots[index]
            log_path = None if self.log_dir is None else self.log_dir / log_file_name(spec.name)
            note = ", ".join(part for part in (self.log_label, where) if part)
            process = BotSession(spec, self.limits, self.connect(spec, self.limits, log_path, note))
            self._processes[index] = process
            self._turn = None  # it starts thawed
            self.heartbeat(index)
            try:
                process.start()
            except BotFault:
                process.kill()
                self._processes[index] = None
                raise
            self.heartbeat(None)
        return process

    def _give_turn(self, index: int) -> None:
        """Freeze every other bot of the table while bot `index` decides, so that nothing another
        bot runs outside its turn (a spinning child, pondering) costs it CPU, and no bot can time
        its opponents' thinking. They are frozen before the bot deciding is thawed (`BotSession.ask`
        does that): the kernel's count of frozen cgroups then never drops to zero mid-match, which
        would make each write patch its code (some 100 us instead of 1-2). A bot whose state stays
        as it is costs no write, and the same bot deciding twice in a row costs not even the look:
        until a bot is started or killed (`_turn` is then forgotten), the others are still frozen."""
        if index == self._turn:
            return
        for other, process in enumerate(self._processes):
            if process is not None and other != index:
                process.freeze(True)
        self._turn = index

    def _discard(self, index: int) -> None:
        """Kill a faulted bot; it is started afresh before its next game."""
        process = self._processes[index]
        if process is not None:
            process.kill()
            self._processes[index] = None
            self._turn = None
