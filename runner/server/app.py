"""The league server's web application (Starlette): pages, the JSON API, and what guards them
(the running league and the ASGI guards are in runtime.py).

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
import secrets
import time
from importlib import resources
from typing import Any, AsyncIterator
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from cardarena.html import asset, esc, page
from cardarena.html.plot import rating_plot
from cardarena.server import league_play
from cardarena.server.accounts import CHECKING, PASSED, AccountError, Participant, check_participant_name
from cardarena.server.runtime import PAGE_POLICY, BoardFirst, League, LimitBodies, SecurityHeaders, Settings

SESSION_COOKIE, PRE_COOKIE = "ca_session", "ca_pre"
STATIC = {"style.css": "text/css", "cardarena.js": "text/javascript", "server.js": "text/javascript"}


# -- authentication -------------------------------------------------------------------------------

def bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def api_user(request: Request) -> Participant | Response:
    """The participant of a Bearer token, or the 401 (429 after too many bad tokens from one address).
    The database is read in a thread: a commit holding it must not hold up the event loop."""
    league: League = request.app.state.league
    token = bearer(request)
    who = None if token is None else await asyncio.to_thread(league.accounts.authenticate, token)
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
    body = (f'{_nav(who)}<h1>{esc(league.server.name)}: live '
            'leaderboard</h1><p class="small" id="board-status">loading…</p><div id="boards"></div>'
            '<h2>latest games</h2><div id="recent"></div>')
    return _html("cardarena league", body)


async def leaderboard_json(request: Request) -> Response:
    league: League = request.app.state.league
    # computed and encoded at most every BOARD_SECONDS, whoever asks: a request only sends the bytes
    return Response(await league.live_board(), media_type="application/json")


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
        token = league.accounts.add_participant(check_participant_name(str(form.get("name", ""))), house=league.house)
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
    async with request.form(max_files=1, max_fields=4) as form:
        if not await _redeemed(request, form, request.cookies.get(SESSION_COOKIE, "")):
            return _refusal(403, "this form has expired or was already sent; open your page again")
        archive = form.get("archive")
        if archive is None or isinstance(archive, str):
            return _refusal(400, "choose a .zip or .tar.gz file to upload")
        status, answer = await league.accept(who, _chunks(archive))
    if status != 202:
        return _refusal(status, answer["error"])
    return RedirectResponse(f"/submissions/{answer['id']}", status_code=303)


async def _chunks(archive: UploadFile) -> AsyncIterator[bytes]:
    while chunk := await archive.read(1 << 16):
        yield chunk


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
    """Whether `who` may see a bot's faults' evidence and its stderr: its owner and the organiser only
    (a house bot, of no participant, is the organiser's)."""
    return who is not None and (who.is_organiser or (owner is not None and who.id == owner))


async def bot_page(request: Request) -> Response:
    """A bot's page: for everyone, its participant's versions, their ratings after each round (per game
    and overall) and its latest games; for its owner and the organiser, its faults (with their evidence
    and reproduce lines) and its stderr log. A house bot (the league file's) has the organiser as owner."""
    league: League = request.app.state.league
    bot = request.path_params["bot"]
    owner = league.accounts.owner_of(bot)
    if owner is None and bot not in league.house:
        return _refusal(404, "no such bot")
    who = page_user(request)
    versions = [v for v in league.accounts.versions() if v.participant == owner] if owner is not None else []
    version_rows = "".join(f'<tr><td><a href="/bots/{quote(v.bot)}">{esc(v.bot)}</a></td><td>{_state(v)}</td>'
                           f'<td>{esc(time.strftime("%Y-%m-%d %H:%M", time.localtime(v.created)))}</td></tr>'
                           for v in versions) or f'<tr><td>{esc(bot)}</td><td>house bot</td><td></td></tr>'
    games = await asyncio.to_thread(league_play.recent_games, league.settings.results, {bot}, 50)
    game_rows = "".join(f'<tr><td><a href="/games/{quote(g["game_id"])}">{esc(g["game_id"])}</a></td>'
                        f'<td>{esc(", ".join(g["seats"]))}</td><td>{esc(", ".join(map(str, g["ranks"])))}</td>'
                        f'<td class="num">{g["faults"]}</td></tr>' for g in games)
    history = _history(await league.rating_history(), [v.bot for v in versions] or [bot])
    private = ""
    if _may_see_private(who, owner):
        faults = await asyncio.to_thread(league_play.bot_faults, league.settings.results, bot)
        private = (f'<h2>faults</h2><pre>{esc(chr(10).join(faults) or "none", limit=200_000)}</pre>'
                   f'<p><a href="/bots/{quote(bot)}/log">its stderr log</a> (you and the organiser only)</p>')
        if who.is_organiser and any(v.bot == bot and not v.retired for v in versions):
            private += (f'<form method="post" action="/organiser/retire">{_form_field(request)}'
                        f'<input type="hidden" name="bot" value="{esc(bot)}"><button>retire {esc(bot)}</button></form>')
    body = (f'{_nav(who)}<h1>{esc(bot)}</h1><h2>versions</h2><table><tr><th>bot</th><th>state</th><th>entered</th>'
            f'</tr>{version_rows}</table>{history}<h2>latest games</h2><table class="games"><tr><th>game (replay)'
            f'</th><th>seats</th><th>ranks</th><th>faults</th></tr>{game_rows}</table>{private}')
    return _html(bot, body)


def _history(boards: list[dict[str, Any]], bots: list[str]) -> str:
    """The ratings of `bots` (a participant's versions, oldest first) after each round, per board: a plot
    (each version's first round marked) and its numbers in a table."""
    sections = []
    for board in boards:
        order = [bot for bot in bots if bot in board["series"]]
        if not order:
            continue
        points = {bot: [(games, elo) for games, _, elo in board["series"][bot]] for bot in order}
        marks = [(points[bot][0][0], bot.rsplit("-", 1)[-1]) for bot in order] if len(order) > 1 else []
        rows = "".join(f'<tr><td class="num">{number}</td><td class="num">{games}</td><td>{esc(bot)}</td>'
                       f'<td class="num">{elo:.1f}</td></tr>' for bot in order for games, number, elo in board["series"][bot])
        sections.append(f'<h3>{esc(board["title"])}</h3>'
                        f'{rating_plot(points, order, board["games"], board["title"] + ": Elo after each round", marks)}'
                        '<details><summary>the numbers</summary><table class="history"><tr><th>after round</th>'
                        f'<th>games</th><th>bot</th><th>Elo</th></tr>{rows}</table></details>')
    if not sections:
        return '<h2>rating over time</h2><p class="small">no rated games yet</p>'
    return ('<h2>rating over time</h2><p class="small">Elo on each board after each round of play, fitted on '
            'every game until then as the leaderboard fits them; the x axis counts the board\'s games.</p>'
            + "".join(sections))


def _state(version: Any) -> str:
    return "retired" if version.retired else "live" if version.current else "replaced"


async def bot_log(request: Request) -> Response:
    league: League = request.app.state.league
    bot = request.path_params["bot"]
    who = page_user(request)
    if who is None:
        return _refusal(401, "log in to see your bots' logs")
    owner = league.accounts.owner_of(bot)
    if not _may_see_private(who, owner):
        return _refusal(403, "this is not your bot")
    if owner is None and bot not in league.house:
        return _refusal(404, "no such bot")
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
    who = await api_user(request)
    if isinstance(who, Response):
        return who
    status, answer = await league.accept(who, request.stream())
    return JSONResponse(answer, status_code=status)


async def api_submission(request: Request) -> Response:
    league: League = request.app.state.league
    who = await api_user(request)
    if isinstance(who, Response):
        return who
    submission = await asyncio.to_thread(league.accounts.submission, request.path_params["ident"])
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
    app.add_middleware(BoardFirst, path="/api/leaderboard")  # GET; the route answers HEAD
    app.add_middleware(LimitBodies, upload_paths=("/upload", "/api/submissions"))
    app.add_middleware(SecurityHeaders)
    return app

