"""The C, C++, Go and Rust starter kits (sample_bots/<language>/): each kit's bot passes `check`
in every game, and each kit's library answers the referee's edge cases, by the tests every kit
shares (tests/kits_support.py). tests/test_kits_managed.py plays every kit together.
"""

from __future__ import annotations

from tests.kits_support import *  # noqa: F403 (the tests every kit passes)
from tests.kits_support import NATIVE, language_fixture

language = language_fixture(NATIVE)
