"""Checking one bot against the sample random bot before it enters a tournament (`cardarena check`,
and a league server's check of each upload).

The bot plays every game it declares at every legal player count and partnership option, in
every seat. Each fault is reported with the evidence (the message sent, decoded or as hex), the
part of PROTOCOL.md it breaks, and a seeded `cardarena play` line that replays the game. The
handshake, the clean exit after shutdown and the decision times are checked too. The logic here
is free of click so that tests and other tools can call `check_bot` directly; the command that
wraps it is in check.py.
"""

from __future__ import annotations

import os
import shlex
import statistics
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import partial
from itertools import groupby
from typing import Any, Callable, Iterable

from cardarena.games import get_game
from cardarena.games.base import Game, OptionError
from cardarena.manifest import Entrant
from cardarena.fault_report import (CHECK_TEXT, FaultEntry, json_entry, junit_failure, limit_words, option_text,
                                    play_line, text_lines)
from cardarena.referee.faults import BotFault, Fault, counted, cut, plain, printable
from cardarena.config import BotSpec, Limits, SandboxSettings
from cardarena.referee.process import BotProcess
from cardarena.samples import SAMPLE_BOTS
from cardarena.referee.sandbox import describe as describe_sandbox
from cardarena.tournament.execution.events import EventSink, FinishedGame, FinishedMatch, WorkerLost, drive
from cardarena.tournament.execution.execute import LocalExecutor, Lost, supervised
from cardarena.tournament.planning.schedule import PlannedGame, PlannedMatch

MAX_GAMES_PER_GAME = 10_000  # --games-per-game: hours of play already, and the plan is a list in memory

#: the opponent in every check: the sample random bot, run by path so it works from any directory
RANDOM_BOT = SAMPLE_BOTS / "random" / "bot.py"


@dataclass(frozen=True)
class Seating:
    """One table to test at: a game, its player count, its non-default options, and the bot's seat."""

    game: str
    players: int
    options: dict[str, Any]
    seat: int

    def describe(self) -> str:
        """`seat 1 of 4, partnerships=true` for reports."""
        extra = "".join(f", {key}={option_text(value)}" for key, value in self.options.items())
        return f"seat {self.seat} of {self.players}{extra}"


def finding(fault: Fault, seating: Seating | None, seed: int | None, reproduce: str | None,
            opponent: bool = False, at_shutdown: bool = False) -> FaultEntry:
    """A fault of the checked bot (or of an opponent) at `seating`, and the command that replays its game."""
    return FaultEntry(fault, reproduce, at_shutdown, seed=seed, players=None if seating is None else seating.players,
                      options=None if seating is None else seating.options,
                      table=None if seating is None else seating.describe(), opponent=opponent)


@dataclass
class GameCheck:
    """The outcome of one game's checks: the games played, the faults, and the decision times."""

    game: str
    seatings: list[Seating] = field(default_factory=list)
    findings: list[FaultEntry] = field(default_factory=list)
    decision_times: list[float] = field(default_factory=list)
    bank_draws: list[float] = field(default_factory=list)  # per game: the seconds the bot's decisions ran past the limit
    duration: float = 0.0
    skipped: str | None = None  # why no game was played (the handshake failed)

    @property
    def failures(self) -> list[FaultEntry]:
        """Faults of the checked bot: each one fails the check."""
        return [finding for finding in self.findings if not finding.opponent]

    def timing(self, limit: float, bank: float = 0.0) -> dict[str, Any] | None:
        """Median and worst decision time against the limit, or None when the bot made no decision.

        "slow" warns of a bot close to a timeout: without a time bank, a decision over half the
        limit; with one, a game in which the bot drew over half its bank (decisions past the limit
        are what a bank is for, so they alone do not warn)."""
        if not self.decision_times:
            return None
        worst = max(self.decision_times)
        drawn = max(self.bank_draws, default=0.0)
        return {"decisions": len(self.decision_times), "median": statistics.median(self.decision_times),
                "worst": worst, "limit": limit, "bank": bank, "most_drawn": drawn,
                "slow": drawn > bank / 2 if bank else worst > limit / 2}

    def coverage(self) -> str:
        """How many games at how many player counts and seats, for the one-line summary."""
        counts = sorted({seating.players for seating in self.seatings})
        players = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
        seats = {(s.players, tuple(s.options.items()), s.seat) for s in self.seatings}
        return f"{len(self.seatings)} game(s), {players} players, {len(seats)} distinct seatings"


@dataclass
class CheckReport:
    """Everything `check` found about one bot."""

    bot: str
    command: tuple[str, ...]
    cwd: str | None
    limits: Limits
    sandbox: str = ""  # which sandbox the bot ran under, with its caps (sandbox.describe)
    hello: dict[str, Any] | None = None
    handshake_seconds: float | None = None
    lifecycle: list[FaultEntry] = field(default_factory=list)
    games: list[GameCheck] = field(default_factory=list)

    @property
    def failures(self) -> list[FaultEntry]:
        """Every fault of the checked bot, lifecycle first."""
        return self.lifecycle + [finding for game in self.games for finding in game.failures]

    @property
    def passed(self) -> bool:
        return not self.failures

    def warnings(self) -> list[str]:
        """Things worth fixing that do not fail the check: slow decisions, opponents' faults."""
        lines = []
        for game in self.games:
            timing = game.timing(self.limits.decision_timeout, self.limits.time_bank)
            if timing is not None and timing["slow"]:
                lines.append(slow_warning(game.game, timing))
            lines.extend(f"{game.game}: opponent fault, not the checked bot's (machine overloaded?): "
                         f"{finding.fault.summary()}" for finding in game.findings if finding.opponent)
        return lines

    def to_dict(self) -> dict[str, Any]:
        """Plain data for --json."""
        return {
            "bot": self.bot, "command": list(self.command), "cwd": self.cwd, "passed": self.passed,
            "decision_timeout": self.limits.decision_timeout, "time_bank": self.limits.time_bank,
            "sandbox": self.sandbox, "hello": plain(self.hello),
            "handshake_seconds": self.handshake_seconds,
            "lifecycle_faults": [json_entry(finding) for finding in self.lifecycle],
            "games": [{
                "game": game.game, "passed": not game.failures and game.skipped is None, "skipped": game.skipped,
                "games_played": len(game.seatings) if game.skipped is None else 0,
                "seatings": [{"players": s.players, "options": s.options, "seat": s.seat} for s in game.seatings],
                "timing": game.timing(self.limits.decision_timeout, self.limits.time_bank),
                "faults": [json_entry(finding) for finding in game.findings], "duration": game.duration,
            } for game in self.games],
            "warnings": self.warnings(),
        }


def milliseconds(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def slow_warning(game: str, timing: dict[str, Any]) -> str:
    """The warning of a bot close to a timeout (see `GameCheck.timing`)."""
    if timing["bank"]:
        return (f"{game}: one game drew {milliseconds(timing['most_drawn'])} of the {timing['bank']:g} s time bank, "
                "over half of it")
    return f"{game}: worst decision time {milliseconds(timing['worst'])} is over half the {milliseconds(timing['limit'])} limit"


def time_bank_text(limits: Limits) -> str:
    """`, time bank 5 s per game` for the report's first line; nothing without a bank."""
    return f", time bank {limits.time_bank:g} s per game" if limits.time_bank else ", no time bank"


def seatings_of(game: Game) -> list[Seating]:
    """Every seat at every player count and partnership option the game allows, interleaved so
    that the first few already differ in table size and seat (a short check still varies both)."""
    spec = game.spec
    defaults = spec.resolve_options()
    tables = []
    for players in range(spec.min_players, spec.max_players + 1):
        variants: list[dict[str, Any]] = [{}]
        if spec.partnerships == "optional":
            variants.append({"partnerships": not defaults["partnerships"]})
        for options in variants:
            try:
                game.new_state(players, spec.resolve_options(options), 0)
            except OptionError:
                continue  # this option does not exist at this player count (Casino's pairs need 4)
            tables.append((players, options))
    order = []
    for round_number in range(max(players for players, _ in tables)):
        for index, (players, options) in enumerate(tables):
            if round_number < players:
                order.append(Seating(spec.name, players, options, (round_number + index) % players))
    return order


def plan(game: Game, count: int | None) -> list[Seating]:
    """`count` seatings (one full pass over every seating when None), repeating the pass as needed."""
    every = seatings_of(game)
    count = len(every) if count is None else count
    return [every[index % len(every)] for index in range(count)]


def opponents(bot_name: str, count: int) -> list[BotSpec]:
    """`count` seeded random bots named random-1, random-2 ... (opponent-N if the bot took that name)."""
    prefix = "opponent" if bot_name.startswith("random-") else "random"
    return [BotSpec(name=f"{prefix}-{number}", command=("python3", str(RANDOM_BOT), "--seed", str(number)))
            for number in range(1, count + 1)]


def reproduce_command(bot: BotSpec, seated: list[BotSpec], seating: Seating, seed: int, limits: Limits) -> str:
    """The shell line that replays one game exactly: same seed, seating, options, time limit and time
    bank, run where the bot runs (its folder, or the current directory for a NAME=CMD bot)."""
    words = limit_words(vars(limits))
    if limits.sandbox.mode != SandboxSettings.mode:
        words += ["--sandbox", limits.sandbox.mode]
    for name in limits.sandbox.pass_env:
        words += ["--pass-env", name]
    bots = [f"{spec.name}={shlex.join(spec.command)}" for spec in seated]
    return play_line(seating.game, seed, bots, seating.options, words, bot.cwd or os.getcwd())


def check_handshake(bot: BotSpec, limits: Limits) -> tuple[dict[str, Any] | None, float | None, list[FaultEntry]]:
    """Start the bot alone, take its hello, then shut it down: its hello, the handshake time, and faults.

    It runs in a supervised worker process, so a bot that kills or stops its parent fails here."""
    try:
        return supervised(partial(_handshake, bot, limits), limits)
    except Lost as lost:
        return None, None, [finding(Fault("sabotage", bot.name, f"the referee's process was {lost.reason} "
                                          "during the bot's handshake or shutdown"), None, None, None)]


def _handshake(bot: BotSpec, limits: Limits) -> tuple[dict[str, Any] | None, float | None, list[FaultEntry]]:
    """The handshake check itself (see `check_handshake`)."""
    process = BotProcess(bot, limits)
    started = time.monotonic()
    try:
        hello = process.start()
    except BotFault as error:
        process.kill()
        return None, None, [finding(error.fault, None, None, None)]
    elapsed = time.monotonic() - started
    findings = []
    if not process.stop():
        findings.append(finding(Fault(
            "crash", bot.name,
            f"did not exit with status 0 within {limits.shutdown_grace} s of shutdown (sent right after hello)",
            stderr_tail=process.stderr_tail()), None, None, None))
    return hello, elapsed, findings


class _Findings(EventSink):
    """Collects a checked game's findings: its seatings, decision times and faults, with the
    reproduce line of the game each happened in."""

    def __init__(self, outcome: GameCheck, bot: BotSpec, game: Game,
                 games_by_id: dict[str, tuple[Seating, int, str]], limit: float):
        self.outcome, self.bot, self.game, self.games_by_id = outcome, bot, game, games_by_id
        self.limit = limit  # the bot's decision limit, past which a decision draws on its time bank
        self.last_game: dict[str, tuple[Seating, int, str]] = {}  # match id -> its last game's seating and replay

    def game_finished(self, event: FinishedGame) -> bool:
        record, outcome = event.record, self.outcome
        seating = self.games_by_id[event.game_id][0]
        outcome.seatings.append(seating)
        times = [seconds for seat, seconds in record.decision_times if seat == seating.seat]
        outcome.decision_times += times
        outcome.bank_draws.append(sum(max(0.0, seconds - self.limit) for seconds in times))
        outcome.findings += [finding(fault, *self.games_by_id[event.game_id], opponent=fault.seat != seating.seat)
                             for fault in record.faults]
        self.last_game[event.match_id] = self.games_by_id[event.game_id]
        return False

    def match_finished(self, event: FinishedMatch) -> None:
        # Shutdown comes after the match's last game, so that game's replay line ends the same way.
        self.outcome.findings += [finding(fault.at(game=self.game.spec.name), *self.last_game[event.match_id],
                                          opponent=fault.bot != self.bot.name, at_shutdown=True)
                                  for fault in event.shutdown_faults]

    def worker_lost(self, event: WorkerLost) -> None:
        if event.name is None or event.disqualified is not None:
            return
        where = (self.games_by_id[event.game_id] if event.game_id
                 else self.last_game.get(event.match_id, (None, None, None)))
        again = "; the game was played again" if event.game_id else " (between games)"
        self.outcome.findings.append(finding(
            Fault("sabotage", event.name, f"the referee's process was {event.reason} while it waited on this "
                                          f"bot{again}", game=self.game.spec.name, game_id=event.game_id),
            *where, opponent=event.name != self.bot.name))


def check_game(bot: BotSpec, game: Game, games: int | None, limits: Limits, seed: int) -> GameCheck:
    """Play `games` games of one game (a full pass over its seatings when None) and collect the faults.

    The games run in a supervised worker process: a bot that kills or stops it is reported (and
    its game played again, then played out without it), never a hang or a crash of `check`."""
    outcome = GameCheck(game.spec.name)
    started = time.monotonic()
    planned = list(enumerate(plan(game, games)))

    def table_of(item: tuple[int, Seating]) -> tuple[int, tuple[tuple[str, Any], ...]]:
        return item[1].players, tuple(sorted(item[1].options.items()))

    planned.sort(key=table_of)  # one match (one set of processes) per table size and options
    tables, specs, games_by_id = [], {}, {}
    for (players, options), group in groupby(planned, key=table_of):
        bots = [bot] + opponents(bot.name, players - 1)
        specs.update((spec.name, spec) for spec in bots)
        planned_games = []
        for index, seating in group:
            order = list(range(1, players))
            order.insert(seating.seat, 0)  # order[seat] = index in `bots` of the bot in that seat
            game_id = f"{game.spec.name}-{seed + index}"
            planned_games.append(PlannedGame(game_id, index, 0, seed + index, tuple(order)))  # deals differ
            replay = reproduce_command(bot, [bots[number] for number in order], seating, seed + index, limits)
            games_by_id[game_id] = (seating, seed + index, replay)
        tables.append(PlannedMatch(f"{game.spec.name} at {players}{''.join(f' {k}={v}' for k, v in options)}",
                                   game.spec.name, dict(options), tuple(spec.name for spec in bots),
                                   tuple(planned_games)))
    drive(LocalExecutor(1, pin_cores=False).run(tables, specs, limits), _Findings(outcome, bot, game, games_by_id,
                                                                       limits.decision_timeout))
    outcome.duration = time.monotonic() - started
    return outcome


def check_bot(entrant: Entrant, games: Iterable[str], limits: Limits, games_per_game: int | None = None,
              seed: int = 0, progress: Callable[[list[str]], None] | None = None) -> CheckReport:
    """Check one bot: the handshake and shutdown alone, then each game in turn; `progress` hears
    the report's lines as each part finishes (a long check shows its way)."""
    spec = entrant.spec
    report = CheckReport(spec.name, spec.command, spec.cwd, limits, describe_sandbox(limits.sandbox))
    report.hello, report.handshake_seconds, report.lifecycle = check_handshake(spec, limits)
    if progress is not None:
        progress(describe_lifecycle(report))
    for name in games:
        if report.hello is None:
            outcome = GameCheck(name, skipped="the handshake failed, so no game was played")
        else:
            outcome = check_game(spec, get_game(name), games_per_game, limits, seed)
        report.games.append(outcome)
        if progress is not None:
            progress(describe_game(outcome, limits))
    return report


# -- rendering -------------------------------------------------------------------------------

def describe_game(game: GameCheck, limits: Limits) -> list[str]:
    """A game's summary line, then its faults."""
    if game.skipped is not None:
        return [f"{game.game}: SKIPPED: {game.skipped}"]
    verdict = "FAIL" if game.failures else "ok"
    timing = game.timing(limits.decision_timeout, limits.time_bank)
    over = " (WARNING: over half the time bank in one game)" if limits.time_bank else " (WARNING: over half the limit)"
    times = ("no decisions" if timing is None else
             f"decision time median {milliseconds(timing['median'])}, worst {milliseconds(timing['worst'])} "
             f"of {milliseconds(limits.decision_timeout)}" + (over if timing["slow"] else ""))
    lines = [f"{game.game}: {verdict}: {game.coverage()} in {game.duration:.1f} s; {times}"]
    for finding in game.findings:
        lines += ["  " + line for line in text_lines(finding, CHECK_TEXT)]
    return lines


def describe_lifecycle(report: CheckReport) -> list[str]:
    """The handshake and shutdown lines."""
    lines = [printable(f"check {report.bot}: {shlex.join(report.command)}" + (f" (in {report.cwd})" if report.cwd else "")
                       + f" against the random bot; decision limit {milliseconds(report.limits.decision_timeout)}"
                       + time_bank_text(report.limits)),
             f"sandbox: {report.sandbox}"]
    if report.hello is not None:
        name, version = (cut(report.hello[key], 200) for key in ("name", "version"))
        lines.append(printable(f"handshake: ok in {report.handshake_seconds:.2f} s (hello from {name!r} version {version!r})"))
    for finding in report.lifecycle:
        lines += text_lines(finding, CHECK_TEXT)
    if report.hello is not None and not report.lifecycle:
        lines.append("shutdown: ok (exit status 0)")
    return lines


def describe_verdict(report: CheckReport) -> list[str]:
    """Warnings, then the one-line verdict."""
    lines = [f"WARNING {warning}" for warning in report.warnings()]
    if report.passed:
        played = counted(sum(len(g.seatings) for g in report.games), "game")
        lines.append(f"PASS: {report.bot} played {played} without a fault")
    else:
        failed = [game.game for game in report.games if game.failures or game.skipped]
        lines.append(f"FAIL: {report.bot}: {len(report.failures)} fault(s)"
                     + (f" in {', '.join(failed)}" if failed else ""))
    return [printable(line) for line in lines]


def junit_xml(report: CheckReport, more_cases: Callable[[ET.Element], int] | None = None) -> bytes:
    """A JUnit XML report: one testcase per game; lifecycle faults fail every case, being part of each.
    `more_cases` adds its own cases to the suite (the strength's) and returns how many failed."""
    bot = printable(report.bot)  # every other text below is escaped where it is rendered
    suite = ET.Element("testsuite", name=f"cardarena check {bot}")
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="sandbox", value=report.sandbox)
    ET.SubElement(properties, "property", name="decision_timeout", value=f"{report.limits.decision_timeout:g}")
    ET.SubElement(properties, "property", name="time_bank", value=f"{report.limits.time_bank:g}")
    failed = 0
    for game in report.games:
        case = ET.SubElement(suite, "testcase", classname=f"cardarena.check.{bot}", name=game.game,
                             time=f"{game.duration:.3f}")
        problems = report.lifecycle + game.failures
        if problems:
            failed += 1
            junit_failure(case, problems)
        elif game.skipped is not None:
            failed += 1
            ET.SubElement(case, "failure", type="skipped", message=game.skipped)
        out = ET.SubElement(case, "system-out")
        out.text = "\n".join(describe_game(game, report.limits))
    if more_cases is not None:
        failed += more_cases(suite)
    suite.set("tests", str(len(suite.findall("testcase"))))
    suite.set("failures", str(failed))
    suite.set("time", f"{sum(float(case.get('time', 0)) for case in suite.findall('testcase')):.3f}")
    suite.set("errors", "0")
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
