"""The registry of games: every module in this package that defines `GAME` is a playable game.

Games are found by scanning the package, so adding a game is adding its module.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from cardarena.games.base import Game, OptionError


@cache
def all_games() -> dict[str, Game]:
    """Every registered game by its wire name, in alphabetical order of module."""
    games: dict[str, Game] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module_info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        game = getattr(module, "GAME", None)
        if isinstance(game, Game):
            games[game.spec.name] = game
    return games


def get_game(name: str) -> Game:
    """The game called `name` (case-insensitive, '_' and '-' alike), or OptionError listing the games."""
    key = name.strip().lower().replace("_", "-")
    games = all_games()
    if key not in games:
        raise OptionError(f"unknown game {name!r} (games: {', '.join(games) or 'none'})")
    return games[key]
