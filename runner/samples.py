"""Where the sample bots and the sample league live, for commands that need them (`check`'s
opponent, `run`'s default league): one place, so a wheel install and a source tree both work.

A wheel carries the bots that need no build (random, heuristic, the search rungs) and league.toml
inside the runner package, as `runner/sample_bots/` (pyproject.toml maps the source tree's top-level
`sample_bots/` there); a source tree or an editable install has them at the top level, beside `runner/`.
"""

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _sample_bots_dir() -> Path:
    """The installed copy inside the package when there is one, else the source tree's folder."""
    installed = _PACKAGE / "sample_bots"
    return installed if installed.is_dir() else _PACKAGE.parent / "sample_bots"


#: the folder of the sample bots and the sample league
SAMPLE_BOTS = _sample_bots_dir()
