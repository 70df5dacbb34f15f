"""The `cardarena` command line: list games, play one game between bot processes, and more.

Expected failures (bad arguments, unknown games, bad options) end in one clear line on stderr
and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from cardarena.errors import CardarenaError
from cardarena.fault_report import option_text
from cardarena.games import all_games

#: the commands defined in modules of their own, as name -> "module:command", imported when the
#: command runs (or `--help` lists them): a command's start imports only what it needs (`leaderboard`
#: needs no referee, `play` no report, none of them the league server)
COMMANDS = {"play": "cardarena.play:play", "check": "cardarena.check:check", "run": "cardarena.tournament.commands:run",
            "leaderboard": "cardarena.tournament.commands:leaderboard",
            "replay": "cardarena.tournament.commands:replay", "salvage": "cardarena.tournament.commands:salvage",
            "report": "cardarena.html.report:report", "faults": "cardarena.fault_list:faults",
            "serve": "cardarena.server.commands:serve", "submit": "cardarena.server.commands:submit"}


class OneLineErrors(click.Group):
    """The command group, and the one place where expected failures end a command: click's usage
    errors (where click would add the usage text) and every `CardarenaError` become one `Error:`
    line on stderr and the error's exit status, so that scripts and people see one clear line."""

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except click.ClickException as error:
            _fail(error.format_message(), error.exit_code)
        except CardarenaError as error:
            _fail(str(error), error.exit_status)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, those of `COMMANDS` too (not imported until one is asked for)."""
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        """The command `name`, its module imported the first time it is asked for."""
        if name not in self.commands and name in COMMANDS:
            module, command = COMMANDS[name].split(":")
            self.add_command(getattr(importlib.import_module(module), command), name)
        return self.commands.get(name)


def _fail(message: str, status: int) -> None:
    """End the command with `message` as one `Error:` line on stderr, and exit status `status`."""
    click.echo(f"Error: {' '.join(message.splitlines())}", err=True)
    sys.exit(status)


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


if __name__ == "__main__":
    sys.exit(main())
