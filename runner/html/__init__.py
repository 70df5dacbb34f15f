"""The HTML pages of cardarena: the tournament report and the replay viewer.

Every page works offline: its style and script are inline (or, for the many replay pages of a
report, in files beside them), a Content-Security-Policy forbids loading anything from elsewhere,
and no font, image or script comes from the network. Text from bots (names, fault messages,
stderr) is hostile: it is HTML-escaped and its control characters are made visible.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
from functools import cache
from importlib import resources
from string import Template
from typing import Any

from cardarena.referee.faults import escape_hidden

#: only the page itself and files beside it; no network, no plug-ins, no forms sent anywhere
CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'self' 'unsafe-inline'; "
                           "style-src 'self' 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")
SCRIPT_FILE = "cardarena.js"
STYLE_FILE = "style.css"
MAX_TEXT = 4000  # characters of one piece of bot text shown; the rest is cut with a note



@cache
def asset(name: str) -> str:
    """The text of one file shipped in this package (template, style or script)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def plain_text(value: Any, limit: int = MAX_TEXT) -> str:
    """`value` as text safe to show: control characters as visible escapes, cut at `limit` characters."""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(text) - limit} more characters)"
    return escape_hidden(text, keep="\t\n")  # controls and invisible characters (faults.HIDDEN_CATEGORIES)


def esc(value: Any, limit: int = MAX_TEXT) -> str:
    """`value` as HTML text: neutralised (see `plain_text`) and escaped, quotes included."""
    return html.escape(plain_text(value, limit), quote=True)


def neutralise(data: Any) -> Any:
    """A copy of plain data with every string (keys too) passed through `plain_text`."""
    if isinstance(data, str):
        return plain_text(data)
    if isinstance(data, dict):
        return {plain_text(key): neutralise(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [neutralise(value) for value in data]
    return data


def pack(data: Any) -> str:
    """Plain data as base64 of gzipped JSON: compact, and inert inside any HTML element."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0)).decode("ascii")


def page(title: str, body: str, assets_beside: str | None = None, csp: str = CONTENT_SECURITY_POLICY) -> str:
    """A whole HTML page around `body`; style and script inline, or linked from the folder
    `assets_beside` (a relative URL ending in '/', '' for the page's own folder); `csp` is its
    policy (a page served with forms, such as the league server's, allows sending them)."""
    if assets_beside is None:
        style = f"<style>\n{asset(STYLE_FILE)}</style>"
        script = f"<script>\n{asset(SCRIPT_FILE)}</script>"
    else:
        style = f'<link rel="stylesheet" href="{esc(assets_beside + STYLE_FILE)}">'
        script = f'<script src="{esc(assets_beside + SCRIPT_FILE)}"></script>'
    return Template(asset("page.html")).substitute(
        csp=esc(csp), title=esc(title), style=style, body=body, script=script)


def write_assets(folder: Any) -> None:
    """Copy the style and script into `folder` (a Path) for pages made with `assets_beside`."""
    for name in (STYLE_FILE, SCRIPT_FILE):
        (folder / name).write_text(asset(name), encoding="utf-8")
