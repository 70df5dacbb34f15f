"""`cardarena faults`: every fault a results file holds, with its evidence and a `cardarena play`
line that deals the same game again, and the per-bot fault summary that ends `cardarena run`.

A stored game keeps its own seed (derived from the results file's secret, or from the deal seed),
its seats and its options, so the line deals exactly the same cards to the same seats under the
same time limit, and tells the bots the same game id (bots that seed their play on it, as the
sample bots do, play the same moves). It runs the bots as they are now, each in a fresh process: a bot that carries
state from one game to the next (the games before it in its match) may play differently.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable

import click

from cardarena.protocol.messages import brief
from cardarena.console import option_text
from cardarena.games import get_game
from cardarena.games.base import GameError
from cardarena.referee.faults import FAULT_KINDS, cut, printable, telling_lines
from cardarena.tournament.store import ResultStore, StoredGame, StoredMatchFault

EXCERPT = 300  # characters of a fault's detail and of what the bot sent, shown per fault
STDERR_LINES = 5  # telling lines of a fault's stderr shown per fault


def bot_argument(name: str, entrant: dict[str, Any] | None) -> tuple[str, str | None]:
    """How `play --bot` names a stored bot: its folder where it had one, else NAME=CMD; and the
    directory a NAME=CMD bot ran in (None when the bot has a folder or the file does not say)."""
    if entrant is None:
        return name, None  # not among the entrants (cannot happen in a file cardarena wrote)
    where = entrant.get("where") or {}
    if where.get("folder"):
        return where["folder"], None
    return f"{name}={shlex.join(entrant['command'])}", where.get("cwd")


def reproduce_line(game: StoredGame, entrants: dict[str, dict[str, Any]], settings: dict[str, Any] | None) -> str:
    """The shell line that deals `game` again: `cardarena play` with its seed, seats, options and limits,
    run where its NAME=CMD bots ran."""
    limits = (settings or {}).get("limits", {})
    words = ["cardarena", "play", game.game, "--seed", str(game.seed), "--game-id", game.game_id]
    if "decision_timeout" in limits:
        words += ["--timeout", f"{limits['decision_timeout']:g}"]
    if limits.get("handshake_timeout", 10.0) != 10.0:
        words += ["--handshake-timeout", f"{limits['handshake_timeout']:g}"]
    folders = set()
    for name in game.seats:
        argument, cwd = bot_argument(name, entrants.get(name))
        words += ["--bot", argument]
        folders.add(cwd)
    try:
        defaults = get_game(game.game).spec.resolve_options()
    except GameError:
        defaults = {}
    for key, value in game.options.items():
        if defaults.get(key, object()) != value:
            words += ["--option", f"{key}={option_text(value)}"]
    line = shlex.join(words)
    folders.discard(None)
    if len(folders) == 1:
        return f"cd {shlex.quote(folders.pop())} && {line}"
    return line  # bots by folder only (or, from an older file, NAME=CMD bots with no directory recorded)


def sent_excerpt(fault: dict[str, Any]) -> str:
    """What the bot sent, briefly: the decoded message where it decoded, else the bytes as hex."""
    if fault.get("message") is not None:
        return cut(brief(fault["message"]), EXCERPT)
    data = fault.get("data") or ""
    if data:
        more = f" ({fault['data_length']:,} bytes in all)" if fault.get("data_length", 0) > len(data) // 2 else ""
        return cut(f"hex {data}", EXCERPT) + more
    return "nothing"


def fault_entries(games: Iterable[StoredGame], entrants: dict[str, dict[str, Any]],
                  settings: dict[str, Any] | None, bot: str | None = None,
                  match_faults: Iterable[StoredMatchFault] = ()) -> list[dict[str, Any]]:
    """One plain entry per fault (of `bot` only, when given), in game order, with its reproduce line;
    a fault at a match's shutdown comes after the game it followed (which its line deals again:
    `play` shuts its bots down after that game as the match did)."""
    following: dict[str, list[StoredMatchFault]] = defaultdict(list)
    for stored in match_faults:
        following[stored.game_id].append(stored)
    entries = []
    for game in games:
        faults = [(fault, False) for fault in game.faults]
        faults += [(stored.fault, True) for stored in following.pop(game.game_id, [])]
        for fault, at_shutdown in faults:
            if bot is not None and fault["bot"] != bot:
                continue
            entries.append({
                "bot": fault["bot"], "kind": fault["kind"], "game_id": game.game_id, "game": game.game,
                "match_id": game.match_id, "at_shutdown": at_shutdown,
                "seat": fault.get("seat"), "decision": fault.get("decision"), "detail": fault["detail"],
                "rule": FAULT_KINDS.get(fault["kind"], ""), "sent": sent_excerpt(fault),
                "stderr": telling_lines(fault.get("stderr_tail") or "", STDERR_LINES),
                "reproduce": reproduce_line(game, entrants, settings),
            })
    return entries


def describe_entry(entry: dict[str, Any]) -> list[str]:
    """A fault as a headline and indented evidence, control characters escaped."""
    if entry["at_shutdown"]:
        where = f"at the shutdown after {entry['game_id']} (match {entry['match_id']}; no game's result changed)"
    else:
        place = [f"seat {entry['seat']}"] if entry["seat"] is not None else []
        place += [f"decision {entry['decision']}"] if entry["decision"] is not None else []
        where = f"in {entry['game_id']} ({', '.join(place)})"
    lines = [f"{entry['bot']}: {entry['kind']} {where}: {cut(entry['detail'], EXCERPT)}",
             f"    sent:      {entry['sent']}",
             f"    rule:      {entry['rule']}"]
    if entry["stderr"]:
        lines.append(f"    stderr:    {entry['stderr'][0]}")
        lines += [f"               {line}" for line in entry["stderr"][1:]]
    lines.append(f"    reproduce: {entry['reproduce']}")
    return [printable(line) for line in lines]


def fault_counts(games: Iterable[StoredGame], match_faults: Iterable[StoredMatchFault] = ()) -> dict[str, Counter]:
    """Per bot, its faults (in games, and at a match's shutdown) counted by kind."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for fault in [fault for game in games for fault in game.faults] + [stored.fault for stored in match_faults]:
        counts[fault["bot"]][fault["kind"]] += 1
    return dict(counts)


def summary_lines(counts: dict[str, Counter]) -> list[str]:
    """One line per bot that faulted, most faults first: `quitter: 44 faults (crash 44)`."""
    lines = []
    for bot, kinds in sorted(counts.items(), key=lambda item: (-sum(item[1].values()), item[0])):
        total = sum(kinds.values())
        parts = ", ".join(f"{kind} {count}" for kind, count in kinds.most_common())
        lines.append(printable(f"{bot}: {total} fault{'s' if total != 1 else ''} ({parts})"))
    return lines


@click.command()
@click.argument("results", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--bot", metavar="NAME", help="Only this bot's faults.")
@click.option("--json", "as_json", is_flag=True, help="Print the faults as JSON, one object per line.")
def faults(results: Path, bot: str | None, as_json: bool) -> None:
    """List every fault recorded in a RESULTS database: kind, game, seat, decision (or the shutdown
    after a match's last game), what the bot sent, its stderr, and a `cardarena play` line that deals the same game again (same seed, seats,
    options and time limit; the bots as they are now, each in a fresh process)."""
    with ResultStore(results) as store:
        entrants, settings = store.entrants(), store.settings()
        if bot is not None and bot not in entrants:
            raise click.BadParameter(f"no bot {bot!r} in {results} (bots: {', '.join(entrants) or 'none'})",
                                     param_hint="--bot")
        games, match_faults = list(store.games()), store.match_faults()
    entries = fault_entries(games, entrants, settings, bot, match_faults)
    if as_json:
        for entry in entries:
            click.echo(json.dumps(entry))
        return
    for entry in entries:
        click.echo("\n".join(describe_entry(entry)))
    who = f" of {bot}" if bot is not None else ""
    counts = {name: kinds for name, kinds in fault_counts(games, match_faults).items() if bot is None or name == bot}
    click.echo(f"{len(entries)} fault{'s' if len(entries) != 1 else ''}{who} in {len(games)} games"
               + (":" if entries else ""))
    for line in summary_lines(counts):
        click.echo(f"  {line}")
