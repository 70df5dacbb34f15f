"""The one tree of expected failures: every error a command may end on derives from `CardarenaError`.

The command line catches `CardarenaError` once, where it starts (`cli.OneLineErrors`), and prints
its message as one `Error:` line with the error's `exit_status`: 2 for what the user named badly
(`UsageError`: an argument, an option, a league file, a bot manifest), 1 for the rest (a results
file that is not ours, a lost cluster, a record that does not match its engine). No library code
converts one error into another only to change how it is printed.

Left outside the tree on purpose: what a bot does wrong on the wire (`protocol.framing.FrameError`,
`protocol.messages.ProtocolViolation`, the referee's `BotFault` and `BadAnswer`), which becomes a
recorded fault and never ends a command, and exceptions used for control flow within one module.
This module imports nothing: every layer may use it, and a sandboxed bot sees it (games use it).
"""

from __future__ import annotations


class CardarenaError(Exception):
    """An expected failure: its message is one clear line, and the command exits with `exit_status`."""

    exit_status = 1


class UsageError(CardarenaError):
    """A bad argument, option or input file named on the command line, or a bad setting in one."""

    exit_status = 2
