"""The search rungs of the ladder (sample_bots/search/strong and its fast/): every rung plays every
game legally in-process (tests/bot_harness.py checks each answer), a game replays exactly from the
same seed, game and seat, the deals the rungs rebuild from a view are consistent with it, and the
strong rung passes `check` under the sandbox. Their strength is measured by tests/bench/ladder.py,
not here: a strength test cheap enough for the suite would be too small to mean anything."""

from __future__ import annotations

import importlib
import random

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.cli import main
from cardarena.games import get_game
from cardarena.games.cuajo import COPIES, TYPES, completing_cards
from cardarena.protocol.bot import Bot, RandomBot
from cardarena.search.bot import SearchBot
from tests.bench.ladder import load_class, rung_factory
from tests.bot_harness import play_in_process
from tests.conftest import ROOT
from tests.test_search_bot import SHORT

STRONG = ROOT / "sample_bots" / "search" / "strong"
FAST = STRONG / "fast"


class Recorder(Bot):
    """A bot's every answer, recorded."""

    def __init__(self, bot: Bot):
        self.bot, self.name, self.actions = bot, bot.name, []

    def start_game(self, info):
        self.bot.start_game(info)

    def decide(self, view, legal, request):
        action = self.bot.decide(view, legal, request)
        self.actions.append(action)
        return action

    def end_game(self, info):
        self.bot.end_game(info)


def short_game(game_name: str, rung: str, seat: int, seed: int) -> Recorder:
    """One short game (tests/test_search_bot.SHORT) with the rung in `seat`, random bots elsewhere."""
    players, options = SHORT[game_name]
    bots: list[Bot] = [RandomBot(seed=other) for other in range(players)]
    bots[seat] = Recorder(rung_factory(rung)(seed))
    play_in_process(get_game(game_name), bots, seed=seed, options=options, time_ms=60_000)
    return bots[seat]


@pytest.mark.parametrize("rung", ["search-fast", "search-strong"])
@pytest.mark.parametrize("game_name", sorted(SHORT))
def test_every_rung_plays_every_game_legally(game_name, rung, capsys):
    recorded = short_game(game_name, rung, seat=1, seed=3)
    assert recorded.actions, "the rung was never asked to decide"
    assert "search failed" not in capsys.readouterr().err  # the bot answers anyway, and says so


@pytest.mark.parametrize("game_name", sorted(SHORT))
def test_a_game_replays_exactly_from_the_same_seed_game_and_seat(game_name):
    first, second = (short_game(game_name, "search-fast", seat=0, seed=5) for _ in range(2))
    assert first.actions == second.actions


class Rebuilder(SearchBot):
    """Plays at random; at each decision, checks that the plan's rebuilt deal shows exactly this view,
    and counts the other seats flagged purro and those whose rebuilt hands are one card from complete."""

    name = "rebuilder"

    def __init__(self, seed: int, plan):
        super().__init__(seed)
        self.plan, self.checked, self.purro, self.one_card_away = plan, 0, 0, 0

    def choose(self, view, legal, request):
        state = self.plan.determinize(self)
        assert state.view(self.seat) == view and state.legal_actions() == legal, f"decision {request['decision']}"
        self.checked += 1
        for other, flag in enumerate(view.get("purro", [])):
            if flag and other != self.seat:
                self.purro += 1
                self.one_card_away += bool(completing_cards(state.free_cards(other)))
        return RandomBot(request["decision"]).decide(view, legal, request)


@pytest.mark.parametrize("game_name, plan_name", [("cuajo", "PLAN"), ("cuajo", "READING_PLAN"), ("quitlok", "PLAN")])
def test_a_rebuilt_deal_shows_the_seat_exactly_what_it_saw(game_name, plan_name):
    """Cuajo and Quitlok deals are rebuilt from the view instead of the SDK's sampler (the rungs'
    README says why): the seat's view and legal list of the rebuilt state are the ones it received;
    the strong rung's Cuajo deals (READING_PLAN) give each other seat flagged purro a hand one card
    from complete (cuajo.md § Purro), unless the cards it was seen to take fit none."""
    load_class(FAST / "bot.py", "RungBot", FAST)  # puts the bot's own packages on the path
    plan = getattr(importlib.import_module(f"rung_search.{game_name}"), plan_name)
    players = {"cuajo": 4, "quitlok": 5}[game_name]
    purro, one_card_away = 0, 0
    heuristic = rung_factory("heuristic")  # random players are hardly ever purro
    for seed in range(2):
        rebuilder = Rebuilder(seed, plan)
        bots: list[Bot] = [heuristic(other) for other in range(players)]
        bots[seed % players] = rebuilder
        play_in_process(get_game(game_name), bots, seed=seed, time_ms=60_000)
        assert rebuilder.checked > 10
        purro, one_card_away = purro + rebuilder.purro, one_card_away + rebuilder.one_card_away
    if plan_name == "READING_PLAN":
        assert purro and one_card_away >= 0.9 * purro, (purro, one_card_away)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, TYPES - 1), max_size=4), st.lists(st.integers(0, TYPES - 1), max_size=40),
       st.sampled_from([3, 7, 11, 15]), st.randoms(use_true_random=False))
def test_a_purro_hand_holds_its_cards_and_one_card_completes_it(must_cards, gone, size, rng):
    """The strong rung's hand for a seat flagged purro: `size` cards, the ones it must hold among
    them, the rest taken from the unseen copies, and some card completes it (cuajo.md § Purro)."""
    load_class(FAST / "bot.py", "RungBot", FAST)
    cuajo_search = importlib.import_module("rung_search.cuajo")
    unseen, must = [COPIES] * TYPES, [0] * TYPES
    for card in must_cards + gone:
        if unseen[card]:
            unseen[card] -= 1
            must[card] += card in must_cards and sum(must) < len(must_cards)
    before = unseen[:]
    hand = cuajo_search.purro_hand(must, size, unseen, rng)
    if hand is None:  # the required cards fit no hand (say, a lone ace) or the tries overshot: nothing taken
        assert unseen == before
        return
    assert sum(hand) == size and all(hand[card] >= must[card] for card in range(TYPES))
    assert [before[card] - unseen[card] for card in range(TYPES)] == [hand[card] - must[card] for card in range(TYPES)]
    assert completing_cards(hand)


def test_a_purro_hand_is_found_from_a_full_deck():
    load_class(FAST / "bot.py", "RungBot", FAST)
    cuajo_search = importlib.import_module("rung_search.cuajo")
    for seed in range(20):
        assert cuajo_search.purro_hand([0] * TYPES, 15, [COPIES] * TYPES, random.Random(seed)) is not None


def test_the_strong_rung_passes_check_in_the_sandbox():
    result = CliRunner().invoke(main, ["check", str(STRONG), "--games", "knock-rummy", "--games-per-game", "1"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "PASS: search-strong played 1 games without a fault" in result.stdout or \
        "PASS: search-strong played 1 game without a fault" in result.stdout, result.stdout


def test_the_rung_seeds_differ_by_game_and_seat():
    """Different seats (or games) give the bot different generators: its seed is mixed with both."""
    bot = rung_factory("search-fast")(1)
    draws = set()
    for seat in range(2):
        bot.start_game({"type": "game_start", "game_id": "g", "game": "knock-rummy", "rules_version": "1",
                        "seat": seat, "players": 2, "names": ["a", "b"], "teams": None, "options": {}})
        draws.add(bot.rng.random())
    assert len(draws) == 2 and random.Random(0).random() not in draws
