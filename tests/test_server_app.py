"""The league server's endpoints and their guards (issue 23, Submitting and Safety), through Starlette's
TestClient in memory: tokens and sessions, 401/403, one-time forms (CSRF, replay), rate limits,
request size limits, the CSP and the escaping of bot-supplied text. The play process is left off,
and no upload here reaches a check process: tests/test_server_e2e.py plays for real."""

from __future__ import annotations

import asyncio
import html
import io
import os
import re
import subprocess
import tarfile
import tempfile
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any
from urllib.parse import quote
from xml.etree import ElementTree

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")
from starlette.testclient import TestClient  # noqa: E402

from cardarena.samples import SAMPLE_BOTS  # noqa: E402
from cardarena.server import league_play  # noqa: E402
from cardarena.report import leaderboards  # noqa: E402
from cardarena.server.accounts import ORGANISER, AccountError, Accounts  # noqa: E402
from cardarena.server.commands import pack_bot  # noqa: E402
from cardarena.tournament.store import ResultStore  # noqa: E402
from cardarena.server.app import create_app  # noqa: E402
from cardarena.server.runtime import (CONTENT_SECURITY_POLICY, MAX_REQUEST, PAGE_POLICY, UPLOAD_PREFIX, Cached,  # noqa: E402
                                      Settings)
from tests.random_results import write_random_results  # noqa: E402


def class_settings(folder: Path, league: str = 'name = "class"\ngames = ["casino"]\n', **options: Any) -> Settings:
    """Settings of a server of the league `league` (its file written in `folder`, with everything it
    keeps), play left off; `options` set the rest."""
    (folder / "league.toml").write_text(league)
    return Settings(league_file=folder / "league.toml", accounts_path=folder / "class.server.sqlite",
                    results=folder / "class.sqlite", bots_folder=folder / "uploads", logs=folder / "logs",
                    play=False, **options)


@pytest.fixture
def league(tmp_path):
    settings = class_settings(tmp_path, logins_per_minute=5, submissions_per_hour=3)
    accounts = Accounts(settings.accounts_path)
    tokens = {"alice": accounts.add_participant("alice"), "bob": accounts.add_participant("bob"),
              "teacher": accounts.add_participant("teacher", ORGANISER)}
    accounts.close()
    with TestClient(create_app(settings)) as client:
        yield client, tokens, settings


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def tar_gz(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def log_in(client: TestClient, token: str):
    form = client.get("/login")
    nonce = re.search(r'name="form_token" value="([^"]+)"', form.text).group(1)
    return client.post("/login", data={"form_token": nonce, "token": token}, follow_redirects=False)


def form_token(text: str, action: str) -> str:
    return re.search(rf'action="{re.escape(action)}"[^>]*>\s*<input type="hidden" name="form_token" value="([^"]+)"',
                     text).group(1)


def test_every_page_carries_the_strict_csp_and_no_inline_script(league):
    client, _, _ = league
    answer = client.get("/")
    assert answer.status_code == 200
    assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
    assert answer.headers["x-frame-options"] == "DENY"
    assert f'content="{PAGE_POLICY}"' in answer.text.replace("&#x27;", "'")  # the page's own meta, too
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", answer.text) == []  # every script is a file of this server
    assert client.get("/static/server.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/static/../accounts.py").status_code == 404


def test_a_dead_servers_upload_scratch_is_swept_when_a_server_starts(tmp_path):
    """An upload is written to a scratch folder removed once it is unpacked; a server killed meanwhile
    (tests/test_server_e2e.py kills one mid-upload) cannot remove it, so the next server's start does,
    and leaves a live server's alone."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = Path(tempfile.gettempdir()) / f"{UPLOAD_PREFIX}{dead.pid}-abcd"
    live = Path(tempfile.mkdtemp(prefix=f"{UPLOAD_PREFIX}{os.getpid()}-"))
    stale.mkdir()
    (stale / "upload").write_bytes(b"half an archive")
    settings = class_settings(tmp_path)
    try:
        with TestClient(create_app(settings)):
            assert not stale.exists() and live.exists()
    finally:
        live.rmdir()


def test_the_board_is_empty_json_before_any_game(league):
    client, _, _ = league
    assert client.get("/api/leaderboard").json() == {"games": 0, "boards": [], "paused": False, "recent": []}


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer ca_000000000000_wrong"},
                                     {"Authorization": "Basic YWxpY2U6eA=="}, {"Authorization": "Bearer x"}])
def test_a_missing_or_wrong_token_gets_401_and_nothing_else(league, headers):
    client, _, settings = league
    answer = client.post("/api/submissions", content=tar_gz({"bot.toml": b""}), headers=headers)
    assert answer.status_code == 401
    assert answer.json() == {"error": "a valid token is needed (Authorization: Bearer TOKEN)"}
    assert answer.headers["www-authenticate"] == "Bearer"
    assert not settings.bots_folder.exists()  # nothing was unpacked
    assert client.get("/api/submissions/1", headers=headers).status_code == 401


def test_a_token_is_stored_hashed_and_only_its_owner_gets_in(league):
    _, tokens, settings = league
    accounts = Accounts(settings.accounts_path)
    stored = accounts.db.execute("SELECT group_concat(token_hash) FROM participants").fetchone()[0]
    assert all(token.split("_", 2)[2] not in stored for token in tokens.values())
    assert accounts.authenticate(tokens["alice"]).name == "alice"
    forged = tokens["alice"][:-1] + ("A" if tokens["alice"][-1] != "A" else "B")
    assert accounts.authenticate(forged) is None
    assert accounts.authenticate(tokens["alice"].replace(tokens["alice"].split("_")[1], "0" * 12)) is None


def test_a_hostile_upload_is_refused_with_its_reason_and_the_server_still_serves(league):
    client, tokens, settings = league
    answer = client.post("/api/submissions", content=tar_gz({"../../evil.py": b"x"}), headers=auth(tokens["alice"]))
    assert answer.status_code == 400
    assert answer.json()["error"] == "upload refused: '../../evil.py': climbs out of the folder ('..')"
    answer = client.post("/api/submissions", content=tar_gz({"bot.py": b"x"}), headers=auth(tokens["alice"]))
    assert "no bot.toml at the top of the archive" in answer.json()["error"]
    assert client.get("/api/leaderboard").status_code == 200
    assert Accounts(settings.accounts_path).submissions() == []


def test_a_request_over_its_size_cap_gets_413(league):
    client, tokens, _ = league
    assert client.post("/login", content=b"x" * (MAX_REQUEST + 1)).status_code == 413
    answer = client.post("/api/submissions", content=b"x" * (17 << 20), headers=auth(tokens["alice"]))
    assert answer.status_code == 413


def test_a_participant_cannot_see_another_participants_check_report(league):
    client, tokens, settings = league
    accounts = Accounts(settings.accounts_path)
    alice = accounts.authenticate(tokens["alice"])
    ident = accounts.add_submission(alice, "digest", str(settings.bots_folder / "x"))
    accounts.finish_check(ident, {"passed": False, "text": ["FAIL: <script>alert(1)</script>"]}, False)
    assert client.get(f"/api/submissions/{ident}", headers=auth(tokens["bob"])).status_code == 403
    assert client.get(f"/api/submissions/{ident}", headers=auth(tokens["alice"])).json()["status"] == "failed"
    assert client.get(f"/api/submissions/{ident}", headers=auth(tokens["teacher"])).status_code == 200
    log_in(client, tokens["bob"])
    assert client.get(f"/submissions/{ident}").status_code == 403
    log_in(client, tokens["alice"])
    page = client.get(f"/submissions/{ident}").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page


def test_logging_in_needs_the_pages_one_time_form_token(league):
    client, tokens, _ = league
    assert client.post("/login", data={"token": tokens["alice"]}).status_code == 403  # no form token: CSRF
    answer = log_in(client, tokens["alice"])
    assert answer.status_code == 303 and answer.headers["location"] == "/me"
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert "alice" in client.get("/me").text


def test_a_replayed_form_is_refused(league):
    client, tokens, _ = league
    form = client.get("/login")
    nonce = re.search(r'name="form_token" value="([^"]+)"', form.text).group(1)
    assert client.post("/login", data={"form_token": nonce, "token": tokens["alice"]},
                       follow_redirects=False).status_code == 303
    again = client.post("/login", data={"form_token": nonce, "token": tokens["alice"]}, follow_redirects=False)
    assert again.status_code == 403 and "already sent" in again.text


def test_a_form_of_one_session_does_not_work_in_another(league):
    client, tokens, _ = league
    log_in(client, tokens["teacher"])
    nonce = form_token(client.get("/me").text, "/organiser/pause")
    log_in(client, tokens["bob"])  # a new session: the organiser's form token is not its own
    assert client.post("/organiser/pause", data={"form_token": nonce}).status_code == 403
    assert client.get("/api/leaderboard").json()["paused"] is False


def test_only_the_organiser_pauses_play(league):
    client, tokens, _ = league
    log_in(client, tokens["bob"])
    page = client.get("/me").text
    assert "/organiser/pause" not in page
    nonce = form_token(page, "/upload")
    assert client.post("/organiser/pause", data={"form_token": nonce}).status_code == 403
    log_in(client, tokens["teacher"])
    nonce = form_token(client.get("/me").text, "/organiser/pause")
    assert client.post("/organiser/pause", data={"form_token": nonce}, follow_redirects=False).status_code == 303
    assert client.get("/api/leaderboard").json()["paused"] is True


def test_log_ins_are_rate_limited(league):
    client, _, _ = league
    codes = [log_in(client, "ca_000000000000_wrong").status_code for _ in range(6)]
    assert codes == [401] * 5 + [429]


def test_log_in_pages_are_rate_limited_per_address(league):
    """Each log-in page stores a one-time form token: a flood of them is cut off."""
    client, _, _ = league
    codes = [client.get("/login").status_code for _ in range(121)]
    assert codes == [200] * 120 + [429]


def test_submissions_are_rate_limited_per_participant(league):
    client, tokens, _ = league
    codes = [client.post("/api/submissions", content=tar_gz({"bot.py": bytes([n])}),
                         headers=auth(tokens["alice"])).status_code for n in range(4)]
    assert codes == [400, 400, 400, 429]
    assert client.post("/api/submissions", content=tar_gz({"bot.py": b""}), headers=auth(tokens["bob"])).status_code == 400


def test_open_sign_up_is_off_by_default(league):
    client, _, _ = league
    assert client.get("/signup").status_code == 403
    assert client.post("/signup", data={"name": "mallory"}).status_code == 403


def test_an_unknown_game_has_no_replay(league):
    client, _, _ = league
    assert client.get("/games/casino/a+b/d0/r0").status_code == 404


def test_participant_names_are_checked(tmp_path):
    accounts = Accounts(tmp_path / "s.sqlite")
    from cardarena.server.accounts import AccountError
    for bad in ["", "-x", "a/b", "a+b", "<script>", "x" * 41]:
        with pytest.raises(AccountError):
            accounts.add_participant(bad)
    accounts.add_participant("Alice")
    with pytest.raises(AccountError, match="already exists"):
        accounts.add_participant("alice")


def test_a_file_that_is_not_a_server_database_is_refused(tmp_path):
    from cardarena.server.accounts import AccountError
    (tmp_path / "x.sqlite").write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(AccountError, match="not a cardarena league server database"):
        Accounts(tmp_path / "x.sqlite")



def test_a_bots_faults_and_log_are_its_owners_and_the_organisers_only(league):
    client, tokens, settings = league
    accounts = Accounts(settings.accounts_path)
    alice = accounts.authenticate(tokens["alice"])
    ident = accounts.add_submission(alice, "digest", str(settings.bots_folder / "x"))
    assert accounts.finish_check(ident, {"passed": True, "text": ["PASS"]}, True) == "alice-v1"
    settings.logs.mkdir()
    (settings.logs / "alice-v1.stderr.log").write_text("alice's secret plan <b>\n")
    assert client.get("/bots/alice-v1/log").status_code == 401
    log_in(client, tokens["bob"])
    assert client.get("/bots/alice-v1/log").status_code == 403
    page = client.get("/bots/alice-v1")
    assert page.status_code == 200 and "alice-v1" in page.text and "stderr log" not in page.text
    log_in(client, tokens["alice"])
    log = client.get("/bots/alice-v1/log")
    assert log.text == "alice's secret plan <b>\n" and log.headers["content-type"].startswith("text/plain")
    assert "stderr log" in client.get("/bots/alice-v1").text
    log_in(client, tokens["teacher"])
    assert client.get("/bots/alice-v1/log").status_code == 200
    assert client.get("/bots/nobody-v1").status_code == 404


def test_a_new_version_replaces_the_old_on_the_board_and_the_organiser_retires_one(league):
    client, tokens, settings = league
    accounts = Accounts(settings.accounts_path)
    alice = accounts.authenticate(tokens["alice"])
    for number in (1, 2):
        ident = accounts.add_submission(alice, f"digest{number}", str(settings.bots_folder / str(number)))
        accounts.finish_check(ident, {"passed": True, "text": []}, True)
    assert [v.bot for v in accounts.versions(current_only=True)] == ["alice-v2"]
    assert [v.bot for v in accounts.versions()] == ["alice-v1", "alice-v2"]  # the old one keeps its history
    log_in(client, tokens["teacher"])
    page = client.get("/bots/alice-v2").text
    nonce = form_token(page, "/organiser/retire")
    assert client.post("/organiser/retire", data={"form_token": nonce, "bot": "alice-v2"},
                       follow_redirects=False).status_code == 303
    assert accounts.versions(current_only=True) == []


def test_a_check_process_killed_from_outside_is_replaced_and_the_check_done_again(league, tmp_path):
    """A dead check process breaks the pool: the submission is checked again in a new one, not failed."""
    client, tokens, settings = league
    state = client.app.state.league
    settings.check_games = 1
    broken = state.checks
    with pytest.raises(BrokenProcessPool):
        broken.submit(os._exit, 9).result(timeout=30)
    assert checked(client, tokens["alice"])["passed"] is True and state.checks is not broken
    during = state.checks
    checked(client, tokens["bob"], kill=lambda: [process.kill() for process in during._processes.values()])
    assert state.checks is not during  # killed during bob's check: a new pool checked it again
    assert Accounts(settings.accounts_path).versions(current_only=True)[-1].bot == "bob-v1"


def checked(client: TestClient, token: str, kill: Any = lambda: None) -> dict:
    """Upload the random bot, run `kill` once it is accepted, and wait for the check's verdict."""
    answer = client.post("/api/submissions", content=pack_bot(SAMPLE_BOTS / "random"), headers=auth(token))
    assert answer.status_code == 202
    kill()
    deadline = time.monotonic() + 30
    while (status := client.get(answer.json()["url"], headers=auth(token)).json())["status"] == "checking":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return status


def test_a_board_process_killed_from_outside_is_replaced(league):
    client, _, settings = league
    state = client.app.state.league
    ResultStore(settings.results, create=True).close()
    assert client.get("/api/leaderboard").json()["games"] == 0  # computed in the board process
    for process in state.board_worker._processes.values():
        process.kill()
    state.board.value = None  # no board yet: the request waits for one, and gets the error
    with pytest.raises(BrokenProcessPool):
        client.get("/api/leaderboard")
    assert client.get("/api/leaderboard").json()["games"] == 0


def test_the_play_process_is_given_the_servers_scheduler(league, monkeypatch):
    """serve --scheduler reaches the play process (which hands it to the Dask executor: test_server_play)."""
    client, _, settings = league
    started = []

    class Player:
        exitcode = None

        def start(self): ...
        def terminate(self): ...
        def join(self, timeout=None): ...
        def is_alive(self): return False

    class Context:
        def Process(self, target, name, args):
            started.append((target, args))
            return Player()

    monkeypatch.setattr(league_play, "process_context", lambda: Context())
    settings.scheduler = "tcp://cluster:8786"
    client.app.state.league.start_player()
    assert started == [(league_play.play_process, (settings.league_file, settings.accounts_path, settings.jobs,
                                                   settings.round_games, "tcp://cluster:8786"))]


def add_version(accounts: Accounts, who: str, number: int) -> str:
    """A passed submission of `who`: their next version's name."""
    participant = next(p for p in accounts.participants() if p.name == who)
    ident = accounts.add_submission(participant, f"digest-{who}-{number}", f"/nowhere/{number}")
    return accounts.finish_check(ident, {"passed": True, "text": []}, True)


def history_rows(text: str) -> list[tuple[int, int, str, float]]:
    return [(int(number), int(games), bot, float(elo)) for number, games, bot, elo in re.findall(
        r'<tr><td class="num">(\d+)</td><td class="num">(\d+)</td><td>([^<]+)</td><td class="num">([-\d.]+)</td></tr>',
        text)]


def test_a_bots_page_plots_its_versions_ratings_after_each_round(league):
    """Issue 23, Pages: rating over time, per board, each of the participant's versions a line with its
    entry marked; the numbers are the leaderboard's on the games until each round."""
    client, _, settings = league
    accounts = Accounts(settings.accounts_path)
    assert [add_version(accounts, "alice", 1), add_version(accounts, "alice", 2), add_version(accounts, "bob", 1)] == [
        "alice-v1", "alice-v2", "bob-v1"]
    write_random_results(settings.results, ["alice-v1", "alice-v2", "bob-v1"], {"knock-rummy": 300},
                         {"knock-rummy": 2})
    text = client.get("/bots/alice-v2").text
    svg = re.search(r"<svg class=\"convergence\".*?</svg>", text, re.S).group(0)
    ElementTree.fromstring(svg)  # well-formed, so nothing in it broke out of its text
    assert re.findall(r"<polyline[^>]*><title>([^<]+)</title>", svg) == ["alice-v1", "alice-v2"]  # not bob's
    assert svg.count('stroke-dasharray="4 3"') == 2 and ">v1</text>" in svg and ">v2</text>" in svg
    assert " style=" not in text and "<style" not in text  # the strict CSP allows no inline style
    history = league_play.rating_histories(settings.results)[0]
    assert history_rows(text) == [(number, games, bot, elo) for bot in ("alice-v1", "alice-v2")
                                  for games, number, elo in history["series"][bot]]
    with ResultStore(settings.results) as store:
        rows = {row.bot: row.elo for row in leaderboards(store.games(), bootstrap=0)[0].rows}
    assert history_rows(text)[-1][3] == pytest.approx(rows["alice-v2"], abs=0.051)  # the live board's Elo now
    assert len({row[0] for row in history_rows(text)}) == 5  # 150 deals: five rounds of play


def test_the_rating_plot_escapes_bot_names(league):
    """Bot names are checked when versions are made; a crafted server database or results file is still
    only text on the page."""
    client, _, settings = league
    hostile = "<img src=x onerror=alert(1)>&\"'-v1"
    accounts = Accounts(settings.accounts_path)
    with accounts.transaction():
        accounts.db.execute("INSERT INTO submissions VALUES (1, 1, 0, 'd', '/x', 'passed', '{}', ?)", (hostile,))
        accounts.db.execute("INSERT INTO versions VALUES (?, 1, 1, 1, '/x', 0, 1, 0)", (hostile,))
    write_random_results(settings.results, [hostile, "bob-v1"], {"knock-rummy": 80}, {"knock-rummy": 2})
    text = client.get(f"/bots/{quote(hostile)}").text
    assert "<img" not in text and "onerror=alert(1)>" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;&amp;" in text
    svg = re.search(r"<svg class=\"convergence\".*?</svg>", text, re.S).group(0)
    assert hostile in [title.text for title in ElementTree.fromstring(svg).iter("title")]  # text, whole
    assert history_rows(text)[0][2] == html.escape(hostile)


def test_house_bots_of_the_league_file_are_on_the_board_with_pages_the_organiser_sees_all_of(tmp_path):
    """Issue 23: the organiser's league file may name bots (the sample bots, the ladder's rungs) that play
    beside the participants' versions without a participant."""
    settings = class_settings(tmp_path, f'name = "class"\ngames = ["knock-rummy"]\n'
                                        f'bots = ["{SAMPLE_BOTS / "random"}", "{SAMPLE_BOTS / "heuristic"}"]\n',
                              open_signup=True)
    accounts = Accounts(settings.accounts_path)
    tokens = {"alice": accounts.add_participant("alice"), "teacher": accounts.add_participant("teacher", ORGANISER)}
    with pytest.raises(AccountError, match="would be named as the house bot 'random-v1'"):
        accounts.add_participant("random", house=["random-v1"])
    write_random_results(settings.results, ["random", "heuristic"], {"knock-rummy": 40}, {"knock-rummy": 2})
    settings.logs.mkdir()
    (settings.logs / "random.stderr.log").write_text("the house bot's stderr\n")
    with TestClient(create_app(settings)) as client:
        assert {row["bot"] for b in client.get("/api/leaderboard").json()["boards"] for row in b["rows"]} == {
            "random", "heuristic"}
        page = client.get("/bots/random").text
        assert "house bot" in page and "<svg" in page and "stderr log" not in page
        assert client.get("/bots/random/log").status_code == 401
        log_in(client, tokens["alice"])
        assert client.get("/bots/random/log").status_code == 403 and "stderr log" not in client.get("/bots/random").text
        log_in(client, tokens["teacher"])
        assert client.get("/bots/random/log").text == "the house bot's stderr\n"
        assert "stderr log" in client.get("/bots/random").text
        assert client.get("/bots/nobody/log").status_code == 404


def test_a_slow_recomputation_of_the_board_keeps_no_request_waiting(capsys):
    """Only the first request waits for the board; later ones get the last board at once while one
    recomputation runs (a large board on a loaded machine takes seconds), and a failed one is reported
    and leaves the last board served."""
    computed = []

    async def compute():
        computed.append(len(computed))
        if len(computed) == 3:
            raise RuntimeError("the board process was killed")
        await asyncio.sleep(0.3)
        return len(computed)

    async def scenario():
        board = Cached(0.0, compute, "the live board")
        assert await board.get() == 1
        started = time.monotonic()
        assert [await board.get() for _ in range(50)] == [1] * 50  # one recomputation started, none awaited
        assert time.monotonic() - started < 0.2 and board.refreshing is not None
        await board.refreshing
        assert len(computed) == 2  # one recomputation for the fifty requests
        assert await board.get() == 2  # the next, started by this request, fails
        await board.refreshing
        assert await board.get() == 2 and board.refreshing is not None

    asyncio.run(scenario())
    assert "warning: the live board not recomputed: RuntimeError: the board process was killed" in capsys.readouterr().err


def test_the_board_answers_while_the_database_and_its_recomputation_are_held(league):
    """A public board request reads neither the database nor the results: it is answered from the last
    encoded board, with every security header, while another thread holds the server database (as a
    check's or an upload's commit does), an upload waits on it, and the board's recomputation is held
    up. (Runs in threads with timeouts: a request that waited would fail the test, not hang it.)"""
    client, tokens, _ = league
    state = client.app.state.league
    first = client.get("/api/leaderboard")
    held, release = threading.Event(), threading.Event()

    async def held_up() -> bytes:
        held.set()
        await asyncio.to_thread(release.wait, 30)
        return b'{"recomputed": true}'

    state.board.compute = held_up
    state.board.value = (0.0, state.board.value[1])  # stale: the next request starts a recomputation
    answers: dict[str, Any] = {}

    def ask(name: str, *args: Any, **kwargs: Any) -> threading.Thread:
        thread = threading.Thread(target=lambda: answers.__setitem__(name, client.request(*args, **kwargs)))
        thread.start()
        return thread

    with state.accounts.lock:  # held as a commit holds it: any request reading the database waits
        upload = ask("upload", "POST", "/api/submissions", content=tar_gz({"bot.py": b""}), headers=auth(tokens["alice"]))
        boards = [ask(f"board{number}", "GET", "/api/leaderboard") for number in range(3)]
        for thread in boards:
            thread.join(10)
        waiting = [thread.is_alive() for thread in boards]
        upload_waited = upload.is_alive()
    release.set()
    upload.join(30)
    assert waiting == [False] * 3 and held.is_set() and upload_waited
    for number in range(3):
        answer = answers[f"board{number}"]
        assert answer.status_code == 200 and answer.content == first.content
        assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert answer.headers["x-content-type-options"] == "nosniff" and answer.headers["cache-control"] == "no-store"
        assert answer.headers["content-type"] == "application/json"
    assert answers["upload"].status_code == 400  # no bot.toml: refused, once the database was free
    # released, the recomputation ends on the server's own loop: a request may still find the old board
    deadline = time.monotonic() + 10
    while (board := client.get("/api/leaderboard").json()) != {"recomputed": True} and time.monotonic() < deadline:
        time.sleep(0.02)
    assert board == {"recomputed": True}
