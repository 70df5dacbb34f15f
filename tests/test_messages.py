"""Fault messages that teach: real misbehaving bots, and what the referee tells their authors.

Each test runs a bot from tests/zoo (or a one-line script) through a real Match and checks that
the fault's detail names the mistake and the way out: text printed on stdout quoted, a timeout's
limit and time waited, the legal list or the range an answer missed, an extension type named,
a silent bot pointed at its decoder; and every rule a fault cites is a heading of PROTOCOL.md.
"""

from __future__ import annotations

import re
import sys

import pytest

from cardarena.games import get_game
from cardarena.referee.faults import FAULT_KINDS, Fault
from cardarena.referee.match import Match
from cardarena.config import BotSpec, Limits
from tests.conftest import ROOT, zoo_bot

LIMITS = Limits(handshake_timeout=10.0, decision_timeout=1.0)


def first_fault(bad: BotSpec, game: str = "knock-rummy", limits: Limits = LIMITS) -> Fault:
    """The one fault of `bad` in seat 0 of a game against patient zoo bots."""
    spec = get_game(game).spec
    others = [zoo_bot("patient.py", after=10**9) for _ in range(spec.min_players - 1)]
    others = [BotSpec(f"patient-{n}", other.command, other.cwd) for n, other in enumerate(others)]
    with Match([bad, *others], limits) as match:
        record = match.play(get_game(game), seed=5)
    assert [fault.seat for fault in record.faults] == [0], record.faults
    return record.faults[0]


def test_text_printed_on_stdout_is_quoted_with_the_way_out():
    fault = first_fault(zoo_bot("chatty.py"))
    assert fault.kind == "malformed"
    assert fault.detail.startswith('your bot printed text on stdout: "Thinking about decision ')
    assert "write logs to stderr" in fault.detail and "hex" not in fault.detail


def test_a_timeout_gives_the_limit_and_the_time_waited():
    fault = first_fault(zoo_bot("sleepy.py"), limits=Limits(decision_timeout=0.3))
    assert fault.kind == "timeout"
    waited = re.search(r"no reply within the 0\.3 s allowed \(waited (\d+\.\d+) s\)", fault.detail)
    assert waited and float(waited.group(1)) >= 0.3, fault.detail


def test_an_illegal_answer_shows_the_first_legal_actions():
    fault = first_fault(zoo_bot("illegal.py"))
    assert fault.kind == "illegal"
    assert re.search(r"is not among the \d+ legal actions: \{'type': '\w+'", fault.detail), fault.detail


def test_an_answer_out_of_range_shows_the_range():
    fault = first_fault(zoo_bot("out_of_range.py", after=0), game="quitlok")
    assert fault.kind == "illegal"
    assert re.search(r"amount (\d+) is outside the range (\d+) to (\d+) offered", fault.detail), fault.detail
    given, _, high = map(int, re.search(r"amount (\d+) is outside the range (\d+) to (\d+)", fault.detail).groups())
    assert given == high + 1


def test_msgpackr_records_are_named_as_an_extension_type_with_the_hint():
    fault = first_fault(BotSpec("exotic", (sys.executable, "exotic.py", "--mode", "records"), str(ROOT / "tests/zoo")))
    assert fault.kind == "malformed"
    assert "extension type 114 (msgpackr's record structures)" in fault.detail
    assert "useRecords: false" in fault.detail


def test_a_bot_that_never_answers_hello_is_pointed_at_its_decoder():
    """A decoder returning JS Maps hides "type": the bot reads every frame and answers none."""
    silent = BotSpec("silent", (sys.executable, "-c", "import sys; sys.stdin.buffer.read()"))
    fault = first_fault(silent, limits=Limits(handshake_timeout=0.5))
    assert fault.kind == "timeout"
    assert "no hello within the 0.5 s allowed" in fault.detail
    assert "it sent nothing" in fault.detail and "mapsAsObjects" in fault.detail


def protocol_sections() -> set[str]:
    """The section titles of PROTOCOL.md (`## 2. Framing` gives "Framing")."""
    text = (ROOT / "protocol" / "PROTOCOL.md").read_text()
    return {match.group(1).strip() for match in re.finditer(r"^#{2,3} (?:\d+\. )?(.+)$", text, re.M)}


def cited_sections() -> dict[str, str]:
    """Every `PROTOCOL.md § <title>` (and `(§ <title>)` in a fault rule) cited in the code: title -> where."""
    cited = {}
    texts = {f"FAULT_KINDS[{kind!r}]": rule for kind, rule in FAULT_KINDS.items()}
    for folder in ("runner", "protocol", "sample_bots"):
        for path in (ROOT / folder).rglob("*.py"):
            texts[str(path.relative_to(ROOT))] = path.read_text()
    for where, text in texts.items():
        for match in re.finditer(r"(?:PROTOCOL\.md |\()§ ([A-Z][A-Za-z ]*[a-z])", text):
            cited[match.group(1)] = where
    return cited


def test_every_cited_protocol_section_exists():
    cited = cited_sections()
    assert {"Deadlines", "Framing", "Messages", "Actions", "Lifecycle", "Transport"} <= set(cited)
    missing = {title: where for title, where in cited.items() if title not in protocol_sections()}
    assert not missing, f"cited sections missing from PROTOCOL.md: {missing}"


@pytest.mark.parametrize("kind", sorted(FAULT_KINDS))
def test_every_fault_kind_cites_protocol_md(kind):
    assert FAULT_KINDS[kind].startswith("PROTOCOL.md § ")


def test_every_fault_kind_is_in_protocol_md_and_the_guide():
    """The fault table of PROTOCOL.md § 8 and the bot author's guide name every kind a bot can get."""
    protocol_md = (ROOT / "protocol" / "PROTOCOL.md").read_text()
    table = protocol_md[protocol_md.index("## 8. Faults"):protocol_md.index("### Resource caps")]
    assert set(re.findall(r"^\| `([a-z]+)` \|", table, re.M)) == set(FAULT_KINDS)
    guide = (ROOT / "sample_bots" / "README.md").read_text()
    assert all(f"`{kind}`" in guide for kind in FAULT_KINDS)
