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

from cardarena.games.quitlok import CARD_BY_NAME, FULL_DECK, GAME, names
from cardarena.referee.match import Match
from cardarena.referee.process import BotSpec, Limits
from cardarena.referee.sandbox import NONE, SandboxSettings
from cardarena.search import Proposal, SeatKnowledge, replay
from cardarena.search.quitlok import SAMPLER, DrawTracer, QuitlokSampler, seed_for_first_banker
from tests.conftest import writable_folder
from tests.search_support_quitlok import (
    POLICIES, at_decision, chi_square_p_value, play_game, reproduces,
)

OPTION_SETS = (
    {},
    {"ties_to_bank": False, "max_hands_per_bank": 2, "min_bet": 2, "max_bet": 6},
    {"stack": 30, "min_bank": 30, "max_hands_per_bank": 4},
)
PLAYER_COUNTS = range(5, 11)
ATTEMPTS = 5_000


def sample_deal(transcript, rng, sampler=SAMPLER, attempts=ATTEMPTS):
    """A consistent deal and the state it reaches, by the generic rejection loop (None if none found)."""
    actions = sampler.actions(transcript)
    for _ in range(attempts):
        proposal = sampler.propose(transcript, rng)
        state = replay(GAME, transcript, proposal, actions)
        if state is not None:
            return proposal, state
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
    # every reshuffled deck holds no more of a seen card than the plan allows (quitlok.md § The deck)
    for plan, deck in zip(tracer.plans(), decks):
        for card, most in plan.most_copies.items():
            assert deck.count(card) <= most


def positions(players, options, policy, seed, seat, most_decks):
    """Every decision of the seat in one game while at most `most_decks` decks have been dealt."""
    transcript, truths, _, _ = play_game(players, options, seed, seat, POLICIES[policy])
    for count in range(1, len(transcript.decisions) + 1):
        prefix = at_decision(transcript, count)
        tracer = DrawTracer(prefix)
        tracer.follow(prefix)
        if len(tracer.sizes) > most_decks:
            return
        yield prefix, truths[count - 1]


def test_sampled_deals_reproduce_every_view_and_event_the_seat_saw():
    """Thousands of positions from random and heuristic play, each player count and option set,
    every seat: each decision before the first reshuffle and the first two after it. The sampled
    deal, replayed directly, shows the seat exactly its messages, and the sampled state gives its
    current view. Positions where no deal is found in the proposals allowed (1500 before the first
    reshuffle, 150 after) are counted, and must stay rare (quitlok.md § Sampling hidden cards,
    Speed: a hand's hidden cards whose sum the rules fix, as in a two-card eleven call, are left
    to rejection)."""
    rng = random.Random(7)
    checked, skipped = Counter(), Counter()
    for players, options, policy, game in itertools.product(PLAYER_COUNTS, OPTION_SETS, sorted(POLICIES), range(2)):
        seed = players * 1000 + OPTION_SETS.index(options) * 100 + len(policy) * 10 + game
        for seat in range(players):
            after_reshuffle = 0
            for prefix, truth in positions(players, options, policy, seed, seat, most_decks=2):
                reshuffled = any(event["type"] == "reshuffle" for event in prefix.events())
                after_reshuffle += reshuffled
                if after_reshuffle > 2:
                    break
                found = sample_deal(prefix, rng, attempts=150 if reshuffled else 1500)
                if found is None:
                    skipped[reshuffled] += 1
                    continue
                proposal, state = found
                reached = reproduces(prefix, proposal, proposal.rng.arranged, SAMPLER.actions(prefix))
                assert state.view(seat) == reached.view(seat) == prefix.current_view() == truth.view(seat)
                checked[reshuffled] += 1
    assert checked[False] >= 1200 and checked[True] >= 600
    assert skipped[False] * 50 <= checked[False] and skipped[True] * 4 <= checked[True]


def first_deck_distribution(transcript):
    """The exact distribution of the cards drawn so far that the seat has not seen, over uniformly
    random first decks consistent with the transcript (no reshuffle yet): each assignment of those
    cards counts the deck orders that complete it, and is kept only when it replays consistently."""
    tracer = DrawTracer(transcript)
    tracer.follow(transcript)
    assert tracer.sizes == [len(FULL_DECK)]
    seen = tracer.plans()[0].seen
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


def sampled_distribution(transcript, cells, sampler, count, seed):
    """How often the `cells` draw indexes held each tuple of cards in `count` sampled deals."""
    rng = random.Random(seed)
    counts = Counter()
    for _ in range(count):
        proposal, _ = sample_deal(transcript, rng, sampler)
        counts[tuple(CARD_BY_NAME[proposal.deck[index]] for index in cells)] += 1
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
    uniform = sampled_distribution(transcript, cells, SAMPLER, 4000, seed=1)
    assert chi_square_p_value(uniform, marginal) > 0.001
    biased = sampled_distribution(transcript, cells, BankerNeverGetsATwelve(), 4000, seed=1)
    assert chi_square_p_value(biased, marginal) < 1e-6


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
