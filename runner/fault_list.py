"""`cardarena faults`: every fault a results file holds, with its evidence and a `cardarena play`
line that deals the same game again, as text, JSON or Markdown (rendered by `fault_report`, as
`check` and `report` render theirs).

A stored game keeps its own seed (derived from the results file's secret, or from the deal seed),
its seats and its options, so the line deals exactly the same cards to the same seats under the
same time limit, and tells the bots the same game id (bots that seed their play on it, as the
sample bots do, play the same moves). It runs the bots as they are now, each in a fresh process: a bot that carries
state from one game to the next (the games before it in its match) may play differently.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from cardarena.fault_report import LISTING_TEXT, fault_counts, json_entry, markdown, stored_entries, summary_lines, text_lines
from cardarena.referee.faults import counted
from cardarena.tournament.store import ResultStore


@click.command()
@click.argument("results", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--bot", metavar="NAME", help="Only this bot's faults.")
@click.option("--json", "as_json", is_flag=True, help="Print the faults as JSON, one object per line.")
@click.option("--markdown", "as_markdown", is_flag=True,
              help="Print the faults as a Markdown list (for a CI job's summary, an issue or a pull request).")
def faults(results: Path, bot: str | None, as_json: bool, as_markdown: bool) -> None:
    """List every fault recorded in a RESULTS database: kind, game, seat, decision (or the shutdown
    after a match's last game), what the bot sent, its stderr, and a `cardarena play` line that deals the same game again (same seed, seats,
    options and time limit; the bots as they are now, each in a fresh process)."""
    with ResultStore(results) as store:
        entrants, settings = store.entrants(), store.settings()
        if bot is not None and bot not in entrants:
            raise click.BadParameter(f"no bot {bot!r} in {results} (bots: {', '.join(entrants) or 'none'})",
                                     param_hint="--bot")
        games, match_faults = list(store.games()), store.match_faults()
    entries = stored_entries(games, entrants, settings, bot, match_faults)
    if as_json:
        for entry in entries:
            click.echo(json.dumps(json_entry(entry)))
        return
    if as_markdown:
        click.echo(markdown(entries), nl=False)
        return
    for entry in entries:
        click.echo("\n".join(text_lines(entry, LISTING_TEXT)))
    who = f" of {bot}" if bot is not None else ""
    counts = {name: kinds for name, kinds in fault_counts(games, match_faults).items() if bot is None or name == bot}
    click.echo(f"{len(entries)} fault{'s' if len(entries) != 1 else ''}{who} in {counted(len(games), 'game')}"
               + (":" if entries else ""))
    for line in summary_lines(counts):
        click.echo(f"  {line}")
