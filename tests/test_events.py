"""The events that cross processes and the one channel that carries them (runner/tournament/execution/events.py),
in memory: a pipe, no worker."""

from __future__ import annotations

import os
import threading

import pytest

from cardarena.tournament.execution.events import (Channel, EventSink, FinishedMatch, GameBegun, Observed, WorkDone,
                                                   WorkerLost, drive)


@pytest.fixture
def pipe():
    """A pipe whose writing end each test closes (the end of the stream); its reading end is closed after."""
    reader, writer = os.pipe()
    yield reader, writer
    os.close(reader)


def test_a_channel_delivers_messages_whole_and_in_order(pipe):
    reader, writer = pipe
    sending, receiving = Channel(writer=writer), Channel(reader=reader)
    big = Observed("decision", {"payload": "x" * 200_000})  # larger than one read of the pipe

    def send_all() -> None:  # a pipe holds 64 KiB: the sender waits for the reader
        for message in (GameBegun("g1"), big, None, WorkDone()):
            sending.send(message)
        os.close(writer)

    sender = threading.Thread(target=send_all)
    sender.start()
    assert [receiving.receive() for _ in range(4)] == [GameBegun("g1"), big, None, WorkDone()]
    sender.join()
    assert receiving.receive() is None and receiving.ended


def test_arrived_takes_whole_messages_and_keeps_a_partial_one_for_later(pipe):
    reader, writer = pipe
    os.set_blocking(reader, False)
    receiving = Channel(reader=reader)
    framed = _framed(GameBegun("g1")) + _framed(GameBegun("g2"))
    os.write(writer, framed[:-3])  # the second message cut short
    assert receiving.arrived() == [GameBegun("g1")] and not receiving.ended
    os.write(writer, framed[-3:])
    assert receiving.arrived() == [GameBegun("g2")]
    os.close(writer)
    assert receiving.arrived() == [] and receiving.ended


def test_a_message_cut_short_by_the_end_of_the_pipe_is_an_eof_error(pipe):
    reader, writer = pipe
    os.write(writer, _framed(WorkDone())[:-1])
    os.close(writer)
    with pytest.raises(EOFError):
        Channel(reader=reader).receive()


def test_drive_delivers_each_event_to_its_handler_and_stops_when_the_sink_says_so():
    heard = []

    class Sink(EventSink):
        def match_finished(self, event):
            heard.append(("match", event.match_id))

        def worker_lost(self, event):
            heard.append(("lost", event.line()))

    closed = []

    def events():
        try:
            yield FinishedMatch("m1", [])
            yield WorkerLost("m2", "g7", "0", "alice", "killed by signal 9 (SIGKILL)")
            yield FinishedMatch("m3", [])
        finally:
            closed.append(True)

    drive(events(), Sink())
    assert heard == [("match", "m1"), ("lost", "warning: the referee's worker process was killed by signal 9 (SIGKILL) "
                                               "while it waited on alice (m2): game g7 is played again"),
                     ("match", "m3")]
    assert closed == [True]


def _framed(message) -> bytes:
    """`message` as a channel writes it."""
    reader, writer = os.pipe()
    try:
        Channel(writer=writer).send(message)
        return os.read(reader, 1 << 16)
    finally:
        os.close(reader)
        os.close(writer)


def test_a_sink_that_is_done_stops_the_stream_which_is_closed():
    from cardarena.tournament.execution.events import FinishedGame

    class StopAtFirstGame(EventSink):
        def game_finished(self, event):
            return True

    produced, closed = [], []

    def events():
        try:
            for number in range(3):
                produced.append(number)
                yield FinishedGame("m", f"g{number}", None)
        finally:
            closed.append(True)

    drive(events(), StopAtFirstGame())
    assert produced == [0] and closed == [True]
