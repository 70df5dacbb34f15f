"""The referee's decision loop, bot by bot in memory (runner/referee/scripted.py): fallback, every
fault kind, unsolicited and late frames charged to the right game, ranks, restarts, turns and time
banks (on the scripted bots' virtual clock, to the microsecond).

Each rule cites protocol/PROTOCOL.md; the same rules are checked end to end over real pipes with
the hostile bots of tests/zoo (tests/test_referee.py, test_hostile_frames.py, test_faults.py).
"""

from __future__ import annotations

import random
import struct

import pytest

from cardarena.config import BotSpec, Limits
from cardarena.games import get_game
from cardarena.protocol.actions import random_action
from cardarena.protocol.framing import encode
from cardarena.referee.faults import Fault
from cardarena.referee.match import Match
from cardarena.referee.scripted import Clock, Exit, Late, ScriptedTransport, Stderr, Think, answer, hello, well_behaved

KNOCK_RUMMY = get_game("knock-rummy")
LIMITS = Limits(handshake_timeout=10.0, decision_timeout=1.0)
SPECS = [BotSpec("a", ("a",)), BotSpec("b", ("b",))]
#: seeds of Knock Rummy games between two `well_behaved` bots: 12 decisions, 6 each, seat 0 deciding last;
#: and 14 decisions, 6 of seat 0's, seat 1 deciding last
ENDS_ON_SEAT_0, ENDS_ON_SEAT_1 = 42, 29


class Table:
    """Scripts per bot name, and every transport the match opened, in order (one per start of a bot)."""

    def __init__(self, **scripts):
        self.scripts = scripts
        self.options: dict[str, dict] = {}
        self.opened: list[tuple[str, ScriptedTransport]] = []

    def connect(self, spec: BotSpec, limits: Limits, log_path, log_note) -> ScriptedTransport:
        transport = ScriptedTransport(self.scripts.get(spec.name, well_behaved), **self.options.get(spec.name, {}))
        self.opened.append((spec.name, transport))
        return transport

    def starts(self, name: str) -> list[ScriptedTransport]:
        return [transport for opened, transport in self.opened if opened == name]

    def match(self, specs=SPECS, limits=LIMITS, **keywords) -> Match:
        return Match(specs, limits, connect=self.connect, **keywords)


def at_decision(number: int, *replies):
    """A well-behaved bot's script that replies with `replies` instead of its answer to decision `number`
    (counted over the bot's own decision requests, from 1)."""
    asked = 0

    def script(message):
        nonlocal asked
        if message["type"] == "decision":
            asked += 1
            if asked == number:
                return [reply(message) if callable(reply) else reply for reply in replies]
        return well_behaved(message)

    return script


def illegal(message):
    return {"type": "action", "decision": message["decision"], "action": {"type": "no such action"}}


def wrong_number(message):
    return {"type": "action", "decision": message["decision"] + 1, "action": message["legal"][0]}


def play(table: Table, seeds=(ENDS_ON_SEAT_0,), **keywords):
    with table.match(**keywords) as match:
        records = [match.play(KNOCK_RUMMY, seed) for seed in seeds]
    return records, match


def test_two_well_behaved_bots_play_a_game_with_every_message_in_order():
    """PROTOCOL.md § 9: hello, game_start, one decision per turn, game_end, shutdown."""
    table = Table()
    [record], match = play(table)
    assert record.faults == [] and match.shutdown_faults == []
    assert [seat for seat, _ in record.actions] == [seat for seat, _ in record.decision_times]
    for name, transport in table.opened:
        kinds = [message["type"] for message in transport.heard]
        assert kinds[:2] == ["hello", "game_start"] and kinds[-2:] == ["game_end", "shutdown"]
        decisions = [message for message in transport.heard if message["type"] == "decision"]
        assert len(decisions) == sum(1 for seat, _ in record.actions if record.seats[seat] == name)
        assert {message["game_id"] for message in transport.heard if "game_id" in message} == {record.game_id}
    scores = record.result.scores
    assert record.ranks == [sum(other > score for other in scores) for score in scores]


@pytest.mark.parametrize("replies, kind, detail", [
    ([], "timeout", "no reply within the 1 s allowed"),
    ([lambda message: Late(answer(message))], "timeout", "no reply within the 1 s allowed"),
    ([Exit(3)], "crash", "the bot closed its output (exit status 3)"),
    ([b"\x00\x00\x00\x02\xc1\xc1"], "malformed", "not valid msgpack"),
    ([struct.pack(">I", 1 << 30)], "oversize", ""),
    ([b"thinking...\n"], "malformed", "thinking..."),
    ([illegal], "illegal", "is not among the"),
    ([wrong_number], "protocol", "answered decision"),
    ([{"type": "action"}], "protocol", ""),
])
def test_each_fault_kind_costs_the_game_and_the_fallback_plays_on(replies, kind, detail):
    """PROTOCOL.md § 8: the faulting bot's seat is played out by the seeded random fallback, the bot
    is ranked last, killed, and recorded with the decision number and the offending bytes."""
    table = Table(b=at_decision(2, *replies))
    [record], _ = play(table)
    [fault] = record.faults
    assert (fault.kind, fault.bot, fault.seat, fault.game_id) == (kind, "b", 1, record.game_id)
    assert detail in fault.detail
    decisions_of_b = [number for number, (seat, _) in enumerate(record.actions, 1) if seat == 1]
    assert fault.decision == decisions_of_b[1]
    assert record.ranks[1] == 1 and record.ranks[0] == 0
    fallback = random.Random(f"{record.seed}:1")
    state = KNOCK_RUMMY.new_state(2, record.options, record.seed)
    for number, (seat, action) in enumerate(record.actions, 1):
        if seat == 1 and number >= fault.decision:
            assert action == random_action(state.legal_actions(), fallback)
        state.apply(action)
    assert not table.starts("b")[0].alive


def test_a_late_answer_never_reaches_the_game():
    """PROTOCOL.md § 5: no grace period; an answer after the deadline is a timeout, and the fallback's
    action is the one played."""
    table = Table(a=at_decision(1, lambda message: Late(answer(message))))
    [record], _ = play(table)
    [fault] = record.faults
    first = next(number for number, (seat, _) in enumerate(record.actions, 1) if seat == 0)
    assert (fault.kind, fault.seat, fault.decision) == ("timeout", 0, first)
    state = KNOCK_RUMMY.new_state(2, record.options, record.seed)
    for seat, action in record.actions[:first - 1]:
        state.apply(action)
    assert record.actions[first - 1][1] == random_action(state.legal_actions(), random.Random(f"{record.seed}:0"))


def test_the_offending_bytes_and_the_stderr_tail_are_the_evidence():
    """PROTOCOL.md § 8: the fault keeps the offending bytes and the tail of the bot's stderr."""
    table = Table(a=at_decision(1, Stderr("Traceback: oops\n"), b"\x00\x00\x00\x02\xc1\xc1"))
    [record], _ = play(table)
    [fault] = record.faults
    assert fault.data == b"\xc1\xc1" and fault.stderr_tail == "Traceback: oops\n"


def test_handshake_start_resource_and_deafness_faults():
    """PROTOCOL.md § 3, 5, 8: an invalid hello, a command that cannot run, a cap reached, a bot that
    stops reading its input."""
    def bad_hello(message):
        return [{**hello(), "protocol": 99}] if message["type"] == "hello" else well_behaved(message)

    cases = {"handshake": ({"script": bad_hello}, "protocol version 99"),
             "start": ({"start_error": "cannot run 'x': no such file"}, "no such file"),
             "resource": ({"script": at_decision(1, Exit(-9)), "cap": "memory cap 1024 MiB reached"},
                          "memory cap 1024 MiB reached; the bot closed its output (killed by signal 9)"),
             "timeout": ({"deaf": True}, "did not read its input")}
    for kind, (options, detail) in cases.items():
        table = Table(b=options.pop("script", well_behaved))
        table.options["b"] = options
        [record], _ = play(table)
        assert [(f.kind, f.seat) for f in record.faults] == [(kind, 1)], kind
        assert detail in record.faults[0].detail, record.faults[0].detail
        assert record.ranks == [0, 1]


def test_a_second_answer_is_read_as_the_reply_to_the_next_request():
    """PROTOCOL.md § 5: exactly one action per decision; a second one answers the wrong decision."""
    table = Table(a=at_decision(1, answer, answer))
    [record], _ = play(table)
    [first, second] = [number for number, (seat, _) in enumerate(record.actions, 1) if seat == 0][:2]
    assert [(f.kind, f.seat, f.decision) for f in record.faults] == [("protocol", 0, second)]
    assert f"answered decision {first}, but decision {second} was asked" in record.faults[0].detail


def test_a_second_answer_after_the_last_one_costs_this_game_not_the_next():
    """PROTOCOL.md § 5: bytes no request asked for are a fault of the game in which they were sent,
    with the decision they followed; the bot is started afresh and the next game is clean."""
    table = Table(a=at_decision(6, answer, answer))
    records, match = play(table, seeds=(ENDS_ON_SEAT_1, ENDS_ON_SEAT_1 + 1))
    first, second = records
    last = [number for number, (seat, _) in enumerate(first.actions, 1) if seat == 0][-1]
    [fault] = first.faults
    assert (fault.kind, fault.seat, fault.game_id, fault.decision) == ("protocol", 0, first.game_id, last)
    assert f"after its answer to decision {last}" in fault.detail and fault.message["decision"] == last
    assert second.faults == [] and match.shutdown_faults == []
    assert len(table.starts("a")) == 2 and len(table.starts("b")) == 1


def test_a_second_answer_to_the_last_decision_is_caught_before_the_game_ends():
    """PROTOCOL.md § 5: the last decider gets its game_end at once and its pipe is looked at after it
    has read it, so an answer it sent twice is this game's fault, even when it arrives late."""
    for late in (False, True):
        extra = (lambda message: Late(answer(message))) if late else answer
        table = Table(a=at_decision(6, answer, extra))
        [record], match = play(table)
        assert record.actions[-1][0] == 0
        assert [(f.kind, f.seat, f.game_id) for f in record.faults] == [("protocol", 0, record.game_id)], late
        assert match.shutdown_faults == []


def test_bytes_sent_in_reply_to_game_end_are_a_fault_of_the_next_game():
    """PROTOCOL.md § 5: bytes a bot sends after reading game_end are read as the reply to its next
    request, so they cost the game of that request."""
    game_ends = 0

    def script(message):
        nonlocal game_ends
        if message["type"] == "game_end":
            game_ends += 1
            return [Late(b"\x00\x00\x00\x01\xc0")] if game_ends == 1 else []
        return well_behaved(message)

    table = Table(a=script, b=script)
    first, second = play(table, seeds=(ENDS_ON_SEAT_0, ENDS_ON_SEAT_1))[0]
    assert first.faults == []
    assert [f.game_id for f in second.faults] == [second.game_id] * len(second.faults) and second.faults


def test_a_bot_that_dies_between_games_is_a_crash_of_the_next_game():
    """PROTOCOL.md § 8: it is started afresh before its next game, after that game records the crash."""
    name = "a"  # the last decider of ENDS_ON_SEAT_0: it reads its game_end at once
    ended = False

    def dies_after_game_end(message):
        nonlocal ended
        if message["type"] == "game_end" and not ended:
            ended = True
            return [Exit(0)]
        return well_behaved(message)

    table = Table(**{name: dies_after_game_end})
    first, second, third = play(table, seeds=(ENDS_ON_SEAT_0, ENDS_ON_SEAT_1, ENDS_ON_SEAT_0))[0]
    assert first.faults == [] and third.faults == []
    assert [(f.kind, f.bot) for f in second.faults] == [("crash", name)]
    assert "exited between games (exit status 0)" in second.faults[0].detail
    assert len(table.starts(name)) == 2


def test_a_barred_bot_is_never_started_and_the_fallback_plays_its_seat():
    barred = Fault("start", "b", "disqualified earlier")
    table = Table()
    [record], _ = play(table, barred={1: barred})
    assert [(f.kind, f.seat, f.detail) for f in record.faults] == [("start", 1, "disqualified earlier")]
    assert table.starts("b") == [] and record.ranks == [0, 1]


def test_ranks_put_a_faulted_seat_last_whatever_its_score():
    """PROTOCOL.md § 8: the bot loses the game; in a partnership game its whole team does."""
    table = Table(a=at_decision(1, illegal))
    [record], _ = play(table)
    assert record.ranks == [1, 0]


def test_shutdown_faults_name_the_last_game():
    """PROTOCOL.md § 8: a bot that does not exit with status 0 after shutdown is killed and reported."""
    def stays(message):
        return [] if message["type"] == "shutdown" else well_behaved(message)

    def fails(message):
        return [Exit(1)] if message["type"] == "shutdown" else well_behaved(message)

    [record], match = play(Table(a=stays, b=fails))
    assert [(f.kind, f.bot, f.game_id) for f in match.shutdown_faults] == [("crash", "a", record.game_id),
                                                                           ("crash", "b", record.game_id)]


def test_while_one_bot_decides_the_others_are_frozen():
    """A bot's turn is its own: every other bot of the table is frozen while it decides."""
    table = Table()
    seen = []

    def watching(message):
        if message["type"] == "decision":
            me, other = (transport for _, transport in table.opened)
            seen.append((me.frozen, other.frozen))
        return well_behaved(message)

    table.scripts["a"] = watching
    play(table)
    assert seen and set(seen) == {(False, True)}


def test_every_other_bot_is_frozen_at_every_decision_across_repeated_turns_and_restarts():
    """The referee does not look again when the bot that had the turn decides again; a bot started
    afresh (after a fault) begins thawed, so it must still be frozen before anyone else's next decision."""
    table = Table()
    names = ("a", "b", "c")
    unfrozen = []

    def watching(name, script):
        def run(message):
            if message["type"] == "decision":
                for other in names:
                    latest = table.starts(other)[-1] if other != name and table.starts(other) else None
                    if latest is not None and latest.alive and not latest.frozen:
                        unfrozen.append((name, other, message["game_id"], message["decision"]))
            return script(message)
        return run

    def illegal_at_its_second_decision_of_each_game():
        asked = 0

        def script(message):
            nonlocal asked
            if message["type"] == "game_start":
                asked = 0
            elif message["type"] == "decision":
                asked += 1
                if asked == 2:
                    return [illegal(message)]
            return well_behaved(message)
        return script

    table.scripts = {"a": watching("a", well_behaved), "b": watching("b", well_behaved),
                     "c": watching("c", illegal_at_its_second_decision_of_each_game())}
    specs = [BotSpec(name, (name,)) for name in names]
    with table.match(specs) as match:
        records = [match.play(KNOCK_RUMMY, seed) for seed in range(6)]
    faulted = [[fault.bot for fault in record.faults] for record in records]
    assert set(map(tuple, faulted)) <= {("c",), ()} and faulted.count(["c"]) >= 4, faulted
    assert len(table.starts("c")) == 1 + faulted[:-1].count(["c"])  # started afresh after each fault
    assert unfrozen == []


def test_the_observer_hears_every_decision_with_the_fallback_marked():
    heard = []
    table = Table(b=at_decision(1, illegal))
    [record], _ = play(table, observer=lambda kind, data: heard.append((kind, data)))
    kinds = [kind for kind, _ in heard]
    assert kinds[0] == "game_start" and kinds[-1] == "game_end" and kinds.count("decision") == len(record.actions)
    fallbacks = {data["seat"] for kind, data in heard if kind == "decision" and data["fallback"]}
    assert fallbacks == {1}


def test_a_frame_is_encoded_as_the_real_transport_would_read_it():
    """The scripted bot's frames go through the referee's own framing: a frame split over two
    writes is one message."""
    def split(message):
        if message["type"] != "decision":
            return well_behaved(message)
        frame = encode(answer(message))
        return [frame[:3], frame[3:]]

    [record], _ = play(Table(a=split))
    assert record.faults == []


# -- time banks (PROTOCOL.md § 5): on a virtual clock, so a decision takes exactly what a test says

#: a quarter of a second per decision and half a second of bank: binary fractions, so the sums are exact
BANKED = Limits(handshake_timeout=10.0, decision_timeout=0.25, time_bank=0.5)


def thinking(*seconds: float, then: float = 0.0):
    """The script of a well-behaved bot that thinks `seconds[i]` before answering its i-th decision
    request (counted from 0 over every game), and `then` before each one after those."""
    asked = 0

    def script(message):
        nonlocal asked
        if message["type"] != "decision":
            return well_behaved(message)
        asked += 1
        return [Think(seconds[asked - 1] if asked <= len(seconds) else then), answer(message)]

    return script


def requests(table: Table, name: str) -> list[dict]:
    """The decision requests bot `name` read, over all its starts."""
    return [message for transport in table.starts(name) for message in transport.heard
            if message["type"] == "decision"]


def test_a_bot_that_ignores_its_bank_never_draws_on_it():
    """A bot that answers within `time_ms`, even at the limit itself, sees its whole bank in every request."""
    table = Table(b=thinking(then=0.25))
    [record], _ = play(table, limits=BANKED)
    assert record.faults == []
    assert {(request["time_ms"], request["bank_ms"]) for request in requests(table, "b")} == {(250, 500)}


def test_a_bot_may_spend_its_bank_exactly():
    """Each decision's time beyond `time_ms` comes out of the bank, and a bank spent to the last
    microsecond still lets the bot answer within `time_ms`."""
    table = Table(b=thinking(0.5, 0.5, then=0.25))
    [record], _ = play(table, limits=BANKED)
    assert record.faults == []
    assert [request["bank_ms"] for request in requests(table, "b")] == [500, 250, 0, 0, 0, 0]
    assert [seconds for seat, seconds in record.decision_times if seat == 1][:3] == [0.5, 0.5, 0.25]


@pytest.mark.parametrize("seconds, detail", [
    ((0.5, 0.5, 0.25 + 2 ** -10), "no reply within the 0.25 s allowed (waited 0.250 s): its time bank of 0.5 s "
                                  "per game was used up by its earlier decisions"),
    ((0.5, 0.5 + 2 ** -10), "no reply within the 0.25 s allowed plus the 0.250 s left in its time bank (waited "
                            "0.500 s): its time bank of 0.5 s per game is used up"),
])
def test_a_bot_that_overruns_its_bank_by_one_decision_times_out(seconds, detail):
    """A decision that takes longer than `time_ms` plus what is left of the bank is a `timeout`
    whose detail says the bank is used up; the fallback plays on."""
    table = Table(b=thinking(*seconds))
    [record], _ = play(table, limits=BANKED)
    [fault] = record.faults
    assert (fault.kind, fault.bot, fault.detail) == ("timeout", "b", detail)
    assert fault.decision == [number for number, (seat, _) in enumerate(record.actions, 1) if seat == 1][len(seconds) - 1]


def test_a_bank_is_charged_for_its_own_bots_overruns_and_nothing_else():
    """Another bot's thinking and the referee's own time (here, an observer that takes a second
    after every decision) never reach a bank: the bank values a bot sees only fall by its own
    overruns, one sixteenth of a second at each of its decisions here."""
    clock = Clock()
    table = Table(a=thinking(then=0.3125), b=thinking(then=0.0))
    table.options = {"a": {"clock": clock}, "b": {"clock": clock}}
    referee_at_work = lambda kind, data: clock.advance(1.0) if kind == "decision" else None  # noqa: E731
    [record], _ = play(table, limits=BANKED, observer=referee_at_work)
    assert record.faults == [] and clock.now > 12
    assert [request["bank_ms"] for request in requests(table, "a")] == [500, 437, 375, 312, 250, 187]
    assert {request["bank_ms"] for request in requests(table, "b")} == {500}


def test_the_bank_is_full_again_at_every_game():
    """The bank is per game: a bot that spent all of it in one game has it whole in the next."""
    table = Table(b=thinking(0.75))
    records, _ = play(table, seeds=(ENDS_ON_SEAT_0, ENDS_ON_SEAT_1), limits=BANKED)
    assert [record.faults for record in records] == [[], []]
    banks = [(request["game_id"], request["bank_ms"]) for request in requests(table, "b")]
    assert [bank for game_id, bank in banks if game_id == records[0].game_id] == [500] + [0] * 5
    assert [bank for game_id, bank in banks if game_id == records[1].game_id][0] == 500


@pytest.mark.parametrize("bank", [-0.5, float("nan"), True, "5"])
def test_limits_refuse_a_bank_that_is_not_a_number_of_seconds_from_0(bank):
    """Whoever builds the limits (a command line, a league file, a server), a bad bank is refused at once."""
    with pytest.raises(ValueError, match="time_bank must be a number of seconds from 0"):
        Limits(time_bank=bank)


def test_without_a_bank_requests_say_bank_ms_0_and_a_decision_past_the_limit_times_out():
    """The default is no bank: `bank_ms` is 0 in every request and the timeout's detail is as before."""
    table = Table(b=thinking(1.0, 1.0 + 2 ** -10))
    [record], _ = play(table)
    [fault] = record.faults
    assert fault.detail == "no reply within the 1 s allowed (waited 1.000 s)"
    assert {request["bank_ms"] for request in requests(table, "b")} == {0}
