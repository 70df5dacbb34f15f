"""The league server's web application (Starlette): pages, the JSON API, and what guards them.

Guards: every request body is capped (uploads more generously) and counted as it streams in;
API calls carry `Authorization: Bearer TOKEN`, browsers a session cookie (HttpOnly, SameSite=Strict)
from logging in with the token; every form carries a one-time token tied to the session (CSRF
protection that also refuses a replayed form); log-ins, sign-ups and submissions are rate limited;
a missing or wrong token gets 401, a participant reaching another's page 403, and nothing else.
Every page is sent with a strict Content-Security-Policy (scripts and styles from this server only,
nothing inline) and escapes all bot-supplied text; the live board fills its table with textContent.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict, deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, AsyncIterator, Callable
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from cardarena.html import asset, esc, page
from cardarena.server import league_play
from cardarena.server.accounts import CHECKING, PASSED, AccountError, Accounts, Participant, check_participant_name
from cardarena.server.unpack import Caps, UploadRefused, unpack

#: scripts, styles and API calls from this server only; nothing inline, no plug-ins, no framing
PAGE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src 'self'; "
               "form-action 'self'; base-uri 'none'")
#: ... and, in the header (a page's <meta> cannot say it), no framing by other sites
CONTENT_SECURITY_POLICY = PAGE_POLICY + "; frame-ancestors 'none'"
MAX_REQUEST = 64 << 10  # bytes of any request body but an upload
MAX_UPLOAD = 16 << 20  # bytes of an uploaded archive (its unpacked size: unpack.Caps)
SESSION_COOKIE, PRE_COOKIE = "ca_session", "ca_pre"
STATIC = {"style.css": "text/css", "cardarena.js": "text/javascript", "server.js": "text/javascript"}
BOARD_SECONDS = 2.0  # the live board is recomputed at most this often
VISITOR_FORMS_PER_MINUTE = 120  # log-in and sign-up pages one address may open a minute (a class behind one NAT)
PLAYER_RESTART_SECONDS = 5.0
CHECK_BREAKS = 3  # check processes lost while checking one submission before it fails (a bot that kills them)  # how soon a play process that ended is started again


@dataclass
class Settings:
    """How one server runs: its league, files, and limits."""

    league_file: Path
    accounts_path: Path
    results: Path
    bots_folder: Path  # unpacked uploads, one folder each
    logs: Path  # the bots' stderr logs: where the play process writes them, beside the results file (.logs)
    open_signup: bool = False
    jobs: int | None = None  # play worker processes
    check_workers: int = 1
    check_games: int | None = None  # games per game in a check (None: every seating once)
    round_games: int = league_play.ROUND_GAMES  # games in a round of play, about
    scheduler: str | None = None  # a Dask scheduler to play on (else the league file's, else this machine)
    submissions_per_hour: int = 30
    logins_per_minute: int = 10
    caps: Caps = field(default_factory=Caps)
    play: bool = True  # start the play process (tests of the pages alone leave it off)


class RateLimit:
    """At most `count` events per `seconds` per key (a sliding window kept in memory)."""

    def __init__(self, count: int, seconds: float):
        self.count, self.seconds = count, seconds
        self.events: dict[str, deque[float]] = defaultdict(deque)

    def full(self, key: str) -> bool:
        """Whether `key` has used up its events for now (without counting one)."""
        events = self.events[key]
        while events and events[0] < time.monotonic() - self.seconds:
            events.popleft()
        return len(events) >= self.count

    def allow(self, key: str) -> bool:
        """Count an event of `key`, unless it has used them up (then False)."""
        if self.full(key):
            return False
        self.events[key].append(time.monotonic())
        return True


class BodyTooLarge(Exception):
    pass


class LimitBodies:
    """ASGI middleware: refuse a request whose body is (or turns out, counted as it streams) over its cap."""

    def __init__(self, app: Any, upload_paths: tuple[str, ...]):
        self.app, self.upload_paths = app, upload_paths

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        cap = MAX_UPLOAD + (64 << 10) if scope["path"] in self.upload_paths else MAX_REQUEST
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > cap):
            return await _too_large(cap)(scope, receive, send)
        seen = 0

        async def counted() -> dict:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > cap:
                raise BodyTooLarge()
            return message

        try:
            await self.app(scope, counted, send)
        except BodyTooLarge:
            await _too_large(cap)(scope, receive, send)


def _too_large(cap: int) -> Response:
    return JSONResponse({"error": f"the request is over {cap:,} bytes"}, status_code=413)


class SecurityHeaders:
    """ASGI middleware adding the CSP and the other protective headers to every response."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        async def with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] += [
                    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
                    (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"), (b"cache-control", b"no-store")]
            await send(message)

        await self.app(scope, receive, with_headers)


class League:
    """The running league: its database, check processes, play process and cached live board."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.accounts = Accounts(settings.accounts_path)
        self.logins = RateLimit(settings.logins_per_minute, 60)
        self.submissions = RateLimit(settings.submissions_per_hour, 3600)
        #: forms issued to visitors without a session (each is a row until it expires): bounded per address
        self.visitor_forms = RateLimit(VISITOR_FORMS_PER_MINUTE, 60)
        self.checks: ProcessPoolExecutor | None = None
        self.check_breaks: Counter[int] = Counter()  # check processes lost per submission
        self.board_worker: ProcessPoolExecutor | None = None
        self.player: Any = None
        self.board: tuple[float, dict[str, Any]] | None = None
        self.board_lock = asyncio.Lock()
        self.tasks: set[asyncio.Task] = set()

    # -- life cycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        self.checks = self.check_pool()
        self.board_worker = self.board_pool()
        for submission in self.accounts.unchecked():  # accepted before a crash: checked now
            self.queue_check(submission.id, submission.folder, self.accounts.participant(submission.participant))
        if self.settings.play:
            self.start_player()
            self.tasks.add(asyncio.create_task(self.watch_player()))

    def start_player(self) -> None:
        """Start the play process (not a daemon: it starts worker processes of its own)."""
        self.player = league_play.process_context().Process(target=league_play.play_process, name="cardarena-play", args=(
            self.settings.league_file, self.settings.accounts_path, self.settings.jobs,
            self.settings.round_games, self.settings.scheduler))
        self.player.start()

    async def watch_player(self) -> None:
        """Start the play process again when it ends (a failure is on its stderr, the server's)."""
        while True:
            await asyncio.sleep(PLAYER_RESTART_SECONDS)
            if not self.player.is_alive():
                print(f"warning: the play process ended (exit status {self.player.exitcode}); starting it again",
                      file=sys.stderr)
                self.start_player()

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        if self.player is not None:
            self.player.terminate()
            await asyncio.to_thread(self.player.join, 15)
            if self.player.is_alive():
                self.player.kill()
        for pool in (self.checks, self.board_worker):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        self.accounts.close()

    # -- submissions ----------------------------------------------------------------------------

    async def accept(self, who: Participant, archive: Path) -> tuple[int, dict[str, Any]]:
        """Unpack and record an upload, then queue its check: (HTTP status, JSON body). The
        submission is committed before the answer says it was accepted."""
        if not self.submissions.allow(f"participant:{who.id}"):
            return 429, {"error": f"at most {self.settings.submissions_per_hour} submissions an hour; try later"}
        archive_digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        for earlier in self.accounts.submissions(who.id):
            if earlier.digest == archive_digest and earlier.status in (CHECKING, PASSED):
                return 409, {"error": f"this archive is submission {earlier.id} again ({earlier.status}); "
                                      "change the bot to submit a new version"}
        folder = self.settings.bots_folder / who.name / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            files = await asyncio.to_thread(unpack, archive, folder, self.settings.caps)
        except UploadRefused as error:
            return 400, {"error": f"upload refused: {error}"}
        if "bot.toml" not in files:
            shutil.rmtree(folder, ignore_errors=True)
            return 400, {"error": "upload refused: no bot.toml at the top of the archive (pack the bot's folder "
                                  "itself: cardarena submit does)"}
        ident = self.accounts.add_submission(who, archive_digest, str(folder))
        self.queue_check(ident, str(folder), who)
        return 202, {"id": ident, "status": CHECKING, "url": f"/api/submissions/{ident}"}

    def board_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(1, mp_context=league_play.process_context(), initializer=league_play.die_with_parent)

    def check_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.settings.check_workers, mp_context=league_play.process_context(),
                                   initializer=league_play.background)

    def queue_check(self, ident: int, folder: str, who: Participant | None) -> None:
        """Check a submission in a check process; its report is stored when it ends. A check process
        that died (killed from outside: the check itself runs its bots in supervised workers) breaks
        the pool: a new one is made and the submission checked again, not failed."""
        name = f"{who.name if who else 'bot'}-s{ident}"
        try:
            future = asyncio.wrap_future(self.checks.submit(
                league_play.check_upload, self.settings.league_file, folder, name, self.settings.check_games))
        except BrokenProcessPool:
            self.checks = self.check_pool()
            return self.queue_check(ident, folder, who)

        def done(task: asyncio.Future) -> None:
            if task.cancelled():
                return
            error = task.exception()
            if isinstance(error, BrokenProcessPool):
                self.check_breaks[ident] += 1
                if self.check_breaks[ident] < CHECK_BREAKS:
                    return self.queue_check(ident, folder, who)
                error = RuntimeError(f"the check process was killed {CHECK_BREAKS} times while checking this bot")
            result = task.result() if error is None else {
                "passed": False, "report": None, "text": [f"FAIL: the check itself failed: {type(error).__name__}: "
                                                          f"{error}"]}
            self.accounts.finish_check(ident, result, bool(result["passed"]))

        future.add_done_callback(done)

    # -- the live board -------------------------------------------------------------------------

    async def live_board(self) -> dict[str, Any]:
        """The boards of the current versions and the latest games, as plain data (recomputed at most
        every BOARD_SECONDS: a hundred requests a second cost one computation)."""
        async with self.board_lock:
            if self.board is None or time.monotonic() - self.board[0] > BOARD_SECONDS:
                current = {version.bot for version in self.accounts.versions(current_only=True)}
                if self.settings.results.exists():
                    try:
                        data = await asyncio.wrap_future(self.board_worker.submit(
                            league_play.board_snapshot, self.settings.results, current))
                    except BrokenProcessPool:  # its process was killed: the next request starts a new one
                        self.board_worker = self.board_pool()
                        raise
                else:  # no game yet: nothing to compute
                    data = league_play.board_snapshot(self.settings.results, current)
                data["paused"] = self.accounts.flag("paused")
                self.board = (time.monotonic(), data)
            return self.board[1]


# -- authentication -------------------------------------------------------------------------------

def bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def api_user(request: Request) -> Participant | Response:
    """The participant of a Bearer token, or the 401 (429 after too many bad tokens from one address)."""
    league: League = request.app.state.league
    token = bearer(request)
    who = None if token is None else league.accounts.authenticate(token)
    if who is not None:
        return who
    if token is not None and not league.logins.allow(_client(request)):
        return JSONResponse({"error": "too many wrong tokens; wait a minute"}, status_code=429)
    return JSONResponse({"error": "a valid token is needed (Authorization: Bearer TOKEN)"}, status_code=401,
                        headers={"WWW-Authenticate": "Bearer"})


def page_user(request: Request) -> Participant | None:
    league: League = request.app.state.league
    return league.accounts.session(request.cookies.get(SESSION_COOKIE))


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _form_field(request: Request) -> str:
    """A hidden one-time form token for the current session."""
    league: League = request.app.state.league
    nonce = league.accounts.issue_form(request.cookies.get(SESSION_COOKIE, ""))
    return f'<input type="hidden" name="form_token" value="{esc(nonce)}">'


async def _redeemed(request: Request, form: Any, key: str) -> bool:
    league: League = request.app.state.league
    return league.accounts.redeem_form(key, str(form.get("form_token", "")))


def _html(title: str, body: str, status: int = 200, headers: dict[str, str] | None = None) -> HTMLResponse:
    script = '<script src="/static/server.js"></script>'
    return HTMLResponse(page(title, f"<main>{body}</main>{script}", assets_beside="/static/",
                             csp=PAGE_POLICY), status_code=status, headers=headers)


def _refusal(status: int, text: str) -> HTMLResponse:
    return _html("cardarena league", f"<h1>{status}</h1><p>{esc(text)}</p><p><a href=\"/\">leaderboard</a></p>",
                 status)


def _nav(who: Participant | None) -> str:
    if who is None:
        return '<nav><ul><li><a href="/">leaderboard</a></li><li><a href="/login">log in</a></li></ul></nav>'
    return (f'<nav><ul><li><a href="/">leaderboard</a></li><li><a href="/me">{esc(who.name)}</a></li>'
            '<li><form method="post" action="/logout"><button>log out</button></form></li></ul></nav>')


# -- pages -----------------------------------------------------------------------------------------

async def leaderboard_page(request: Request) -> Response:
    league: League = request.app.state.league
    who = page_user(request)
    body = (f'{_nav(who)}<h1>{esc(league_play.read_server_league(league.settings.league_file).name)}: live '
            'leaderboard</h1><p class="small" id="board-status">loading…</p><div id="boards"></div>'
            '<h2>latest games</h2><div id="recent"></div>')
    return _html("cardarena league", body)


async def leaderboard_json(request: Request) -> Response:
    league: League = request.app.state.league
    return JSONResponse(await league.live_board())  # computed at most every BOARD_SECONDS, whoever asks


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC:
        return Response("not found", status_code=404)
    text = (resources.files(__package__).joinpath(name).read_text(encoding="utf-8") if name == "server.js"
            else asset(name))
    return Response(text, media_type=STATIC[name])


async def login_page(request: Request) -> Response:
    league: League = request.app.state.league
    if not league.visitor_forms.allow(_client(request)):
        return _refusal(429, "too many log-in pages opened from this address; wait a minute")
    pre = request.cookies.get(PRE_COOKIE) or secrets.token_urlsafe(24)
    nonce = league.accounts.issue_form(pre)
    signup = '<p><a href="/signup">sign up</a></p>' if league.settings.open_signup else ""
    body = (f'{_nav(None)}<h1>Log in</h1><form method="post" action="/login">'
            f'<input type="hidden" name="form_token" value="{esc(nonce)}">'
            '<label>token <input type="password" name="token" autocomplete="off" size="60"></label> '
            f'<button>log in</button></form>{signup}')
    response = _html("log in", body)
    _cookie(response, request, PRE_COOKIE, pre, 3600)
    return response


def _cookie(response: Response, request: Request, name: str, value: str, seconds: int) -> None:
    response.set_cookie(name, value, max_age=seconds, httponly=True, samesite="strict", path="/",
                        secure=request.url.scheme == "https")


async def login(request: Request) -> Response:
    league: League = request.app.state.league
    if league.logins.full(_client(request)):  # wrong tokens only count: a class behind one address logs in at once
        return _refusal(429, "too many wrong tokens from this address; wait a minute")
    form = await request.form()
    if not await _redeemed(request, form, request.cookies.get(PRE_COOKIE, "")):
        return _refusal(403, "this form has expired or was already sent; open the log-in page again")
    who = league.accounts.authenticate(str(form.get("token", "")).strip())
    if who is None:
        league.logins.allow(_client(request))
        return _refusal(401, "wrong token")
    response = RedirectResponse("/me", status_code=303)
    _cookie(response, request, SESSION_COOKIE, league.accounts.open_session(who), 12 * 3600)
    response.delete_cookie(PRE_COOKIE, path="/")
    return response


async def logout(request: Request) -> Response:
    league: League = request.app.state.league
    key = request.cookies.get(SESSION_COOKIE)
    if key:
        league.accounts.close_session(key)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


async def signup_page(request: Request) -> Response:
    league: League = request.app.state.league
    if not league.settings.open_signup:
        return _refusal(403, "sign-up is closed: ask the organiser for a token")
    if not league.visitor_forms.allow(_client(request)):
        return _refusal(429, "too many sign-up pages opened from this address; wait a minute")
    pre = request.cookies.get(PRE_COOKIE) or secrets.token_urlsafe(24)
    body = (f'{_nav(None)}<h1>Sign up</h1><form method="post" action="/signup">'
            f'<input type="hidden" name="form_token" value="{esc(league.accounts.issue_form(pre))}">'
            '<label>name <input name="name" maxlength="40" pattern="[A-Za-z0-9][A-Za-z0-9_.\\-]*"></label> '
            '<button>sign up</button></form>')
    response = _html("sign up", body)
    _cookie(response, request, PRE_COOKIE, pre, 3600)
    return response


async def signup(request: Request) -> Response:
    league: League = request.app.state.league
    if not league.settings.open_signup:
        return _refusal(403, "sign-up is closed: ask the organiser for a token")
    if not league.logins.allow(_client(request)):
        return _refusal(429, "too many attempts from this address; wait a minute")
    form = await request.form()
    if not await _redeemed(request, form, request.cookies.get(PRE_COOKIE, "")):
        return _refusal(403, "this form has expired or was already sent; open the sign-up page again")
    try:
        token = league.accounts.add_participant(check_participant_name(str(form.get("name", ""))))
    except AccountError as error:
        return _refusal(400, str(error))
    return _html("signed up", f'{_nav(None)}<h1>Your token</h1><p>Keep it: it is shown this once.</p>'
                              f'<p><code class="command">{esc(token)}</code></p><p><a href="/login">log in</a></p>')


async def me_page(request: Request) -> Response:
    league: League = request.app.state.league
    who = page_user(request)
    if who is None:
        return RedirectResponse("/login", status_code=303)
    mine = league.accounts.submissions(None if who.is_organiser else who.id)
    names = {p.id: p.name for p in league.accounts.participants()}
    rows = "".join(f'<tr><td><a href="/submissions/{s.id}">{s.id}</a></td><td>{esc(names.get(s.participant, "?"))}</td>'
                   f'<td>{esc(time.strftime("%Y-%m-%d %H:%M", time.localtime(s.created)))}</td>'
                   f'<td>{esc(s.status)}</td><td>{esc(s.passed_as or "")}</td></tr>' for s in mine)
    versions = [v for v in league.accounts.versions() if who.is_organiser or v.participant == who.id]
    version_rows = "".join(f'<tr><td><a href="/bots/{quote(v.bot)}">{esc(v.bot)}</a></td><td>{_state(v)}</td>'
                           f'<td><a href="/submissions/{v.submission}">report</a></td></tr>' for v in versions)
    organiser = ""
    if who.is_organiser:
        paused = league.accounts.flag("paused")
        organiser = (f'<h2>organiser</h2><form method="post" action="/organiser/pause">{_form_field(request)}'
                     f'<button>{"resume play" if paused else "pause play"}</button></form>')
    body = (f'{_nav(who)}<h1>{esc(who.name)}</h1>'
            f'<h2>submit a bot</h2><form method="post" action="/upload" enctype="multipart/form-data">'
            f'{_form_field(request)}<input type="file" name="archive" accept=".zip,.tar.gz,.tgz"> '
            '<button>upload</button></form><p class="small">A .zip or .tar.gz of the bot\'s folder (bot.toml at its '
            'top), or from a terminal: <code>cardarena submit URL BOTDIR --token TOKEN</code></p>'
            f'<h2>versions</h2><table><tr><th>bot</th><th>state</th><th>check</th></tr>{version_rows}</table>'
            f'<h2>submissions</h2><table><tr><th>#</th><th>by</th><th>when</th><th>check</th><th>became</th></tr>'
            f'{rows}</table>{organiser}')
    return _html(who.name, body)


async def upload(request: Request) -> Response:
    league: League = request.app.state.league
    who = page_user(request)
    if who is None:
        return _refusal(401, "log in first")
    with tempfile.TemporaryDirectory(prefix="cardarena-upload-") as scratch:
        async with request.form(max_files=1, max_fields=4) as form:
            if not await _redeemed(request, form, request.cookies.get(SESSION_COOKIE, "")):
                return _refusal(403, "this form has expired or was already sent; open your page again")
            archive = form.get("archive")
            if archive is None or isinstance(archive, str):
                return _refusal(400, "choose a .zip or .tar.gz file to upload")
            path = Path(scratch) / "upload"
            with open(path, "wb") as out:
                while chunk := await archive.read(1 << 16):
                    out.write(chunk)
        status, answer = await league.accept(who, path)
    if status != 202:
        return _refusal(status, answer["error"])
    return RedirectResponse(f"/submissions/{answer['id']}", status_code=303)


async def submission_page(request: Request) -> Response:
    league: League = request.app.state.league
    who = page_user(request)
    if who is None:
        return _refusal(401, "log in to see check reports")
    submission = league.accounts.submission(request.path_params["ident"])
    if submission is None or not (who.is_organiser or submission.participant == who.id):
        return _refusal(403, "this is not your submission")
    text = "checking… (this page reloads itself)" if submission.report is None else league_play.report_text(submission.report)
    became = f"<p>passed: it plays as <b>{esc(submission.passed_as)}</b></p>" if submission.passed_as else ""
    body = (f'{_nav(who)}<h1>submission {submission.id}: {esc(submission.status)}</h1>{became}'
            f'<pre id="check-report" data-status="{esc(submission.status)}">{esc(text, limit=200_000)}</pre>')
    return _html(f"submission {submission.id}", body)


def _may_see_private(who: Participant | None, owner: int | None) -> bool:
    """Whether `who` may see a bot's faults' evidence and its stderr: its owner and the organiser only."""
    return who is not None and owner is not None and (who.is_organiser or who.id == owner)


async def bot_page(request: Request) -> Response:
    """A bot version's page: its participant's versions and its latest games for everyone; its faults
    (with their evidence and reproduce lines) and its stderr log for its owner and the organiser."""
    league: League = request.app.state.league
    bot = request.path_params["bot"]
    owner = league.accounts.owner_of(bot)
    if owner is None:
        return _refusal(404, "no such bot")
    who = page_user(request)
    versions = [v for v in league.accounts.versions() if v.participant == owner]
    version_rows = "".join(f'<tr><td><a href="/bots/{quote(v.bot)}">{esc(v.bot)}</a></td><td>{_state(v)}</td>'
                           f'<td>{esc(time.strftime("%Y-%m-%d %H:%M", time.localtime(v.created)))}</td></tr>'
                           for v in versions)
    games = await asyncio.to_thread(league_play.recent_games, league.settings.results, {bot}, 50)
    game_rows = "".join(f'<tr><td><a href="/games/{quote(g["game_id"])}">{esc(g["game_id"])}</a></td>'
                        f'<td>{esc(", ".join(g["seats"]))}</td><td>{esc(", ".join(map(str, g["ranks"])))}</td>'
                        f'<td class="num">{g["faults"]}</td></tr>' for g in games)
    private = ""
    if _may_see_private(who, owner):
        faults = await asyncio.to_thread(league_play.bot_faults, league.settings.results, bot)
        private = (f'<h2>faults</h2><pre>{esc(chr(10).join(faults) or "none", limit=200_000)}</pre>'
                   f'<p><a href="/bots/{quote(bot)}/log">its stderr log</a> (you and the organiser only)</p>')
        if who.is_organiser and any(v.bot == bot and not v.retired for v in versions):
            private += (f'<form method="post" action="/organiser/retire">{_form_field(request)}'
                        f'<input type="hidden" name="bot" value="{esc(bot)}"><button>retire {esc(bot)}</button></form>')
    body = (f'{_nav(who)}<h1>{esc(bot)}</h1><h2>versions</h2><table><tr><th>bot</th><th>state</th><th>entered</th>'
            f'</tr>{version_rows}</table><h2>latest games</h2><table class="games"><tr><th>game (replay)</th>'
            f'<th>seats</th><th>ranks</th><th>faults</th></tr>{game_rows}</table>{private}')
    return _html(bot, body)


def _state(version: Any) -> str:
    return "retired" if version.retired else "live" if version.current else "replaced"


async def bot_log(request: Request) -> Response:
    league: League = request.app.state.league
    bot = request.path_params["bot"]
    who = page_user(request)
    if who is None:
        return _refusal(401, "log in to see your bots' logs")
    if not _may_see_private(who, league.accounts.owner_of(bot)):
        return _refusal(403, "this is not your bot")
    text = await asyncio.to_thread(league_play.bot_log, league.settings.logs, bot)
    return PlainTextResponse(text or "(nothing on stderr yet)")


async def organiser_form(request: Request, what: str) -> tuple[Participant, Any] | Response:
    """The organiser and the form of an organiser's POST, or the refusal: 401 without a session, 403 for
    a form not issued to it (or sent before) or for anyone but the organiser."""
    who = page_user(request)
    if who is None:
        return _refusal(401, "log in first")
    form = await request.form()
    if not await _redeemed(request, form, request.cookies.get(SESSION_COOKIE, "")):
        return _refusal(403, "this form has expired or was already sent; open the page again")
    if not who.is_organiser:
        return _refusal(403, f"only the organiser can {what}")
    return who, form


async def retire(request: Request) -> Response:
    league: League = request.app.state.league
    allowed = await organiser_form(request, "retire a bot")
    if isinstance(allowed, Response):
        return allowed
    bot = str(allowed[1].get("bot", ""))
    if not league.accounts.retire(bot):
        return _refusal(404, "no such bot")
    return RedirectResponse(f"/bots/{quote(bot)}", status_code=303)


async def replay(request: Request) -> Response:
    league: League = request.app.state.league
    text = await asyncio.to_thread(league_play.replay_html, league.settings.results, request.path_params["game_id"],
                                   "/static/")
    return HTMLResponse(text) if text is not None else _refusal(404, "no such game")


async def pause(request: Request) -> Response:
    league: League = request.app.state.league
    allowed = await organiser_form(request, "pause play")
    if isinstance(allowed, Response):
        return allowed
    league.accounts.set_flag("paused", not league.accounts.flag("paused"))
    return RedirectResponse("/me", status_code=303)


# -- the API ---------------------------------------------------------------------------------------

async def api_submit(request: Request) -> Response:
    league: League = request.app.state.league
    who = api_user(request)
    if isinstance(who, Response):
        return who
    with tempfile.TemporaryDirectory(prefix="cardarena-upload-") as scratch:
        path = Path(scratch) / "upload"
        with open(path, "wb") as out:
            async for chunk in request.stream():
                out.write(chunk)
        status, answer = await league.accept(who, path)
    return JSONResponse(answer, status_code=status)


async def api_submission(request: Request) -> Response:
    league: League = request.app.state.league
    who = api_user(request)
    if isinstance(who, Response):
        return who
    submission = league.accounts.submission(request.path_params["ident"])
    if submission is None or not (who.is_organiser or submission.participant == who.id):
        return JSONResponse({"error": "not your submission"}, status_code=403)
    return JSONResponse({"id": submission.id, "status": submission.status, "bot": submission.passed_as,
                         "passed": submission.status == PASSED if submission.status != CHECKING else None,
                         "report": None if submission.report is None else league_play.report_text(submission.report)})


def create_app(settings: Settings) -> Starlette:
    """The server's ASGI application (the play and check processes start with it)."""
    routes = [
        Route("/", leaderboard_page), Route("/api/leaderboard", leaderboard_json),
        Route("/static/{name}", static), Route("/login", login_page), Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]), Route("/signup", signup_page),
        Route("/signup", signup, methods=["POST"]), Route("/me", me_page), Route("/upload", upload, methods=["POST"]),
        Route("/submissions/{ident:int}", submission_page), Route("/games/{game_id:path}", replay),
        Route("/organiser/pause", pause, methods=["POST"]), Route("/organiser/retire", retire, methods=["POST"]),
        Route("/bots/{bot}", bot_page), Route("/bots/{bot}/log", bot_log),
        Route("/api/submissions", api_submit, methods=["POST"]),
        Route("/api/submissions/{ident:int}", api_submission),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        league = League(settings)
        app.state.league = league
        await league.start()
        try:
            yield
        finally:
            await league.stop()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(LimitBodies, upload_paths=("/upload", "/api/submissions"))
    app.add_middleware(SecurityHeaders)
    return app

