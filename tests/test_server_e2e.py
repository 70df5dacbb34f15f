"""The league server end to end (issue 23, Done when), one `cardarena serve` process for the module,
started on a free port with four participants added from the command line:

- alice and bob submit the sample random and heuristic bots with `cardarena submit` from another
  folder; both pass their check, games are played, and both appear on the live leaderboard's JSON,
  as on `cardarena leaderboard` of the same results file;
- a bot that cannot start gets its check report back and exit status 1;
- the server killed (SIGKILL) during play, a check and an upload loses nothing;
- (on a server of its own) the league file's house bots play with no participant at all;
- carol and dave walk the whole flow in a real browser (Chromium through Selenium): each logs in
  with their token and uploads a bot through the page, and the check report page shows it passing;
  the leaderboard, opened before their games, fills with both without being reloaded; a replay
  opens from it, and one cannot open the other's log. No page may log a console error, and a CSP
  violation is one.

They share the server because each adds its own participants' bots to a league already playing. The
killed-server test submits alice's and bob's bots itself where the first test did not run on its
pytest-xdist worker (each worker starts the module's server afresh)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from cardarena.samples import SAMPLE_BOTS  # noqa: E402
from cardarena.server.accounts import Accounts  # noqa: E402
from cardarena.server.commands import pack_bot  # noqa: E402
from cardarena.tournament.store import ResultStore  # noqa: E402
from tests.server_support import CARDARENA, WAIT, board, cardarena, league_server, live_bots, wait_for  # noqa: E402

try:
    from tests import test_browser
except pytest.skip.Exception:  # selenium is not installed: the browser's test alone is skipped
    test_browser = None
CHROMIUM_READY = test_browser is not None and bool(test_browser.CHROMIUM and test_browser.CHROMEDRIVER)
if CHROMIUM_READY:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser = test_browser.browser  # the report tests' Chromium, one for this module too


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = league_server(tmp_path_factory.mktemp("organiser"), participants=("alice", "bob", "carol", "dave"))
    try:
        yield running
    finally:
        running.stop()


def children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if entry.name.isdigit() and int(fields[1]) == pid:
            found.add(int(entry.name))
    return found


def process_name(pid: int) -> str | None:
    """A process's name (its `comm`), None once it has gone."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None


def finished_ids(results: Path) -> set[str]:
    """The games the results file holds as finished; none before the play process has made the file."""
    if not results.exists():
        return set()
    with ResultStore(results) as store:
        return store.finished_ids()


def test_two_submitted_bots_are_checked_played_and_rated_live(server, tmp_path):
    url, tokens, organiser = server.url, server.tokens, server.folder
    elsewhere = tmp_path / "participant"
    elsewhere.mkdir()
    submits = {name: subprocess.Popen(CARDARENA + ["submit", url, str(SAMPLE_BOTS / bot)], cwd=elsewhere, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      env={**os.environ, "CARDARENA_TOKEN": tokens[name]})
               for name, bot in (("alice", "random"), ("bob", "heuristic"))}  # checked side by side
    for name, submit in submits.items():
        out, err = submit.communicate(timeout=120)
        assert submit.returncode == 0, out + err
        assert f"PASS: {name}-s" in out and f"it plays as {name}-v1" in err
    data = wait_for("both bots on the live board", lambda: (data := board(url))["games"] >= 2 and {
        row["bot"] for b in data["boards"] for row in b["rows"]} == {"alice-v1", "bob-v1"} and data)
    assert data["recent"]
    printed = cardarena("leaderboard", str(organiser / "results" / "class.sqlite"), "--format", "json", cwd=organiser)
    assert printed.returncode == 0, printed.stderr
    assert {row["bot"] for b in json.loads(printed.stdout) for row in b["rows"]} == {"alice-v1", "bob-v1"}
    # the server's background processes say what they are in `ps` and `top` (and to tests/bench/bench_server.py)
    roles = {name for pid in children(server.process.pid) if (name := process_name(pid))}
    assert {"cardarena-check", "cardarena-play", "cardarena-board"} <= roles, roles


def test_a_bot_that_fails_its_check_gets_the_report_and_exit_status_1(server, tmp_path):
    url, tokens = server.url, server.tokens
    bot = tmp_path / "broken"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "broken"\ncommand = ["python3", "-c", "import sys; sys.exit(3)"]\n')
    done = cardarena("submit", url, str(bot), "--token", tokens["alice"], cwd=tmp_path)
    assert done.returncode == 1
    assert "FAULT" in done.stdout and re.search(r"FAIL: alice-s\d+: ", done.stdout)
    assert "failed its check: it does not play" in done.stderr
    wrong = cardarena("submit", url, str(bot), "--token", "ca_000000000000_nope", cwd=tmp_path)
    assert wrong.returncode == 1 and "401" in wrong.stderr


def test_a_server_killed_during_play_and_a_check_loses_nothing(server, tmp_path):
    """SIGKILL while games are played, a new version is being checked and another upload is half sent:
    its processes die with it; started again, every finished game and the accepted submission are
    there (the submission is checked then), the half-sent one left nothing, play goes on, and the
    live board equals `cardarena leaderboard` of the file."""
    results = server.folder / "results" / "class.sqlite"
    for name, bot in (("alice", "random"), ("bob", "heuristic")):
        if f"{name}-v1" not in live_bots(server.url):  # the module's first test ran on another worker, or not at all
            done = cardarena("submit", server.url, str(SAMPLE_BOTS / bot), cwd=tmp_path,
                             env={"CARDARENA_TOKEN": server.tokens[name]})
            assert done.returncode == 0, done.stdout + done.stderr
    wait_for("games being played", lambda: len(finished_ids(results)) >= 4)
    newer = tmp_path / "random2"
    shutil.copytree(SAMPLE_BOTS / "random", newer)
    (newer / "bot.toml").write_text((newer / "bot.toml").read_text().replace('"1"', '"2"'))
    accepted = cardarena("submit", server.url, str(newer), "--wait", "0", cwd=tmp_path,
                         env={"CARDARENA_TOKEN": server.tokens["alice"]})
    assert accepted.returncode == 0, accepted.stderr
    helpers = children(server.process.pid)
    assert helpers  # the play process and a check process at least
    accepted_before = len(Accounts(server.folder / "results" / "class.server.sqlite").submissions())
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as upload:  # an upload half sent when the server dies
        upload.sendall(f"POST /api/submissions HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer "
                       f"{server.tokens['bob']}\r\nContent-Length: 100000\r\n\r\n".encode() + bytes(1000))
        time.sleep(0.2)
        server.process.kill()
        server.process.wait()
    before = finished_ids(results)
    wait_for("the play and check processes ending with the server", lambda: not any(
        Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1][:3]
        for pid in helpers), 10)
    server.start()
    # its check starts again from the beginning, beside play: on a loaded machine that takes a while
    wait_for("the submission accepted before the kill checked after it", lambda: "alice-v2" in live_bots(server.url),
             2 * WAIT)
    wait_for("play going on", lambda: len(finished_ids(results)) > len(before) + 2)
    assert len(Accounts(server.folder / "results" / "class.server.sqlite").submissions()) == accepted_before
    assert before <= finished_ids(results)
    Accounts(server.folder / "results" / "class.server.sqlite").set_flag("paused", True)
    settled = _settled(results)
    rows = wait_for("the board catching up", lambda: _rows(board(server.url)) if board(server.url)["games"] == settled
                    else None, 10)
    printed = cardarena("leaderboard", str(results), "--format", "json", cwd=server.folder)
    fresh = {row["bot"]: row for b in json.loads(printed.stdout) for row in b["rows"]}
    assert rows == {bot: row for bot, row in fresh.items() if bot in rows}
    assert {"alice-v2", "bob-v1"} <= set(rows) and "alice-v1" not in rows  # a new version replaces the old ...
    assert "alice-v1" in fresh  # ... which keeps its games
    Accounts(server.folder / "results" / "class.server.sqlite").set_flag("paused", False)  # for the next test


def _settled(results: Path, quiet: float = 2.0, seconds: float = 20.0) -> int:
    """The game count once no game was added for `quiet` seconds (the round in flight finished),
    looked at every fifth of a second."""
    deadline = time.monotonic() + seconds
    count, since = len(finished_ids(results)), time.monotonic()
    while time.monotonic() - since < quiet:
        assert time.monotonic() < deadline, f"play did not pause within {seconds} s"
        time.sleep(0.2)
        if (now := len(finished_ids(results))) != count:
            count, since = now, time.monotonic()
    return count


def _rows(data: dict) -> dict[str, dict]:
    return {row["bot"]: {key: value for key, value in row.items() if key != "interval"}
            for b in data["boards"] for row in b["rows"]}


def test_the_league_files_bots_play_as_house_bots(tmp_path):
    """The organiser's league file names the sample random and heuristic bots: the server plays them from
    its start, with no participant, and each has a page with its rating over time."""
    bots = ", ".join(f'"{SAMPLE_BOTS / name}"' for name in ("random", "heuristic"))
    running = league_server(tmp_path / "organiser", participants=("alice",),
                            league=f'name = "house"\ngames = ["casino"]\nbots = [{bots}]\n')
    try:
        wait_for("both house bots on the live board", lambda: live_bots(running.url) == {"random", "heuristic"})
        page = wait_for("a rating history", lambda: "<polyline" in (text := _get(f"{running.url}/bots/heuristic"))
                        and text)
        assert "house bot" in page
    finally:
        running.stop()
    allowed = cardarena("serve", "league.toml", "--add-participant=heuristic", cwd=running.folder)
    assert allowed.returncode == 0, allowed.stderr  # heuristic-vN is no house bot's name
    (running.folder / "league.toml").write_text(f'name = "house"\ngames = ["casino"]\nbots = [{bots}, "alice-v1=true"]\n')
    clash = cardarena("serve", "league.toml", cwd=running.folder)
    assert clash.returncode == 1 and "house bot 'alice-v1' has the name of a version of participant 'alice'" in clash.stderr


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.read().decode()


def browser_log_in(driver, url: str, token: str) -> None:
    driver.delete_all_cookies()
    driver.get(f"{url}/login")
    driver.find_element(By.NAME, "token").send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click()
    WebDriverWait(driver, 10).until(lambda d: d.current_url.endswith("/me"))


def browser_upload(driver, archive: str) -> str:
    """Upload `archive` from the participant's page; the URL of its check report page."""
    driver.find_element(By.NAME, "archive").send_keys(archive)
    driver.find_element(By.CSS_SELECTOR, "form[action='/upload'] button").click()
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "check-report"))
    return driver.current_url


def browser_report(driver, url: str) -> str:
    """The check report at `url` once the check is done (the page reloads itself until then)."""
    driver.get(url)
    WebDriverWait(driver, WAIT, poll_frequency=0.5, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: d.find_element(By.ID, "check-report").get_attribute("data-status") != "checking")  # it may reload
    return driver.find_element(By.ID, "check-report").text


@pytest.mark.skipif(not CHROMIUM_READY, reason="needs selenium, and Debian's chromium and chromium-driver "
                                                 "(.ci/run installs them)")
def test_the_whole_flow_in_a_browser(browser, server, tmp_path):
    url = server.url
    reports = {}
    for name, bot in (("dave", "heuristic"), ("carol", "random")):  # checked side by side
        archive = tmp_path / f"{bot}.tar.gz"
        archive.write_bytes(pack_bot(SAMPLE_BOTS / bot))
        browser_log_in(browser, url, server.tokens[name])
        reports[name] = browser_upload(browser, str(archive))
    for name in ("carol", "dave"):  # carol is logged in; dave keeps his session for the end
        if name == "dave":
            browser_log_in(browser, url, server.tokens[name])
        report = browser_report(browser, reports[name])
        assert f"PASS: {name}-s" in report, report
        assert f"it plays as {name}-v1" in browser.find_element(By.TAG_NAME, "body").text
        assert test_browser.console_errors(browser) == []
    board_tab = browser.current_window_handle
    browser.switch_to.new_window("tab")
    browser.get(url)
    browser.execute_script("window.notReloaded = true;")
    redrawn = (StaleElementReferenceException,)  # the board is redrawn every 3 s, maybe between a find and a read
    WebDriverWait(browser, WAIT, poll_frequency=0.5, ignored_exceptions=redrawn).until(
        lambda d: {"carol-v1", "dave-v1"} <= {cell.text for cell in d.find_elements(By.CSS_SELECTOR, "#boards td a")})
    assert browser.execute_script("return window.notReloaded === true;")
    assert test_browser.console_errors(browser) == []
    WebDriverWait(browser, WAIT, ignored_exceptions=redrawn).until(
        lambda d: (links := d.find_elements(By.CSS_SELECTOR, "#recent a")) and (links[0].click() or True))
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#replay .seat"))
    assert "casino" in browser.title
    assert test_browser.console_errors(browser) == []  # the viewer runs under the server's strict CSP
    browser.switch_to.window(board_tab)  # still dave's session
    browser.get(f"{url}/bots/carol-v1/log")
    assert "403" in browser.find_element(By.TAG_NAME, "h1").text
    browser.get(f"{url}/bots/dave-v1/log")
    own_log = browser.find_element(By.TAG_NAME, "body").text  # plain text: no <h1>, and a pid may contain "403"
    assert "this is not your bot" not in own_log and ("dave-v1 started" in own_log or "nothing on stderr" in own_log)
    assert all("403 (Forbidden)" in entry["message"] for entry in test_browser.console_errors(browser))  # carol's log
    browser.get(f"{url}/bots/dave-v1")  # its rating over time, drawn under the strict CSP
    WebDriverWait(browser, WAIT, poll_frequency=1).until(lambda d: d.find_elements(By.CSS_SELECTOR, "svg polyline")
                                                         or d.refresh())
    assert browser.find_element(By.CSS_SELECTOR, "svg.convergence").size["width"] > 0  # drawn, not blocked
    assert browser.find_element(By.CSS_SELECTOR, "svg polyline").get_attribute("points")
    assert test_browser.console_errors(browser) == []
