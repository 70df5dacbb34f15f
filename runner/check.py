"""`cardarena check`: the command line of checking.py, which checks one bot against the sample random bot,
and of strength.py, which then measures its strength on the ladder (`--strength`)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import click

from cardarena.checking import (MAX_GAMES_PER_GAME, RANDOM_BOT, CheckReport, check_bot, describe_verdict, junit_xml,
                                opponents)
from cardarena.console import (Seconds, check_writable_file, pass_env_option, require_own_views,
                               require_sandbox, sandbox_option, sandbox_settings, time_bank_option)
from cardarena.config import Limits
from cardarena.errors import CardarenaError
from cardarena.games import get_game
from cardarena.games.base import OptionError
from cardarena.manifest import Entrant, load_entrant
from cardarena.strength import (StrengthReport, StrengthSettings, describe_strength, junit_cases, load_scale,
                                measure_strength, rung_specs, strength_dict, strength_verdict)


class Elo(click.ParamType):
    """A rating on the ladder's scale: a finite number."""

    name = "elo"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            elo = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number (an Elo rating, random = 1000)", param, ctx)
        if not math.isfinite(elo):
            self.fail(f"{value!r} is not a finite Elo rating", param, ctx)
        return elo


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
@click.option("--strength", is_flag=True,
              help="After the check, measure the bot's Elo on the ladder's fixed scale (random = 1000), per game "
                   "and overall, in duplicate sets against the ladder's rungs (sample_bots/README.md).")
@click.option("--min-elo", type=Elo(), default=None, metavar="ELO",
              help="Fail (exit 1) when the overall rating is below ELO with 95% confidence; implies --strength.")
@click.option("--strength-target", type=click.FloatRange(min=1, max=1000), default=StrengthSettings.target,
              show_default=True, metavar="ELO",
              help="Play until the overall 95% interval is at most ±ELO (each game's is wider, by about the "
                   "square root of the games measured); halving it takes four times the sets.")
@click.option("--strength-sets", type=click.IntRange(min=StrengthSettings.min_sets, max=10_000),
              default=StrengthSettings.max_sets, show_default=True, metavar="N",
              help="Play at most N duplicate sets (two games each) in each game, whatever the interval.")
@sandbox_option("auto")
@pass_env_option()
def check(bot_text: str, game_names: tuple[str, ...], old_game_names: tuple[str, ...], games_per_game: int | None,
          timeout: float, time_bank: float, handshake_timeout: float, seed: int, junit_path: Path | None, as_json: bool,
          strength: bool, min_elo: float | None, strength_target: float, strength_sets: int,
          sandbox_mode: str, pass_env: tuple[str, ...]) -> None:
    """Check BOT (a bot folder with bot.toml, or NAME=CMD) against the random bot in every game, seat
    and player count; exit status 0 only when it made no fault. With --strength (or --min-elo), then
    measure its Elo on the ladder of reference bots."""
    entrant = load_entrant(bot_text)
    games = games_to_check(entrant, game_names + old_game_names)
    sandbox = sandbox_settings(sandbox_mode, pass_env)
    if junit_path is not None:
        check_writable_file(junit_path, "--junit")
    settings = None
    if strength or min_elo is not None:
        settings = StrengthSettings(target=strength_target, max_sets=strength_sets, seed=seed, min_elo=min_elo)
        scale = load_scale()  # before any game: a missing ladder file fails at once
        for game in games:
            scale.rungs(game)
    trusted = opponents(entrant.name, 1) + (rung_specs(entrant.name) if settings else [])
    require_own_views([entrant.spec], sandbox, [], trusted=trusted)
    require_sandbox(sandbox)
    if not RANDOM_BOT.is_file():
        raise CardarenaError(f"the opponent, the sample random bot, is missing: {RANDOM_BOT}")
    limits = Limits(handshake_timeout=handshake_timeout, decision_timeout=timeout, time_bank=time_bank, sandbox=sandbox)

    def echo(lines: list[str]) -> None:
        click.echo("\n".join(lines))

    report = check_bot(entrant, games, limits, games_per_game, seed, progress=None if as_json else echo)
    measured: StrengthReport | None = None
    if settings is not None and report.passed:
        if not as_json:
            echo([f"strength: playing duplicate sets against the ladder until the overall interval is "
                  f"±{settings.target:g} Elo (at most {settings.max_sets} sets a game)"])
        measured = measure_strength(entrant.spec, games, limits, settings, scale, progress=None if as_json else echo)
    output(report, measured, settings, as_json, echo)
    if junit_path is not None:
        try:
            junit_path.write_bytes(junit_xml(report, None if measured is None else
                                             lambda suite: junit_cases(suite, measured)))
        except OSError as error:
            raise CardarenaError(f"cannot write the JUnit report: {error}") from None
    strength_failed = settings is not None and (measured is None or not measured.passed)
    sys.exit(0 if report.passed and not strength_failed else 1)


NO_RATING = "strength: no rating: the bot faulted in the check, so its games against the ladder were not played"


def output(report: CheckReport, measured: StrengthReport | None, settings: StrengthSettings | None, as_json: bool,
           echo: Any) -> None:
    """The check's report, then the strength's, as JSON (a "strength" key: null when the check failed
    first) or as text ending in the verdict."""
    if as_json:
        data = report.to_dict()
        if settings is not None:
            data["strength"] = None if measured is None else strength_dict(measured)
        click.echo(json.dumps(data, indent=1))
        return
    if settings is not None:
        echo([NO_RATING] if measured is None else describe_strength(measured))
    echo(describe_verdict(report))
    if measured is not None and not measured.passed:
        echo([strength_verdict(measured)])
