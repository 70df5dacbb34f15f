"""The HTML report and replay viewer, without a browser: the replay data, escaping, the report's
content and the `report` and `replay --html` commands (tests/test_browser.py opens the pages)."""

from __future__ import annotations

import base64
import gzip
import json
import re
import sqlite3
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardarena.cli import main
from cardarena.games import all_games
from cardarena.games.base import Result
from cardarena.html import CONTENT_SECURITY_POLICY, esc, pack, plain_text
from cardarena.html.replay import ReplayError, replay_data
from cardarena.html.report import replay_folder, write_report
from cardarena.record import GameRecord
from tests.random_results import play_random, write_random_results

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = {"casino": 2, "cuajo": 4, "knock-rummy": 3, "quitlok": 5}
BOTS = ["alpha", "beta", "gamma", "delta", "epsilon"]


def unpack(text: str):
    return json.loads(gzip.decompress(base64.b64decode(text)))


def embedded_data(page: str):
    match = re.search(r'<script id="replay-data" type="application/octet-stream">([^<]*)</script>', page)
    return unpack(match.group(1))


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> tuple[Path, list[dict]]:
    path = tmp_path_factory.mktemp("html") / "league.sqlite"
    records = write_random_results(path, BOTS, {name: 2 * size for name, size in PLAYERS.items()}, PLAYERS,
                                   fault_every=5)
    return path, records


@pytest.mark.parametrize("name", sorted(all_games()))
def test_replay_data_holds_every_seats_view_at_every_step(name):
    record = play_random(name, BOTS[:PLAYERS[name]], seed=11, fault_seat=1, fault_decision=2)
    data = replay_data(GameRecord.from_dict(record))
    game = all_games()[name]
    state = game.new_state(PLAYERS[name], record["options"], record["seed"])
    views = data["frames"][0]["views"]
    assert views == [state.view(seat) for seat in range(PLAYERS[name])]
    assert len(data["frames"]) == len(record["actions"]) + 1
    for frame, (seat, action) in zip(data["frames"][1:], record["actions"]):
        events = state.apply(action)
        views = [{**view, **delta} for view, delta in zip(views, frame["views"])]
        assert (frame["seat"], frame["action"], frame["events"]) == (seat, action, events)
        assert views == [state.view(s) for s in range(PLAYERS[name])]
    assert data["result"]["scores"] == record["scores"]
    assert data["reveal"] == state.reveal()
    marked = [k for k, frame in enumerate(data["frames"]) if frame.get("faults")]
    assert marked == [2]
    fallback = [k for k, frame in enumerate(data["frames"]) if frame.get("fallback")]
    assert fallback == [k for k, (seat, _) in enumerate(record["actions"], 1) if seat == 1 and k >= 2]


def test_replay_data_refuses_a_record_the_engine_does_not_match():
    record = GameRecord.from_dict(play_random("casino", ["a", "b"], seed=3))
    with pytest.raises(ReplayError, match="rules v0"):
        replay_data(replace(record, rules_version="0"))
    assert record.scores != [0, 0]
    with pytest.raises(ReplayError, match="scores"):
        replay_data(replace(record, result=Result.from_scores([0, 0])))
    with pytest.raises(ReplayError, match="decision 1: .* does not allow"):
        replay_data(replace(record, actions=[(0, {"type": "trail", "card": "ZZ"})] + record.actions))
    with pytest.raises(ReplayError, match="not over"):
        replay_data(replace(record, actions=record.actions[:-1]))


def test_bot_text_is_escaped_and_its_control_characters_made_visible():
    assert plain_text("a\x1bb\u202ec\x00\nd\te") == "a\\x1bb\\u202ec\\x00\nd\te"
    assert esc("<b onclick='x'>&") == "&lt;b onclick=&#x27;x&#x27;&gt;&amp;"
    assert plain_text("x" * 5000, limit=10).startswith("xxxxxxxxxx… (4990 more")
    assert unpack(pack({"k": ["</script>", "é"]})) == {"k": ["</script>", "é"]}


def test_report_holds_boards_crosstables_faults_and_every_game(results, tmp_path):
    path, records = results
    out = tmp_path / "report.html"
    summary = write_report(path, out, bootstrap=20)
    page = out.read_text()
    assert summary.games == len(records) and summary.replay_failures == 0
    assert f'content="{esc(CONTENT_SECURITY_POLICY)}"' in page
    for name, version in sorted({(r["game"], r["rules_version"]) for r in records}):
        assert f"<h2>{name} (rules v{version})</h2>" in page
    assert "<h2>overall</h2>" in page
    # intervals written as the text leaderboard writes them: low to high, not as margins
    assert re.search(r'<td class="num">\d+ to \d+</td>', page) and not re.search(r'<td class="num">[-+]\d+ / ', page)
    assert page.count('<table class="crosstable">') == len(PLAYERS) + 1
    assert page.count('<svg class="convergence"') == len(PLAYERS) + 1
    # hostile fault texts appear only escaped, their control characters visible
    assert "<script>alert" not in page and "<img src=x" not in page and "<iframe" not in page
    assert "&lt;script&gt;alert(&#x27;detail&#x27;)&lt;/script&gt;" in page
    assert "\\x1b[31mred" in page and "\\u202egnp.exe" in page and "\x1b" not in page
    faults = sum(len(r["faults"]) for r in records)
    assert faults and page.count("in <a href=") == faults
    # nothing is fetched from elsewhere: no absolute URL in any src or href
    assert not re.search(r'(src|href)="(https?:)?//', page)
    # every game links to its replay page, which exists and replays that game
    links = re.findall(r'<tr><td><a href="([^"]+)">([^<]+)</a>', page)
    assert [game_id for _, game_id in links] == sorted(r["game_id"] for r in records)
    by_id = {r["game_id"]: r for r in records}
    for link, game_id in links[::7]:
        replay = (out.parent / link).read_text()
        assert '<script src="cardarena.js"></script>' in replay
        data = embedded_data(replay)
        assert data["game_id"] == game_id and data["result"]["scores"] == by_id[game_id]["scores"]
    assert {p.name for p in replay_folder(out).iterdir()} >= {"cardarena.js", "style.css"}


def test_report_lists_a_game_it_cannot_replay_with_the_reason(results, tmp_path):
    path, records = results
    copy = tmp_path / "old.sqlite"
    copy.write_bytes(path.read_bytes())
    victim = records[0]["game_id"]
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE games SET rules_version = '0' WHERE game_id = ?", (victim,))
    result = CliRunner().invoke(main, ["report", str(copy), "-o", str(tmp_path / "r.html"),
                                                       "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    assert "warning: 1 game could not be replayed" in result.stderr
    page = (tmp_path / "r.html").read_text()
    assert f"{esc(victim)}<span class=\"small\"> (no replay: played under rules v0" in page


def test_report_command_errors_are_one_line(tmp_path):
    runner = CliRunner()
    missing = runner.invoke(main, ["report", str(tmp_path / "none.sqlite")])
    assert missing.exit_code == 1 and missing.stderr.strip() == f"Error: {tmp_path / 'none.sqlite'}: no such results file"
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database")
    bad = runner.invoke(main, ["report", str(junk), "-o", str(tmp_path / "x.html")])
    assert bad.exit_code == 1 and "is not a cardarena results database" in bad.stderr
    assert "Traceback" not in bad.stderr + bad.output


def test_report_without_replays_writes_no_folder(results, tmp_path):
    path, _ = results
    out = tmp_path / "plain.html"
    result = CliRunner().invoke(main, ["report", str(path), "-o", str(out), "--no-replays", "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    assert not replay_folder(out).exists()
    assert "replays.html" not in out.read_text() and "Replays were not written" in out.read_text()


def test_replay_html_from_a_played_game(tmp_path):
    """End to end: two sample bots play through the CLI, then `replay --html` writes the viewer."""
    record_path, html_path = tmp_path / "game.json", tmp_path / "game.html"
    bot = f"{sys.executable} {ROOT / 'sample_bots/random/bot.py'}"
    runner = CliRunner()
    played = runner.invoke(main, ["play", "knock-rummy", "--bot", f"a={bot} --seed 1", "--bot", f"b={bot} --seed 2",
                                  "--seed", "5", "--quiet", "--no-pin", "--record", str(record_path)])
    assert played.exit_code == 0, played.output
    replayed = runner.invoke(main, ["replay", str(record_path), "--quiet", "--html", str(html_path)])
    assert replayed.exit_code == 0, replayed.output
    assert f"wrote the replay viewer to {html_path}" in replayed.output
    page = html_path.read_text()
    assert "<script>\n" in page and 'src="' not in page  # self-contained: the script is inline
    record = json.loads(record_path.read_text())
    data = embedded_data(page)
    assert data["result"]["scores"] == record["result"]["scores"]
    assert [[f["seat"], f["action"]] for f in data["frames"][1:]] == record["actions"]
