"""`cardarena play`: one game between bot processes, its deal, moves and result printed as text or
JSON lines (a person may take a seat: runner/human.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from cardarena.console import (Seconds, check_writable_file, make_folder, parse_option, pass_env_option,
                               require_own_views, require_sandbox, result_table, sandbox_option, sandbox_settings,
                               time_bank_option)
from cardarena.errors import CardarenaError
from cardarena.cores import PINNING_UNAVAILABLE, can_pin
from cardarena.games import get_game
from cardarena.human import HUMAN_DECISION_TIMEOUT, seat_humans
from cardarena.manifest import load_entrant
from cardarena.notation import deal_lines, move_lines, seat_name
from cardarena.referee.faults import Fault
from cardarena.config import Limits
from cardarena.games.base import Game
from cardarena.record import GameRecord
from cardarena.referee.match import log_file_name
from cardarena.tournament.execution.events import EventSink, FinishedGame, FinishedMatch, WorkerLost, drive
from cardarena.tournament.execution.execute import LocalExecutor
from cardarena.tournament.planning.schedule import PlannedGame, PlannedMatch


@click.command()
@click.argument("game_name", metavar="GAME")
@click.option("--bot", "bots", multiple=True, required=True, metavar="FOLDER|NAME=CMD",
              help="A bot per seat, in seat order (repeat the option): a bot folder with bot.toml, or NAME=CMD.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the deal: the same seed deals the same cards (a demo, or a game to reproduce), "
                   "so the bots could compute them; a tournament deals from a secret instead.")
@click.option("--game-id", metavar="ID", help="The game id the bots are told [default: GAME-SEED]: a tournament "
              "game's id (`cardarena faults` gives it) replays it exactly for bots that seed their play on it.")
@click.option("--timeout", type=Seconds(), default=1.0, show_default=True,
              help="Seconds a bot has for each decision.")
@time_bank_option(0.0)
@click.option("--handshake-timeout", type=Seconds(), default=10.0, show_default=True,
              help="Seconds a bot has to start and say hello.")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="A rule option (repeatable).")
@click.option("--record", "record_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the game record (seed, actions, result, faults) as JSON here.")
@click.option("--quiet", is_flag=True, help="Print only the result, not every move.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the deal, every move and the result as JSON, one object per line.")
@click.option("--log-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write each bot's stderr to BOT.stderr.log here (replaced by each play; capped at 1 MiB per bot).")
@click.option("--pin-cores/--no-pin-cores", "pin", default=None,
              help="Keep the referee and its bots on one CPU core (pipe round trips are several "
                   "times faster there: tests/bench/bench_referee.py)  [default: pin-cores]")
@click.option("--pin/--no-pin", "old_pin", default=None, hidden=True)  # the former spelling of --pin-cores
@sandbox_option("auto")
@pass_env_option()
def play(game_name: str, bots: tuple[str, ...], seed: int, game_id: str | None, timeout: float, time_bank: float,
         handshake_timeout: float, options: tuple[str, ...], record_path: Path | None, quiet: bool, as_json: bool, log_dir: Path | None,
         pin: bool | None, old_pin: bool | None, sandbox_mode: str, pass_env: tuple[str, ...]) -> None:
    """Play one GAME between bot processes and print the deal, the moves and the result; exit
    status 1 when a bot faulted.

    `--bot NAME=human` seats you: you play that seat in this terminal (runner/human.py)."""
    game = get_game(game_name)
    specs = seat_humans([load_entrant(text).spec for text in bots])
    game.spec.check_players(len(specs))
    rule_options = game.spec.resolve_options(dict(parse_option(text) for text in options))
    game.new_state(len(specs), rule_options, seed)  # options that depend on the table size
    sandbox = sandbox_settings(sandbox_mode, pass_env)
    if record_path is not None:
        check_writable_file(record_path, "--record")
    if log_dir is not None:
        make_folder(log_dir, "--log-dir")
    require_own_views(specs, sandbox, [("the bot logs folder (--log-dir)", log_dir), ("the game record (--record)", record_path)])
    require_sandbox(sandbox)
    show = _Show(game, [spec.name for spec in specs], quiet, as_json,
                 public_only=any(spec.decision_timeout == HUMAN_DECISION_TIMEOUT for spec in specs))  # a person watches
    show.deal(rule_options, seed)
    pin = next((flag for flag in (pin, old_pin) if flag is not None), True)
    if pin and not can_pin():  # the worker pins itself and its bots where the system can
        click.echo(PINNING_UNAVAILABLE, err=True)
    if log_dir is not None:
        for spec in specs:  # the cap counts what a log holds: a play starts its logs afresh
            (log_dir / log_file_name(spec.name)).unlink(missing_ok=True)
    # The game runs in a supervised worker (pinned to the first core with its bots under --pin-cores), so
    # that a bot that kills or stops its parent costs a replay or a fault, never this command.
    keys = [str(seat) for seat in range(len(specs))]  # names may repeat; seats do not
    table = PlannedMatch(game.spec.name, game.spec.name, rule_options, tuple(keys),
                         (PlannedGame(game_id or f"{game.spec.name}-{seed}", 0, 0, seed, tuple(range(len(specs)))),))
    played = _OneGame()
    limits = Limits(handshake_timeout=handshake_timeout, decision_timeout=timeout, time_bank=time_bank, sandbox=sandbox)
    drive(LocalExecutor(1, pin_cores=pin, log_root=log_dir).run([table], dict(zip(keys, specs)), limits,
                                                                observer=show.observe), played)
    show.result(played.record, played.faults())
    if record_path is not None:
        try:
            record_path.write_text(json.dumps(played.record.to_dict(), indent=1))
        except OSError as error:
            raise CardarenaError(f"cannot write the game record {record_path}: {error.strerror}") from None
    if played.faults():
        sys.exit(1)  # a bot faulted: scripts see it


class _OneGame(EventSink):
    """What `play` keeps of its one game: the record and the faults at its shutdown; a lost worker is a warning."""

    def __init__(self) -> None:
        self.record: GameRecord | None = None
        self.shutdown_faults: list[Fault] = []

    def game_finished(self, event: FinishedGame) -> bool:
        self.record = event.record
        return False

    def match_finished(self, event: FinishedMatch) -> None:
        self.shutdown_faults = event.shutdown_faults

    def worker_lost(self, event: WorkerLost) -> None:
        click.echo(event.line(), err=True)

    def faults(self) -> list[Fault]:
        """Every fault of the game and of its shutdown."""
        return self.record.faults + self.shutdown_faults


class _Show:
    """What `play` prints: the deal, each decision (unless quiet) and the result, as text or JSON lines;
    with a person at the table (`public_only`), no hand but theirs."""

    def __init__(self, game: Game, names: list[str], quiet: bool, as_json: bool, public_only: bool):
        self.game, self.names, self.quiet, self.as_json, self.public_only = game, names, quiet, as_json, public_only

    def deal(self, rule_options: dict[str, Any], seed: int) -> None:
        if self.quiet:
            return
        dealt = self.game.new_state(len(self.names), rule_options, seed)
        views = [dealt.view(seat) for seat in range(len(self.names))]
        seats = ", ".join(seat_name(seat, self.names) for seat in range(len(self.names)))
        title = f"{self.game.spec.title}, seed {seed}: {seats}"
        click.echo(json.dumps({"type": "deal", "game": self.game.spec.name, "seed": seed, "seats": self.names,
                               "views": views}) if self.as_json
                   else "\n".join([title, *deal_lines(views, self.names, show_hands=not self.public_only)]))

    def observe(self, kind: str, data: dict[str, Any]) -> None:
        if self.quiet or kind != "decision":
            return
        click.echo(json.dumps({"type": "decision", **data}) if self.as_json
                   else "\n".join(move_lines(data, self.names, self.public_only)))

    def result(self, record: GameRecord, faults: list[Fault]) -> None:
        if self.as_json:
            click.echo(json.dumps({"type": "result", **record.to_dict()}))
        else:
            click.echo(f"\n{self.game.spec.title}, seed {record.seed}: {len(record.actions)} decisions in "
                       f"{record.duration:.2f} s")
            click.echo(result_table(record))
        for fault in faults:
            click.echo(f"FAULT {fault.summary()}", err=True)
