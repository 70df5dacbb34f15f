"""The `cardarena` command line: list games, play one game between bot processes, and more.

Expected failures (bad arguments, unknown games, bad options) end in one clear line on stderr
and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from cardarena.console import (ArgumentError, Seconds, check_writable_file, make_folder, parse_option, pass_env_option,
                            require_own_views, require_sandbox, result_table, sandbox_option)
from cardarena.check import option_text
from cardarena.cores import PINNING_UNAVAILABLE, can_pin
from cardarena.games import all_games, get_game
from cardarena.games.base import OptionError
from cardarena.human import HUMAN_DECISION_TIMEOUT, seat_humans
from cardarena.manifest import load_entrant
from cardarena.notation import deal_lines, move_lines, seat_name
from cardarena.referee.faults import Fault
from cardarena.referee.match import log_file_name
from cardarena.referee.process import Limits
from cardarena.referee.sandbox import SandboxSettings
from cardarena.tournament.commands import lost_worker_line
from cardarena.tournament.execute import FinishedGame, FinishedMatch, LocalExecutor
from cardarena.tournament.schedule import PlannedGame, PlannedMatch


class OneLineErrors(click.Group):
    """The command group, printing every usage error as one `Error:` line (exit status 2) where
    click would add the usage text, so that scripts and people see one clear line."""

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except click.ClickException as error:
            message = " ".join(error.format_message().splitlines())
            click.echo(f"Error: {message}", err=True)
            sys.exit(error.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cardarena")
def main() -> None:
    """cardarena: bots in any language play card games under a strict referee."""


@main.command()
def games() -> None:
    """List the games with their player counts and options."""
    for game in all_games().values():
        spec = game.spec
        players = (str(spec.min_players) if spec.min_players == spec.max_players
                   else f"{spec.min_players}-{spec.max_players}")
        click.echo(f"{spec.name}  ({spec.title}; {players} players; partnerships: {spec.partnerships}; "
                   f"rules v{spec.rules_version})")
        click.echo(f"    {spec.summary}")
        for option in spec.options:
            allowed = f" one of {list(option.choices)}" if option.choices else ""
            click.echo(f"    --option {option.name}={option_text(option.default)}{allowed}: {option.help}")


@main.command()
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
def play(game_name: str, bots: tuple[str, ...], seed: int, game_id: str | None, timeout: float, handshake_timeout: float,
         options: tuple[str, ...], record_path: Path | None, quiet: bool, as_json: bool, log_dir: Path | None,
         pin: bool | None, old_pin: bool | None, sandbox_mode: str, pass_env: tuple[str, ...]) -> None:
    """Play one GAME between bot processes and print the deal, the moves and the result; exit
    status 1 when a bot faulted.

    `--bot NAME=human` seats you: you play that seat in this terminal (runner/human.py)."""
    try:
        game = get_game(game_name)
        specs = seat_humans([load_entrant(text).spec for text in bots])
        game.spec.check_players(len(specs))
        rule_options = game.spec.resolve_options(dict(parse_option(text) for text in options))
        game.new_state(len(specs), rule_options, seed)  # options that depend on the table size
        sandbox = SandboxSettings(mode=sandbox_mode, pass_env=pass_env)
    except (OptionError, ValueError) as error:
        raise ArgumentError(str(error)) from None
    if record_path is not None:
        check_writable_file(record_path, "--record")
    if log_dir is not None:
        make_folder(log_dir, "--log-dir")
    require_own_views(specs, sandbox, [("the bot logs folder (--log-dir)", log_dir), ("the game record (--record)", record_path)])
    require_sandbox(sandbox)

    names = [spec.name for spec in specs]
    public_only = any(spec.decision_timeout == HUMAN_DECISION_TIMEOUT for spec in specs)  # a person watches
    if not quiet:
        dealt = game.new_state(len(specs), rule_options, seed)
        views = [dealt.view(seat) for seat in range(len(specs))]
        click.echo(json.dumps({"type": "deal", "game": game.spec.name, "seed": seed, "seats": names, "views": views})
                   if as_json else "\n".join([f"{game.spec.title}, seed {seed}: "
                                              + ", ".join(seat_name(s, names) for s in range(len(names))),
                                              *deal_lines(views, names, show_hands=not public_only)]))

    def observe(kind: str, data: dict[str, Any]) -> None:
        if quiet or kind != "decision":
            return
        click.echo(json.dumps({"type": "decision", **data}) if as_json
                   else "\n".join(move_lines(data, names, public_only)))

    pin = next((flag for flag in (pin, old_pin) if flag is not None), True)
    if pin and not can_pin():  # the worker pins itself and its bots where the system can
        click.echo(PINNING_UNAVAILABLE, err=True)
    limits = Limits(handshake_timeout=handshake_timeout, decision_timeout=timeout, sandbox=sandbox)
    if log_dir is not None:
        for spec in specs:  # the cap counts what a log holds: a play starts its logs afresh
            (log_dir / log_file_name(spec.name)).unlink(missing_ok=True)
    # The game runs in a supervised worker (pinned to the first core with its bots under --pin-cores), so
    # that a bot that kills or stops its parent costs a replay or a fault, never this command.
    keys = [str(seat) for seat in range(len(specs))]  # names may repeat; seats do not
    table = PlannedMatch(game.spec.name, game.spec.name, rule_options, tuple(keys),
                         (PlannedGame(game_id or f"{game.spec.name}-{seed}", 0, 0, seed, tuple(range(len(specs)))),))
    shutdown_faults: list[Fault] = []
    for item in LocalExecutor(1, pin_cores=pin, log_root=log_dir).run([table], dict(zip(keys, specs)), limits,
                                                                      observer=observe):
        if isinstance(item, FinishedGame):
            record = item.record
        elif isinstance(item, FinishedMatch):
            shutdown_faults = item.shutdown_faults
        else:
            click.echo(lost_worker_line(item), err=True)
    if as_json:
        click.echo(json.dumps({"type": "result", **record.to_dict()}))
    else:
        click.echo(f"\n{game.spec.title}, seed {seed}: {len(record.actions)} decisions in {record.duration:.2f} s")
        click.echo(result_table(record))
    for fault in record.faults + shutdown_faults:
        click.echo(f"FAULT {fault.summary()}", err=True)
    if record_path is not None:
        try:
            record_path.write_text(json.dumps(record.to_dict(), indent=1))
        except OSError as error:
            raise click.ClickException(f"cannot write the game record {record_path}: {error.strerror}") from None
    if record.faults or shutdown_faults:
        sys.exit(1)  # a bot faulted: scripts see it


# Commands defined in their own modules are registered here, one line each.
from cardarena.check import check; main.add_command(check)  # noqa: E402,E702
from cardarena.tournament.commands import run; main.add_command(run)  # noqa: E402,E702
from cardarena.tournament.commands import leaderboard; main.add_command(leaderboard)  # noqa: E402,E702
from cardarena.tournament.commands import replay; main.add_command(replay)  # noqa: E402,E702
from cardarena.tournament.commands import salvage; main.add_command(salvage)  # noqa: E402,E702
from cardarena.html.report import report; main.add_command(report)  # noqa: E402,E702
from cardarena.fault_list import faults; main.add_command(faults)  # noqa: E402,E702
from cardarena.server.commands import serve; main.add_command(serve)  # noqa: E402,E702
from cardarena.server.commands import submit; main.add_command(submit)  # noqa: E402,E702

if __name__ == "__main__":
    sys.exit(main())
