"""Casino's deal sampler (cardarena.search.casino): consistency, uniformity and no leak.

Rules cited are runner/games/casino.md's; what the sampler encodes is in its section "Sampling
hidden cards (cardarena.search)".
"""

from __future__ import annotations

import itertools
import json
import random
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.cards import NAME
from cardarena.games import get_game
from cardarena.games.base import GameState, IllegalAction
from cardarena.protocol.actions import find_legal, random_action
from cardarena.referee.match import Match
from cardarena.config import BotSpec, Limits, SandboxSettings
from cardarena.search import SeatKnowledge, Transcript, replay
from cardarena.search.casino import SAMPLER, CasinoSampler, LaterDecks, counts_table
from cardarena.search.knowledge import DealSampler, Proposal
from tests.conftest import random_bot, writable_folder
from tests.chi_square import chi_square_p_value
from tests.search_support_casino import (RecordedGame, knowledge_of, random_policy, record_game,
                                         sampling_casino_with)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sample_bots" / "heuristic"))

from heuristic_bot import casino as heuristic  # noqa: E402  (the bot's folder is not a package)

GAME = get_game("casino")
#: every player count and every rule option (runner/games/casino.md § Engine choices)
CONFIGS = [
    (2, {}), (3, {}), (4, {}), (4, {"partnerships": True}), (2, {"lenient_builds": True}),
    (3, {"lenient_builds": True, "sweeps": True}), (4, {"partnerships": True, "lenient_builds": True, "target": 11}),
    (2, {"sweeps": True, "target": 50}),
]
#: a p-value below this fails the uniformity test
P_VALUE_BOUND = 1e-3


def heuristic_policy(state: GameState, rng: random.Random):
    """The heuristic sample bot's answer."""
    return heuristic.decide(state.view(state.to_move()), state.legal_actions(), rng)


class Spy(DealSampler):
    """Casino's sampler, keeping the whole deal of its latest proposal (the accepted one, after `sample`)."""

    def __init__(self, sampler: CasinoSampler = SAMPLER):
        self.sampler = sampler
        self.deal: tuple[list[str], int, list[list[int]]] | None = None

    def actions(self, transcript):
        return self.sampler.actions(transcript)

    def propose(self, transcript, rng):
        proposal = self.sampler.propose(transcript, rng)
        self.deal = (proposal.deck, proposal.seed, list(proposal.rng.decks))
        return proposal


def dealt(transcript: Transcript, deal: tuple[list[str], int, list[list[int]]]) -> GameState:
    """The state a whole deal (first deck, seed, later rounds' decks) starts the game with."""
    deck, seed, later = deal
    state = GAME.new_state(transcript.players, transcript.options, seed=seed, deck=deck)
    state.rng = LaterDecks(later)
    return state


def assert_deal_reproduces(recorded: RecordedGame, transcript: Transcript, deal) -> GameState:
    """Replays the true actions from `deal` without `replay`: every view, event and legal list the
    seat received comes out the same. Returns the state reached."""
    state, seat, asked, pending = dealt(transcript, deal), transcript.seat, 0, []

    def assert_told(message):
        assert pending == message["events"]
        assert state.view(seat) == message["view"]
        assert state.legal_actions() == message["legal"]

    for mover, action in recorded.actions_before(transcript):
        if mover == seat:
            assert_told(transcript.decisions[asked])
            asked, pending = asked + 1, []
        pending += state.checked_apply(action)
    if transcript.game_end is not None:
        assert state.is_over() and pending == transcript.game_end["events"]
    else:
        assert asked == len(transcript.decisions) - 1
        assert_told(transcript.decisions[-1])
    return state


def check_position(recorded: RecordedGame, transcript: Transcript, rng: random.Random) -> None:
    """One sample at one position: its view is the seat's, its deal replays the seat's whole game,
    and search can play on from it."""
    seat = transcript.seat
    assert SAMPLER.actions(transcript) == recorded.actions_before(transcript)
    spy = Spy()
    with sampling_casino_with(spy):
        sampled = knowledge_of(transcript).sample(rng)
    if transcript.game_end is None:
        assert sampled.view(seat) == transcript.current_view()
    else:
        assert sampled.is_over()
    direct = assert_deal_reproduces(recorded, transcript, spy.deal)
    assert [direct.view(other) for other in range(transcript.players)] == \
        [sampled.view(other) for other in range(transcript.players)]
    fork = sampled.clone()
    for _ in range(8):
        if fork.is_over():
            break
        fork.apply(random_action(fork.legal_actions(), rng))


@pytest.mark.parametrize("policy,games", [(random_policy, 3), (heuristic_policy, 2)], ids=["random", "heuristic"])
@pytest.mark.parametrize("players,options", CONFIGS, ids=[f"{p}-{'-'.join(o) or 'plain'}" for p, o in CONFIGS])
def test_samples_give_the_seat_its_view_and_their_deals_replay_everything_it_saw(players, options, policy, games):
    """Every other decision of every seat in a few one-round games, and each game's end: about
    2,100 positions over the parameters."""
    options = {**options, "max_rounds": 1}
    positions = 0
    for seed in range(games):
        recorded = record_game(GAME, players, options, seed, policy)
        rng = random.Random(seed)
        for seat in range(players):
            for decisions in [*range(1, len(recorded.transcripts[seat].decisions) + 1, 2), None]:
                check_position(recorded, recorded.position(seat, decisions), rng)
                positions += 1
    assert positions >= 40 * games


@pytest.mark.parametrize("players,options", [(2, {}), (3, {"lenient_builds": True}), (4, {"partnerships": True})])
def test_samples_stay_consistent_across_rounds(players, options):
    """runner/games/casino.md § Engine choices (Dealing): later rounds are shuffled from the seed;
    the sampled deal reproduces them, in rounds 2 and 3 and at the game's end."""
    recorded = record_game(GAME, players, {**options, "max_rounds": 3, "target": 50}, 7, random_policy)
    assert recorded.final.round == 3
    rng = random.Random(7)
    for seat in range(players):
        decisions = len(recorded.transcripts[seat].decisions)
        for count in [*range(decisions // 3, decisions + 1, decisions // 5), None]:
            check_position(recorded, recorded.position(seat, count), rng)


def replaying(actions, then=random_policy):
    """A policy that plays `actions` (seat, action) in turn, each only where legal, then `then`."""
    queue = iter(actions)

    def policy(state, rng):
        planned = next(queue, None)
        if planned is None:
            return then(state, rng)
        if find_legal(state.legal_actions(), planned[1]) is None:
            raise IllegalAction(f"{planned[1]} is not legal in the other deal")
        return planned[1]

    return policy


def test_samples_do_not_depend_on_the_hidden_cards():
    """Two deals that differ only in cards seat 0 has not seen (another hand's unplayed card and a
    stock card swapped) tell it the same; its samples, for the same seeds, are the same."""
    players, options, seed = 3, {"max_rounds": 1}, 4
    deck = list(NAME)
    random.Random(seed).shuffle(deck)
    first = record_game(GAME, players, options, seed, random_policy, deck=deck)
    transcript = first.position(0, 6)
    truth = GAME.new_state(players, options, seed, deck=deck)
    for _, action in first.actions_before(transcript):
        truth.apply(action)
    assert truth.view(0)["stock"] > 0
    in_hands = [card for other in (1, 2) for card in truth.view(other)["hand"]]
    in_stock = [card for card in truth.hidden_cards(0) if card not in in_hands]
    for held, stocked in itertools.product(in_hands, in_stock):
        swapped = [stocked if card == held else held if card == stocked else card for card in deck]
        try:
            second = record_game(GAME, players, options, seed, replaying(first.actions_before(transcript)),
                                 deck=swapped)
        except IllegalAction:
            continue  # the swap made a move of the other hand illegal: the seat would see it
        other = second.position(0, 6)
        if other.decisions == transcript.decisions:
            break
    else:
        raise AssertionError("no swap of hidden cards keeps seat 0's transcript")
    assert other.answers == transcript.answers and other is not transcript
    for sample_seed in range(20):
        one = knowledge_of(transcript).sample(random.Random(sample_seed))
        two = knowledge_of(other).sample(random.Random(sample_seed))
        assert [one.view(seat) for seat in range(players)] == [two.view(seat) for seat in range(players)]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=4),
       st.lists(st.tuples(st.integers(1, 3), st.sets(st.integers(0, 2), min_size=1, max_size=2)),
                min_size=1, max_size=2))
def test_count_tables_count_the_deals_meeting_the_build_obligations(sizes, demands):
    """runner/games/casino.md § Trail (build obligation): counts_table's total is the number of
    ways to deal the bound hands (one per demand, of its size, holding a card of each class it
    needs) from cards in classes of `sizes`, by brute force."""
    demands = tuple((hand, tuple(sorted(c for c in needed if c < len(sizes)))) for hand, needed in demands)
    cards = [c for c, size in enumerate(sizes) for _ in range(size)]

    def ways(seat, left):
        if seat == len(demands):
            return 1
        hand, needed = demands[seat]
        return sum(ways(seat + 1, left - set(chosen)) for chosen in itertools.combinations(sorted(left), hand)
                   if all(any(cards[i] == c for i in chosen) for c in needed))

    cumulative, tables = counts_table(demands, tuple(sizes))
    assert (cumulative[-1] if tables else 0) == ways(0, frozenset(range(len(cards))))
    assert all(sum(row) == hand for table in tables for row, (hand, _) in zip(table, demands))


def test_a_seat_before_its_first_decision_gets_any_deal_and_dealer():
    transcript = record_game(GAME, 3, {"max_rounds": 1}, 0, random_policy).position(0, 1)
    transcript = Transcript(game_start=transcript.game_start)
    dealers = {knowledge_of(transcript).sample(random.Random(seed)).view(0)["dealer"] for seed in range(30)}
    assert dealers == {0, 1, 2}


RECORDING_BOT = '''
import json, sys
from cardarena.protocol.bot import RandomBot, run

class Recorder(RandomBot):
    """The random bot, writing every message it gets and every answer it gives as JSON lines."""

    def __init__(self, path):
        super().__init__(3)
        self.log = open(path, "w")

    def write(self, kind, message):
        self.log.write(json.dumps({kind: message}) + "\\n")
        self.log.flush()

    def start_game(self, info):
        super().start_game(info)
        self.write("message", info)

    def decide(self, view, legal, request):
        action = super().decide(view, legal, request)
        self.write("message", request)
        self.write("answer", action)
        return action

    def end_game(self, info):
        self.write("message", info)

run(Recorder(sys.argv[1]))
'''


def test_knowledge_fed_only_a_real_matchs_messages_samples_the_seats_views(tmp_path):
    """A recording bot plays a real Match (subprocesses, msgpack); its messages alone feed
    SeatKnowledge, whose samples show the seat each view it was sent."""
    folder = writable_folder(tmp_path)
    script, log = folder / "recorder.py", folder / "seat0.jsonl"
    script.write_text(RECORDING_BOT)
    recorder = BotSpec(name="recorder", command=(sys.executable, str(script), str(log)),
                       cwd=str(folder), folder=str(folder))
    limits = Limits(handshake_timeout=10.0, decision_timeout=2.0, sandbox=SandboxSettings(mode="none"))  # it writes a file
    with Match([recorder, random_bot("other", 5)], limits) as match:
        record = match.play(GAME, seed=11, options={"max_rounds": 2, "target": 50})
    assert not record.faults, record.faults[0].detail
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    knowledge = SeatKnowledge(lines[0]["message"])
    rng = random.Random(0)
    checked = 0
    for line in lines[1:]:
        if "answer" in line:
            knowledge.answered(line["answer"])
            continue
        knowledge.observe(line["message"])
        if line["message"]["type"] == "game_end":
            assert knowledge.sample(rng).is_over()
        elif line["message"]["decision"] % 5 == 0:
            assert knowledge.sample(rng).view(0) == line["message"]["view"]
            checked += 1
    assert checked > 10 and knowledge.transcript.game_end is not None


# ---------------------------------------------------------------- uniformity


def positions_where(players: int, wanted) -> tuple[RecordedGame, list[str], int, Transcript]:
    """The first position of random one-round play (seeds 0, 1, ...; seats; decisions) whose view
    satisfies `wanted(view, seat)`, with the game, its deck and its seed (which drew the dealer)."""
    options = {"max_rounds": 1}
    for seed in range(200):
        deck = list(NAME)
        random.Random(seed).shuffle(deck)
        recorded = record_game(GAME, players, options, seed, random_policy, deck=deck)
        for seat in range(players):
            for count, message in enumerate(recorded.transcripts[seat].decisions, start=1):
                if message["view"]["move"] is None and wanted(message["view"], seat):
                    return recorded, deck, seed, recorded.position(seat, count)
    raise AssertionError("no such position in 200 games")


def hidden_count(view, seat):
    return view["stock"] + sum(player["hand_size"] for other, player in enumerate(view["players"]) if other != seat)


def owners(view, seat):
    """The other seats owning a build, and the build values, as (owner, value) pairs."""
    return {(build["owner"], build["value"]) for build in view["table"]["builds"] if build["owner"] != seat}


def cells(deck: list[str], hidden: list[str]):
    """Every assignment of the `hidden` cards to the blocks of four (runner/games/casino.md
    § Engine choices, Dealing) where the true deck holds them, as a tuple of sets (one per block), with a deck and
    the blocks' numbers."""
    where = {card: index for index, card in enumerate(deck)}
    blocks: dict[int, list[int]] = {}
    for card in hidden:
        blocks.setdefault(where[card] // 4, []).append(where[card])
    slots = [sorted(places) for _, places in sorted(blocks.items())]

    def fill(index, left):
        if index == len(slots):
            yield ()
            return
        for chosen in itertools.combinations(sorted(left), len(slots[index])):
            for rest in fill(index + 1, left - set(chosen)):
                yield (frozenset(chosen), *rest)

    for cell in fill(0, frozenset(hidden)):
        order = list(deck)
        for places, cards in zip(slots, cell):
            for place, card in zip(places, sorted(cards)):
                order[place] = card
        yield cell, order, [places[0] // 4 for places in slots]


def consistent_cells(recorded: RecordedGame, deck: list[str], seed: int, transcript: Transcript):
    """The cells of the position whose deck reproduces everything the seat saw (checked by a direct
    replay, and `replay` agrees), with the numbers of the blocks holding hidden cards and the count
    of all cells."""
    state = GAME.new_state(transcript.players, transcript.options, seed=seed, deck=deck)
    for _, action in recorded.actions_before(transcript):
        state.apply(action)
    good, total, blocks = [], 0, None
    for cell, order, blocks in cells(deck, state.hidden_cards(transcript.seat)):
        total += 1
        try:
            assert_deal_reproduces(recorded, transcript, (order, seed, []))
            reproduced = True
        except (AssertionError, IllegalAction):
            reproduced = False
        accepted = replay(GAME, transcript, Proposal(order, seed=seed), SAMPLER.actions(transcript))
        assert reproduced == (accepted is not None)
        if reproduced:
            good.append(cell)
    return good, blocks, total


def sampled_cells(transcript: Transcript, blocks: list[int], hidden: set[str], sampler: CasinoSampler,
                  samples: int, seed: int) -> Counter:
    """How often each cell (the `hidden` cards in each of the `blocks`) comes out in `samples`
    samples of SeatKnowledge."""
    spy = Spy(sampler)
    knowledge = knowledge_of(transcript)
    rng = random.Random(seed)
    seen: Counter = Counter()
    for _ in range(samples):
        with sampling_casino_with(spy):
            knowledge.sample(rng)
        deck = spy.deal[0]
        seen[tuple(frozenset(hidden.intersection(deck[4 * block:4 * block + 4])) for block in blocks)] += 1
    return seen


def samples_for(good) -> int:
    """The sample size for a chi-square over the cells `good`: 8 per cell, at least 120."""
    return max(120, 8 * len(good))


def uniformity_p_value(good, seen: Counter) -> float:
    assert set(seen) <= set(good)  # nothing inconsistent is ever sampled
    samples = sum(seen.values())
    return chi_square_p_value([seen[cell] for cell in good], [samples / len(good)] * len(good))


#: (label, players, wanted view): small positions of the last deals, where every cell is enumerated
UNIFORMITY_POSITIONS = [
    # two other players bound to builds of different values (runner/games/casino.md § Trail, build obligation)
    ("two obligations", 4, lambda view, seat: view["stock"] == 0 and hidden_count(view, seat) == 6
     and len({owner for owner, _ in owners(view, seat)}) == 2
     and len({value for _, value in owners(view, seat)}) == 2),
    # two other players bound to builds of the same value: they share that value's cards
    ("shared obligation", 3, lambda view, seat: view["stock"] == 0 and hidden_count(view, seat) == 6
     and len({owner for owner, _ in owners(view, seat)}) == 2
     and len({value for _, value in owners(view, seat)}) == 1),
    ("no build", 4, lambda view, seat: view["stock"] == 0 and hidden_count(view, seat) == 5 and not owners(view, seat)),
    # the stock alone is hidden: which four cards each of the next deal's hands gets
    ("stock", 2, lambda view, seat: view["stock"] == 8 and hidden_count(view, seat) == 8),
]


@pytest.mark.parametrize("label,players,wanted", UNIFORMITY_POSITIONS, ids=[p[0] for p in UNIFORMITY_POSITIONS])
def test_samples_are_uniform_over_the_consistent_deals(label, players, wanted):
    """Chi-square of `samples_for(cells)` samples (8 per consistent cell, at least 120) against
    the uniform distribution over the cells that a direct replay finds consistent: p above 0.001,
    with fixed seeds (so it cannot flake). A cell is an assignment of the hidden cards to the
    blocks of four; the order inside a block is the engine's to sort, so every cell stands for the
    same number of deck orders (4! per block) and uniform cells are uniform deals."""
    recorded, deck, seed, transcript = positions_where(players, wanted)
    good, blocks, total = consistent_cells(recorded, deck, seed, transcript)
    if label != "no build" and label != "stock":
        assert len(good) < total  # the build obligation rules some cells out
    seen = sampled_cells(transcript, blocks, set().union(*good[0]), SAMPLER, samples_for(good), seed=1)
    assert uniformity_p_value(good, seen) > P_VALUE_BOUND


class NeverGives(CasinoSampler):
    """A planted bias: proposes again whenever `card` would be in `seat`'s hidden hand."""

    def __init__(self, card: str, block: int):
        super().__init__()
        self.card, self.block = card, block

    def propose(self, transcript, rng):
        while True:
            proposal = super().propose(transcript, rng)
            if proposal.deck.index(self.card) // 4 != self.block:
                return proposal


def test_a_sampler_that_never_deals_one_card_to_one_hand_fails_the_uniformity_test():
    """The same chi-square test, the same sample size rule and seed, on the "shared obligation"
    position: a sampler that never puts one hidden card in one hidden hand it can be in gives p
    below 0.001."""
    label, players, wanted = UNIFORMITY_POSITIONS[1]
    recorded, deck, seed, transcript = positions_where(players, wanted)
    good, blocks, _ = consistent_cells(recorded, deck, seed, transcript)
    card = min(good[0][0])
    assert any(card not in cell[0] for cell in good)  # the card may be elsewhere too
    seen = sampled_cells(transcript, blocks, set().union(*good[0]), NeverGives(card, blocks[0]), samples_for(good),
                         seed=1)
    assert uniformity_p_value(good, seen) < P_VALUE_BOUND
