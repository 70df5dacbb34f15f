"""Ratings drawn as an inline SVG plot: the report's "ratings as games accumulate" and the league
server's rating over time on a bot's page."""

from __future__ import annotations

from typing import Sequence

from cardarena.html import esc

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
           "#7f7f7f", "#bcbd22")


def rating_plot(points: dict[str, list[tuple[int, float]]], order: Sequence[str], total: int, title: str,
                marks: Sequence[tuple[int, str]] = ()) -> str:
    """Bots' ratings (Elo after so many games, per bot in `order`) as lines of an inline SVG plot over
    `total` games, with `marks` (games, label) as dashed upright lines; colours are attributes, not
    styles, so a page whose CSP forbids inline style can show it. Every name is escaped."""
    values = [v for bot in order for _, v in points[bot]]
    low, high = min(values), max(values)
    if high - low < 20:
        low, high = low - 10, high + 10
    width, height, left, right, top, bottom = 640, 240, 48, 130, 10, 28
    total = max(total, 1)

    def x(count: int) -> float:
        return round(left + (width - left - right) * count / total, 1)

    def y(value: float) -> float:
        return round(top + (height - top - bottom) * (high - value) / (high - low), 1)

    parts = [f'<line class="axis" x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}"/>',
             f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}"/>',
             f'<text x="{left - 4}" y="{y(high) + 4}" text-anchor="end">{high:.0f}</text>',
             f'<text x="{left - 4}" y="{y(low) + 4}" text-anchor="end">{low:.0f}</text>',
             f'<text x="{width - right}" y="{height - 8}" text-anchor="end">{total} games</text>',
             f'<text x="{left}" y="{height - 8}">0</text>']
    for count, label in marks:
        parts.append(f'<line class="axis" stroke-dasharray="4 3" x1="{x(count)}" y1="{top}" x2="{x(count)}" '
                     f'y2="{height - bottom}"/><text x="{x(count) + 3}" y="{top + 10}">{esc(label, 24)}</text>')
    for index, bot in enumerate(order):
        colour = PALETTE[index % len(PALETTE)]
        series = points[bot]
        line = " ".join(f"{x(c)},{y(v)}" for c, v in series)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{line}">'
                     f'<title>{esc(bot)}</title></polyline>')
        last_x, last_y = x(series[-1][0]), y(series[-1][1])
        parts.append(f'<text x="{last_x + 6}" y="{last_y + 4}" fill="{colour}">'
                     f'{esc(bot, 24)}</text>')
    return (f'<svg class="convergence" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">'
            f'<title>{esc(title)}</title>{"".join(parts)}</svg>')
