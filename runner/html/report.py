"""`cardarena report`: one offline HTML page of a tournament, with a replay page per game beside it.

The page holds the leaderboards (their intervals drawn as bars), a crosstable per board, every
bot's rating as games accumulate, the faults per bot and the list of games. Replays would make
one page huge (every seat's view at every step), so each game's replay is its own small page in
a folder beside the report (`report.replays/`), sharing one copy of the viewer's script and
style; the report links to them, and only the replay opened is ever loaded.
"""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import quote

import click

from cardarena.console import MAX_BOOTSTRAP, parse_anchor
from cardarena.errors import CardarenaError
from cardarena.games.base import GameError
from cardarena.html import esc, page, plain_text, write_assets
from cardarena.fault_report import html_sections, stored_entries
from cardarena.html.plot import rating_plot
from cardarena.html.replay import replay_data, replay_page
from cardarena.ratings import RatingError, comparisons_from_ranks, rate, tally
from cardarena.referee.faults import counted
from cardarena.report import Board, leaderboards
from cardarena.record import GameRecord
from cardarena.tournament.store import ResultStore

CHECKPOINTS = 8  # refits of the ratings as games accumulate (the convergence plot)
FAULT_DETAILS = 20  # faults per bot shown with their full evidence; the rest one line each
FAULT_LINES = 200  # faults per bot listed at all
_REPLAY_FILE = re.compile(r"g\d+\.html")


@dataclass(frozen=True)
class ReportSummary:
    """What `write_report` wrote: the page, the replay folder, and how many replays failed."""

    path: Path
    replays: Path | None
    games: int
    replay_failures: int
    seconds: float


def replay_folder(out: Path) -> Path:
    """The folder of replay pages beside the report `out` (report.html -> report.replays)."""
    return out.with_name(out.stem + ".replays")


def _fmt_score(score: Any) -> str:
    """A wire score (int, or [numerator, denominator]) for people."""
    if isinstance(score, list) and len(score) == 2:
        return f"{score[0] / score[1]:.2f}"
    return str(score)


def _board_games(games: Sequence[GameRecord], boards: Sequence[Board]) -> list[list[GameRecord]]:
    """The games behind each board, grouped as `leaderboards` groups them (checked by count)."""
    by_version: dict[tuple[str, str], list[GameRecord]] = defaultdict(list)
    for game in games:
        by_version[(game.game, game.rules_version)].append(game)
    groups = [by_version[key] for key in sorted(by_version)]
    if len(boards) == len(groups) + 1:
        groups.append([game for group in groups for game in group])
    if [len(group) for group in groups] != [b.games for b in boards]:
        raise RatingError("the leaderboards do not group the games per game and rules version, then overall")
    return groups


def _interval_bars(b: Board) -> list[str]:
    """One small SVG per row: the interval as a bar and the rating as a dot, on the board's scale."""
    ends = [v for row in b.rows for v in (row.low, row.high, row.elo) if v is not None]
    low, high = min(ends), max(ends)
    pad = max(10.0, (high - low) * 0.05)
    low, high = low - pad, high + pad
    width, height = 220, 14

    def x(value: float) -> float:
        return round((value - low) / (high - low) * width, 1)

    bars = []
    for row in b.rows:
        parts = [f'<line class="axis" x1="{x(1500) if low < 1500 < high else 0}" y1="0" '
                 f'x2="{x(1500) if low < 1500 < high else 0}" y2="{height}"/>']
        if row.low is not None:
            parts.append(f'<rect class="interval" x="{x(row.low)}" y="4" width="{max(1.0, x(row.high) - x(row.low))}" '
                         f'height="6"/>')
        parts.append(f'<circle class="elo" cx="{x(row.elo)}" cy="7" r="3.5"/>')
        label = f"{row.elo:.0f}" + ("" if row.low is None else f" (95%: {row.low:.0f} to {row.high:.0f})")
        bars.append(f'<svg class="bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">'
                    f'<title>{esc(row.bot)}: {esc(label)}</title>{"".join(parts)}</svg>')
    return bars


def _leaderboard(b: Board) -> str:
    """A board as an HTML table with its interval bars and notes."""
    rows = []
    for row, bar in zip(b.rows, _interval_bars(b)):
        interval = row.interval_text()  # as the text leaderboard writes it: low to high, or a one-sided bound
        rows.append(f'<tr data-bot="{esc(row.bot)}"><td class="num">{row.rank}</td><td>{esc(row.bot)}</td>'
                    f'<td class="num elo">{row.elo:.0f}</td><td class="num">{esc(interval)}</td><td>{bar}</td>'
                    f'<td class="num">{row.games}</td><td class="num">{row.score:.1f}</td>'
                    f'<td class="num">{row.wins}-{row.draws}-{row.losses}</td><td class="num">{row.faults}</td></tr>')
    notes = "".join(f'<p class="note">{esc(note)}</p>' for note in b.notes)
    return ('<table class="board"><thead><tr><th>#</th><th>bot</th><th>Elo</th><th>95% interval</th>'
            '<th>interval (bar) and Elo (dot); line at 1500</th><th>games</th><th>score %</th><th>W-D-L</th>'
            f'<th>faults</th></tr></thead><tbody>{"".join(rows)}</tbody></table>{notes}')


def _crosstable(b: Board, games: Sequence[GameRecord]) -> str:
    """For every two bots: games together, the row bot's score % against the column bot, Elo difference."""
    totals = tally(comparison for game in games
                   for comparison in comparisons_from_ranks(game.seats, game.ranks, game.teams))
    met: Counter = Counter()
    for game in games:
        met.update({tuple(sorted((a, b))) for a, b, _ in comparisons_from_ranks(game.seats, game.ranks, game.teams)})
    bots = [row.bot for row in b.rows]
    head = "".join(f"<th>{esc(bot)}</th>" for bot in bots)
    body = []
    for a in bots:
        cells = [f"<th>{esc(a)}</th>"]
        for c in bots:
            key = (a, c) if a < c else (c, a)
            if a == c or key not in totals:
                cells.append('<td class="none">' + ("" if a == c else "not met") + "</td>")
                continue
            points, count = totals[key]
            share = points / count if a < c else 1 - points / count
            diff = ("" if b.ratings.group_of(a) != b.ratings.group_of(c)
                    else f"{b.ratings.rating[a] - b.ratings.rating[c]:+.0f}")
            hue = round(120 * share)
            cells.append(f'<td style="background:hsl({hue},60%,88%)" title="{esc(a)} against {esc(c)}">'
                         f'<b>{100 * share:.0f}%</b><br><span class="small">{counted(met[key], "game")}'
                         f'{", Elo " + diff if diff else ""}</span></td>')
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<table class="crosstable"><thead><tr><th>row against column</th>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def _convergence(b: Board, games: Sequence[GameRecord], anchor: tuple[str, float] | None) -> str:
    """Each bot's rating refitted after a growing share of the games (in deal order), as an SVG plot."""
    ordered = sorted(games, key=lambda g: (g.placement.deal, g.placement.rotation, g.game_id))
    rated = [(f"{g.game}|{g.placement.cluster}", comparisons_from_ranks(g.seats, g.ranks, g.teams)) for g in ordered]
    counts = sorted({max(1, round(len(rated) * k / CHECKPOINTS)) for k in range(1, CHECKPOINTS + 1)})
    points: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for count in counts:
        prefix = rated[:count]
        if not any(comparisons for _, comparisons in prefix):
            continue
        use_anchor = anchor if anchor and any(anchor[0] in (a, c) for _, cs in prefix for a, c, _ in cs) else None
        fitted = rate(prefix, anchor=use_anchor, bootstrap=0)
        for bot, value in fitted.rating.items():
            points[bot].append((count, value))
    if not points:
        return '<p class="note">no rated games</p>'
    return rating_plot(points, [row.bot for row in b.rows if row.bot in points], len(rated),
                       f'ratings refitted after {", ".join(map(str, counts))} games')


def _game_list(games: Sequence[GameRecord], links: dict[str, str], failures: dict[str, str]) -> str:
    """Every game with its seats and scores, each linking to its replay page."""
    rows = []
    for game in games:
        link = links.get(game.game_id)
        name = (f'<a href="{esc(link)}">{esc(game.game_id)}</a>' if link
                else f'{esc(game.game_id)}<span class="small"> (no replay: {esc(failures.get(game.game_id, ""))})'
                     '</span>')
        seats = ", ".join(f"{esc(seat)} {esc(_fmt_score(score))}" for seat, score in zip(game.seats, game.scores))
        faulted = len(game.faults)
        rows.append(f'<tr><td>{name}</td><td>{esc(game.game)}</td><td>{seats}</td>'
                    f'<td class="num">{faulted or ""}</td><td class="num">{game.duration:.2f}</td></tr>')
    return ('<p><label>filter: <input id="game-filter" type="search" placeholder="game, bot or id"></label> '
            '<span id="game-count"></span></p>'
            '<table id="games" class="games"><thead><tr><th>game (replay)</th><th>game</th>'
            '<th>seats and scores</th><th>faults</th><th>seconds</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _write_replays(store: ResultStore, folder: Path, report_name: str) -> tuple[dict[str, str], dict[str, str]]:
    """A replay page per game of `store` (read with its actions, in game-id order) in `folder`; the
    link to each (relative to the report) and the reason for each game that could not be replayed."""
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.iterdir():
        if _REPLAY_FILE.fullmatch(stale.name):
            stale.unlink()
    write_assets(folder)
    links: dict[str, str] = {}
    failures: dict[str, str] = {}
    back = "../" + quote(report_name)
    for number, game in enumerate(store.games(actions=True), 1):
        try:
            data = replay_data(game)
        except GameError as error:
            failures[game.game_id] = plain_text(error, 300)
            continue
        name = f"g{number:05d}.html"
        (folder / name).write_text(replay_page(data, assets_beside="", back_link=back), encoding="utf-8")
        links[game.game_id] = f"{quote(folder.name)}/{name}"
    return links, failures


def write_report(results: Path, out: Path, anchor: tuple[str, float] | None = None, bootstrap: int = 200,
                 replays: bool = True) -> ReportSummary:
    """Write the report of the tournament in `results` to `out` (and its replays beside it)."""
    started = time.monotonic()
    with ResultStore(results) as store:
        games = list(store.games())
        boards = leaderboards(games, anchor=anchor, bootstrap=bootstrap)
        folder = replay_folder(out) if replays else None
        links, failures = (_write_replays(store, folder, out.name) if folder is not None else ({}, {}))
        settings = store.settings() or {}
        name = settings.get("name") or results.stem
        faults = stored_entries(games, store.entrants(), settings, match_faults=store.match_faults())
    sections = []
    toc = []
    for index, (b, board_games) in enumerate(zip(boards, _board_games(games, boards) if boards else [])):
        anchor_id = f"board-{index}"
        toc.append(f'<li><a href="#{anchor_id}">{esc(b.title)}</a></li>')
        sections.append(
            f'<section class="board-section" id="{anchor_id}" data-title="{esc(b.title)}">'
            f'<h2>{esc(b.title)}</h2><p>{counted(b.games, "game")}</p>{_leaderboard(b)}'
            f'<h3>Crosstable</h3>{_crosstable(b, board_games)}'
            f'<h3>Ratings as games accumulate</h3>{_convergence(b, board_games, anchor)}</section>')
    failed = (f'<p class="note">{counted(len(failures), "game")} could not be replayed (see the list).</p>'
              if failures else "")
    where = (f"Each game links to its replay page in <code>{esc(folder.name)}/</code> beside this file."
             if folder is not None else "Replays were not written (--no-replays).")
    body = (f'<main class="report"><h1>{esc(name)}</h1>'
            f'<p>{counted(len(games), "game")} from <code>{esc(results)}</code>. Elo: Bradley–Terry maximum likelihood, '
            f'95% bootstrap intervals over duplicate sets ({bootstrap} resamples). {where}</p>'
            f'<nav><ul>{"".join(toc)}<li><a href="#faults">faults</a></li><li><a href="#game-list">games</a></li>'
            f'</ul></nav>{"".join(sections) or "<p>No games recorded yet.</p>"}'
            f'<section id="faults"><h2>Faults per bot</h2>{html_sections(faults, links, FAULT_DETAILS, FAULT_LINES)}</section>'
            f'<section id="game-list"><h2>Games</h2>{failed}{_game_list(games, links, failures)}</section></main>')
    out.write_text(page(f"{name}: cardarena report", body), encoding="utf-8")
    return ReportSummary(out, folder, len(games), len(failures), time.monotonic() - started)


@click.command()
@click.argument("results", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("report.html"),
              show_default=True, help="The report's HTML file; replays go in a folder beside it (NAME.replays/).")
@click.option("--anchor", metavar="BOT=RATING", help="Anchor the ratings on one bot instead of a mean of 1500.")
@click.option("--bootstrap", type=click.IntRange(min=0, max=MAX_BOOTSTRAP), default=200, show_default=True,
              help="Bootstrap resamples for the intervals.")
@click.option("--replays/--no-replays", default=True, show_default=True,
              help="Write a replay page for every game (replaying each through its engine).")
def report(results: Path, out: Path, anchor: str | None, bootstrap: int, replays: bool) -> None:
    """Write an offline HTML report of a RESULTS database: leaderboards, crosstables, ratings
    over time, faults, and every game with a link to its replay."""
    try:
        summary = write_report(results, out, parse_anchor(anchor), bootstrap, replays)
    except OSError as error:
        raise CardarenaError(str(error)) from None
    size = summary.path.stat().st_size
    where = f" and {summary.games - summary.replay_failures} replays in {summary.replays}/" if summary.replays else ""
    click.echo(f"wrote {summary.path} ({size / 1e6:.2f} MB){where} in {summary.seconds:.1f} s")
    if summary.replay_failures:
        click.echo(f"warning: {counted(summary.replay_failures, 'game')} could not be replayed (the report's game "
                   "list says why)", err=True)

