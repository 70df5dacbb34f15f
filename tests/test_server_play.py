"""How the league server plans its play (issue 23, Playing continuously), in memory: the league file it
accepts, the size of a round, the gauntlet's tables, and deals that never repeat from round to round."""

from __future__ import annotations

import shutil
from collections import Counter
from dataclasses import replace

import pytest

from cardarena.manifest import entrant_from_command
from cardarena.samples import SAMPLE_BOTS
from cardarena.server.accounts import AccountError, Accounts, Participant, house_clash
from cardarena.server.league_play import (ROUND_DEALS, ROUND_GAMES, ServerLeagueError, changed_house_bots, make_executor,
                                          plan_round, playing, read_server_league, record_entrant)
from cardarena.tournament.store import ResultStore
from cardarena.tournament.execution.execute import LocalExecutor


def league(tmp_path, text: str = 'name = "class"\ngames = ["casino"]\n'):
    (tmp_path / "league.toml").write_text(text)
    return read_server_league(tmp_path / "league.toml")


def bots(count: int) -> dict:
    return {f"p{number}-v1": entrant_from_command(f"p{number}-v1=true") for number in range(count)}


@pytest.mark.parametrize("line", ['format = "gauntlet"', 'challengers = ["x"]', "deal_seed = 3", "deals = 4",
                                  '[game.casino]\ndeals = 3'])
def test_keys_that_fix_a_tournament_are_refused(tmp_path, line):
    with pytest.raises(ServerLeagueError, match="leave these keys out"):
        league(tmp_path, f'name = "class"\n{line}\n')


def test_a_bad_league_file_says_why(tmp_path):
    with pytest.raises(ServerLeagueError, match="unknown key"):
        league(tmp_path, 'name = "class"\ncolour = "red"\n')


def test_two_bots_play_every_deal_of_a_round_in_both_seats(tmp_path):
    matches = plan_round(league(tmp_path), bots(2), [], 3, "secret")
    games = [game for match in matches for game in match.games]
    assert len(games) == 2 * ROUND_DEALS
    assert {game.deal for game in games} == set(range(3 * ROUND_DEALS, 4 * ROUND_DEALS))
    assert Counter(game.rotation for game in games) == {0: ROUND_DEALS, 1: ROUND_DEALS}
    assert games[0].game_id == f"casino/p0-v1+p1-v1/d{3 * ROUND_DEALS}/r0"


def test_deals_differ_from_round_to_round_and_ids_never_repeat(tmp_path):
    server = league(tmp_path)
    first, second = (plan_round(server, bots(2), [], number, "secret") for number in (0, 1))
    seeds = [{game.seed for match in round_ for game in match.games} for round_ in (first, second)]
    assert not seeds[0] & seeds[1]
    ids = [{game.game_id for match in round_ for game in match.games} for round_ in (first, second)]
    assert not ids[0] & ids[1]
    assert plan_round(server, bots(2), [], 0, "other secret")[0].games[0].seed not in seeds[0]


def test_a_big_league_plays_a_fresh_balanced_sample_of_tables_each_round(tmp_path):
    server = league(tmp_path)
    rounds = [plan_round(server, bots(40), [], number, "secret") for number in range(2)]
    for matches in rounds:
        assert ROUND_GAMES // 2 <= sum(len(match.games) for match in matches) <= ROUND_GAMES
    assert {m.match_id for m in rounds[0]} != {m.match_id for m in rounds[1]}


def test_a_new_version_plays_its_gauntlet_against_the_field_only(tmp_path):
    matches = plan_round(league(tmp_path), bots(5), ["p4-v1"], 0, "secret")
    assert matches and all("p4-v1" in match.lineup for match in matches)
    assert {name for match in matches for name in match.lineup} == set(bots(5))
    everyone_new = plan_round(league(tmp_path), bots(3), ["p0-v1", "p1-v1", "p2-v1"], 0, "secret")
    assert len(everyone_new) == 3  # all new: the round robin


def test_a_scheduler_hands_the_play_to_the_run_services_dask_executor(tmp_path, monkeypatch, capsys):
    """serve --scheduler (else the league file's): the games go to the Dask executor `run` uses, its
    warnings on the server's stderr; the bots' logs beside the results file. Dask play itself, bots
    shipped to a real worker, is tested in test_dask.py."""
    dask_executor = pytest.importorskip("cardarena.tournament.execution.dask_executor")
    made = []

    class Cluster:
        def __init__(self, address, jobs, pin_cores, logs):
            made.append((address, jobs, logs))

        def preflight(self, limits):
            return ["worker 1 has no bubblewrap"]

        def close(self):
            made.append("closed")

    monkeypatch.setattr(dask_executor, "DaskExecutor", Cluster)
    server = league(tmp_path, 'name = "class"\ngames = ["casino"]\nscheduler = "tcp://cluster:8786"\n')
    assert server.league.scheduler == "tcp://cluster:8786"  # play_forever's default
    assert isinstance(make_executor(server, None, "tcp://other:8786"), Cluster)
    assert made == [("tcp://other:8786", None, server.results.with_suffix(".logs"))]
    assert "warning: worker 1 has no bubblewrap" in capsys.readouterr().err
    local = make_executor(server, 1, None)
    local.close()
    assert isinstance(local, LocalExecutor)


def test_serve_and_submit_end_on_one_line_with_their_exit_status(tmp_path):
    """A league file the server cannot run, or a folder that is not a bot's, is the user's to fix
    (exit status 2, as `run` says of a bad league file); a refused submission is 1 (test_server_e2e)."""
    from click.testing import CliRunner

    from cardarena.cli import main

    (tmp_path / "league.toml").write_text('name = "class"\nformat = "gauntlet"\n')
    served = CliRunner().invoke(main, ["serve", str(tmp_path / "league.toml")])
    assert served.exit_code == 2 and "format: a league server plays its bots continuously" in served.output
    submitted = CliRunner().invoke(main, ["submit", "http://127.0.0.1:9", str(tmp_path), "--token", "x"])
    assert submitted.exit_code == 2 and "no bot.toml here" in submitted.output
    assert "Traceback" not in served.output + submitted.output


def test_the_league_files_bots_are_house_bots_playing_beside_the_current_versions(tmp_path):
    """Issue 23: the organiser's bots (the sample bots, the ladder's rungs) play with no participant."""
    shutil.copytree(SAMPLE_BOTS / "random", tmp_path / "house" / "random")
    shutil.copytree(SAMPLE_BOTS / "heuristic", tmp_path / "house" / "heuristic")
    server = league(tmp_path, 'name = "class"\ngames = ["casino"]\nbots = ["house/*"]\n')
    assert [entrant.name for entrant in server.house] == ["heuristic", "random"]
    accounts = Accounts(tmp_path / "class.server.sqlite")
    alice = Participant(1, "alice", "participant")
    accounts.add_participant("alice")
    shutil.copytree(SAMPLE_BOTS / "random", tmp_path / "upload")
    accounts.finish_check(accounts.add_submission(alice, "d", str(tmp_path / "upload")), {}, True)
    with ResultStore(tmp_path / "class.sqlite", create=True) as store:
        assert list(playing(server, accounts, store, {e.name: e for e in server.house})) == [
            "heuristic", "random", "alice-v1"]
        record_entrant(store, server.house[1])
        store.add_disqualified("heuristic", "it crashed")
        assert list(playing(server, accounts, store, {e.name: e for e in server.house})) == ["random", "alice-v1"]
    assert changed_house_bots(replace(server, results=tmp_path / "class.sqlite")) == []
    with open(tmp_path / "house" / "random" / "bot.py", "a") as bot:
        bot.write("\n# changed\n")
    changed = replace(league(tmp_path, 'name = "class"\ngames = ["casino"]\nbots = ["house/*"]\n'),
                      results=tmp_path / "class.sqlite")
    assert changed_house_bots(changed) == ["random"]  # serve refuses to start: its new games are another bot's


def test_a_participant_cannot_take_a_house_bots_version_name(tmp_path):
    accounts = Accounts(tmp_path / "class.server.sqlite")
    assert house_clash("ladder", ["ladder-v2", "random"]) == "ladder-v2" and house_clash("Ladder", ["ladder-v2"])
    assert house_clash("ladder", ["ladder", "ladder-v2x", "ladderv2"]) is None
    with pytest.raises(AccountError, match="would be named as the house bot 'ladder-v2'"):
        accounts.add_participant("ladder", house=["ladder-v2"])
    assert accounts.participants() == []
