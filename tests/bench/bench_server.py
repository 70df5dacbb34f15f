"""League server load benchmark (issue 23, Done when): leaderboard requests and waves of concurrent uploads
on loopback while games are played, against `cardarena run` alone in the same run.

1. Baseline: `cardarena run` plays the sample random and heuristic bots at casino, with the same
   --jobs, for the same number of seconds (`--deals` rounds until then), and its games per second
   are counted.
2. A `cardarena serve` of the same league with UPLOADERS + 2 participants: two of them submit the
   random and heuristic bots (and wait for them to pass), and games start.
3. Load, for SECONDS: RATE requests a second to /api/leaderboard (open loop: each is due at its
   time, whatever the answers to the earlier ones), and every WAVE seconds a wave of UPLOADERS
   concurrent uploads (one per participant, a copy of the random bot each time changed, so that
   none is refused as a resubmission). Each upload is checked and joins the league.

It prints p50/p99/max latency of the leaderboard requests (from when each was due) and of the
uploads, how many failed or were still unsent a minute after the end, where the CPU went meanwhile
(the web server, play, checks and the board process, each with the processes it started; the bench's
own client; the rest of the machine; idle), and games per second during the load against the
baseline. UPLOADERS 0 gives the board requests alone. Run:
    python -m tests.bench.bench_server [SECONDS] [RATE] [UPLOADERS] [WAVE] [CHECK_WORKERS]   (default 60 100 20 15 2)
(CHECK_WORKERS: the server's --check-workers; 2 as the tests start it, where the server's own default is 1)

`python -m tests.bench.bench_server request [COUNT]` measures instead the web server's CPU for one
leaderboard request (COUNT of them, default 5,000, one after another on one connection to a server
playing no game).

`python -m tests.bench.bench_server ratings` times instead one rating update of the gauntlet (after a
round, whether a new version still needs it) in a league of 100 and of 2,000 games, 60 of them the new
version's: re-rating every game (read them and fit the board with 100 resamples, as the server did
before standings.RunningTally) against the running tally (a game added, the gauntlet asked), and the
ratio of the two league sizes for each.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import httpx

from cardarena.report import leaderboards
from cardarena.samples import SAMPLE_BOTS
from cardarena.server.commands import pack_bot
from cardarena.server.standings import RATING_RESAMPLES, RunningTally, cluster_of
from cardarena.tournament.store import ResultStore, StoreError
from cardarena.ratings import comparisons_from_ranks
from tests.random_results import write_random_results
from tests.server_support import CARDARENA, Server, cardarena, live_bots, wait_for

JOBS = 1  # play workers in the baseline run, as tests/server_support.py starts the server: the other core serves and checks
LEAGUE = 'name = "load"\ngames = ["casino"]\n'


def baseline(folder: Path, seconds: float) -> float:
    """Games per second of `cardarena run` alone: random against heuristic at casino, for about `seconds`."""
    (folder / "league.toml").write_text(LEAGUE + "deals = 20000\n")
    out = folder / "baseline.sqlite"
    process = subprocess.Popen(CARDARENA + ["run", "league.toml", "--bot", str(SAMPLE_BOTS / "random"), "--bot",
                                            str(SAMPLE_BOTS / "heuristic"), "--jobs", str(JOBS),
                                            "--out", str(out)], cwd=folder, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        first = wait_for("the baseline's first games", lambda: _count_once_made(out), 60)
        started = time.monotonic()
        time.sleep(seconds)
        return (_count(out) - first) / (time.monotonic() - started)
    finally:
        process.kill()
        process.wait()


def _count(results: Path) -> int:
    with ResultStore(results) as store:
        return len(store.finished_ids())


def _count_once_made(results: Path) -> int:
    """`_count`, or 0 while the run has not yet made the file or written its format (it is created empty first)."""
    try:
        return _count(results) if results.exists() else 0
    except StoreError:
        return 0


def changed_random_bot(packed: bytes, wave: int, who: int) -> bytes:
    """The random bot's archive (`packed`) with a seed of its own: a new upload each time."""
    archive = io.BytesIO(packed)
    out = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="r:gz") as source, tarfile.open(fileobj=out, mode="w:gz") as target:
        for member in source:
            data = source.extractfile(member).read()
            if member.name == "bot.toml":
                data = data.replace(b'"--seed", "1"', f'"--seed", "{wave * 1000 + who + 2}"'.encode())
                member.size = len(data)
            target.addfile(member, io.BytesIO(data))
    return out.getvalue()


BOARD_CONNECTIONS = 32  # keep-alive connections the board requests share (a browser opens 6 per site)
BOARD_REQUEST = b"GET /api/leaderboard HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n"
#: what each of the server's processes (by its name: league_play.background) does, for the CPU line
ROLES = {"web": "the web server (uploads, board requests)", "play": "play (its games and bots)",
         "check": "checks (their games and bots)", "board": "the board process", "other": "other server children"}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")  # /proc's CPU times are in these a second
DRAIN_SECONDS = 60.0  # after the load, how long requests already due may still be answered


async def ask_board(connection: list, port: int) -> None:
    """One GET /api/leaderboard on a keep-alive `connection` ([reader, writer], opened when empty), read to
    the end of its body; OSError (or ValueError for an answer that is not a 200) when it fails. A
    connection the server closed while it was idle (uvicorn does after 5 s) is opened again, as a
    browser does, not counted as a failure."""
    if connection:
        try:
            return await _ask_board(connection)
        except (OSError, asyncio.IncompleteReadError) as error:
            if isinstance(error, asyncio.IncompleteReadError) and error.partial:
                raise  # the server closed it in the middle of an answer
            connection[1].close()
            connection.clear()
    connection += await asyncio.open_connection("127.0.0.1", port)
    await _ask_board(connection)


async def _ask_board(connection: list) -> None:
    reader, writer = connection
    writer.write(BOARD_REQUEST)
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    fields = dict(line.lower().split(": ", 1) for line in head[1:] if ": " in line)
    await reader.readexactly(int(fields["content-length"]))
    if head[0].split(" ")[1] != "200":
        raise ValueError(head[0])


async def board_load(port: int, seconds: float, rate: int) -> tuple[list[float], int, int]:
    """`rate` leaderboard requests a second for `seconds`, open loop: request i is due at i/rate, and the
    next free one of BOARD_CONNECTIONS sends it. (Latencies from when each was due, waiting for a free
    connection included, so that a slow server is not hidden by the client waiting on it; failures;
    requests still unsent DRAIN_SECONDS after the end.) The bench's client must cost little beside the server: httpx's AsyncClient took about 5 ms of
    CPU a request, so that at 100 a second on 2 shared cores the client, not the server, fell behind."""
    due: asyncio.Queue[float] = asyncio.Queue()
    times: list[float] = []
    failed = 0

    async def sender() -> None:
        nonlocal failed
        connection: list = []
        while True:
            when = await due.get()
            try:
                await ask_board(connection, port)
                times.append(time.monotonic() - when)
            except (OSError, ValueError, KeyError, asyncio.IncompleteReadError):
                failed += 1
                if connection:
                    connection[1].close()
                connection.clear()
            finally:
                due.task_done()

    senders = [asyncio.create_task(sender()) for _ in range(BOARD_CONNECTIONS)]
    start, sent = time.monotonic(), 0
    while time.monotonic() < start + seconds:
        await asyncio.sleep(max(0.0, start + sent / rate - time.monotonic()))
        due.put_nowait(time.monotonic())
        sent += 1
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(due.join(), DRAIN_SECONDS)
    unsent = due.qsize()
    for task in senders:
        task.cancel()
    await asyncio.gather(*senders, return_exceptions=True)
    return times, failed, unsent


async def load(server: Server, tokens: list[str], seconds: float, rate: int, wave_every: float) -> dict:
    """Leaderboard requests at `rate` a second and upload waves for `seconds`: latencies and failures."""
    packed = pack_bot(SAMPLE_BOTS / "random")  # packed before the clock starts (it may run git)
    archives = [[changed_random_bot(packed, wave, who) for who in range(len(tokens))]
                for wave in range(int(seconds // wave_every) + 1)]
    upload_times: list[float] = []
    failures = {"upload": 0}
    async with httpx.AsyncClient(base_url=server.url, timeout=120,
                                 limits=httpx.Limits(max_connections=len(tokens))) as uploader:
        async def upload(token: str, archive: bytes) -> None:
            started = time.monotonic()
            try:
                answer = await uploader.post("/api/submissions", content=archive,
                                             headers={"Authorization": f"Bearer {token}"})
            except httpx.HTTPError as error:
                failures["upload"] += 1
                print(f"upload failed: {type(error).__name__} {error}", file=sys.stderr)
                return
            if answer.status_code == 202:
                upload_times.append(time.monotonic() - started)
            else:
                failures["upload"] += 1
                print(f"upload refused: {answer.status_code} {answer.text}", file=sys.stderr)

        async def waves() -> int:
            tasks, number, start = [], 0, time.monotonic()
            while number * wave_every < seconds:
                await asyncio.sleep(max(0.0, start + number * wave_every - time.monotonic()))
                tasks += [asyncio.create_task(upload(token, archives[number][who])) for who, token in enumerate(tokens)]
                number += 1
            await asyncio.gather(*tasks)
            return number

        port = int(server.url.rsplit(":", 1)[1])
        (board_times, failures["board"], failures["unsent"]), wave = await asyncio.gather(
            board_load(port, seconds, rate), waves())
    return {"board": board_times, "upload": upload_times, "failures": failures, "waves": wave}


def process_cpu(pid: int) -> float:
    """CPU seconds (user and system) a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def role_cpu(server_pid: int) -> dict[str, float]:
    """CPU seconds used so far by the server and each role of its background processes: a process named
    `cardarena-<role>` (league_play.background) counts with everything it started, ended ones included
    (a process's reaped children are in its cutime and cstime), and "web" is the server's own process."""
    ticks, parent_of = {}, {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile: its CPU is in its parent's cutime by the next look
        parent_of[int(entry)] = int(fields[1])
        ticks[int(entry)] = sum(int(field) for field in fields[11:15])  # utime, stime, cutime, cstime
    roles: dict[str, float] = {"web": process_cpu(server_pid)}
    for pid, used in ticks.items():
        top = pid
        while parent_of.get(top) not in (server_pid, None):
            top = parent_of[top]
        if parent_of.get(top) == server_pid:
            try:
                name = Path(f"/proc/{top}/comm").read_text().strip()
            except OSError:
                continue
            role = name.removeprefix("cardarena-") if name.startswith("cardarena-") else "other"
            roles[role] = roles.get(role, 0.0) + used / CLOCK_TICKS
    return roles


def machine_cpu() -> float:
    """CPU seconds this machine's cores have been busy (not idle, not waiting on a disk) since boot."""
    fields = [int(field) for field in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / CLOCK_TICKS


def describe(name: str, times: list[float]) -> str:
    if not times:
        return f"{name}: none answered"
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (f"{name}: {len(times)} answered; p50 {statistics.median(ordered) * 1000:.1f} ms, "
            f"p99 {p99 * 1000:.1f} ms, max {ordered[-1] * 1000:.1f} ms")


def league_games(folder: Path, total: int, young: int) -> list[Path]:
    """Results files of `total` random knock-rummy games: `young` of a new version against one of four
    established bots, the rest among those four."""
    field, newcomer = folder / f"field{total}.sqlite", folder / f"new{total}.sqlite"
    write_random_results(field, ["a", "b", "c", "d"], {"knock-rummy": total - young}, {"knock-rummy": 2})
    write_random_results(newcomer, ["new", "a"], {"knock-rummy": young}, {"knock-rummy": 2}, seed=1)
    return [field, newcomer]


def rating_update(files: list[Path], repeats: int = 5) -> tuple[float, float, float]:
    """Seconds of one gauntlet update (median of `repeats`): re-rating every game; the running tally (a
    game added, the gauntlet asked); and reading the running tally once, when the play process starts."""
    def reread() -> list:
        games = []
        for path in files:
            with ResultStore(path) as store:
                games += list(store.games())
        return games

    def whole() -> None:
        leaderboards(reread(), bootstrap=RATING_RESAMPLES)

    games = reread()
    started = time.perf_counter()
    running = RunningTally.of(games[:-1])
    start_up = time.perf_counter() - started
    last = games[-1]
    running.add(cluster_of(last.game, last.placement.cluster, last.seed), last.seats,
                comparisons_from_ranks(last.seats, last.ranks, last.teams))
    times = {}  # the running tally is asked of the new version: the field's bots are young too at 100 games
    for name, work in (("whole", whole), ("running", lambda: running.gauntlet(["new"]))):
        spent = []
        for _ in range(repeats):
            started = time.perf_counter()
            work()
            spent.append(time.perf_counter() - started)
        times[name] = statistics.median(spent)
    return times["whole"], times["running"], start_up


def ratings_main() -> None:
    with tempfile.TemporaryDirectory(prefix="cardarena-bench-ratings-") as scratch:
        measured = {total: rating_update(league_games(Path(scratch), total, 60)) for total in (100, 2000)}
    for total, (whole, running, start_up) in measured.items():
        print(f"{total:>5} games: re-rating every game {whole * 1000:8.1f} ms; running tally {running * 1000:6.2f} ms "
              f"(read once at start: {start_up * 1000:.1f} ms)")
    print(f"2,000 against 100 games: re-rating every game x{measured[2000][0] / measured[100][0]:.1f}, "
          f"running tally x{measured[2000][1] / measured[100][1]:.2f}")


def request_main(count: int) -> None:
    """The web server's CPU per leaderboard request: `count` requests one after another on one
    connection to a `cardarena serve` of a league without bots (so no game is played), the server
    process's CPU read before and after."""
    async def ask(port: int, number: int) -> None:
        connection: list = []
        for _ in range(number):
            await ask_board(connection, port)
        connection[1].close()

    with tempfile.TemporaryDirectory(prefix="cardarena-bench-request-") as scratch:
        folder = Path(scratch)
        (folder / "league.toml").write_text(LEAGUE)
        server = Server(folder, {}, options=())
        server.start()
        try:
            port = int(server.url.rsplit(":", 1)[1])
            asyncio.run(ask(port, 200))  # warm up: the board is computed, the code paths are hot
            before, started = process_cpu(server.process.pid), time.monotonic()
            asyncio.run(ask(port, count))
            spent, elapsed = process_cpu(server.process.pid) - before, time.monotonic() - started
        finally:
            server.stop()
    print(f"{count} leaderboard requests, one after another: the server's CPU {spent / count * 1e6:.0f} us a request, "
          f"{elapsed / count * 1e6:.0f} us each from the client's side")


def main() -> None:
    if sys.argv[1:] == ["ratings"]:
        return ratings_main()
    if sys.argv[1:2] == ["request"]:
        return request_main(int(sys.argv[2]) if len(sys.argv) > 2 else 5000)
    seconds, rate, uploaders, wave_every = (float(sys.argv[1]) if len(sys.argv) > 1 else 60.0,
                                            int(sys.argv[2]) if len(sys.argv) > 2 else 100,
                                            int(sys.argv[3]) if len(sys.argv) > 3 else 20,
                                            float(sys.argv[4]) if len(sys.argv) > 4 else 15.0)
    check_workers = sys.argv[5] if len(sys.argv) > 5 else "2"
    with tempfile.TemporaryDirectory(prefix="cardarena-bench-server-") as scratch:
        folder = Path(scratch)
        (folder / "run").mkdir()
        alone = baseline(folder / "run", min(seconds, 30.0))
        organiser = folder / "serve"
        organiser.mkdir()
        (organiser / "league.toml").write_text(LEAGUE)
        names = ["alice", "bob"] + [f"student{number}" for number in range(uploaders)]
        added = cardarena("serve", "league.toml", *[word for name in names for word in ("--add-participant", name)],
                          cwd=organiser)
        tokens = dict(line.split(": ") for line in added.stdout.splitlines())
        server = Server(organiser, tokens, options=("--check-workers", check_workers))  # the default rounds
        server.start()
        try:
            for name, bot in (("alice", "random"), ("bob", "heuristic")):
                done = cardarena("submit", server.url, str(SAMPLE_BOTS / bot), "--token", tokens[name], cwd=folder)
                assert done.returncode == 0, done.stdout + done.stderr
            wait_for("games", lambda: len(live_bots(server.url)) == 2, 60)
            results = organiser / "results" / "load.sqlite"
            before, started = _count(results), time.monotonic()
            roles_before, cpu_before = role_cpu(server.process.pid), (time.process_time(), machine_cpu())
            measured = asyncio.run(load(server, [tokens[name] for name in names[2:]], seconds, rate, wave_every))
            played, elapsed = _count(results) - before, time.monotonic() - started
            roles = {role: used - roles_before.get(role, 0.0) for role, used in role_cpu(server.process.pid).items()}
            cpu = (time.process_time() - cpu_before[0], machine_cpu() - cpu_before[1])
        finally:
            server.stop()
    print(f"load: {seconds:g} s of {rate} leaderboard requests a second and {measured['waves']} waves of "
          f"{uploaders} concurrent uploads, on loopback; play and `run` with --jobs {JOBS}, {check_workers} check worker(s)")
    print(describe("leaderboard requests", measured["board"]))
    print(describe("uploads (until accepted)", measured["upload"]))
    print(f"failed: {measured['failures']['board']} leaderboard requests, {measured['failures']['upload']} uploads; "
          f"{measured['failures']['unsent']} requests still unsent {DRAIN_SECONDS:g} s after the end")
    cores = len(os.sched_getaffinity(0))
    rest = cpu[1] - sum(roles.values()) - cpu[0]
    print(f"CPU in those {elapsed:.0f} s ({cores} cores: {cores * elapsed:.0f} core-seconds): "
          + ", ".join(f"{ROLES.get(role, role)} {used:.1f} s" for role, used in sorted(roles.items()))
          + f", this bench's client {cpu[0]:.1f} s, the rest of the machine {rest:.1f} s, idle {cores * elapsed - cpu[1]:.1f} s")
    print(f"games per second: {played / elapsed:.2f} served under load, {alone:.2f} by `cardarena run` alone "
          f"(ratio {played / elapsed / alone:.2f})")


if __name__ == "__main__":
    main()
