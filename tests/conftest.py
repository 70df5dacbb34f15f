"""Shared fixtures: paths to bots and a helper to build bot specs for real subprocesses."""

import sys
from pathlib import Path

import pytest

from cardarena.referee.process import BotSpec

ROOT = Path(__file__).resolve().parent.parent
ZOO = ROOT / "tests" / "zoo"
RANDOM_BOT = ROOT / "sample_bots" / "random" / "bot.py"


def random_bot(name: str = "random", seed: int = 0) -> BotSpec:
    """The sample random bot as a subprocess."""
    return BotSpec(name=name, command=(sys.executable, str(RANDOM_BOT), "--seed", str(seed)))


def zoo_bot(script: str, after: int = 1) -> BotSpec:
    """A misbehaving bot from tests/zoo that plays `after` legal decisions first."""
    return BotSpec(name=script.removesuffix(".py"), command=(sys.executable, script, "--after", str(after)),
                   cwd=str(ZOO), folder=str(ZOO))


@pytest.fixture
def make_random_bot():
    return random_bot
