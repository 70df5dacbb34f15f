"""Which module samples which game: `cardarena.search.<module>` defines `SAMPLER` for the game
whose wire name is the module's name with '_' as '-'."""

from __future__ import annotations

import importlib

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the samplers import knowledge, which imports this
    from cardarena.search.knowledge import DealSampler


def sampler_for(game: str) -> "DealSampler":
    """The `DealSampler` of the game with wire name `game` (ValueError when it has none)."""
    name = f"cardarena.search.{game.replace('-', '_')}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise  # the sampler exists but something it imports does not
        raise ValueError(f"no deal sampler for the game {game!r}") from error
    return module.SAMPLER
