"""One fault report: a bot's fault with its evidence and the line that replays its game, rendered
to text, JSON, JUnit, HTML and Markdown from one `FaultEntry`.

`cardarena check`, `cardarena faults` and `cardarena report` all render faults here, so they show the
same fields the same way: the bot, the game and game id, the seat (or the table `check` set up),
the decision (or the shutdown after a match's game), the kind and the rule it breaks, what the bot
sent, its telling stderr lines, and a `cardarena play` line that deals the game again, runnable
from any shell (it names this cardarena by its full path). Bot text is hostile: every rendering
escapes it for where it goes (control characters made visible; HTML, XML and Markdown escaped).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from cardarena.games import get_game
from cardarena.games.base import GameError
from cardarena.html import esc
from cardarena.protocol.messages import brief
from cardarena.record import GameRecord
from cardarena.referee.faults import Fault, cut, printable, telling_lines
from cardarena.tournament.store import StoredMatchFault

EXCERPT = 300  # characters of a fault's detail shown (JSON has it whole); what was sent is bounded already
STDERR_LINES = 5  # telling stderr lines in a listing of many faults


@dataclass(frozen=True)
class FaultEntry:
    """One fault as reported: the fault, where it happened, and the shell line that replays its game."""

    fault: Fault
    reproduce: str | None = None
    at_shutdown: bool = False  # at the shutdown after its game (`fault.game_id`): no game's result changed
    match_id: str | None = None
    seed: int | None = None
    players: int | None = None
    options: Mapping[str, Any] | None = None
    table: str | None = None  # the table `check` set up (`seat 1 of 4, partnerships=true`), shown for the seat
    opponent: bool = False  # in `check`: a fault of the random opponent, not of the checked bot


@dataclass(frozen=True)
class TextForm:
    """How a text rendering leads and how much of the stderr it shows: `check` (one bot) leads with
    FAULT and the table and shows a whole stack trace; a listing of many faults leads with the bot
    and the game id."""

    lead: str  # "check" or "listing"
    stderr_lines: int


CHECK_TEXT = TextForm("check", 25)
LISTING_TEXT = TextForm("listing", STDERR_LINES)


# -- the fields every rendering shows -------------------------------------------------------------

def option_text(value: Any) -> str:
    """An option value as `cardarena play --option` parses it back."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def cardarena_command() -> list[str]:
    """The words that run this cardarena from any shell, its venv active or not: the `cardarena`
    script beside this interpreter (where pip put it), else this interpreter running its CLI module."""
    script = Path(sys.executable).with_name("cardarena")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "cardarena.cli"]


def play_line(game: str, seed: int, bots: Sequence[str], options: Mapping[str, Any], limits: Sequence[str] = (),
              cwd: str | None = None) -> str:
    """The `cardarena play` line that deals one game again: its seed, then `limits` (words such as
    `--timeout 1`), a `--bot` per seat and an `--option` per option given; run in `cwd` when given."""
    words = [*cardarena_command(), "play", game, "--seed", str(seed), *limits]
    for bot in bots:
        words += ["--bot", bot]
    for key, value in options.items():
        words += ["--option", f"{key}={option_text(value)}"]
    line = shlex.join(words)
    return line if cwd is None else f"cd {shlex.quote(cwd)} && {line}"


def detail_text(fault: Fault) -> str:
    """What was wrong, cut to EXCERPT characters (JSON keeps it whole)."""
    return cut(fault.detail, EXCERPT)


def sent_text(fault: Fault) -> str:
    """What the bot sent: the decoded message where it decoded (in brief), else the bytes kept as
    evidence (at most MAX_EVIDENCE) as hex; or `nothing`."""
    if fault.message is not None:
        return brief(fault.message)
    if fault.data:
        more = f" ({fault.data_length:,} bytes in all)" if fault.data_length > len(fault.data) else ""
        return f"hex {fault.data.hex(' ')}{more}"
    return "nothing"


def place(entry: FaultEntry, lead: str, escape: Callable[[str], str] = str, game_ref: str | None = None) -> str:
    """Where the fault happened: `check`'s ` (game, table, decision N)`, a listing's `in GAME-ID (seat
    S, decision N)`, or the shutdown after a game; each piece of text passed through `escape`, the
    game id shown as `game_ref` when given (a link)."""
    fault = entry.fault
    game = escape(str(fault.game_id)) if game_ref is None else game_ref
    if entry.at_shutdown and lead == "listing":
        return f"at the shutdown after {game} (match {escape(str(entry.match_id))}; no game's result changed)"
    parts = [escape(fault.game)] if lead == "check" and fault.game else []
    if entry.table is not None:
        parts.append(escape(entry.table))
    elif fault.seat is not None:
        parts.append(f"seat {fault.seat}")
    if fault.decision is not None:
        parts.append(f"decision {fault.decision}")
    shown = f" ({', '.join(parts)})" if parts else ""
    return shown if lead == "check" else f"in {game}{shown}"


def headline(entry: FaultEntry, form: TextForm) -> str:
    """The fault's first line (not yet escaped)."""
    fault = entry.fault
    detail = detail_text(fault)
    if form.lead == "check":
        who = f"opponent {fault.bot}" if entry.opponent else fault.bot
        return f"FAULT {fault.kind}{place(entry, 'check')}: {who}: {detail}"
    return f"{fault.bot}: {fault.kind} {place(entry, 'listing')}: {detail}"


# -- text, JSON, JUnit ----------------------------------------------------------------------------

def text_lines(entry: FaultEntry, form: TextForm = LISTING_TEXT) -> list[str]:
    """A fault as a headline and indented evidence, control characters escaped."""
    fault = entry.fault
    lines = [headline(entry, form), f"    sent:      {sent_text(fault)}", f"    rule:      {fault.rule}"]
    stderr = telling_lines(fault.stderr_tail, form.stderr_lines)
    if stderr:
        lines.append(f"    stderr:    {stderr[0]}")
        lines += [f"               {line}" for line in stderr[1:]]
    if entry.reproduce:
        lines.append(f"    reproduce: {entry.reproduce}")
    return [printable(line) for line in lines]


def json_entry(entry: FaultEntry) -> dict[str, Any]:
    """Plain data for --json: the fault's fields, its evidence in full and in brief, and the replay line."""
    fault = entry.fault
    return {
        "kind": fault.kind, "bot": fault.bot, "opponent": entry.opponent, "game": fault.game,
        "game_id": fault.game_id, "match_id": entry.match_id, "at_shutdown": entry.at_shutdown, "seed": entry.seed,
        "seat": fault.seat, "players": entry.players, "options": None if entry.options is None else dict(entry.options),
        "decision": fault.decision, "detail": fault.detail, "rule": fault.rule, "sent": sent_text(fault),
        "message": fault.message, "data_hex": fault.data.hex(), "data_length": fault.data_length,
        "stderr": telling_lines(fault.stderr_tail, STDERR_LINES), "stderr_tail": fault.stderr_tail,
        "reproduce": entry.reproduce,
    }


def junit_failure(case: ET.Element, entries: Sequence[FaultEntry], form: TextForm = CHECK_TEXT) -> ET.Element:
    """A JUnit <failure> in `case` for `entries` (at least one): typed by the first fault's kind, its
    text every fault's text lines."""
    first = entries[0].fault
    failure = ET.SubElement(case, "failure", type=first.kind, message=f"{len(entries)} fault(s); first: {first.summary()}")
    failure.text = "\n".join(line for entry in entries for line in text_lines(entry, form))
    return failure


# -- HTML -----------------------------------------------------------------------------------------

def html_item(entry: FaultEntry, link: str | None = None, evidence: bool = True) -> str:
    """A fault as an HTML list item: its headline (the game id linking to `link`, its replay), and
    with `evidence` what was sent, the rule, the stderr lines and the reproduce line."""
    fault = entry.fault
    where = place(entry, "listing", esc, f'<a href="{esc(link)}">{esc(fault.game_id)}</a>' if link else None)
    line = f"<b>{esc(fault.kind)}</b> {where}: {esc(detail_text(fault))}"
    if not evidence:
        return f"<li>{line}</li>"
    extra = [f'<div>sent: <code>{esc(sent_text(fault))}</code></div>', f'<div>rule: {esc(fault.rule)}</div>']
    stderr = telling_lines(fault.stderr_tail, STDERR_LINES)
    if stderr:
        extra.append(f'<div>stderr:</div><pre>{esc(chr(10).join(stderr))}</pre>')
    if entry.reproduce:
        extra.append(f'<div>reproduce: <code class="command">{esc(entry.reproduce)}</code></div>')
    return f'<li>{line}{"".join(extra)}</li>'


def html_sections(entries: Sequence[FaultEntry], links: Mapping[str, str], detailed: int, listed: int) -> str:
    """Every bot's faults as a collapsible section: counts by kind, then each fault (the first
    `detailed` with their evidence, up to `listed` in all)."""
    by_bot: dict[str, list[FaultEntry]] = defaultdict(list)
    for entry in entries:
        by_bot[entry.fault.bot].append(entry)
    if not by_bot:
        return "<p>No bot faulted.</p>"
    sections = []
    for bot in sorted(by_bot):
        faults = by_bot[bot]
        kinds = Counter(entry.fault.kind for entry in faults)
        summary = ", ".join(f"{count} {esc(kind)}" for kind, count in kinds.most_common())
        items = "".join(html_item(entry, links.get(entry.fault.game_id or ""), index < detailed)
                        for index, entry in enumerate(faults[:listed]))
        more = len(faults) - listed
        tail = f'<p class="note">and {more} more faults of {esc(bot)} not listed</p>' if more > 0 else ""
        sections.append(f'<details class="faults" data-bot="{esc(bot)}"><summary><b>{esc(bot)}</b>: {len(faults)} '
                        f'fault{"s" if len(faults) != 1 else ""} ({summary})</summary><ol>{items}</ol>{tail}</details>')
    return "".join(sections)


# -- Markdown -------------------------------------------------------------------------------------

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~-])")


def markdown_text(text: str) -> str:
    """Bot text as literal Markdown: controls made visible, every character Markdown reads escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", printable(text))


def markdown_code(text: str) -> str:
    """Bot text as inline code, whatever backticks it holds (a longer run of them fences it)."""
    shown = printable(text)
    fence = "`" * (max((len(run) for run in re.findall("`+", shown)), default=0) + 1)
    return f"{fence} {shown} {fence}"


def markdown(entries: Sequence[FaultEntry]) -> str:
    """The faults as a Markdown list (for a CI job's summary, an issue or a pull request)."""
    blocks = []
    for entry in entries:
        fault = entry.fault
        lines = [f"- **{markdown_text(fault.bot)}**: {markdown_text(fault.kind)} {place(entry, 'listing', markdown_text)}: "
                 f"{markdown_text(detail_text(fault))}",
                 f"  - sent: {markdown_code(sent_text(fault))}", f"  - rule: {markdown_text(fault.rule)}"]
        stderr = telling_lines(fault.stderr_tail, STDERR_LINES)
        if stderr:
            lines.append(f"  - stderr: {markdown_code(' | '.join(stderr))}")
        if entry.reproduce:
            lines.append(f"  - reproduce: {markdown_code(entry.reproduce)}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks) + ("\n" if blocks else "")


# -- the faults of a results file -----------------------------------------------------------------

def bot_argument(name: str, entrant: Mapping[str, Any] | None) -> tuple[str, str | None]:
    """How `play --bot` names a stored bot: its folder where it had one, else NAME=CMD; and the
    directory a NAME=CMD bot ran in (None when the bot has a folder or the file does not say)."""
    if entrant is None:
        return name, None  # not among the entrants (cannot happen in a file cardarena wrote)
    where = entrant.get("where") or {}
    if where.get("folder"):
        return where["folder"], None
    return f"{name}={shlex.join(entrant['command'])}", where.get("cwd")


def stored_play_line(game: GameRecord, entrants: Mapping[str, Mapping[str, Any]], settings: Mapping[str, Any] | None) -> str:
    """The shell line that deals a stored game again: its seed, game id, seats, non-default options
    and time limits, run where its NAME=CMD bots ran."""
    limits = (settings or {}).get("limits", {})
    words = ["--game-id", game.game_id]
    if "decision_timeout" in limits:
        words += ["--timeout", f"{limits['decision_timeout']:g}"]
    if limits.get("handshake_timeout", 10.0) != 10.0:
        words += ["--handshake-timeout", f"{limits['handshake_timeout']:g}"]
    seats = [bot_argument(name, entrants.get(name)) for name in game.seats]
    try:
        defaults = get_game(game.game).spec.resolve_options()
    except GameError:
        defaults = {}
    options = {key: value for key, value in game.options.items() if defaults.get(key, object()) != value}
    folders = {cwd for _, cwd in seats if cwd is not None}
    # bots by folder only (or, from an older file, NAME=CMD bots with no directory recorded): no cd
    cwd = folders.pop() if len(folders) == 1 else None
    return play_line(game.game, game.seed, [argument for argument, _ in seats], options, words, cwd)


def stored_entries(games: Iterable[GameRecord], entrants: Mapping[str, Mapping[str, Any]],
                   settings: Mapping[str, Any] | None, bot: str | None = None,
                   match_faults: Iterable[StoredMatchFault] = ()) -> list[FaultEntry]:
    """One entry per fault (of `bot` only, when given), in game order, with its reproduce line; a
    fault at a match's shutdown comes after the game it followed (which its line deals again:
    `play` shuts its bots down after that game as the match did)."""
    following: dict[str, list[StoredMatchFault]] = defaultdict(list)
    for stored in match_faults:
        following[stored.game_id].append(stored)
    entries = []
    for game in games:
        faults = [(fault, False) for fault in game.faults]
        faults += [(stored.fault, True) for stored in following.pop(game.game_id, [])]
        for fault, at_shutdown in faults:
            if bot is None or fault.bot == bot:
                entries.append(FaultEntry(
                    fault.at(game=fault.game or game.game, game_id=game.game_id), stored_play_line(game, entrants, settings),
                    at_shutdown, game.match_id, game.seed, len(game.seats), game.options))
    return entries


def fault_counts(games: Iterable[GameRecord], match_faults: Iterable[StoredMatchFault] = ()) -> dict[str, Counter]:
    """Per bot, its faults (in games, and at a match's shutdown) counted by kind."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for fault in [fault for game in games for fault in game.faults] + [stored.fault for stored in match_faults]:
        counts[fault.bot][fault.kind] += 1
    return dict(counts)


def summary_lines(counts: Mapping[str, Counter]) -> list[str]:
    """One line per bot that faulted, most faults first: `quitter: 44 faults (crash 44)`."""
    lines = []
    for bot, kinds in sorted(counts.items(), key=lambda item: (-sum(item[1].values()), item[0])):
        total = sum(kinds.values())
        parts = ", ".join(f"{kind} {count}" for kind, count in kinds.most_common())
        lines.append(printable(f"{bot}: {total} fault{'s' if total != 1 else ''} ({parts})"))
    return lines
