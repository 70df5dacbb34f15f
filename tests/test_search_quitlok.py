"""Quitlok's deal sampler (cardarena.search.quitlok): the actions it reads from a seat's messages,
the cards it traces, and sampled deals that reproduce everything the seat saw, drawn uniformly
(runner/games/quitlok.md § Sampling hidden cards)."""

from __future__ import annotations

import itertools
import json
import math
import random
import sys
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.games.quitlok import CARD_BY_NAME, FULL_DECK, GAME, hand_value, names
from cardarena.protocol.actions import random_action
from cardarena.referee.match import Match
from cardarena.config import NONE, BotSpec, Limits, SandboxSettings
from cardarena.search import Proposal, SamplingError, SeatKnowledge, first_consistent, quitlok, replay
from cardarena.search.quitlok import (
    EMPTY_HAND, SAMPLER, DrawTracer, QuitlokSampler, read_cards, seed_for_first_banker, summary_value,
)
from tests.chi_square import chi_square_pooled_p_value
from tests.conftest import writable_folder
from tests.search_support_quitlok import (
    POLICIES, at_decision, play_game, reproduces,
)

OPTION_SETS = (
    {},
    {"ties_to_bank": False, "max_hands_per_bank": 2, "min_bet": 2, "max_bet": 6},
    {"stack": 30, "min_bank": 30, "max_hands_per_bank": 4},
)
PLAYER_COUNTS = range(5, 11)
ATTEMPTS = 50  # the sampler's proposals are exact but for rare leftovers: replay accepts nearly all


def sample_deal(transcript, rng, sampler=SAMPLER, attempts=ATTEMPTS):
    """A consistent deal and the state it reaches, by the generic rejection loop (None if none found)."""
    try:
        return first_consistent(GAME, transcript, sampler, rng, attempts)
    except SamplingError:
        return None


def test_first_banker_seeds_give_that_banker():
    # quitlok.md § Engine choices: the first banker is Random(seed).randrange(players)
    for players in PLAYER_COUNTS:
        for banker in range(players):
            assert GAME.new_state(players, seed=seed_for_first_banker(players, banker)).banker == banker


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(PLAYER_COUNTS), st.sampled_from(OPTION_SETS), st.sampled_from(sorted(POLICIES)),
       st.integers(0, 10**6), st.integers(0, 9))
def test_actions_are_every_action_played_and_the_trace_sees_each_card_where_it_was_drawn(
        players, options, policy, seed, seat):
    seat %= players
    transcript, truths, actions, recorder = play_game(players, options, seed, seat, POLICIES[policy])
    assert SAMPLER.actions(transcript) == actions
    tracer = DrawTracer(transcript)
    tracer.follow(transcript)
    first_deck = GAME.new_state(players, options, seed=seed).deck[::-1]
    decks = [first_deck] + [order[::-1] for order in recorder.orders]  # top first
    assert tracer.sizes == [len(deck) for deck in decks]
    for (number, index), card in tracer.cards.items():
        assert decks[number][index] == card
    # every hand the seat never saw whole passes the checks the trace wrote down for it, with its
    # true cards (quitlok.md § A hand, 3: a hand not shown stayed below 21; § Engine choices, Eleven)
    for record in tracer.unshown:
        checks = {}
        for check in record.checks:
            checks.setdefault(check[1], []).append(check)
        assert read_cards(EMPTY_HAND, 0, [decks[number][index] for number, index in record.draws], checks) is not None


@given(st.lists(st.integers(1, 12), min_size=1, max_size=9), st.booleans())
def test_a_hand_summary_is_valued_as_the_hand(cards, framed_pair_counts):
    # quitlok.md § Players, cards, money: a 12 counts 12 or 9; a player's framed first pair is 21
    summary = EMPTY_HAND
    for held, card in enumerate(cards):
        summary = read_cards(summary, held, [card], {})
        assert summary_value(summary, held + 1, framed_pair_counts) == hand_value(cards[:held + 1], framed_pair_counts)


def positions(players, options, policy, seed, seat, most_decks=None):
    """Every decision of the seat in one game (while at most `most_decks` decks have been dealt)."""
    transcript, truths, _, _ = play_game(players, options, seed, seat, POLICIES[policy])
    for count in range(1, len(transcript.decisions) + 1):
        prefix = at_decision(transcript, count)
        if most_decks is not None:
            tracer = DrawTracer(prefix)
            tracer.follow(prefix)
            if len(tracer.sizes) > most_decks:
                return
        yield prefix, truths[count - 1]


def reshuffles_told(transcript):
    return sum(event["type"] == "reshuffle" for event in transcript.events())


def consistency_positions():
    """(players, prefix, truth, deep) at the positions the consistency test checks: for each
    player count, option set and policy, two seats' decisions from the first to the end of the
    session, every 25th (every tenth with 5 or 6 players, whose counts are cheap), and every
    tenth after the eighth reshuffle (`deep`) in 5- and 10-player games with the default options."""
    for players, options, policy in itertools.product(PLAYER_COUNTS, OPTION_SETS, sorted(POLICIES)):
        seed = players * 1000 + OPTION_SETS.index(options) * 100 + len(policy) * 10
        for seat in (0, players // 2):
            for prefix, truth in positions(players, options, policy, seed, seat):
                deep = reshuffles_told(prefix) >= 8 and players in (5, 10) and not options
                if not len(prefix.decisions) % (10 if deep or players < 7 else 25):
                    yield players, prefix, truth, deep


def test_sampled_deals_reproduce_every_view_and_event_the_seat_saw():
    """At the 156 positions of `consistency_positions` (random and heuristic play, each player
    count and option set, two seats, from the first decision to the end of the session; 110
    before the count was memoised): a deal is found for every one in ATTEMPTS proposals, and the
    sampled deal, replayed directly, shows the seat exactly its messages; the sampled state gives
    its current view. (The count behind a sample costs up to half a second late in a 10-player
    session on a shared core, and the rare position whose hands are left to redraws 0.01 to 5 s by
    the rng (8 players, decision 100: up to 20,000 redraws, then a count with larger limits), which
    bounds how many positions a test can afford: see tests/bench/bench_sampling_quitlok.py and
    runner/games/quitlok.md § Sampling hidden cards.)"""
    rng = random.Random(7)
    checked, late = Counter(), Counter()
    for players, prefix, truth, deep in consistency_positions():
        seat = prefix.seat
        found = sample_deal(prefix, rng)
        assert found is not None, (players, seat, len(prefix.decisions))
        proposal, state = found
        reached = reproduces(prefix, proposal, proposal.rng.arranged, SAMPLER.actions(prefix))
        assert state.view(seat) == reached.view(seat) == prefix.current_view() == truth.view(seat)
        checked[players] += 1
        late[players] += deep
    assert sum(checked.values()) == 156 and late[5] >= 15 and late[10] >= 15


def first_deck_distribution(transcript):
    """The exact distribution of the cards drawn so far that the seat has not seen, over uniformly
    random first decks consistent with the transcript (no reshuffle yet): each assignment of those
    cards counts the deck orders that complete it, and is kept only when it replays consistently."""
    tracer = DrawTracer(transcript)
    tracer.follow(transcript)
    assert tracer.sizes == [len(FULL_DECK)]
    seen = {index: card for (_, index), card in tracer.cards.items()}
    hidden = [index for index in range(tracer.drawn) if index not in seen]
    left = Counter(FULL_DECK)
    left.subtract(seen.values())
    actions = SAMPLER.actions(transcript)
    seed = seed_for_first_banker(transcript.players, QuitlokSampler._first_banker(transcript, random.Random(0)))
    weights = {}
    for values in itertools.product(sorted(+left), repeat=len(hidden)):
        rest = left - Counter(values)
        if sum(rest.values()) != sum(left.values()) - len(values):
            continue
        cards = dict(seen) | dict(zip(hidden, values))
        fill = iter(sorted(rest.elements()))
        deck = [cards[index] if index in cards else next(fill) for index in range(len(FULL_DECK))]
        if replay(GAME, transcript, Proposal(names(deck), seed=seed), actions) is None:
            continue
        completions = math.factorial(sum(rest.values()))
        for copies in rest.values():
            completions //= math.factorial(copies)
        weights[values] = completions
    total = sum(weights.values())
    return hidden, {values: weight / total for values, weight in weights.items()}


class BankerNeverGetsATwelve(QuitlokSampler):
    """A planted bias: proposals that deal the banker (the last card dealt) a 12 are drawn again."""

    def propose(self, transcript, rng):
        while True:
            proposal = super().propose(transcript, rng)
            if proposal.deck[transcript.players - 1] != "Q12":
                return proposal


def sampled_distribution(transcript, draws, sampler, count, seed):
    """How often the `draws` ((deck, index): 0 for the first deck, k after the k-th reshuffle)
    held each tuple of cards in `count` sampled deals."""
    rng = random.Random(seed)
    counts = Counter()
    for _ in range(count):
        proposal, _ = sample_deal(transcript, rng, sampler)
        decks = [[CARD_BY_NAME[card] for card in proposal.deck]] + [order[::-1] for order in proposal.rng.arranged]
        counts[tuple(decks[number][index] for number, index in draws)] += 1
    return counts


def test_sampled_first_decks_are_uniform_among_consistent_ones_and_a_planted_bias_is_caught():
    """Chi-square against the exact enumeration, at a 5-player position where seat 3 has seen two
    players play (a blot, then a stay) and four dealt cards are hidden from it; the cells are the
    pair (first hidden card, banker's card): 4000 samples with a fixed seed, passing at p > 0.001
    (a correct sampler fails one run in a thousand); the sampler that never deals the banker a 12
    must give p < 1e-6 with as many samples."""
    transcript = next(prefix for prefix, _ in positions(5, {}, "random", 3, 3, most_decks=1)
                      if sum(1 for event in prefix.events() if event["type"] in ("blot", "stay")) >= 2)
    hidden, exact = first_deck_distribution(transcript)
    banker = transcript.players - 1  # the banker's card is dealt last
    assert len(hidden) == 4 and banker in hidden and len(exact) > 1000
    marginal = Counter()
    for values, probability in exact.items():
        marginal[values[0], values[hidden.index(banker)]] += probability
    cells = (hidden[0], banker)
    cells = [(0, index) for index in cells]
    uniform = sampled_distribution(transcript, cells, SAMPLER, 4000, seed=1)
    assert chi_square_pooled_p_value(uniform, marginal) > 0.001
    biased = sampled_distribution(transcript, cells, BankerNeverGetsATwelve(), 4000, seed=1)
    assert chi_square_pooled_p_value(biased, marginal) < 1e-6


def blot_always(view, legal, rng):
    """A policy that blots whenever it may: every player's hand ends shown (bust or 21), so the
    seat sees nearly every card, and the hidden ones are the bankers'."""
    return next((action for action in legal if action["type"] == "blot"), None) or random_action(legal, rng)


class LaidOutShuffles(random.Random):
    """An rng whose k-th shuffle puts `drawn[k]` on top (top first) and the rest below in sorted
    order, recording the cards it was given; `fits` turns false when they lack a planned card."""

    def __init__(self, drawn):
        super().__init__(0)
        self.drawn = drawn
        self.given = []
        self.fits = True

    def shuffle(self, x):
        planned = self.drawn[len(self.given)]
        self.given.append(Counter(x))
        rest = Counter(x)
        rest.subtract(planned)
        if min(rest.values()) < 0:
            self.fits = False
            return
        x[:] = (planned + sorted(rest.elements()))[::-1]


def labelled_orders(copies, drawn):
    """How many ways the labelled copies in a deck holding `copies` fill places showing `drawn`."""
    count = 1
    for card, needed in Counter(drawn).items():
        count *= math.perm(copies[card], needed)
    return count


def exact_hidden_distribution(transcript):
    """The exact distribution of the hidden drawn cards over uniformly random deals (first deck
    and reshuffle permutations) consistent with the transcript, by brute force: every assignment
    of numbers to the hidden draws, kept when it replays consistently, weighted by the labelled
    deals that give it (per deck, the copies it held, as the replay shuffled them, put into the
    drawn places; the undrawn rest adds the same factor to every assignment)."""
    tracer = DrawTracer(transcript)
    tracer.follow(transcript)
    drawn = tracer.drawn_per_deck()
    hidden = [(number, index) for number, count in enumerate(drawn) for index in range(count)
              if (number, index) not in tracer.cards]
    actions = SAMPLER.actions(transcript)
    seed = seed_for_first_banker(transcript.players, QuitlokSampler._first_banker(transcript, random.Random(0)))
    weights = {}
    for values in itertools.product(range(1, 13), repeat=len(hidden)):
        decks = [[tracer.cards.get((number, index)) for index in range(count)] for number, count in enumerate(drawn)]
        for (number, index), card in zip(hidden, values):
            decks[number][index] = card
        rest = Counter(FULL_DECK)
        rest.subtract(decks[0])
        if min(rest.values()) < 0:
            continue
        shuffles = LaidOutShuffles(decks[1:])
        proposal = Proposal(names(decks[0] + sorted(rest.elements())), seed=seed, rng=shuffles)
        if replay(GAME, transcript, proposal, actions) is None or not shuffles.fits:
            continue
        weights[values] = labelled_orders(Counter(FULL_DECK), decks[0]) * math.prod(
            labelled_orders(given, deck) for given, deck in zip(shuffles.given, decks[1:]))
    total = sum(weights.values())
    return hidden, {values: weight / total for values, weight in weights.items()}


class HeldCardNeverAFour(QuitlokSampler):
    """A planted bias: proposals whose first deck's 20th card (a banker's hidden card, still held
    at the reshuffle in the test's position) is a 4 are drawn again."""

    def propose(self, transcript, rng):
        while True:
            proposal = super().propose(transcript, rng)
            if proposal.deck[19] != "Q4":
                return proposal


def test_sampled_deals_after_a_reshuffle_are_uniform_among_consistent_ones_and_a_planted_bias_is_caught():
    """Chi-square against the exact enumeration, at a 5-player position just after the first
    reshuffle (blotting players, so three drawn cards are hidden: bankers' cards, two of them held
    when the deck was reshuffled, which changes what the new deck holds and how likely the seen
    cards of it are: quitlok.md § The deck, § Sampling hidden cards). Twelve assignments are
    consistent, with weights 2:1 by how many copies of a seen card the new deck held: 1500
    samples with a fixed seed, passing at p > 0.001; the sampler that never gives the held card a
    4 (28% of the mass) must give p < 1e-6 with as many samples."""
    transcript, _, _, _ = play_game(5, {}, 0, 0, blot_always)
    transcript = at_decision(transcript, 3)
    assert reshuffles_told(transcript) == 1
    hidden, exact = exact_hidden_distribution(transcript)
    assert hidden == [(0, 4), (0, 18), (0, 19)] and len(exact) == 12 and len(set(exact.values())) == 2
    tracer = DrawTracer(transcript)
    tracer.follow(transcript)
    assert {(0, 18), (0, 19)} <= set(tracer.held_at_reshuffle[1])
    uniform = sampled_distribution(transcript, hidden, SAMPLER, 1500, seed=1)
    assert chi_square_pooled_p_value(uniform, exact) > 0.001
    biased = sampled_distribution(transcript, hidden, HeldCardNeverAFour(), 1500, seed=1)
    assert chi_square_pooled_p_value(biased, exact) < 1e-6


def test_hands_left_out_of_the_count_and_tested_by_redrawing_keep_the_samples_uniform(monkeypatch):
    """Chi-square against the exact enumeration, with the count's limits at their least, at a
    5-player position (random play, seed 7, seat 2's second decision) where a player's unshown hand
    holds two of the three hidden cards: the count leaves that hand out and `HiddenCards.sample`
    tests it by redrawing, filling only the decks it reads until it passes (quitlok.md § Sampling
    hidden cards). 1500 samples with a fixed seed, passing at p > 0.001."""
    monkeypatch.setattr(quitlok, "MOST_STATES", 0)
    monkeypatch.setattr(quitlok, "MOST_JOINT_DRAWS", 0)
    transcript = at_decision(play_game(5, {}, 7, 2, POLICIES["random"])[0], 2)
    hidden, exact = first_deck_distribution(transcript)
    sampler = QuitlokSampler()
    counted = sampler.hidden_cards(transcript)
    assert len(hidden) == 3 and counted.dropped and len(counted.hands[min(counted.dropped)].hidden) == 2
    uniform = sampled_distribution(transcript, [(0, index) for index in hidden], sampler, 1500, seed=1)
    assert chi_square_pooled_p_value(uniform, exact) > 0.001


def test_samples_depend_on_the_transcript_only_not_on_the_true_hidden_cards():
    # Game B is replayed from a deal sampled for game A's seat, so the seat's transcripts are equal
    # while the hidden cards differ; the same seed must then give the same samples.
    rng = random.Random(3)
    compared = 0
    for players in (5, 8):
        transcript, truths, actions, _ = play_game(players, {}, 40 + players, 1, POLICIES["heuristic"])
        count = min(8, len(transcript.decisions))
        prefix = at_decision(transcript, count)
        proposal, other_state = sample_deal(prefix, rng)
        if other_state.hidden_cards(1) == truths[count - 1].hidden_cards(1):
            continue
        other = at_decision(transcript, count)
        other.decisions = json.loads(json.dumps(other.decisions))  # a transcript of its own, equal
        reproduces(other, proposal, proposal.rng.arranged, SAMPLER.actions(other))
        for seed in range(3):
            first = sample_deal(prefix, random.Random(seed), QuitlokSampler())[1]
            second = sample_deal(other, random.Random(seed), QuitlokSampler())[1]
            assert first.hidden_cards(1) == second.hidden_cards(1)
            assert first.deck == second.deck and first.hands == second.hands
        compared += 1
    assert compared


RECORDING_BOT = '''
import json, sys
from cardarena.protocol.bot import RandomBot, run

class Recorder(RandomBot):
    def start_game(self, info):
        super().start_game(info)
        self.log = open(sys.argv[1] + f".{info['seat']}", "w")
        self.log.write(json.dumps(["start", info]) + "\\n")

    def decide(self, view, legal, request):
        action = super().decide(view, legal, request)
        self.log.write(json.dumps(["decision", request, action]) + "\\n")
        self.log.flush()
        return action

    def end_game(self, info):
        self.log.write(json.dumps(["end", info]) + "\\n")
        self.log.close()

run(Recorder(int(sys.argv[2])))
'''


def test_knowledge_fed_only_a_real_matchs_messages_samples_the_seats_view(tmp_path):
    folder = writable_folder(tmp_path)
    script = folder / "recording_bot.py"
    script.write_text(RECORDING_BOT)
    bots = [BotSpec(name=f"rec{index}", command=(sys.executable, "recording_bot.py", f"bot{index}", str(index)),
                    cwd=str(folder), folder=str(folder)) for index in range(5)]
    with Match(bots, Limits(handshake_timeout=10.0, sandbox=SandboxSettings(mode=NONE))) as match:  # bots write their logs
        record = match.play(GAME, seed=5)
    assert not record.faults
    lines = [json.loads(line) for line in (folder / "bot2.2").read_text().splitlines()]  # bot 2 sat at seat 2
    assert lines[0][0] == "start" and lines[-1][0] == "end"
    knowledge = SeatKnowledge(lines[0][1])
    decisions = [line for line in lines if line[0] == "decision"][:6]
    for _, request, action in decisions[:-1]:
        knowledge.observe(request)
        knowledge.answered(action)
    knowledge.observe(decisions[-1][1])
    state = knowledge.sample(random.Random(0))
    assert state.view(2) == decisions[-1][1]["view"]
    assert state.legal_actions() == decisions[-1][1]["legal"]
