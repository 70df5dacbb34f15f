"""`cardarena check`: the command line of checking.py, which checks one bot against the sample random bot."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from cardarena.checking import MAX_GAMES_PER_GAME, RANDOM_BOT, check_bot, describe_verdict, junit_xml, opponents
from cardarena.console import (Seconds, check_writable_file, pass_env_option, require_own_views,
                               require_sandbox, sandbox_option, sandbox_settings, time_bank_option)
from cardarena.config import Limits
from cardarena.errors import CardarenaError
from cardarena.games import get_game
from cardarena.games.base import OptionError
from cardarena.manifest import Entrant, load_entrant


def games_to_check(entrant: Entrant, given: tuple[str, ...]) -> list[str]:
    """The games given with --game (comma-separated or repeated), else every game the bot plays."""
    if not given:
        return list(entrant.games)
    names = []
    for text in given:
        for name in filter(None, (part.strip() for part in text.split(","))):
            canonical = get_game(name).spec.name
            if canonical not in entrant.games:
                raise OptionError(f"{entrant.name} does not play {canonical} (it plays {', '.join(entrant.games)})")
            names.append(canonical)
    return list(dict.fromkeys(names))


@click.command()
@click.argument("bot_text", metavar="BOT")
@click.option("--game", "game_names", multiple=True, metavar="GAME[,GAME]",
              help="Games to check, repeated or comma-separated (default: every game in the bot's manifest).")
@click.option("--games", "old_game_names", multiple=True, hidden=True)  # the former spelling of --game
@click.option("--games-per-game", type=click.IntRange(min=1, max=MAX_GAMES_PER_GAME), default=None,
              help="Games to play of each game (default: one in every seat of every player count and option).")
@click.option("--timeout", type=Seconds(), default=1.0, show_default=True,
              help="Seconds the bot has for each decision.")
@time_bank_option(0.0)
@click.option("--handshake-timeout", type=Seconds(), default=Limits.handshake_timeout,
              show_default=True, help="Seconds the bot has to start and say hello.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the first game; the others follow it. Known seeds make every game reproducible "
                   "with `cardarena play` (and its deal computable): a check, not a contest.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write a JUnit XML report here (one testcase per game) for CI systems.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON instead of text.")
@sandbox_option("auto")
@pass_env_option()
def check(bot_text: str, game_names: tuple[str, ...], old_game_names: tuple[str, ...], games_per_game: int | None,
          timeout: float, time_bank: float, handshake_timeout: float, seed: int, junit_path: Path | None, as_json: bool,
          sandbox_mode: str, pass_env: tuple[str, ...]) -> None:
    """Check BOT (a bot folder with bot.toml, or NAME=CMD) against the random bot in every game, seat
    and player count; exit status 0 only when it made no fault."""
    entrant = load_entrant(bot_text)
    games = games_to_check(entrant, game_names + old_game_names)
    sandbox = sandbox_settings(sandbox_mode, pass_env)
    if junit_path is not None:
        check_writable_file(junit_path, "--junit")
    require_own_views([entrant.spec], sandbox, [], trusted=opponents(entrant.name, 1))
    require_sandbox(sandbox)
    if not RANDOM_BOT.is_file():
        raise CardarenaError(f"the opponent, the sample random bot, is missing: {RANDOM_BOT}")
    limits = Limits(handshake_timeout=handshake_timeout, decision_timeout=timeout, time_bank=time_bank, sandbox=sandbox)

    def echo(lines: list[str]) -> None:
        click.echo("\n".join(lines))

    report = check_bot(entrant, games, limits, games_per_game, seed, progress=None if as_json else echo)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=1))
    else:
        echo(describe_verdict(report))
    if junit_path is not None:
        try:
            junit_path.write_bytes(junit_xml(report))
        except OSError as error:
            raise CardarenaError(f"cannot write the JUnit report: {error}") from None
    sys.exit(0 if report.passed else 1)
