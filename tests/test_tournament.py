"""End to end: `cardarena run`, `leaderboard` and `replay` on small tournaments of the random bot.

Includes the resume guarantee: a run killed with SIGKILL part-way and resumed has exactly the
games and leaderboard of an uninterrupted run with the same deal secret (kept in the results file).
"""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardarena.cli import main
from cardarena.games import all_games
from cardarena.tournament.planning.league import SAMPLE_LEAGUE, LeagueOverrides, build_league, read_league_file
from cardarena.tournament.planning.schedule import schedule
from cardarena.tournament.store import ResultStore, StoreError
from cardarena.referee.pipes import LOG_CAPPED_NOTE

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "sample_bots" / "random" / "bot.py"
GAME_COLUMNS = "game_id, match_id, game, rules_version, options, seed, deal, rotation, cluster, seats, scores, " \
               "ranks, teams, faults"


def bot(name: str, seed: int) -> str:
    return f"{name}={sys.executable} {RANDOM_BOT} --seed {seed}"


def run_args(out: Path, bots: tuple[str, ...] = ("a", "b", "c"), deals: int = 2, *extra: str) -> list[str]:
    """A small tournament: random bots at Casino (2 seats) and Knock Rummy (4 seats, copies fill in)."""
    args = ["run", "--game", "casino", "--game", "knock-rummy", "--deals", str(deals), "--seed", "42",
            "--timeout", "10", "--jobs", "2", "--bootstrap", "20", "--out", str(out)]
    for index, name in enumerate(bots):
        args += ["--bot", bot(name, index + 1)]
    return args + list(extra)


def cardarena(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cardarena.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def stored_games(path: Path) -> list[tuple]:
    """Every recorded game with its actions, without timings."""
    with sqlite3.connect(path) as db:
        return db.execute(f"SELECT {GAME_COLUMNS}, actions.actions FROM games JOIN actions USING (game_id) "
                          "ORDER BY game_id").fetchall()


def leaderboard_json(path: Path) -> list[dict]:
    result = cardarena("leaderboard", str(path), "--format", "json", "--bootstrap", "50")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """One uninterrupted tournament, shared by the tests that only read it."""
    out = tmp_path_factory.mktemp("full") / "league.sqlite"
    result = cardarena(*run_args(out, deals=4))
    assert result.returncode == 0, result.stderr
    return out


def test_run_plays_the_whole_schedule_and_prints_leaderboards(finished):
    games = stored_games(finished)
    # casino: 3 pairs x 2 rotations; knock rummy: 3 filled lineups x 4 rotations; 4 deals each
    assert len(games) == 4 * (3 * 2 + 3 * 4)
    assert all(json.loads(row[13]) == [] for row in games)  # the random bot never faults
    boards = leaderboard_json(finished)
    versions = {name: game.spec.rules_version for name, game in all_games().items()}
    assert [board["title"] for board in boards] == [
        f"casino (rules v{versions['casino']})", f"knock-rummy (rules v{versions['knock-rummy']})", "overall"]
    assert all(sorted(row["bot"] for row in board["rows"]) == ["a", "b", "c"] for board in boards)
    assert sum(board["games"] for board in boards[:2]) == boards[2]["games"] == len(games)
    elos = [row["elo"] for row in boards[2]["rows"]]
    assert elos == sorted(elos, reverse=True) and sum(elos) / 3 == pytest.approx(1500, abs=0.1)


def test_leaderboard_formats(finished):
    markdown = cardarena("leaderboard", str(finished), "--format", "markdown", "--bootstrap", "10").stdout
    assert "## overall" in markdown and re.search(r"^\|\s+rank\s+\|\s+bot\s+\|", markdown, re.MULTILINE)
    csv_lines = cardarena("leaderboard", str(finished), "--format", "csv", "--bootstrap", "10").stdout.splitlines()
    assert csv_lines[0].startswith("board,rank,bot,elo,low,high") and len(csv_lines) == 1 + 3 * 3
    table = cardarena("leaderboard", str(finished), "--superiority", "--anchor", "a=1000", "--bootstrap", "10")
    assert table.returncode == 0 and "likelihood of superiority" in table.stdout
    overall = table.stdout.split("overall")[1]
    assert any(line.split()[1:3] == ["a", "1000"] for line in overall.splitlines() if line.strip()[:1].isdigit())


def test_replay_checks_a_recorded_game_against_the_engine(finished, tmp_path):
    result = cardarena("replay", str(finished), "casino/a+b/d1/r1")
    assert result.returncode == 0, result.stderr
    assert "replay matches the record" in result.stdout and "seat 0 b" in result.stdout
    tampered = tmp_path / "tampered.sqlite"
    tampered.write_bytes(finished.read_bytes())
    with sqlite3.connect(tampered) as db:
        (actions,) = db.execute("SELECT actions FROM actions WHERE game_id = 'casino/a+b/d1/r1'").fetchone()
        moves = json.loads(actions)
        moves[0], moves[1] = moves[1], moves[0]  # the second player moves first
        db.execute("UPDATE actions SET actions = ? WHERE game_id = 'casino/a+b/d1/r1'", (json.dumps(moves),))
    result = cardarena("replay", str(tampered), "casino/a+b/d1/r1", "--quiet")
    assert result.returncode == 1 and "does not match the engine" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_run_killed_part_way_and_resumed_equals_an_uninterrupted_run(finished, tmp_path):
    """Two deals (36 games) where `finished` has four: the kill comes after 12 games are stored."""
    out = tmp_path / "killed.sqlite"
    runner = subprocess.Popen([sys.executable, "-m", "cardarena.cli", *run_args(out, deals=2)], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    recorded = 0
    while recorded < 12 and time.monotonic() < deadline and runner.poll() is None:
        time.sleep(0.05)
        if out.exists():
            try:
                with sqlite3.connect(out) as db:
                    recorded = db.execute("SELECT count(*) FROM games").fetchone()[0]
            except sqlite3.OperationalError:
                recorded = 0  # the schema is still being created
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    partial = stored_games(out)
    # The uninterrupted run to compare with deals from the same secret: the killed run's file, emptied.
    uninterrupted = tmp_path / "uninterrupted.sqlite"
    with sqlite3.connect(out) as source, sqlite3.connect(uninterrupted) as copy:
        source.backup(copy)
        copy.execute("DELETE FROM actions")
        copy.execute("DELETE FROM games")
    whole = cardarena(*run_args(uninterrupted, ("a", "b", "c"), 2, "--resume"))
    assert whole.returncode == 0 and "(0 already played)" in whole.stderr, whole.stderr
    assert 12 <= len(partial) < len(stored_games(uninterrupted)) == 36, "the run was not killed part-way"
    resumed = cardarena(*run_args(out, ("a", "b", "c"), 2, "--resume"))
    assert resumed.returncode == 0, resumed.stderr
    assert f"({len(partial)} already played)" in resumed.stderr
    assert stored_games(out) == stored_games(uninterrupted)
    assert leaderboard_json(out) == leaderboard_json(uninterrupted)
    # another results file (`finished`): another secret, so the same games are other deals
    elsewhere = {row[0]: row for row in stored_games(finished)}
    assert all(row[5] != elsewhere[row[0]][5] for row in stored_games(out))  # the seeds


def test_adding_a_bot_plays_only_the_tables_that_include_it(tmp_path):
    out = tmp_path / "grow.sqlite"
    first = cardarena(*run_args(out, bots=("a", "b"), deals=1))
    assert first.returncode == 0, first.stderr
    before = stored_games(out)
    grown = cardarena(*run_args(out, ("a", "b", "c"), 1, "--resume"))
    assert grown.returncode == 0, grown.stderr
    after = stored_games(out)
    before_ids = {row[0] for row in before}
    assert [row for row in after if row[0] in before_ids] == before
    added = [row for row in after if row[0] not in before_ids]
    assert added and all("c" in json.loads(row[9]) for row in added)
    # Casino a+b survives; Knock Rummy a+b (copies filling the table) gives way to lineups with c
    assert {row[1] for row in before} & {row[1] for row in added} == set()


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def one_clear_line(result) -> str:
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


def test_a_league_file_with_a_typo_is_one_clear_line(tmp_path):
    league = tmp_path / "league.toml"
    league.write_text(f'bots = ["{bot("a", 1)}", "{bot("b", 2)}"]\ndeels = 3\n')
    assert "unknown key(s) deels" in one_clear_line(invoke("run", str(league)))


@pytest.mark.parametrize("args, message", [
    (["--players", "casino=7"], "casino is played by 2 to 4 players, not 7"),
    (["--game", "poker"], "unknown game 'poker'"),
    (["--game", "casino,poker"], "unknown game 'poker'"),  # comma-separated, as check takes them
    (["--challenger", "zed"], "challenger(s) zed are not among the bots"),
])
def test_bad_settings_are_one_clear_line(tmp_path, args, message):
    result = invoke("run", "--bot", bot("a", 1), "--bot", bot("b", 2), "--out", str(tmp_path / "x.sqlite"), *args)
    assert message in one_clear_line(result)
    assert not (tmp_path / "x.sqlite").exists()


@pytest.mark.parametrize("value, message", [
    ('"x"', "[limits].time_bank must be a number of seconds from 0 (no bank) to 3600, got 'x'"),
    ("-1", "[limits].time_bank must be a number of seconds from 0 (no bank) to 3600, got -1"),
])
def test_a_bad_time_bank_in_a_league_file_is_one_clear_line(tmp_path, value, message):
    league = tmp_path / "league.toml"
    league.write_text(f'bots = ["{bot("a", 1)}", "{bot("b", 2)}"]\n[limits]\ntime_bank = {value}\n')
    assert message in one_clear_line(invoke("run", str(league), "--out", str(tmp_path / "x.sqlite")))
    assert "a time bank must be" in one_clear_line(invoke("run", str(league), "--time-bank", "-2"))


def test_the_time_bank_is_a_setting_of_the_results_file_from_the_league_or_the_command_line(tmp_path):
    """A run's settings name its bank (so a resume with another is refused); a run without one stores
    none, as files recorded before banks existed did, so that they resume as they were."""
    data = {"bots": [bot("a", 1), bot("b", 2)], "limits": {"time_bank": 1.5}}
    league = build_league(data, tmp_path, "league.toml")
    assert league.limits.time_bank == 1.5 and league.settings_fingerprint()["limits"]["time_bank"] == 1.5
    overridden = build_league(data, tmp_path, "league.toml", LeagueOverrides(time_bank=0.0))
    assert overridden.limits.time_bank == 0.0 and "time_bank" not in overridden.settings_fingerprint()["limits"]


def test_a_file_that_is_not_a_results_database_is_refused(tmp_path):
    stray = tmp_path / "notes.sqlite"
    stray.write_text("hello")
    assert "is not a cardarena results database" in one_clear_line(invoke("leaderboard", str(stray)))
    with sqlite3.connect(tmp_path / "other.sqlite") as db:
        db.execute("CREATE TABLE t (x)")
    assert "is not a cardarena results database" in one_clear_line(invoke("leaderboard", str(tmp_path / "other.sqlite")))
    assert stray.read_text() == "hello"


def test_resume_with_other_settings_is_refused_and_loses_nothing(finished, tmp_path, refused_before_any_bot):
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(finished.read_bytes())
    before = stored_games(copy)
    line = one_clear_line(invoke(*run_args(copy, deals=5), "--resume"))
    assert "recorded with other settings (games differ)" in line
    line = one_clear_line(invoke(*run_args(copy, deals=4), "--deal-seed", "42", "--resume"))
    assert "recorded with other settings (deal_seed differ)" in line
    line = one_clear_line(invoke(*run_args(copy, deals=4), "--handshake-timeout", "5", "--resume"))
    assert "recorded with other settings (limits differ)" in line  # the option reaches the league's limits
    line = one_clear_line(invoke(*run_args(copy, deals=4), "--time-bank", "2", "--resume"))
    assert "recorded with other settings (limits differ)" in line
    assert "already holds results" in one_clear_line(invoke(*run_args(copy, deals=4)))
    assert stored_games(copy) == before


def test_the_sample_league_file_is_valid_and_plays_every_game():
    league = build_league(read_league_file(SAMPLE_LEAGUE), SAMPLE_LEAGUE.parent, str(SAMPLE_LEAGUE))
    assert {g.name for g in league.games} == set(all_games())
    assert "random" in {entrant.name for entrant in league.entrants}
    plans = schedule({e.name: e.games for e in league.entrants}, league.games, league.seed, deal_key="any")
    assert plans and all(len(set(plan.lineup)) >= 2 for plan in plans)


def test_the_sample_league_is_the_ladders_lower_rungs_with_a_second_random_and_needs_no_build():
    """The main job's field (league.toml): random, heuristic and the search-fast rung of the ladder
    (sample_bots/README.md § The ladder), and random-2 so that random has an equal to score against
    where the others beat it every time (Casino, Cuajo); every one runs without a build (no starter kit
    that needs one), so the field is the same in a fresh checkout, the wheel and CI."""
    league = build_league(read_league_file(SAMPLE_LEAGUE), SAMPLE_LEAGUE.parent, str(SAMPLE_LEAGUE))
    assert sorted(entrant.name for entrant in league.entrants) == ["heuristic", "random", "random-2", "search-fast"]
    folders = {entrant.name: entrant.spec.folder for entrant in league.entrants}
    assert Path(folders["search-fast"]) == (SAMPLE_LEAGUE.parent / "search" / "strong" / "fast").resolve()
    assert folders["random-2"] is None  # a command of the SDK's random bot: no file of its own


def test_exclude_leaves_folders_out_of_the_bots_globs_and_may_match_nothing(tmp_path):
    for name in ("alpha", "beta", "kit"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "bot.toml").write_text(f'name = "{name}"\ncommand = ["python3", "bot.py"]\n')
    data = {"bots": ["*/"], "exclude": ["k*/", "missing/"]}
    league = build_league(data, tmp_path, "league.toml")
    assert [entrant.name for entrant in league.entrants] == ["alpha", "beta"]
    assert len(build_league({"bots": ["*/"]}, tmp_path, "league.toml").entrants) == 3


def test_a_challenger_makes_a_gauntlet(tmp_path):
    out = tmp_path / "gauntlet.sqlite"
    result = cardarena("run", "--game", "casino", "--deals", "1", "--timeout", "10", "--jobs", "1", "--bootstrap", "0",
                       "--out", str(out), "--challenger", "new", "--bot", bot("new", 1), "--bot", bot("x", 2),
                       "--bot", bot("y", 3))
    assert result.returncode == 0, result.stderr
    assert sorted({row[1] for row in stored_games(out)}) == ["casino/new+x", "casino/new+y"]


def test_resume_of_a_missing_file_creates_nothing(tmp_path, refused_before_any_bot):
    line = one_clear_line(invoke(*run_args(tmp_path / "missing.sqlite"), "--resume"))
    assert "nothing to resume" in line and not (tmp_path / "missing.sqlite").exists()


def test_a_run_into_a_file_that_holds_results_is_refused_before_any_bot_starts(finished, refused_before_any_bot):
    before = finished.read_bytes()
    line = one_clear_line(invoke(*run_args(finished)))
    assert "already holds results; pass --resume" in line and finished.read_bytes() == before


def test_a_bot_that_cannot_start_sits_the_run_out_with_a_warning(tmp_path):
    out = tmp_path / "t.sqlite"
    args = run_args(out, ("a", "b"), 1) + ["--bot", "ghost=/nonexistent/ghost-bot"]
    done = cardarena(*args)
    assert done.returncode == 0, done.stderr
    assert "warning: ghost left out of this run: it failed to start (start: cannot run" in done.stderr
    with sqlite3.connect(out) as db:
        seated = {name for (seats,) in db.execute("SELECT seats FROM games") for name in json.loads(seats)}
    assert seated == {"a", "b"}


def test_a_tournament_needs_two_bots_that_start(tmp_path):
    done = cardarena(*run_args(tmp_path / "t.sqlite", ("a",), 1), "--bot", "ghost=/nonexistent/ghost-bot")
    assert done.returncode == 1
    assert "only 1 of 2 bots could start; a tournament needs two" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "t.sqlite").exists()


def test_bot_stderr_is_logged_beside_the_results(tmp_path):
    out = tmp_path / "t.sqlite"
    noisy = f"noisy={sys.executable} {ROOT / 'tests' / 'zoo' / 'noisy.py'}"
    done = cardarena("run", "--game", "casino", "--deals", "1", "--seed", "1", "--timeout", "10", "--jobs", "1",
                     "--bootstrap", "0", "--out", str(out), "--bot", bot("a", 1), "--bot", noisy)
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "t.logs" / "noisy.stderr.log").read_text()
    assert len(log) > 65_536 and "[cardarena: noisy started, match casino/" in log


def test_a_new_results_file_starts_with_fresh_logs_and_the_stale_ones_are_kept_aside(tmp_path):
    """Logs left by a deleted results file of the same name would count toward the new run's cap
    (at the cap, the new run's stderr would be dropped): they are moved aside, with a note."""
    out = tmp_path / "t.sqlite"
    stale = tmp_path / "t.logs"
    stale.mkdir()
    (stale / "noisy.stderr.log").write_bytes(b"x" * (1 << 20))  # at the cap already
    noisy = f"noisy={sys.executable} {ROOT / 'tests' / 'zoo' / 'noisy.py'}"
    done = cardarena("run", "--game", "casino", "--deals", "1", "--seed", "1", "--timeout", "10", "--jobs", "1",
                     "--bootstrap", "0", "--out", str(out), "--bot", bot("a", 1), "--bot", noisy)
    assert done.returncode == 0, done.stderr
    [aside] = [path for path in tmp_path.iterdir() if path.name.startswith("t.logs.old-")]
    assert f"note: {stale} held the bot logs of an earlier results file that is gone: moved to {aside}" in done.stderr
    assert (aside / "noisy.stderr.log").read_bytes() == b"x" * (1 << 20)
    log = (stale / "noisy.stderr.log").read_text()
    assert log.startswith("[cardarena: noisy started, match casino/") and len(log) > 65_536
    resumed = cardarena("run", "--game", "casino", "--deals", "1", "--seed", "1", "--timeout", "10", "--jobs", "1",
                        "--bootstrap", "0", "--out", str(out), "--bot", bot("a", 1), "--bot", noisy, "--resume")
    assert resumed.returncode == 0 and "note:" not in resumed.stderr, resumed.stderr  # a resumed run keeps its logs
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith("t.logs")].count("t.logs") == 1


def test_stale_logs_that_cannot_be_moved_aside_are_a_store_error_saying_what_to_do(tmp_path, monkeypatch):
    from cardarena.tournament.service import set_aside_stale_logs
    (tmp_path / "t.logs").mkdir()
    (tmp_path / "t.logs" / "a.stderr.log").write_text("earlier\n")

    def refuse(self, target):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(Path, "rename", refuse)
    with pytest.raises(StoreError) as raised:
        set_aside_stale_logs(tmp_path / "t.logs", say=print)
    assert str(raised.value) == (f"{tmp_path / 't.logs'}: holds the bot logs of an earlier results file; cannot move "
                                 "them aside (Permission denied): move or delete them")


def test_the_stderr_cap_holds_for_the_whole_run_across_restarts_and_workers(tmp_path):
    """Issue 10 item 6: a bot that floods stderr and is restarted for every game (24 games, two
    workers) still leaves one log at the cap, plus at most one chunk per concurrent writer."""
    out = tmp_path / "t.sqlite"
    flooder = f"flooder={sys.executable} {ROOT / 'tests' / 'zoo' / 'flooder.py'} --after 0"
    done = cardarena("run", "--game", "casino", "--deals", "12", "--seed", "1", "--timeout", "10", "--jobs", "2",
                     "--bootstrap", "0", "--out", str(out), "--bot", bot("a", 1), "--bot", flooder)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    with ResultStore(out) as store:
        games = list(store.games())
    assert len(games) == 24 and all([f.kind for f in g.faults] == ["crash"] for g in games)
    log = tmp_path / "t.logs" / "flooder.stderr.log"
    assert 1 << 20 <= log.stat().st_size <= (1 << 20) + 2 * (1 << 16) + 2 * len(LOG_CAPPED_NOTE)
    assert sorted(p.name for p in log.parent.iterdir()) == ["a.stderr.log", "flooder.stderr.log"]


def test_a_second_answer_to_a_games_last_decision_is_stored_with_that_game(tmp_path):
    """Issue 10 item 12 through `run`: each such fault is in a game whose last decision was that bot's."""
    out = tmp_path / "t.sqlite"
    double = f"double_knock={sys.executable} {ROOT / 'tests' / 'zoo' / 'double_knock.py'}"
    done = cardarena("run", "--game", "knock-rummy", "--players", "knock-rummy=2", "--deals", "3", "--seed", "1",
                     "--timeout", "10", "--jobs", "1", "--bootstrap", "0", "--out", str(out),
                     "--bot", bot("a", 1), "--bot", double)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    with ResultStore(out) as store:
        faults = [(g, f, g.actions) for g in store.games(actions=True) for f in g.faults]
    assert faults
    for game, fault, actions in faults:
        assert (fault.kind, fault.bot, fault.decision) == ("protocol", "double_knock", len(actions))
        assert game.seats[actions[-1][0]] == "double_knock" and actions[-1][1]["type"] == "knock"
