"""`cardarena serve` (run a league server, or add its participants) and `cardarena submit` (upload a bot to one).

`submit` needs nothing but the standard library: it packs the bot folder's files exactly as `run`
identifies the bot (manifest.bot_files: git's view where the folder is in a work tree, else a walk
leaving build output out), uploads the archive, and waits for the check report.
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import click

from cardarena.errors import CardarenaError, UsageError
from cardarena.manifest import MANIFEST_NAME, bot_files

CHECK_WAIT = 900.0  # seconds `submit` waits for the check report by default


class SubmitError(CardarenaError):
    """A submission the server refused or did not answer (exit status 1, as a failed check)."""


def server_files(league_file: Path, results: Path) -> dict[str, Path]:
    """A league server's files: its database and the bot logs beside the results file, and the unpacked
    uploads beside the league file (a bot's folder must not lie inside the results folder, which the
    sandbox keeps from every bot)."""
    return {"accounts": results.with_name(f"{results.stem}.server.sqlite"),
            "bots": league_file.parent / f"{results.stem}.uploads", "logs": results.with_suffix(".logs")}


@click.command()
@click.argument("league_file", metavar="LEAGUE", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every network).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port to listen on.")
@click.option("--add-participant", "participants", multiple=True, metavar="NAME",
              help="Add a participant and print their token (shown this once), then exit; repeatable.")
@click.option("--add-organiser", "organisers", multiple=True, metavar="NAME",
              help="Add an organiser (sees every submission, can pause play) and print the token, then exit.")
@click.option("--new-token", "renewed", multiple=True, metavar="NAME",
              help="Give a participant a new token (the old one stops working) and print it, then exit.")
@click.option("--open-signup", is_flag=True, help="Let anyone who reaches the server sign up (off by default).")
@click.option("--jobs", "-j", type=click.IntRange(1, 256), help="Worker processes playing games [default: CPUs].")
@click.option("--check-workers", type=click.IntRange(1, 32), default=1, show_default=True,
              help="Uploads checked at once.")
@click.option("--check-games", type=click.IntRange(1, 1000),
              help="Games per game in an upload's check [default: one in every seat of every table size].")
@click.option("--scheduler", metavar="tcp://HOST:PORT", help="Play the games on the Dask cluster of this scheduler "
              "(pip install 'cardarena[dask]') instead of this machine's cores [default: the league file's].")
@click.option("--round-games", type=click.IntRange(2, 100_000), default=256, show_default=True,
              help="Games in a round of play, about: fewer let a new version start sooner, more start bots less often.")
def serve(league_file: Path, host: str, port: int, participants: tuple[str, ...], organisers: tuple[str, ...],
          renewed: tuple[str, ...], open_signup: bool, jobs: int | None, check_workers: int,
          check_games: int | None, round_games: int, scheduler: str | None) -> None:
    """Run a league server for LEAGUE (a league file: games, limits, sandbox; no bots): participants
    upload bots, which are checked, then played continuously and rated on a live leaderboard.

    With --add-participant, --add-organiser or --new-token it changes the accounts and exits
    (the server may be running meanwhile). Read runner/server/README.md first."""
    from cardarena.server.accounts import ORGANISER, AccountError, Accounts, house_clash
    from cardarena.server.league_play import read_server_league

    league = read_server_league(league_file)  # ServerLeagueError, a UsageError, when the server cannot run it
    files = server_files(league_file, league.results)
    house = [entrant.name for entrant in league.house]
    try:
        files["accounts"].parent.mkdir(parents=True, exist_ok=True)
        accounts = Accounts(files["accounts"])
        if participants or organisers or renewed:
            for name in participants:
                click.echo(f"{name}: {accounts.add_participant(name, house=house)}")
            for name in organisers:
                click.echo(f"{name} (organiser): {accounts.add_participant(name, ORGANISER, house)}")
            for name in renewed:
                click.echo(f"{name}: {accounts.new_token(name)}")
            click.echo("each token is shown this once: hand it to its owner now", err=True)
            return
        clashes = [(who.name, bot) for who in accounts.participants() if (bot := house_clash(who.name, house))]
        accounts.close()
    except OSError as error:
        raise AccountError(f"{files['accounts']}: {error.strerror or error}") from None
    if clashes:
        raise AccountError(f"{league_file}: house bot {clashes[0][1]!r} has the name of a version of participant "
                           f"{clashes[0][0]!r}; rename it (the name in its bot.toml)")
    _serve(league_file, league.results, files, host, port,
           {"open_signup": open_signup, "jobs": jobs, "check_workers": check_workers, "check_games": check_games,
            "round_games": round_games, "scheduler": scheduler})


def _serve(league_file: Path, results: Path, files: dict[str, Path], host: str, port: int,
           options: dict[str, Any]) -> None:
    """Start the web server (with its play and check processes) until ^C or SIGTERM; `options` are
    the Settings given on the command line."""
    try:
        import uvicorn

        from cardarena.server.app import create_app
        from cardarena.server.runtime import Settings
    except ModuleNotFoundError as error:
        raise CardarenaError(f"the league server needs {error.name}: pip install 'cardarena[serve]'") from None
    from cardarena.console import require_own_views, require_sandbox
    from cardarena.server.league_play import changed_house_bots, read_server_league

    league = read_server_league(league_file)
    if changed := changed_house_bots(league):
        raise UsageError(f"{league_file}: house bot(s) {', '.join(changed)} changed since their games in {results} "
                         "were played; give the changed bot another name in its bot.toml")
    require_sandbox(league.league.limits.sandbox)
    # as `run` does for its bots: a house bot sees its own folder, none of the server's files
    require_own_views([entrant.spec for entrant in league.house], league.league.limits.sandbox,
                      [("the results file", results), ("the server database", files["accounts"]),
                       ("the uploads", files["bots"]), ("the bot logs", files["logs"])])
    settings = Settings(league_file=league_file.resolve(), accounts_path=files["accounts"].resolve(),
                        results=results.resolve(), bots_folder=files["bots"].resolve(), logs=files["logs"].resolve(),
                        **options)
    click.echo(f"serving {league_file} at http://{host}:{port}/ (results: {results}; ^C stops)", err=True)
    # no access log: at this log level it would print nothing, yet cost each request a call
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning", server_header=False, access_log=False)


# -- submit --------------------------------------------------------------------------------------------

def pack_bot(folder: Path) -> bytes:
    """The bot folder's files (those `run` identifies it by) as a .tar.gz, in memory; links are refused
    here, as the server would refuse them."""
    if not (folder / MANIFEST_NAME).is_file():
        raise UsageError(f"{folder}: no {MANIFEST_NAME} here; give the bot's folder")
    names = bot_files(folder)  # ManifestError, a UsageError, for a manifest that cannot be read
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        for name in names:
            path = folder / name
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode):
                raise UsageError(f"{path}: not a plain file (a link or a special file): the server takes "
                                 "only files; copy what it points to into the folder")
            member = tarfile.TarInfo(name)
            member.size, member.mtime = info.st_size, int(info.st_mtime)
            member.mode = 0o755 if info.st_mode & 0o111 else 0o644
            with open(path, "rb") as file:
                bundle.addfile(member, file)
    return buffer.getvalue()


def _call(url: str, token: str, data: bytes | None = None) -> tuple[int, dict[str, Any]]:
    """One API request: (status, JSON answer); SubmitError when the server cannot be reached."""
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/gzip", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as error:
        try:
            body = json.loads(error.read() or b"{}")
        except ValueError:
            body = {}
        return error.code, body if isinstance(body, dict) else {}
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        raise SubmitError(f"{url}: cannot reach the league server: {reason}") from None


@click.command()
@click.argument("url")
@click.argument("bot_dir", metavar="BOTDIR", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--token", envvar="CARDARENA_TOKEN", required=True,
              help="Your participant token (or set CARDARENA_TOKEN, which keeps it out of your shell history).")
@click.option("--wait", type=click.FloatRange(0), default=CHECK_WAIT, show_default=True,
              help="Seconds to wait for the check report (0: exit once the upload is accepted).")
def submit(url: str, bot_dir: Path, token: str, wait: float) -> None:
    """Upload the bot in BOTDIR to the league server at URL, then print its check report; exit status 0
    when it passed (it plays as your new version), 1 when it failed or was refused."""
    base = url.rstrip("/")
    archive = pack_bot(bot_dir)
    status, answer = _call(f"{base}/api/submissions", token, archive)
    if status != 202:
        raise SubmitError(f"{base}: {status}: {answer.get('error', 'the upload was refused')}")
    click.echo(f"submission {answer['id']} accepted ({len(archive):,} bytes); checking…", err=True)
    if wait == 0:
        return
    deadline = time.monotonic() + wait
    while True:
        status, state = _call(f"{base}/api/submissions/{answer['id']}", token)
        if status != 200:
            raise SubmitError(f"{base}: {status}: {state.get('error', 'no report')}")
        if state["status"] != "checking":
            break
        if time.monotonic() > deadline:
            raise SubmitError(f"no check report after {wait:g} s; see it later on the server's page "
                              f"({base}/submissions/{answer['id']})")
        time.sleep(1.0)
    click.echo(state.get("report") or "")
    if state["passed"]:
        click.echo(f"submission {answer['id']} passed: it plays as {state['bot']}", err=True)
    else:
        click.echo(f"submission {answer['id']} failed its check: it does not play", err=True)
        sys.exit(1)
