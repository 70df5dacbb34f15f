"""The league server at run time, apart from its pages: its settings, the running league (the
database, the check processes, the play process, the cached live board) and the ASGI guards every
request passes (body caps, security headers). app.py serves the pages and the API over it.
"""

from __future__ import annotations

import asyncio
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
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Coroutine

from starlette.responses import JSONResponse, Response

from cardarena.referee.faults import printable
from cardarena.referee.sandbox import sweep_folders
from cardarena.referee.system import process_tag
from cardarena.server import league_play
from cardarena.server.accounts import CHECKING, PASSED, Accounts, Participant
from cardarena.server.unpack import Caps, UploadRefused, unpack

#: scripts, styles and API calls from this server only; nothing inline, no plug-ins, no framing
PAGE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src 'self'; "
               "form-action 'self'; base-uri 'none'")
#: ... and, in the header (a page's <meta> cannot say it), no framing by other sites
CONTENT_SECURITY_POLICY = PAGE_POLICY + "; frame-ancestors 'none'"
MAX_REQUEST = 64 << 10  # bytes of any request body but an upload
MAX_UPLOAD = 16 << 20  # bytes of an uploaded archive (its unpacked size: unpack.Caps)
BOARD_SECONDS = 2.0  # the live board is recomputed at most this often
HISTORY_SECONDS = 10.0  # and the rating histories of the bot pages (one pass over every game) this often
UPLOAD_PREFIX = "cardarena-upload-"  # an upload's scratch folder: <prefix><server's process tag>-... (a sweep removes a dead server's)
VISITOR_FORMS_PER_MINUTE = 120  # log-in and sign-up pages one address may open a minute (a class behind one NAT)
PLAYER_RESTART_SECONDS = 5.0  # how soon a play process that ended is started again
CHECK_BREAKS = 3  # check processes lost while checking one submission before it fails (a bot that kills them)


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


class Cached:
    """A value recomputed at most every `seconds`, in the background: only the first request waits for
    it. Later ones get the last value at once while a single recomputation runs, however long it
    takes (a large board on a loaded machine takes seconds), so that requests never queue behind it.
    A failed recomputation is a line on stderr, and the last value is served until the next one."""

    def __init__(self, seconds: float, compute: Callable[[], Awaitable[Any]], what: str):
        self.seconds, self.compute, self.what = seconds, compute, what
        self.value: tuple[float, Any] | None = None
        self.lock = asyncio.Lock()
        self.refreshing: asyncio.Task | None = None

    async def get(self) -> Any:
        if self.value is None:
            async with self.lock:
                if self.value is None:
                    self.value = (time.monotonic(), await self.compute())
        elif time.monotonic() - self.value[0] > self.seconds and self.refreshing is None:
            self.refreshing = asyncio.create_task(self.refresh())
        return self.value[1]

    async def refresh(self) -> None:
        try:
            self.value = (time.monotonic(), await self.compute())
        except Exception as error:  # the server goes on with the last value; the next request tries again
            print(printable(f"warning: {self.what} not recomputed: {type(error).__name__}: {error}"), file=sys.stderr)
        finally:
            self.refreshing = None


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


class BoardFirst:
    """ASGI middleware answering GET `path` (the live board's JSON) itself, ahead of Starlette's routing:
    the last encoded board (`League.live_board`) as it is, with headers made once per board. A hundred
    requests a second must cost the server little: Starlette's exception handling, routing, Request and
    Response took about 25 us of CPU a request, this takes about 8 (runner/server/README.md § The load
    test). It sits inside SecurityHeaders and LimitBodies, which guard it as every other answer, and
    never touches the database."""

    def __init__(self, app: Any, path: str):
        self.app, self.path = app, path
        self.encoded: tuple[bytes, list[tuple[bytes, bytes]]] = (b"", [])

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] != self.path:
            return await self.app(scope, receive, send)
        body = await scope["app"].state.league.live_board()
        if self.encoded[0] is not body:
            self.encoded = (body, [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())])
        await send({"type": "http.response.start", "status": 200, "headers": list(self.encoded[1])})
        await send({"type": "http.response.body", "body": body})


class League:
    """The running league: its database, check processes, play process and cached live board."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.server = league_play.read_server_league(settings.league_file)
        self.house = frozenset(entrant.name for entrant in self.server.house)  # the league file's bots
        self.accounts = Accounts(settings.accounts_path)
        self.logins = RateLimit(settings.logins_per_minute, 60)
        self.submissions = RateLimit(settings.submissions_per_hour, 3600)
        #: forms issued to visitors without a session (each is a row until it expires): bounded per address
        self.visitor_forms = RateLimit(VISITOR_FORMS_PER_MINUTE, 60)
        self.checks: ProcessPoolExecutor | None = None
        self.check_breaks: Counter[int] = Counter()  # check processes lost per submission
        self.board_worker: ProcessPoolExecutor | None = None
        self.player: Any = None
        self.board = Cached(BOARD_SECONDS, self.compute_board, "the live board")
        self.history = Cached(HISTORY_SECONDS, self.compute_history, "the rating histories")
        self.tasks: set[asyncio.Task] = set()

    # -- life cycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        await asyncio.to_thread(sweep_folders, UPLOAD_PREFIX)  # a server killed mid-upload left its scratch
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
        for task in [*self.tasks, self.board.refreshing, self.history.refreshing]:
            if task is not None:
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

    async def accept(self, who: Participant, chunks: AsyncIterator[bytes]) -> tuple[int, dict[str, Any]]:
        """Receive an upload (its body's `chunks`), unpack and record it, then queue its check: (HTTP
        status, JSON body). The submission is committed before the answer says it was accepted. The
        files, the unpacking and the database are handled in threads: the event loop never waits on a
        disk or on the database's lock, which a check's commit may hold, so requests go on meanwhile."""
        if not self.submissions.allow(f"participant:{who.id}"):
            return 429, {"error": f"at most {self.settings.submissions_per_hour} submissions an hour; try later"}
        scratch = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix=f"{UPLOAD_PREFIX}{process_tag()}-"))
        try:
            archive = scratch / "upload"
            out = await asyncio.to_thread(open, archive, "wb")
            with out:
                async for chunk in chunks:
                    await asyncio.to_thread(out.write, chunk)
            status, answer, folder = await asyncio.to_thread(self.record_upload, who, archive)
        finally:
            await asyncio.to_thread(shutil.rmtree, scratch, True)
        if status == 202:
            self.queue_check(answer["id"], folder, who)
        return status, answer

    def record_upload(self, who: Participant, archive: Path) -> tuple[int, dict[str, Any], str]:
        """Unpack and record a received upload (in a thread): (HTTP status, JSON body, its folder)."""
        archive_digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        for earlier in self.accounts.submissions(who.id):
            if earlier.digest == archive_digest and earlier.status in (CHECKING, PASSED):
                return 409, {"error": f"this archive is submission {earlier.id} again ({earlier.status}); "
                                      "change the bot to submit a new version"}, ""
        folder = self.settings.bots_folder / who.name / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            files = unpack(archive, folder, self.settings.caps)
        except UploadRefused as error:
            return 400, {"error": f"upload refused: {error}"}, ""
        if "bot.toml" not in files:
            shutil.rmtree(folder, ignore_errors=True)
            return 400, {"error": "upload refused: no bot.toml at the top of the archive (pack the bot's folder "
                                  "itself: cardarena submit does)"}, ""
        ident = self.accounts.add_submission(who, archive_digest, str(folder))
        return 202, {"id": ident, "status": CHECKING, "url": f"/api/submissions/{ident}"}, str(folder)

    def board_pool(self) -> ProcessPoolExecutor:
        """The board process, in the background as play is: requests are answered with the last board
        meanwhile, so a busy board process must not take the CPU from them."""
        return ProcessPoolExecutor(1, mp_context=league_play.process_context(), initializer=league_play.background,
                                   initargs=("board",))

    def check_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.settings.check_workers, mp_context=league_play.process_context(),
                                   initializer=league_play.background, initargs=("check",))

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
            # committed in a thread: the event loop does not wait on the disk or the database's lock
            self.in_background(asyncio.to_thread(self.accounts.finish_check, ident, result, bool(result["passed"])),
                               f"the check report of submission {ident}")

        future.add_done_callback(done)

    def in_background(self, work: Coroutine, what: str) -> None:
        """Run `work` as a task of the server's (stopped with it); its failure is a line on stderr."""
        task = asyncio.create_task(work)
        self.tasks.add(task)

        def finished(task: asyncio.Task) -> None:
            self.tasks.discard(task)
            if not task.cancelled() and task.exception() is not None:
                error = task.exception()
                print(printable(f"warning: {what} not stored: {type(error).__name__}: {error}"), file=sys.stderr)

        task.add_done_callback(finished)

    # -- the live board -------------------------------------------------------------------------

    async def live_board(self) -> bytes:
        """The live board (`compute_board`) as JSON, recomputed at most every BOARD_SECONDS: a hundred
        requests a second cost one computation and one encoding, and none of them waits for it once
        there is a board."""
        return await self.board.get()

    async def compute_board(self) -> bytes:
        """The boards of the house bots and current versions and the latest games, as JSON (the database
        is read in a thread, the games in the board process: the event loop waits on neither)."""
        current, paused = await asyncio.to_thread(self.board_inputs)
        if self.settings.results.exists():
            data = await self.in_board_process(league_play.board_snapshot, self.settings.results, current)
        else:  # no game yet: nothing to compute
            data = league_play.board_snapshot(self.settings.results, current)
        data["paused"] = paused
        return JSONResponse(data).body

    def board_inputs(self) -> tuple[set[str], bool]:
        """The bots on the live board (the house bots and current versions), and whether play is paused."""
        return ({version.bot for version in self.accounts.versions(current_only=True)} | self.house,
                self.accounts.flag("paused"))

    async def rating_history(self) -> list[dict[str, Any]]:
        """Every board's rating history, round by round (recomputed at most every HISTORY_SECONDS)."""
        return await self.history.get()

    async def compute_history(self) -> list[dict[str, Any]]:
        return await self.in_board_process(league_play.rating_histories, self.settings.results)

    async def in_board_process(self, function: Callable, *arguments: Any) -> Any:
        """`function(*arguments)` in the board process: reading every game holds the interpreter for a
        while, which the web server must not wait on. A killed board process is replaced for the next call."""
        try:
            return await asyncio.wrap_future(self.board_worker.submit(function, *arguments))
        except BrokenProcessPool:
            self.board_worker = self.board_pool()
            raise
