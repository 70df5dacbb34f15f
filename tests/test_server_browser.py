"""The league server in a real browser (issue 23, Done when): Chromium through Selenium walks the whole
flow. The organiser starts the server with two participants. Each participant logs in with their
token and uploads a bot through the page, and the check report page shows it passing. The
leaderboard, opened before any game is played, fills with both bots without being reloaded. A
replay opens from it, and one participant cannot open the other's log. No page may log a console
error, and a CSP violation is one."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from cardarena.samples import SAMPLE_BOTS  # noqa: E402
from cardarena.server.commands import pack_bot  # noqa: E402
from tests.server_support import WAIT, league_server  # noqa: E402
from tests import test_browser  # noqa: E402
from tests.test_browser import CHROMEDRIVER, CHROMIUM, console_errors  # noqa: E402

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

browser = test_browser.browser  # the report tests' Chromium, one for this module too
pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                                reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")


@pytest.fixture
def server(tmp_path):
    running = league_server(tmp_path / "organiser")
    try:
        yield running
    finally:
        running.stop()


def log_in(driver, url: str, token: str) -> None:
    driver.delete_all_cookies()
    driver.get(f"{url}/login")
    driver.find_element(By.NAME, "token").send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click()
    WebDriverWait(driver, 10).until(lambda d: d.current_url.endswith("/me"))


def upload(driver, archive: str) -> str:
    """Upload `archive` from the participant's page; the check report once it is done."""
    driver.find_element(By.NAME, "archive").send_keys(archive)
    driver.find_element(By.CSS_SELECTOR, "form[action='/upload'] button").click()
    WebDriverWait(driver, WAIT, poll_frequency=0.5).until(
        lambda d: d.find_element(By.ID, "check-report").get_attribute("data-status") != "checking")
    return driver.find_element(By.ID, "check-report").text


def test_the_whole_flow_in_a_browser(browser, server, tmp_path):
    url = server.url
    for name, bot in (("alice", "random"), ("bob", "heuristic")):
        archive = tmp_path / f"{bot}.tar.gz"
        archive.write_bytes(pack_bot(SAMPLE_BOTS / bot))
        log_in(browser, url, server.tokens[name])
        if name == "bob":  # the board opens before any game and must fill without a reload
            board_tab = browser.current_window_handle
        report = upload(browser, str(archive))
        assert f"PASS: {name}-s" in report, report
        assert f"it plays as {name}-v1" in browser.find_element(By.TAG_NAME, "body").text
        assert console_errors(browser) == []
    browser.switch_to.new_window("tab")
    browser.get(url)
    browser.execute_script("window.notReloaded = true;")
    WebDriverWait(browser, WAIT, poll_frequency=0.5).until(lambda d: {
        cell.text for cell in d.find_elements(By.CSS_SELECTOR, "#boards td a")} == {"alice-v1", "bob-v1"})
    assert browser.execute_script("return window.notReloaded === true;")
    assert console_errors(browser) == []
    link = WebDriverWait(browser, WAIT).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#recent a"))[0]
    link.click()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#replay .seat"))
    assert "casino" in browser.title
    assert console_errors(browser) == []  # the viewer runs under the server's strict CSP
    browser.switch_to.window(board_tab)  # still bob's session
    browser.get(f"{url}/bots/alice-v1/log")
    assert "403" in browser.find_element(By.TAG_NAME, "h1").text
    browser.get(f"{url}/bots/bob-v1/log")
    assert "403" not in browser.page_source
