"""Shared pieces of the command line: parsing KEY=VALUE options and rendering records for people."""

from __future__ import annotations

from typing import Any

import click
from tabulate import tabulate

from runner.referee.match import GameRecord


def parse_option(text: str) -> tuple[str, Any]:
    """`key=value` from the command line: true/false, none, integers, else the string itself."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise click.BadParameter(f"options are given as KEY=VALUE, got {text!r}", param_hint="--option")
    lowered = raw.strip().lower()
    if lowered in ("true", "false"):
        value: Any = lowered == "true"
    elif lowered in ("none", "null"):
        value = None
    else:
        try:
            value = int(raw)
        except ValueError:
            value = raw
    return key.strip(), value


def describe(data: dict[str, Any]) -> str:
    """A compact one-line rendering of an action or event: `type key=value ...`."""
    parts = [str(data.get("type", "?"))]
    for key, value in data.items():
        if key != "type":
            shown = " ".join(map(str, value)) if isinstance(value, list) else value
            parts.append(f"{key}={shown}")
    return " ".join(parts)


def result_table(record: GameRecord) -> str:
    """The result of one game as a table: seat, bot, score, rank, faults."""
    faults = {fault.seat: fault.kind for fault in record.faults}
    rows = [
        [seat, name, str(record.result.scores[seat]), record.ranks[seat] + 1, faults.get(seat, "")]
        for seat, name in enumerate(record.seats)
    ]
    return tabulate(rows, headers=["seat", "bot", "score", "rank", "fault"])
