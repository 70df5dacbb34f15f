"""A human seat: a bot process that asks a person at a terminal for each of its decisions.

`cardarena play GAME --bot NAME=human ...` seats `python -m cardarena.human --tty PATH`. It speaks the
protocol on its pipes like any bot, so the referee treats it like one, and it talks to the person
on the terminal `play` was started from, opened by its path: a bot runs in a session of its own,
which has no controlling terminal to open as /dev/tty. The view is drawn in card notation, the
legal actions are numbered (Casino's steps one by one), a number inside a range is asked for
separately, and a wrong entry is asked again: a person's typo is never a fault. The referee gives
this seat `HUMAN_DECISION_TIMEOUT` per decision instead of the bots' limit. The other seats'
moves appear as they happen in `play`'s own output, on the same terminal.

A human seat cannot run in the bots' sandbox (no environment, no devices, no terminal): it is
the organiser's own program, started by the organiser, and it needs the terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from typing import Any, TextIO

from cardarena.errors import UsageError
from cardarena.protocol.actions import is_range
from cardarena.protocol.bot import Bot, serve
from cardarena.config import BotSpec
from cardarena.notation import DEFAULT_LEGEND, LEGENDS, action_text, seat_name, value_text, view_lines

#: seconds a person has for a decision: in effect no limit, while every wait of the referee stays bounded
HUMAN_DECISION_TIMEOUT = 24 * 3600.0
COMMAND_WORD = "human"  # `--bot NAME=human` seats a person


def human_command(terminal: str) -> tuple[str, ...]:
    """The command that runs a human seat talking to the person on `terminal` (a tty path)."""
    return (sys.executable, "-m", "cardarena.human", "--tty", terminal)


def seat_humans(specs: list[BotSpec]) -> list[BotSpec]:
    """`specs` with every `NAME=human` made a human seat on this process's terminal (UsageError
    when standard input is not a terminal: a person could not answer)."""
    if not any(spec.command == (COMMAND_WORD,) for spec in specs):
        return specs
    if not sys.stdin.isatty():
        raise UsageError(f"a human seat ({COMMAND_WORD}) needs a terminal: run play from one")
    terminal = os.ttyname(sys.stdin.fileno())
    return [replace(spec, command=human_command(terminal), cwd=None, decision_timeout=HUMAN_DECISION_TIMEOUT,
                    confined=False)
            if spec.command == (COMMAND_WORD,) else spec for spec in specs]


class PersonLeft(Exception):
    """The terminal closed (end of input) while a decision was asked for."""


class HumanSeat(Bot):
    """Asks the person at `terminal` for every decision of its seat."""

    name = "human"
    version = "1"

    def __init__(self, keyboard: TextIO, screen: TextIO):
        self.keyboard = keyboard
        self.screen = screen
        self.names: list[str] = []

    def say(self, *lines: str) -> None:
        self.screen.write("".join(f"{line}\n" for line in lines))
        self.screen.flush()

    def ask(self, prompt: str, low: int, high: int) -> int:
        """A whole number from `low` to `high` typed by the person; anything else is asked again."""
        while True:
            self.screen.write(prompt)
            self.screen.flush()
            line = self.keyboard.readline()
            if not line:
                raise PersonLeft("the terminal closed")
            text = line.strip()
            try:
                number = int(text)
            except ValueError:
                number = None
            if number is not None and low <= number <= high:
                return number
            self.say(f"  {text!r} is not a number from {low} to {high}; try again.")

    def start_game(self, info: dict[str, Any]) -> None:
        self.names = list(info["names"])
        teams = info.get("teams")
        partners = ""
        if teams is not None:
            partners = " (partners: " + ", ".join(seat_name(s, self.names) for s, team in enumerate(teams)
                                                   if team == teams[info["seat"]] and s != info["seat"]) + ")"
        self.say("", f"== {info['game']}: you are {seat_name(info['seat'], self.names)}{partners}",
                 f"   {LEGENDS.get(info['game'], DEFAULT_LEGEND)}")

    def decide(self, view: dict[str, Any], legal: list[dict[str, Any]], request: dict[str, Any]) -> dict[str, Any]:
        self.say("", f"-- your decision {request['decision']} --", *(f"  {line}" for line in view_lines(view, self.names)),
                 "your choices:", *(f"  {number:>3}) {action_text(entry, self.names)}"
                                     for number, entry in enumerate(legal, 1)))
        entry = legal[self.ask(f"choose 1-{len(legal)}: ", 1, len(legal)) - 1] if len(legal) > 1 else legal[0]
        if len(legal) == 1:
            self.say(f"  only one choice: {action_text(entry, self.names)}")
        action = {}
        for key, value in entry.items():
            action[key] = (self.ask(f"  {key} ({value['min']} to {value['max']}): ", value["min"], value["max"])
                           if is_range(value) else value)
        return action

    def end_game(self, info: dict[str, Any]) -> None:
        scores = info["result"]["scores"]
        self.say("", "== game over: " + ", ".join(f"{seat_name(s, self.names)} {value_text(score)}"
                                                  for s, score in enumerate(scores)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A human seat: asks the person at TTY for every decision.")
    parser.add_argument("--tty", required=True, help="path of the person's terminal, e.g. /dev/pts/3")
    args = parser.parse_args(argv)
    # Two handles: a terminal cannot be opened for reading and writing as one (unseekable) text file.
    with (open(args.tty, encoding="utf-8", errors="replace") as keyboard,
          open(args.tty, "w", encoding="utf-8") as screen):
        try:
            serve(HumanSeat(keyboard, screen), sys.stdin.buffer, sys.stdout.buffer)
        except PersonLeft as error:
            sys.exit(f"human seat: {error}")


if __name__ == "__main__":
    main()
