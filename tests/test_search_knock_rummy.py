"""Knock Rummy's deal sampler (runner/search/knock_rummy.py): sampled states agree with everything
a seat saw, proposals are uniform over the consistent deals, and nothing hidden leaks into them.

Rules cited: runner/games/knock_rummy.md, section "Sampling hidden cards (cardarena.search)" for
the constraints, and the sections it names.
"""

from __future__ import annotations

import random
import sys
from itertools import permutations
from math import factorial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.cards import NAME
from cardarena.games.knock_rummy import GAME
from cardarena.protocol.actions import find_legal
from cardarena.referee.match import Match, log_file_name
from cardarena.config import BotSpec, Limits
from cardarena.search import Proposal, SeatKnowledge, Transcript
from cardarena.search.knock_rummy import SAMPLER, KnockRummySampler, read_deal
from tests.chi_square import chi_square_uniform_p_value
from tests.search_support_knock_rummy import (
    RecordedGame, fed_knowledge, play_recorded, random_policy, recorded_transcripts,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sample_bots" / "heuristic"))

from heuristic_bot import knock_rummy as heuristic  # noqa: E402  (the bot's folder is not a package)

#: a uniformity test passes when its chi-square p-value is above this, and a planted bias must
#: bring it below (the seeds are fixed, so neither outcome can change from run to run)
P_VALUE_BOUND = 1e-4

POLICIES = {"random": random_policy(0.015), "heuristic": heuristic.decide}


def shuffled_deck(rng: random.Random) -> list[str]:
    deck = list(NAME)
    rng.shuffle(deck)
    return deck


def actions_before(game: RecordedGame, transcript: Transcript) -> list[tuple[int, dict[str, Any]]]:
    """The true actions applied before the transcript's latest message reached its seat."""
    if transcript.game_end is not None:
        return game.actions
    own = [index for index, (mover, _) in enumerate(game.actions) if mover == transcript.seat]
    return game.actions[:own[len(transcript.decisions) - 1]]


def reproduces(actions: list[tuple[int, dict[str, Any]]], transcript: Transcript, proposal: Proposal) -> bool:
    """Whether playing the true `actions` from the proposed deal shows the seat exactly its messages:
    each decision's view, events and legal actions, and game_end's events but for the hands'
    deadwood and payments (checked here directly, without `replay`, so that a bug in `replay`
    would show)."""
    seat = transcript.seat
    state = GAME.new_state(transcript.players, {**transcript.options, **proposal.options}, deck=proposal.deck)
    told: list[dict[str, Any]] = []
    asked = 0
    for mover, action in actions:
        if mover == seat:
            message = transcript.decisions[asked]
            if (state.view(seat), told, state.legal_actions()) != (message["view"], message["events"], message["legal"]):
                return False
            asked, told = asked + 1, []
        if find_legal(state.legal_actions(), action) is None:
            return False
        told += state.apply(action)
    if transcript.game_end is None:
        message = transcript.decisions[-1]
        return (state.view(seat), told, state.legal_actions()) == (message["view"], message["events"], message["legal"])
    return state.is_over() and without_scores(told) == without_scores(transcript.game_end["events"])


def without_scores(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with the round_end's deadwood and payments left out."""
    return [{key: value for key, value in event.items() if key not in ("deadwood", "payments")}
            for event in events]


# ---------------------------------------------------------------- consistency

OPTION_SETS = [
    {},
    {"dealer": 0, "empty_stock_pickups": 0},
    {"empty_stock_pickups": 2, "max_turns": 40},
    {"dealer": 1, "max_turns": 9},
]


@pytest.mark.parametrize("players", [2, 3, 4, 5])
@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("options", OPTION_SETS)
@settings(max_examples=2, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_proposal_reproduces_what_the_seat_saw(players, policy, options, seed):
    """At every decision of every seat, `actions` gives the true actions, every proposal is
    consistent (so replay accepts them all) and the sampled state shows the seat its current view
    and legal actions. After game_end every proposal reproduces all the seat saw but the hands'
    deadwood, which replay's rejection checks (knock_rummy.md § Sampling hidden cards)."""
    rng = random.Random(seed)
    game = play_recorded(players, options, shuffled_deck(rng), POLICIES[policy], rng)
    for seat in range(players):
        for transcript in game.positions(seat):
            assert SAMPLER.actions(transcript) == actions_before(game, transcript)
            assert reproduces(actions_before(game, transcript), transcript, SAMPLER.propose(transcript, rng))
            if transcript.game_end is None:
                state = fed_knowledge(transcript).sample(rng)
                assert state.view(seat) == transcript.current_view()
                assert state.legal_actions() == transcript.decisions[-1]["legal"]


def test_a_card_shown_from_a_hidden_hand_lay_in_its_dealt_or_drawn_cards():
    """knock_rummy.md § Play: a seat discards from its hand, so a card it discards without having
    taken it from the pile lay in its dealt cards or in a stock card it drew before; § Views,
    known_cards: one it took from the pile is public and stays in its hand until it leaves."""
    rng = random.Random(3)
    game = play_recorded(2, {"dealer": 1}, shuffled_deck(rng), POLICIES["random"], rng)
    transcript = game.positions(0)[-2]
    taken, stock_draws, shown = set(), 0, []
    for event in transcript.events():
        if event.get("seat") != 1:
            continue
        if event["type"] == "draw" and event["source"] == "discard":
            taken.add(event["card"])
        elif event["type"] == "draw":
            stock_draws += 1
        elif event["type"] == "discard" and event["card"] in taken:
            taken.remove(event["card"])
        elif event["type"] == "discard":
            shown.append((event["card"], 10 + stock_draws))
    known = read_deal(transcript)
    assert known.shown[1] == shown and len(shown) > 5
    for _ in range(50):
        deck = SAMPLER.propose(transcript, rng).deck
        for card, within in shown:
            assert deck.index(card) in known.slots[1][:within]


# ---------------------------------------------------------------- a real match

def test_knowledge_fed_a_real_matchs_messages_samples_consistent_states(tmp_path):
    """A recording bot plays real Match games against the heuristic sample bot; its own messages,
    and nothing else, make each SeatKnowledge, which samples states showing it each of its views.
    After game_end the actions are the match's own record and proposals reproduce all but the
    hands' deadwood (left to replay, see test_every_proposal_reproduces_what_the_seat_saw)."""
    recorder = BotSpec("recorder", (sys.executable, str(ROOT / "tests" / "search_support_knock_rummy.py"), "4"))
    heuristic_bot = BotSpec("heuristic", (sys.executable, str(ROOT / "sample_bots" / "heuristic" / "bot.py")))
    with Match([recorder, heuristic_bot], Limits(decision_timeout=5.0), log_dir=tmp_path) as match:
        records = [match.play(GAME, seed=seed, options={"empty_stock_pickups": 1}) for seed in (21, 22, 23)]
    transcripts = recorded_transcripts((tmp_path / log_file_name("recorder")).read_text())
    assert [record.faults for record in records] == [[]] * 3 and len(transcripts) == 3
    rng = random.Random(8)
    for record, whole in zip(records, transcripts):
        assert whole.seat == 0 and whole.game_end is not None and whole.decisions
        knowledge = SeatKnowledge(whole.game_start)
        for message, answer in zip(whole.decisions, whole.answers):
            knowledge.observe(message)
            assert knowledge.sample(rng).view(0) == message["view"]
            knowledge.answered(answer)
        knowledge.observe(whole.game_end)
        assert SAMPLER.actions(knowledge.transcript) == record.actions
        assert reproduces(record.actions, knowledge.transcript, SAMPLER.propose(knowledge.transcript, rng))


# ---------------------------------------------------------------- uniformity

def stock_discarder(view: dict[str, Any], legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """Draws from the stock and discards a random card (never knocks): every discard comes from
    the hidden hand, the case with the most constraints."""
    if view["phase"] == "draw":
        return legal[0]
    return rng.choice([action for action in legal if action["type"] == "discard"])


def moved(deck: list[str], placements: dict[str, int]) -> list[str]:
    """`deck` with each card of `placements` moved to its position and the cards it displaced
    moved into the positions left empty, in order."""
    result: list[str | None] = list(deck)
    for card in placements:
        result[deck.index(card)] = None
    displaced = [result[position] for position in placements.values() if result[position] is not None]
    for card, position in placements.items():
        result[position] = card
    holes = [index for index, card in enumerate(result) if card is None]
    for index, card in zip(holes, displaced):
        result[index] = card
    return result


def uniformity_p_value(sampler: KnockRummySampler, transcript: Transcript, classes: list[Any],
                       classify, samples: int, seed: int) -> float:
    """The chi-square p-value of `samples` deals proposed by `sampler`, sorted into `classes`,
    against equal chances for each class. The proposals are the samples: during play replay
    accepts every one (test_every_proposal_reproduces_what_the_seat_saw), and skipping it here
    keeps the test fast."""
    rng = random.Random(seed)
    counts = dict.fromkeys(classes, 0)
    for _ in range(samples):
        counts[classify(sampler.propose(transcript, rng).deck)] += 1  # KeyError: a deal outside every class
    return chi_square_uniform_p_value(list(counts.values()))


class CardKeptOut(KnockRummySampler):
    """A planted bias: proposes again whenever `card` lands in one of `positions`."""

    def __init__(self, card: str, positions: range):
        self.card, self.positions = card, positions

    def propose(self, transcript: Transcript, rng: random.Random) -> Proposal:
        while (proposal := super().propose(transcript, rng)).deck.index(self.card) in self.positions:
            pass
        return proposal


def test_where_shown_cards_came_from_is_uniform_over_every_consistent_choice():
    """knock_rummy.md § Play: seat 1 drew from the stock and discarded twice before seat 0's second
    turn, so the first card lay in its 10 dealt cards or its first stock card, the second in those
    or its second stock card. The classes are the two cards' deck positions; the consistent ones
    are found by trying all 52 x 51 placements with the checker above (a placement is consistent
    exactly when this deal is: the cards it displaces were never seen, so where they go is free).
    Every consistent placement has equally many consistent deals (the never-seen cards fill the
    other free positions, and seat 0's own cards its own, in any order), so uniform deals are
    uniform placements. 121 classes, 3,630 samples: p > 1e-4; with the first card kept out of
    seat 1's first stock card, p < 1e-4."""
    rng = random.Random(11)
    game = play_recorded(2, {"dealer": 0}, shuffled_deck(rng), stock_discarder, rng)
    transcript = game.positions(0)[2]
    first, second = [event["card"] for event in transcript.events() if event["type"] == "discard" and event["seat"] == 1]
    placements = [(p1, p2) for p1 in range(52) for p2 in range(52) if p1 != p2 and reproduces(
        actions_before(game, transcript), transcript, Proposal(moved(game.deck, {first: p1, second: p2}), {"dealer": 0}))]
    assert len(placements) == 11 * 11

    def classify(deck: list[str]) -> tuple[int, int]:
        return deck.index(first), deck.index(second)

    first_stock_card = 21  # 20 dealt, the up-card, then the stock (knock_rummy.md § Engine choices, Dealing)
    assert uniformity_p_value(SAMPLER, transcript, placements, classify, 3630, seed=1) > P_VALUE_BOUND
    biased = CardKeptOut(first, range(first_stock_card, first_stock_card + 1))
    assert uniformity_p_value(biased, transcript, placements, classify, 3630, seed=1) < P_VALUE_BOUND


def late_position(rng: random.Random) -> tuple[RecordedGame, Transcript]:
    """A 2-player position with a few cards left in the stock and few hidden in the opponent's
    hand, so that every way to place the hidden cards can be listed (between 20 and 60 ways)."""
    while True:
        game = play_recorded(2, {}, shuffled_deck(rng), random_policy(0), rng)
        for transcript in game.positions(0)[:-1]:
            view = transcript.current_view()
            hidden_in_hand = view["hand_sizes"][1] - len(view["known_cards"][1])
            ways = factorial(hidden_in_hand + view["stock"]) // factorial(hidden_in_hand)
            if view["stock"] >= 2 and 20 <= ways <= 60:
                return game, transcript


def test_the_hidden_cards_now_are_placed_uniformly_over_every_consistent_way():
    """Late in a 2-player game every unseen card is in seat 1's hand (bar the cards it took from the
    pile, knock_rummy.md § Views: known_cards) or in the stock. The classes are seat 1's hidden
    cards with the stock's order; the consistent ones are found by trying each with the checker
    above. Every consistent class has equally many consistent deals: where the cards seat 1 showed
    lay, the order of the seat's own dealt cards, and the order of seat 1's hidden cards in its
    remaining slots can be chosen alike for every class. 20 to 60 classes, 40 samples each:
    p > 1e-4; with one hidden card never dealt to seat 1, p < 1e-4."""
    game, transcript = late_position(random.Random(5))
    view = transcript.current_view()
    in_stock = range(52 - view["stock"], 52)  # the stock's cards, next drawn first (§ Engine choices, Dealing)
    hidden = set(NAME) - set(view["hand"]) - set(view["discard_pile"]) - set(view["known_cards"][1])
    in_hand_positions = [index for index, card in enumerate(game.deck) if card in hidden and index not in in_stock]
    ways = []
    for stock in permutations(sorted(hidden), len(in_stock)):
        in_hand = sorted(hidden - set(stock))
        deck = list(game.deck)
        for index, card in zip(in_hand_positions + list(in_stock), in_hand + list(stock)):
            deck[index] = card
        if reproduces(actions_before(game, transcript), transcript, Proposal(deck, {"dealer": view["dealer"]})):
            ways.append((frozenset(in_hand), stock))
    assert len(ways) == factorial(len(hidden)) // factorial(len(hidden) - len(in_stock))

    def classify(deck: list[str]) -> tuple[frozenset[str], tuple[str, ...]]:
        stock = tuple(deck[index] for index in in_stock)
        return frozenset(hidden - set(stock)), stock

    samples = 40 * len(ways)
    assert uniformity_p_value(SAMPLER, transcript, ways, classify, samples, seed=2) > P_VALUE_BOUND
    biased = CardKeptOut(min(hidden), range(in_stock.start))
    assert uniformity_p_value(biased, transcript, ways, classify, samples, seed=2) < P_VALUE_BOUND


# ---------------------------------------------------------------- no leak

def test_the_sample_does_not_depend_on_the_true_hidden_cards():
    """Two games whose messages to seat 0 are identical up to a position, but where a card in seat
    1's hidden hand and one in the stock are swapped, give identical samples for the same seed."""
    rng = random.Random(7)
    game = play_recorded(3, {}, shuffled_deck(rng), POLICIES["random"], rng)
    position = len(game.positions(0)) // 2
    before = actions_before(game, game.positions(0)[position])
    state = GAME.new_state(3, game.options, deck=game.deck)
    for _, action in before:
        state.apply(action)
    in_hand = sorted(set(state.view(1)["hand"]) - set(state.view(0)["known_cards"][1]))[0]
    in_stock = sorted(set(state.hidden_cards(0)) - {card for seat in (1, 2) for card in state.view(seat)["hand"]})[0]
    deck = [{in_hand: in_stock, in_stock: in_hand}.get(card, card) for card in game.deck]
    script = iter(game.actions)

    def replayed(view: dict[str, Any], legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
        """The first game's actions, while they stay legal."""
        return find_legal(legal, next(script, legal[0])[1]) or legal[0]

    other = play_recorded(3, game.options, deck, replayed, rng)
    assert other.actions[:len(before)] == before
    seen, seen_other = game.positions(0)[position], other.positions(0)[position]
    assert seen == seen_other
    for seed in range(5):
        sample = fed_knowledge(seen).sample(random.Random(seed))
        sample_other = fed_knowledge(seen_other).sample(random.Random(seed))
        assert [sample.view(seat) for seat in range(3)] == [sample_other.view(seat) for seat in range(3)]
        assert sample.hidden_cards(0) == sample_other.hidden_cards(0)
