"""Core pinning where the system has it (Linux) and a note instead where it has not (macOS: no
os.sched_setaffinity), for `play` and `run` alike."""

from __future__ import annotations

import os
import sys

import pytest
from click.testing import CliRunner

from cardarena.cli import main
from cardarena.cores import PINNING_UNAVAILABLE, can_pin, pin_to_core, usable_cores
from tests.conftest import RANDOM_BOT


@pytest.fixture
def no_affinity(monkeypatch):
    """A system like macOS: the os module has no affinity calls."""
    for name in ("sched_setaffinity", "sched_getaffinity"):
        monkeypatch.delattr(os, name, raising=False)


def random_bot_args(count: int) -> list[str]:
    return [arg for seat in range(count) for arg in ("--bot", f"r{seat}={sys.executable} {RANDOM_BOT} --seed {seat}")]


def test_without_affinity_calls_nothing_is_pinned_and_every_cpu_counts(no_affinity):
    assert not can_pin()
    assert pin_to_core(0) is False
    assert usable_cores() == (os.cpu_count() or 1)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="this system cannot pin (not Linux)")
def test_pin_to_core_counts_round_the_usable_cores():
    usable = os.sched_getaffinity(0)
    try:
        assert pin_to_core(len(usable) + 1) is True
        assert os.sched_getaffinity(0) == {sorted(usable)[1 % len(usable)]}
    finally:
        os.sched_setaffinity(0, usable)
    assert usable_cores() == len(usable)


def test_play_without_affinity_calls_plays_unpinned_with_a_note(no_affinity):
    result = CliRunner().invoke(main, ["play", "knock-rummy", *random_bot_args(2), "--quiet"])
    assert result.exit_code == 0, result.output
    assert PINNING_UNAVAILABLE in result.output
    assert "Knock Rummy, seed 0" in result.output


@pytest.mark.parametrize("pinning,noted", [([], True), (["--no-pin-cores"], False)])
def test_run_without_affinity_calls_plays_unpinned(no_affinity, tmp_path, pinning, noted):
    """The worker count falls back to the CPU count; asking to pin (the sample league does) is noted."""
    result = CliRunner().invoke(main, ["run", *random_bot_args(2), "--game", "casino", "--deals", "1",
                                       "--out", str(tmp_path / "t.sqlite"), *pinning])
    assert result.exit_code == 0, result.output
    assert (PINNING_UNAVAILABLE in result.output) is noted
    assert "casino (rules v2): 2 games" in result.output
