"""Cuajo's deal sampler (runner/search/cuajo.py): the actions it reads back, the consistency of every
sampled deal, exact uniformity of its proposals, and that it sees only the seat's own messages.
Rules: runner/games/cuajo.md (§ Sampling hidden cards (cardarena.search) lists the constraints)."""

from __future__ import annotations

import json
import random
import time
import sys
from collections import Counter
from math import factorial
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.games import get_game
from cardarena.protocol.actions import random_action
from cardarena.referee.match import Match
from cardarena.config import BotSpec, Limits, SandboxSettings
from cardarena.search import SamplingError, SeatKnowledge, Transcript, first_consistent
from cardarena.games.cuajo import NAME, parse_card
from cardarena.search.cuajo import (SAMPLER, STOCK_START, CuajoSampler, HandCount, Plan, _keeps_purro_flags, _placed,
                                    packet_positions)
from cardarena.search import knowledge as knowledge_module
from cardarena.search.knowledge import exact_sampling, proposal_deadline
from tests.conftest import writable_folder
from tests.chi_square import chi_square_pooled_p_value
from tests.search_support_cuajo import play_recorded, positions, replayed_messages
from tests.search_support_knock_rummy import fed_knowledge

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sample_bots" / "heuristic"))

from heuristic_bot import cuajo as heuristic  # noqa: E402  (the bot's folder is not a package)

GAME = get_game("cuajo")
#: every rule option that changes the deal or the play: the dealer drawn or given, the turn cap
OPTION_SETS = ({}, {"dealer": 2}, {"max_turns": 14}, {"dealer": 0, "max_turns": 40})


def random_policy(state, seat, legal, rng):
    return random_action(legal, rng)


def heuristic_policy(state, seat, legal, rng):
    return heuristic.decide(state.view(seat), legal, rng)


def masked(actions: list, seat: int) -> list:
    """The actions as `seat` can know them: another seat's secret without its card."""
    return [(mover, {**action, "card": None}) if mover != seat and action["type"] in ("secret", "sowee_secret")
            else (mover, action) for mover, action in actions]


def sampled(transcript: Transcript, rng: random.Random, attempts: int = 2000):
    """The first consistent proposal and the state it gives (as SeatKnowledge.sample finds it)."""
    return first_consistent(GAME, transcript, SAMPLER, rng, attempts)


def assert_consistent(transcript: Transcript, proposal, state) -> None:
    """The sampled deal, played with the engine directly (not through `replay`), sends the seat
    exactly the messages of its transcript, and the state shows it exactly its current view."""
    rebuilt = replayed_messages("cuajo", transcript, proposal.deck, proposal.options, proposal.actions)
    told = [(m["view"], m["events"], m["legal"]) for m in transcript.decisions]
    assert [(m["view"], m["events"], m["legal"]) for m in rebuilt.decisions] == told
    assert rebuilt.answers == transcript.answers
    if transcript.game_end is None:
        assert not state.is_over() and state.view(transcript.seat) == transcript.current_view()
    else:
        assert state.is_over()
        for told in ("events", "reveal", "result"):  # the reveal shows every hand and the stock left
            assert rebuilt.game_end[told] == transcript.game_end[told], told


def other_purro_flags(transcript: Transcript) -> int:
    """How many times another seat was announced purro so far (past that, each sample deals those
    hands purro, a count of 0.05-1.5 s per hand and position: cuajo.md § Sampling hidden cards)."""
    return sum(event["type"] == "purro" and event["purro"] and event["seat"] != transcript.seat
               for event in transcript.events())


def no_other_purro_yet(transcript: Transcript) -> bool:
    return other_purro_flags(transcript) == 0


# ---------------------------------------------------------------- reading the actions back


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), options=st.sampled_from(OPTION_SETS), heuristic_play=st.booleans())
def test_actions_read_from_one_seats_messages_are_the_games_actions(seed, options, heuristic_play):
    played = play_recorded("cuajo", 4, options, seed, heuristic_policy if heuristic_play else random_policy)
    for seat, transcript in enumerate(played.transcripts):
        assert SAMPLER.actions(transcript) == masked(played.actions, seat)


def test_the_automatic_take_after_the_turn_cap_is_not_an_action():
    """cuajo.md § Engine choices (max_turns): once the last turn is over, the next player takes the
    last discard automatically when it completes the hand; the take event is no move of theirs."""
    complete_but_one = ["Ao", "Ac", "Ae", "3o", "4o", "5o", "3c", "4c", "5c", "Jo", "Ho", "Ko", "Jc", "Hc", "Kc"]
    rest = GAME.deck(4)
    for card in complete_but_one + ["Ab"]:
        rest.remove(card)
    random.Random(0).shuffle(rest)
    deck = complete_but_one + rest[:45] + ["Ab"] + rest[45:]
    played = play_recorded("cuajo", 4, {"dealer": 0, "max_turns": 1}, 0,
                           lambda state, seat, legal, rng: {"type": "discard", "card": "Ab"}, deck=deck)
    assert [event["type"] for event in played.transcripts[0].game_end["events"]] == ["discard", "take", "win"]
    for transcript in played.transcripts:
        assert SAMPLER.actions(transcript) == [(0, {"type": "discard", "card": "Ab"})]


# ---------------------------------------------------------------- consistency


def consistency_positions(policy, seeds, every: int):
    """Transcripts at every `every`-th decision of each seat, and at the end, in every option set."""
    for options in OPTION_SETS:
        for seed in seeds:
            played = play_recorded("cuajo", 4, options, seed, policy)
            for transcript in played.transcripts:
                for index, position in enumerate(positions(transcript)):
                    if (index % every == 0 or position.game_end is not None) and no_other_purro_yet(position):
                        yield position


@pytest.mark.parametrize("policy, seeds, every", [(random_policy, range(4), 2), (heuristic_policy, range(12), 1)],
                         ids=["random", "heuristic"])
def test_every_sampled_deal_gives_the_seat_exactly_what_it_saw(policy, seeds, every):
    """Every `every`-th decision of every seat up to its 24th, then every 8th of the later ones (one costs
    its count, 0.1-0.5 s: see cuajo.md § Sampling hidden cards, Speed), in every option set, before
    another seat is announced purro (the positions after it: `test_positions_after_purro_announcements_are_sampled_
    consistently_in_every_option_set`)."""
    rng = random.Random(7)
    checked = late = 0
    for transcript in consistency_positions(policy, seeds, every):
        if len(transcript.decisions) > 24:
            late += 1
            if late % 8:
                continue
        assert_consistent(transcript, *sampled(transcript, rng))
        checked += 1
    assert checked >= 300 and (late >= 200 or policy is heuristic_policy)


def test_late_positions_of_random_play_are_sampled_consistently():
    """The seat's last decision of whole random hands (about its 46th-49th), where the hidden hands
    were seen to give up the most cards."""
    rng = random.Random(5)
    for seed in range(3):
        played = play_recorded("cuajo", 4, {}, seed, random_policy)
        late = list(positions(played.transcripts[1]))[-2]
        assert len(late.decisions) >= 40
        assert_consistent(late, *sampled(late, rng, attempts=20))


def test_samples_after_the_end_give_the_revealed_hands_and_stock():
    """cuajo.md § Result and reveal: game_end shows every hand, every secret's cards and the stock
    left, so a deal sampled then must give exactly those (each hidden hand's dealt and unseen drawn
    cards are then known as a whole, dealt in an order its moves allow). Every seat at the end of
    hands of random and heuristic play, in every option set, purro hands and secrets included (also
    where three other seats were announced purro, beyond the budget before the end). Hand 3 is
    left out: a hand seen purro at five judgements in a row keeps about no deal in the budget when its
    cards are fixed and only their order is free (hand 20 too, one seat, in 20,000 placements)."""
    rng = random.Random(11)
    ends = Counter()
    for seed in [seed for seed in range(24) if seed not in (3, 20)]:
        options = OPTION_SETS[seed % len(OPTION_SETS)]
        played = play_recorded("cuajo", 4, options, seed, heuristic_policy if seed % 2 else random_policy)
        for transcript in played.transcripts:
            proposal, state = sampled(transcript, rng, attempts=50)
            assert_consistent(transcript, proposal, state)
            assert state.reveal() == played.state.reveal()
            ends["purro"] += other_purro_flags(transcript) > 0
            ends["two purro"] += other_purro_flags(transcript) > 1
            ends["secret"] += bool(Plan(transcript).reading.hidden_cards)
    assert ends["purro"] >= 40 and ends["two purro"] >= 15 and ends["secret"] >= 3, ends


def hands_seen_purro(plan: Plan) -> tuple[int, bool]:
    """How many hidden hands were seen purro, and whether one of them was announced purro at several
    prefixes (an unseen draw between two such announcements: cuajo.md § Sampling hidden cards, its
    limits)."""
    across = False
    for other in plan.purro_checked:
        drawn, prefixes = 0, set()
        for step in plan.reading.flows[other]:
            if step[0] == "unseen":
                drawn += 1
            elif step[0] == "purro" and step[1]:
                prefixes.add(drawn)
        across |= len(prefixes) > 1
    return len(plan.purro_checked), across


def test_positions_after_purro_announcements_are_sampled_consistently_in_every_option_set():
    """The test above stops at another seat's first purro announcement (each later position costs
    its walks); here every 4th decision of each seat after one, in heuristic hands 0 and 1 of every
    option set, with one or two hidden hands seen purro, at one prefix or across several, and hands
    announced purro at their first discard (a 15-card fill of nearly the whole deck: cuajo.md §
    Sampling hidden cards, Counting those draws). Three hands seen purro are beyond the budget
    (cuajo.md § Sampling hidden cards, Its limits); these hands have none."""
    rng = random.Random(17)
    kinds = Counter()
    for options in OPTION_SETS:
        for seed in (0, 1):
            played = play_recorded("cuajo", 4, options, seed, heuristic_policy)
            for transcript in played.transcripts:
                after = [p for p in positions(transcript) if p.game_end is None and other_purro_flags(p)]
                for position in after[::4]:
                    kind = hands_seen_purro(Plan(position))
                    assert kind[0] <= 2, (options, seed, transcript.seat)
                    assert_consistent(position, *sampled(position, rng, attempts=2000))
                    kinds[kind] += 1
    assert sum(kinds.values()) >= 30 and kinds[(2, False)] >= 3 and kinds[(1, True)] >= 3, kinds


def test_three_hands_seen_purro_sample_consistently_when_exactness_is_waived():
    """With three hidden hands seen purro, the joint coins keep almost no deal (cuajo.md § Sampling
    hidden cards, Its limits): at this position none of 3,000 placements. `exact=False` drops those
    coins and keeps fills that fit together: dozens of the same 3,000 placements, and the deals it
    gives replay to exactly what the seat saw. The flag lasts for that sampling only."""
    played = play_recorded("cuajo", 4, {}, 3, heuristic_policy)
    position = next(p for p in positions(played.transcripts[3]) if len(p.decisions) == 16)
    plan = Plan(position)
    assert hands_seen_purro(plan)[0] == 3 and len(next(iter(plan.purro_deals.values()))) == 3
    kept = {}
    for joint in (True, False):
        rng = random.Random(5)
        kept[joint] = sum(_placed(plan, plan.choices[rng.randrange(len(plan.choices))], rng, joint) is not None
                          for _ in range(3000))
    assert kept[True] == 0 and kept[False] >= 20, kept
    rng = random.Random(1)
    for _ in range(3):
        assert_consistent(position, *first_consistent(GAME, position, SAMPLER, rng, 10_000, exact=False))
    assert exact_sampling.get() is True
    assert fed_knowledge(position).sample(random.Random(2), exact=False).view(position.seat) == position.current_view()
    sampler = CuajoSampler()
    sampler.plan(position).purro_deals  # counted before the clock below starts, as a sampling does first
    token = proposal_deadline.set(time.monotonic() + 0.3)
    try:  # the exact draw's failure tells a bot author the way out
        with pytest.raises(SamplingError, match=r"3 hidden hands were seen purro.*exact=False"):
            sampler.propose(position, random.Random(3))
    finally:
        proposal_deadline.reset(token)


def test_the_fallback_waives_exactness_only_where_the_exact_draw_fails_in_its_half_of_the_time():
    """`sample(deadline, fallback=True)` (knowledge.py, SeatKnowledge.sample; protocol/SEARCH.md):
    where three hands were seen purro (cuajo.md § Sampling hidden cards, Its limits) the exact draw
    fails only at its deadline, so catching its SamplingError leaves the waived draw no time; the
    fallback gives the exact draw half the time and still returns a consistent state by the
    deadline. Where the exact draw succeeds, the fallback returns exactly what it draws."""
    played = play_recorded("cuajo", 4, {}, 3, heuristic_policy)
    position = next(p for p in positions(played.transcripts[3]) if len(p.decisions) == 16)
    knowledge = fed_knowledge(position)
    SAMPLER.plan(knowledge.transcript).purro_deals  # the counts, made before the clocks below start
    deadline = time.monotonic() + 1.0
    with pytest.raises(SamplingError, match="exact=False"):
        knowledge.sample(random.Random(3), deadline=deadline)
    with pytest.raises(SamplingError, match="before the deadline"):  # what the naive way out gets
        knowledge.sample(random.Random(3), deadline=deadline, exact=False)
    started = time.monotonic()
    state = knowledge.sample(random.Random(3), deadline=started + 4.0, fallback=True)
    assert state.view(position.seat) == position.current_view()
    assert time.monotonic() - started >= 2.0  # the exact draw had its half
    assert exact_sampling.get() is True
    started = time.monotonic()  # the next samples at this position skip the exact draw that failed here
    for seed in (4, 5, 6):
        assert knowledge.sample(random.Random(seed), deadline=started + 4.0, fallback=True).view(position.seat) == \
            position.current_view()
    assert time.monotonic() - started < 2.0

    early = next(p for p in positions(played.transcripts[3]) if len(p.decisions) == 3)
    exact, fallen_back = (fed_knowledge(early).sample(random.Random(8), deadline=time.monotonic() + 60, fallback=flag)
                          for flag in (False, True))
    assert [exact.view(seat) for seat in range(4)] == [fallen_back.view(seat) for seat in range(4)]


def test_the_fallback_remembers_a_failed_exact_draw_until_the_next_message(monkeypatch):
    """The draws `fallback=True` asks for (knowledge.py, SeatKnowledge.sample), with an exact draw
    that always fails: exact then waived; at the same position waived only; after the seat's next
    message, exact first again."""
    asked = []

    def failing_exact(game, transcript, sampler, rng, attempts, deadline=None, exact=True):
        asked.append(exact)
        if exact:
            raise SamplingError("no exact draw here")
        return real(game, transcript, sampler, rng, attempts, deadline, exact)

    real = knowledge_module.first_consistent
    monkeypatch.setattr(knowledge_module, "first_consistent", failing_exact)
    transcript = play_recorded("cuajo", 4, {}, 0, heuristic_policy).transcripts[1]
    knowledge = fed_knowledge(next(p for p in positions(transcript) if len(p.decisions) == 2))
    for _ in range(2):
        knowledge.sample(random.Random(1), deadline=time.monotonic() + 30, fallback=True)
    assert asked == [True, False, False]
    knowledge.answered(transcript.answers[1])
    knowledge.observe(transcript.decisions[2])
    knowledge.sample(random.Random(1), deadline=time.monotonic() + 30, fallback=True)
    assert asked == [True, False, False, True, False]


#: heuristic hands (seed) whose seat seed % 4 sees another seat announced purro once (cuajo.md § Purro),
#: each sampled at the first such decision; fixed seeds, as some such positions are beyond the budget
PURRO_SEEDS = (0, 1, 3, 5, 8, 9, 10)


def test_positions_after_another_seat_went_purro_are_sampled_consistently():
    rng = random.Random(9)
    for seed in PURRO_SEEDS:
        played = play_recorded("cuajo", 4, {}, seed, heuristic_policy)
        position = next(p for p in positions(played.transcripts[seed % 4])
                        if other_purro_flags(p) == 1 and p.game_end is None)
        proposal, state = sampled(position, rng, attempts=20)
        assert_consistent(position, proposal, state)


def purro_edge(transcript: Transcript) -> str | None:
    """What the one other seat announced purro so far did that the proposal's own purro check must
    follow: "broken" (it left purro: cuajo.md § Purro, broken purro), else "four" or "sowee" (it laid
    that secret face down: § Secrets), else None (also when more or fewer seats were announced)."""
    events = transcript.events()
    announced = {event["seat"] for event in events
                 if event["type"] == "purro" and event["purro"] and event["seat"] != transcript.seat}
    if len(announced) != 1:
        return None
    other = announced.pop()
    if any(event["type"] == "purro" and event["seat"] == other and event["broken"] for event in events):
        return "broken"
    kinds = [event["kind"] for event in events if event["type"] == "secret" and event["seat"] == other]
    return kinds[-1] if kinds else None


#: heuristic hands (seed, seat, edge): the seat's first decision where `purro_edge` says so
PURRO_EDGE_CASES = ((0, 3, "broken"), (5, 3, "broken"), (13, 0, "broken"), (2, 3, "four"), (47, 1, "sowee"))


def test_positions_after_a_purro_seat_broke_or_laid_a_secret_are_sampled_consistently():
    """The proposal judges a hidden hand seen purro at each of its discards (runner/search/cuajo.py,
    `_keeps_purro_flags`): after it broke, the penalty turns go unjudged (cuajo.md § Engine choices,
    penalty turns); with a secret laid, its cards leave the free hand but count as held, and a sowee
    secret's fourth card stays among the free cards (§ Engine choices, Purro). Sampled deals must
    replay to exactly what the seat saw."""
    rng = random.Random(13)
    for seed, seat, edge in PURRO_EDGE_CASES:
        played = play_recorded("cuajo", 4, {}, seed, heuristic_policy)
        position = next(p for p in positions(played.transcripts[seat])
                        if p.game_end is None and purro_edge(p) == edge)
        assert Plan(position).purro_checked, (seed, seat)
        assert_consistent(position, *sampled(position, rng, attempts=20))


#: heuristic hands (seed, seat): the seat's first decision after two other seats were announced purro,
#: where every hand seen purro is dealt purro by construction (cuajo.md § Sampling hidden cards, A
#: hand seen purro, dealt purro): one whose later discards may lie in its prefix (0, 0), one with a
#: face-down secret and 7 choices of its card (2, 2), two hands still purro (5, 2)
TWO_PURRO_CASES = ((0, 0), (2, 2), (5, 2))


def test_positions_after_two_other_seats_went_purro_are_sampled_consistently():
    """By rejection alone such positions kept no deal in the budget (1 in some 3,000 deals per hand
    seen purro); dealt purro, a sample takes a second or two, and must replay to exactly what the
    seat saw."""
    rng = random.Random(21)
    for seed, seat in TWO_PURRO_CASES:
        played = play_recorded("cuajo", 4, {}, seed, heuristic_policy)
        position = next(p for p in positions(played.transcripts[seat])
                        if p.game_end is None and len({event["seat"] for event in p.events() if event["type"] == "purro"
                                                       and event["purro"] and event["seat"] != seat}) == 2)
        plan = Plan(position)
        assert len(plan.purro_checked) == 2 and all(set(hands) == plan.purro_checked for hands in plan.purro_deals.values())
        assert_consistent(position, *sampled(position, rng, attempts=2000))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), options=st.sampled_from(({"dealer": 1}, {"dealer": 3, "max_turns": 30})),
       heuristic_play=st.booleans())
def test_the_proposals_own_purro_check_passes_every_real_deal(seed, options, heuristic_play):
    """cuajo.md § Purro: the check a proposal makes on a hidden hand seen purro (runner/search/cuajo.py,
    `_keeps_purro_flags`) must hold for the deal actually played, at every position of every seat, or
    it would turn away consistent deals (and the samples would no longer be uniform)."""
    deck = GAME.deck(4)
    random.Random(seed).shuffle(deck)
    played = play_recorded("cuajo", 4, options, seed, heuristic_policy if heuristic_play else random_policy, deck=deck)
    types = [parse_card(card) for card in deck]
    for transcript in played.transcripts:
        for position in positions(transcript):
            plan = Plan(position)
            secret_cards = tuple(parse_card(played.actions[hidden.action_index][1]["card"])
                                 for hidden in plan.reading.hidden_cards)
            choice = plan._choice(secret_cards)
            assert choice is not None
            for other in plan.purro_checked:
                assert _keeps_purro_flags(plan, choice, other, types)


def test_secrets_laid_by_other_seats_get_a_card_from_the_deal():
    """cuajo.md § Secrets: another seat's secret is face down; the sampled deal chooses its cards
    (the four identical cards, or a sowee secret's fourth card) so that replaying it is legal."""
    rng = random.Random(3)
    seen = Counter()
    for seed in range(400):
        played = play_recorded("cuajo", 4, {"max_turns": 24}, seed, random_policy)
        for seat, transcript in enumerate(played.transcripts):
            kinds = [e["kind"] for e in transcript.game_end["events"] if e["type"] == "secret" and e["seat"] != seat]
            kinds += [e["kind"] for m in transcript.decisions for e in m["events"]
                      if e["type"] == "secret" and e["seat"] != seat]
            if kinds and no_other_purro_yet(transcript):
                proposal, state = sampled(transcript, rng)
                assert_consistent(transcript, proposal, state)
                laid = [action for mover, action in proposal.actions
                        if mover != seat and action["type"] in ("secret", "sowee_secret")]
                assert laid and all(action["card"] is not None for action in laid)
                seen.update(kinds)
        if seen["four"] >= 3 and seen["sowee"] >= 3:
            break
    assert seen["four"] >= 3 and seen["sowee"] >= 3, seen


def recording_bot(tmp_path: Path) -> BotSpec:
    """A random bot that writes every message it receives, and its answers, to messages.json."""
    script = tmp_path / "recorder.py"
    script.write_text(
        "import json, sys\n"
        "from cardarena.protocol.bot import RandomBot, run\n"
        "log = []\n"
        "class Recorder(RandomBot):\n"
        "    def start_game(self, info):\n"
        "        super().start_game(info); log.append(info)\n"
        "    def decide(self, view, legal, request):\n"
        "        action = super().decide(view, legal, request); log.append(request); log.append({'answer': action})\n"
        "        return action\n"
        "    def end_game(self, info):\n"
        f"        log.append(info); open({str(tmp_path / 'messages.json')!r}, 'w').write(json.dumps(log))\n"
        "run(Recorder(seed=5))\n")
    return BotSpec(name="recorder", command=(sys.executable, str(script)))


def test_knowledge_fed_only_a_real_match_transcript_samples_consistent_states(tmp_path):
    folder = writable_folder(tmp_path)
    bots = [recording_bot(folder)] + [BotSpec(name=f"random{i}", command=(
        sys.executable, str(ROOT / "sample_bots" / "random" / "bot.py"), "--seed", str(i))) for i in range(3)]
    limits = Limits(handshake_timeout=10.0, decision_timeout=2.0, sandbox=SandboxSettings(mode="none"))  # it writes a file
    with Match(bots, limits) as match:
        match.play(GAME, seed=11, options={"max_turns": 16})
    messages = json.loads((folder / "messages.json").read_text())
    knowledge = SeatKnowledge(messages[0])
    rng = random.Random(1)
    for message in messages[1:]:
        if "answer" in message:
            knowledge.answered(message["answer"])
            continue
        knowledge.observe(message)
        if message["type"] == "decision":
            state = knowledge.sample(rng)
            assert state.view(knowledge.transcript.seat) == message["view"]
    final = knowledge.sample(rng)
    assert final.is_over() and final.reveal()["outcome"] == messages[-1]["reveal"]["outcome"]


def test_a_proposal_that_keeps_no_deal_within_its_budget_says_so(monkeypatch):
    from cardarena.search import cuajo as sampler_module
    played = play_recorded("cuajo", 4, {"dealer": 1}, 3, random_policy)
    late = list(positions(played.transcripts[0]))[-2]
    monkeypatch.setattr(sampler_module, "MAX_PLACEMENTS", 1)
    with pytest.raises(SamplingError, match="kept in 1 placements"):
        for seed in range(50):  # a late position keeps far fewer than one deal in two
            SAMPLER.propose(late, random.Random(seed))


def test_a_proposal_stops_at_the_samplers_deadline(monkeypatch):
    """SeatKnowledge.sample's deadline also stops a Cuajo proposal under way (it may build many
    deals, and count purro hands first: cuajo.md § Sampling hidden cards): a deadline already
    passed stops it before its first placement, and one that passes during its placements at its
    next time check (every 256 placements; here each placement takes 1 ms and keeps no deal)."""
    from cardarena.search import cuajo as sampler_module
    monkeypatch.setattr(sampler_module, "MOST_PROPOSAL_SECONDS", 3600.0)
    played = play_recorded("cuajo", 4, {"dealer": 1}, 3, random_policy)
    late = list(positions(played.transcripts[0]))[-2]
    with pytest.raises(SamplingError, match="kept in 0 placements"):
        first_consistent(GAME, late, sampler_module.CuajoSampler(), random.Random(0), deadline=time.monotonic() - 1)
    monkeypatch.setattr(sampler_module, "_placed", lambda *arguments: time.sleep(0.001))
    with pytest.raises(SamplingError, match="kept in 256 placements"):
        first_consistent(GAME, late, sampler_module.CuajoSampler(), random.Random(0), deadline=time.monotonic() + 0.05)


# ---------------------------------------------------------------- uniformity


def scripted_position(layout: dict[int, str], script: list) -> tuple[Transcript, dict[str, int]]:
    """Seat 2's third decision (its second draw), dealer 0, in a deal with the cards of `layout` at
    their deck positions and the rest shuffled, after the moves of `script`; and how many copies of
    Ao and 3c seat 2 has not seen (its own 15 cards, the sowee and its own draw)."""
    rest = GAME.deck(4)
    for card in layout.values():
        rest.remove(card)
    random.Random(4).shuffle(rest)
    cards = iter(rest)
    deck = [layout[p] if p in layout else next(cards) for p in range(len(rest) + len(layout))]
    queue = list(script)
    played = play_recorded("cuajo", 4, {"dealer": 0}, 0,
                           lambda state, seat, legal, rng: queue.pop(0)[1] if queue else legal[0], deck=deck)
    transcript = next(p for p in positions(played.transcripts[2]) if len(p.decisions) == 3)
    assert transcript.current_view()["phase"] == "draw" and transcript.answers == [a for s, a in script if s == 2]
    assert not any(event["type"] == "purro" or "card" in event and event["type"] == "draw"
                   for event in transcript.events()), "the scripted deal must show no stock card"
    seen = deck[15:30] + [deck[61], deck[STOCK_START + 1]]
    return transcript, {card: 4 - seen.count(card) for card in ("Ao", "3c")}


def nested_requirements_position() -> tuple[Transcript, dict[str, int]]:
    """Seat 2's second draw, dealer 0: the dealer discarded Ao at its opening and again after a draw
    seat 2 did not see, seat 1 discarded 3c after such a draw (the others' discards went back and forth).
    So the dealer's 16 cards held an Ao, its cards and first draw two, and seat 1's cards and first
    draw a 3c: nested sets (cuajo.md § A turn: one discards from the hand)."""
    layout = {packet_positions(0, 0).start: "Ao", STOCK_START: "3c", STOCK_START + 1: "5o", STOCK_START + 2: "Ao"}
    return scripted_position(layout, [
        (0, {"type": "discard", "card": "Ao"}), (1, {"type": "draw"}), (1, {"type": "discard", "card": "3c"}),
        (2, {"type": "draw"}), (2, {"type": "discard", "card": "5o"}), (3, {"type": "take"}),
        (3, {"type": "discard", "card": "5o"}), (0, {"type": "draw"}), (0, {"type": "discard", "card": "Ao"}),
        (1, {"type": "take"}), (1, {"type": "discard", "card": "Ao"})])


def two_copies_position() -> tuple[Transcript, dict[str, int]]:
    """As `nested_requirements_position`, but the dealer took the 5o from the pile before discarding
    Ao again: its 16 cards held two Ao, one group of two copies needed by the same set."""
    layout = {packet_positions(0, 0).start: "Ao", packet_positions(0, 0).start + 1: "Ao", STOCK_START: "3c",
              STOCK_START + 1: "5o"}
    return scripted_position(layout, [
        (0, {"type": "discard", "card": "Ao"}), (1, {"type": "draw"}), (1, {"type": "discard", "card": "3c"}),
        (2, {"type": "draw"}), (2, {"type": "discard", "card": "5o"}), (3, {"type": "take"}),
        (3, {"type": "discard", "card": "5o"}), (0, {"type": "take"}), (0, {"type": "discard", "card": "Ao"}),
        (1, {"type": "take"}), (1, {"type": "discard", "card": "Ao"})])


def exact_distribution(unseen: dict[str, int], zones: list[int], required: Callable[[tuple, tuple], bool]
                       ) -> dict[tuple[tuple[int, ...], tuple[int, ...]], float]:
    """Exact chance of each (Ao per zone, 3c per zone) over every order of the unseen cards, the
    zones being groups of deck positions (the last one: every other free position), among the orders
    `required` accepts (where the discards need the copies).

    Every deck order with the same counts of Ao and 3c in each zone is equally many: per zone, the
    ways to seat those copies among its positions, times the orders of all other cards over what is
    left (the same number for every table), so enumerating the tables of counts enumerates the deals."""
    totals = Counter()

    def spread(copies: int) -> list[tuple[int, ...]]:
        found = []

        def extend(prefix, left):
            if len(prefix) == len(zones) - 1:
                found.append(tuple(prefix) + (left,))
                return
            for count in range(min(left, zones[len(prefix)]) + 1):
                extend(prefix + [count], left - count)
        extend([], copies)
        return found

    for aces in spread(unseen["Ao"]):
        for threes in spread(unseen["3c"]):
            if not required(aces, threes) or any(a + t > size for a, t, size in zip(aces, threes, zones)):
                continue
            ways = 1
            for a, t, size in zip(aces, threes, zones):
                ways *= factorial(size) // (factorial(a) * factorial(t) * factorial(size - a - t))
            totals[aces[:-1], threes[:-1]] += ways
    whole = sum(totals.values())
    return {key: ways / whole for key, ways in totals.items()}


SAMPLES = 8_000
FREE_POSITIONS = 112 - 15 - 1 - 1  # the deck less what seat 2 saw: its own cards, the sowee, its own draw
DEALER_PACKET, SEAT1_PACKET = packet_positions(0, 0), packet_positions(0, 1)
#: `nested_requirements_position`: zones dealer's 16, its first draw, seat 1's 15, its first draw, the rest
NESTED_ZONES = [16, 1, 15, 1, FREE_POSITIONS - 33]
NESTED_ZONE_OF = {**dict.fromkeys(DEALER_PACKET, 0), STOCK_START + 2: 1, **dict.fromkeys(SEAT1_PACKET, 2),
                  STOCK_START: 3}


def nested_required(aces: tuple, threes: tuple) -> bool:
    return aces[0] >= 1 and aces[0] + aces[1] >= 2 and threes[2] + threes[3] >= 1


#: `two_copies_position`: zones dealer's 16, seat 1's 15, its first draw, the rest
TWO_COPIES_ZONES = [16, 15, 1, FREE_POSITIONS - 32]
TWO_COPIES_ZONE_OF = {**dict.fromkeys(DEALER_PACKET, 0), **dict.fromkeys(SEAT1_PACKET, 1), STOCK_START: 2}


def two_copies_required(aces: tuple, threes: tuple) -> bool:
    return aces[0] >= 2 and threes[1] + threes[2] >= 1


def proposal_statistics(propose, transcript, zone_of: dict[int, int], zones: int, seed: int) -> Counter:
    """How often each (Ao per zone, 3c per zone), the last zone left out, came up in SAMPLES proposals."""
    rng = random.Random(seed)
    found = Counter()
    for _ in range(SAMPLES):
        deck = propose(transcript, rng).deck
        aces, threes = [0] * (zones - 1), [0] * (zones - 1)
        for position, zone in zone_of.items():
            aces[zone] += deck[position] == "Ao"
            threes[zone] += deck[position] == "3c"
        found[tuple(aces), tuple(threes)] += 1
    return found


@pytest.fixture(params=["counted", "one copy at a time"])
def placement(request, monkeypatch):
    """Each way the sampler places a hand's required copies: all at once by counting (`HandCount`),
    or one copy at a time with a coin each (what it falls back on past MOST_COUNTED_STATES)."""
    if request.param == "one copy at a time":
        monkeypatch.setattr(HandCount, "of", classmethod(lambda cls, packet, units: None))
    return request.param


def test_proposals_are_exactly_uniform_over_the_deals_with_the_required_cards(placement):
    """Chi-square against the exact enumeration (`exact_distribution`), 8,000 proposals, fixed seed:
    passes when p > 0.001. The statistic is the placement of the two cards with nested requirements,
    the part of the deal that the sampler's correction for identical copies makes uniform."""
    transcript, unseen = nested_requirements_position()
    expected = exact_distribution(unseen, NESTED_ZONES, nested_required)
    observed = proposal_statistics(SAMPLER.propose, transcript, NESTED_ZONE_OF, len(NESTED_ZONES), seed=1)
    assert chi_square_pooled_p_value(observed, expected) > 0.001


def test_proposals_are_exactly_uniform_when_a_hand_needed_two_copies_of_a_card_at_once(placement):
    """As above where the dealer's 16 cards needed two Ao (a group of two copies in one set, whose
    coin is one binomial): 8,000 proposals, p > 0.001."""
    transcript, unseen = two_copies_position()
    expected = exact_distribution(unseen, TWO_COPIES_ZONES, two_copies_required)
    observed = proposal_statistics(SAMPLER.propose, transcript, TWO_COPIES_ZONE_OF, len(TWO_COPIES_ZONES), seed=2)
    assert chi_square_pooled_p_value(observed, expected) > 0.001


def test_the_same_test_fails_a_sampler_that_never_deals_the_dealers_first_draw_an_ace():
    transcript, unseen = nested_requirements_position()
    expected = exact_distribution(unseen, NESTED_ZONES, nested_required)

    def biased(transcript, rng):
        while True:
            proposal = SAMPLER.propose(transcript, rng)
            if proposal.deck[STOCK_START + 2] != "Ao":
                return proposal

    observed = proposal_statistics(biased, transcript, NESTED_ZONE_OF, len(NESTED_ZONES), seed=1)
    assert chi_square_pooled_p_value(observed, expected) < 0.001


# ---------------------------------------------------------------- no leak


def draw_and_throw_back(state, seat, legal, rng):
    """Draw, then discard the card just drawn when allowed (a move that shows nothing else of the hand)."""
    if {"type": "draw"} in legal:
        return {"type": "draw"}
    drawn = {"type": "discard", "card": NAME[state.turn_card]} if state.turn_card is not None else None
    return drawn if drawn in legal else legal[-1]


def twin_games() -> tuple[Transcript, Transcript]:
    """Seat 1's transcripts at its last decision of two games it sees alike, though a card of seat
    3's hand and one deep in the stock swapped places (the game_end's reveal would tell them apart)."""
    options = {"dealer": 0, "max_turns": 9}
    for seed in range(50):
        deck = GAME.deck(4)
        random.Random(seed).shuffle(deck)
        twin = deck[:]
        position = packet_positions(0, 3).start
        twin[position], twin[-1] = twin[-1], twin[position]
        first = play_recorded("cuajo", 4, options, 0, draw_and_throw_back, deck=deck)
        second = play_recorded("cuajo", 4, options, 0, draw_and_throw_back, deck=twin)
        last = [list(positions(played.transcripts[1]))[-2] for played in (first, second)]
        if last[0] == last[1] and first.state.hidden_cards(1) != second.state.hidden_cards(1):
            return last[0], last[1]
    raise AssertionError("no deck in 50 gave two games that seat 1 sees alike")


def test_samples_depend_on_the_seats_messages_not_on_the_hidden_cards():
    twins = twin_games()
    for seed in range(5):
        one, two = (SAMPLER.propose(transcript, random.Random(seed)) for transcript in twins)
        assert one == two
        reveals = []
        for transcript in twins:
            knowledge = SeatKnowledge(transcript.game_start)
            knowledge.transcript = transcript
            reveals.append(knowledge.sample(random.Random(seed)).reveal())
        assert reveals[0] == reveals[1]
