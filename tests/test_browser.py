"""The report and the replay viewer in a real browser: Debian's chromium driven by Selenium.

One browser serves the whole module. Each page must load without a console error, the replay
of each game must end on the stored result, a seat's view must hide the others' cards, and
the report must render the same with the network cut off (it fetches nothing from elsewhere).
Screenshots go to results/browser/ for a person to look at.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from cardarena.html.report import write_report
from tests.random_results import write_random_results

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                                reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")

SCREENSHOTS = Path(__file__).resolve().parent.parent / "results" / "browser"
PLAYERS = {"casino": 2, "cuajo": 4, "knock-rummy": 4, "quitlok": 5}
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1280,1200"]


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="cardarena-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser")
    results = folder / "league.sqlite"
    records = write_random_results(results, ["alpha", "beta", "gamma", "delta", "epsilon"],
                                   {name: size for name, size in PLAYERS.items()}, PLAYERS, seed=4, fault_every=2)
    out = folder / "report.html"
    write_report(results, out, bootstrap=20)
    return out, records


def console_errors(driver) -> list[dict]:
    return [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]


def open_page(driver, path: Path) -> None:
    driver.get(path.as_uri())
    assert console_errors(driver) == []


def test_report_page_shows_boards_and_links_every_game(browser, report):
    out, records = report
    open_page(browser, out)
    titles = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "section.board-section h2")]
    assert titles == [f"{name} (rules v{records_version})" for name, records_version in
                      sorted({(r["game"], r["rules_version"]) for r in records})] + ["overall"]
    board_rows = browser.find_elements(By.CSS_SELECTOR, "table.board tbody tr")
    assert len(board_rows) > len(titles)
    assert len(browser.find_elements(By.CSS_SELECTOR, "table.board tbody tr svg.bar circle.elo")) == len(board_rows)
    rows = browser.find_elements(By.CSS_SELECTOR, "#games tbody tr")
    assert len(rows) == len(records)
    # the filter narrows the list to the games of one kind
    browser.find_element(By.ID, "game-filter").send_keys("quitlok")
    assert browser.find_element(By.ID, "game-count").text == f"{PLAYERS['quitlok']} of {len(records)} games"
    # the hostile fault text is shown as text, never run or rendered as elements
    assert browser.find_elements(By.CSS_SELECTOR, "main img, main iframe, main script") == []
    fault_text = browser.find_element(By.CSS_SELECTOR, "details.faults").get_attribute("textContent")
    assert "<script>alert('detail')</script>" in fault_text and "\\x1b[31mred" in fault_text
    browser.save_screenshot(str(SCREENSHOTS / "report.png"))
    assert console_errors(browser) == []


def test_report_renders_the_same_offline(browser, report):
    out, _ = report
    open_page(browser, out)
    online_text = browser.find_element(By.TAG_NAME, "body").text
    online_shot = browser.get_screenshot_as_png()
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.emulateNetworkConditions",
                            {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0})
    try:
        open_page(browser, out)
        assert browser.find_element(By.TAG_NAME, "body").text == online_text
        assert browser.get_screenshot_as_png() == online_shot
        loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        assert all(name.startswith("file:") for name in loaded), loaded
    finally:
        browser.execute_cdp_cmd("Network.emulateNetworkConditions",
                                {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})


@pytest.mark.parametrize("name", sorted(PLAYERS))
def test_replay_steps_to_the_stored_result(browser, report, name):
    out, records = report
    open_page(browser, out)
    record = next(r for r in records if r["game"] == name and r["faults"])
    browser.find_element(By.LINK_TEXT, record["game_id"]).click()
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "replay").get_attribute("data-ready") == "true")
    assert console_errors(browser) == []
    steps = len(record["actions"])
    label = browser.find_element(By.ID, "step-label")
    assert label.text == f"step 0 of {steps}"
    assert not browser.find_element(By.ID, "result").is_displayed()
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.ARROW_RIGHT)
    body.send_keys(Keys.ARROW_RIGHT)
    assert label.text == f"step {min(2, steps)} of {steps}"
    browser.save_screenshot(str(SCREENSHOTS / f"{name}-start.png"))
    # everything shows every hand; seat 0's view shows the others' hidden cards face down
    others_face_down = ".seat:not([data-seat='0']) .card.back"
    assert browser.find_elements(By.CSS_SELECTOR, others_face_down) == []
    browser.find_element(By.CSS_SELECTOR, "#view-mode option[value='0']").click()
    assert browser.find_elements(By.CSS_SELECTOR, ".seat[data-seat='0'] .card:not(.back)"), "seat 0 sees its cards"
    if name != "quitlok":  # in Quitlok, no card may be face down yet at step 2
        assert browser.find_elements(By.CSS_SELECTOR, others_face_down)
    browser.find_element(By.CSS_SELECTOR, "#view-mode option[value='all']").click()
    body.send_keys(Keys.END)
    assert label.text == f"step {steps} of {steps}"
    assert browser.find_element(By.ID, "result").is_displayed()
    shown = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#final-scores td.score")]
    assert shown == [str(score) for score in record["result"]["scores"]]
    ranks = [int(cell.text) - 1 for cell in browser.find_elements(By.CSS_SELECTOR, "#final-scores td.rank")]
    assert ranks == record["ranks"]
    assert browser.find_elements(By.CSS_SELECTOR, ".badge.fault"), "the faulted seat is marked"
    browser.save_screenshot(str(SCREENSHOTS / f"{name}-end.png"))
    assert console_errors(browser) == []
