"""Quitlok rules, each test on a hand-built deck, plus property tests over seeded random sessions.

Seats are numbered clockwise; every hand-built game here has seat 0 as first banker, so hand 1
deals to seats 1, 2, 3, 4 then the banker, and hand 2 to seats 4, 3, 2, 1 then the banker.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardarena.protocol.actions import random_action
from cardarena.games.base import IllegalAction, OptionError
from cardarena.games.quitlok import FULL_DECK, GAME, hand_value

PLAYERS = 5


def stacked_deck(*top: int) -> list[str]:
    """The Quitli deck with the given card numbers on top (first drawn first), the rest in order below."""
    rest = Counter(FULL_DECK) - Counter(top)
    assert sum(rest.values()) == len(FULL_DECK) - len(top), "more copies on top than the deck holds"
    return [f"Q{number}" for number in (*top, *sorted(rest.elements()))]


def new_session(*top: int, players: int = PLAYERS, **options):
    """A session with seat 0 as first banker and the given cards on top of the deck."""
    deck = stacked_deck(*top)
    for seed in range(1000):
        state = GAME.new_state(players, options, seed, deck=deck)
        if state.to_move() == 0:
            return state
    raise AssertionError("no seed gives seat 0 the first bank")


def play(state, *actions):
    """Apply each action (a dict, or a bare type string) through the legality check; return all events."""
    events = []
    for action in actions:
        events += state.checked_apply({"type": action} if isinstance(action, str) else action)
    return events


def bet(amount: int) -> dict:
    return {"type": "bet", "amount": amount}


def fund(amount: int) -> dict:
    return {"type": "fund", "amount": amount}


def events_of(events, kind):
    return [event for event in events if event["type"] == kind]


def chips_on_table(state) -> int:
    view = state.view(0)
    return sum(view["stacks"]) + view["bank"] + sum(view["bets"])


# ----- values --------------------------------------------------------------------------------


@pytest.mark.parametrize("first,second", [(2, 2), (2, 11), (11, 11), (11, 2)])
def test_framed_pair_is_21_and_paid_at_once(first, second):
    """runner/games/quitlok.md § Players, cards, money: two framed first cards are exactly 21 (paid at once, § A hand 5)."""
    state = new_session(first, 3, 3, 4, 5, second)
    play(state, fund(50), bet(5))
    view = state.view(0)
    assert view["stacks"][1] == 105 and view["bank"] == 45 and view["bets"] == [0] * PLAYERS
    assert state.to_move() == 2
    assert hand_value([first, second], framed_pair_counts=True) == 21
    assert hand_value([first, second], framed_pair_counts=False) == first + second


def test_twelve_counts_as_nine_when_twelve_would_bust():
    """runner/games/quitlok.md § Players, cards, money: a 12 counts 12 or 9, whichever is better."""
    state = new_session(12, 3, 3, 4, 5, 10)
    play(state, fund(50), "blot")
    assert state.view(1)["total"] == 19 and state.to_move() == 1
    assert hand_value([12, 12], True) == 21
    assert hand_value([12, 5], True) == 17
    assert hand_value([12, 12, 3], True) == 21
    assert hand_value([12, 12, 12], True) == 27


def test_nine_cards_are_always_over_21():
    """runner/games/quitlok.md § Engine choices (Bound): the nine smallest cards already bust, so a turn is short."""
    nine_smallest = sorted(FULL_DECK)[:9]
    assert nine_smallest == [1, 1, 2, 2, 3, 3, 4, 4, 5] and hand_value(nine_smallest, True) == 25


# ----- a player's turn -----------------------------------------------------------------------


def test_eleven_is_offered_at_11_and_skips_two_elevens_in_a_row():
    """runner/games/quitlok.md § A hand 3: eleven at exactly 11 replaces busting cards until one fits."""
    state = new_session(5, 3, 3, 4, 5, 6, 11, 11, 7)
    play(state, fund(30), "blot")
    assert state.legal_actions() == [
        {"type": "blot"}, {"type": "bet", "amount": {"min": 1, "max": 30}}, {"type": "stay"},
        {"type": "eleven_blot"}, {"type": "eleven_bet", "amount": {"min": 1, "max": 30}},
    ]
    events = play(state, {"type": "eleven_bet", "amount": 4})
    assert events == [{"type": "eleven", "seat": 1, "amount": 4, "burned": ["Q11", "Q11"],
                       "received": True, "card": None}]
    assert state.view(1)["hands"][1] == ["Q5", "Q6", "Q7"] and state.view(1)["total"] == 18
    assert state.view(2)["hands"][1] == [None, "Q6", None]
    assert state.view(0)["discards_seen"] == ["Q11", "Q11"]
    assert state.legal_actions() == [{"type": "blot"}, {"type": "bet", "amount": {"min": 1, "max": 26}}, {"type": "stay"}]


def test_exact_21_is_paid_from_the_bank_at_once():
    """runner/games/quitlok.md § A hand 5: exactly 21 is shown and paid its bets from the bank at once."""
    state = new_session(10, 3, 2, 4, 5, 3, 8)
    events = play(state, fund(50), bet(7), bet(3))
    assert events_of(events, "twenty_one") == [{"type": "twenty_one", "seat": 1, "cards": ["Q10", "Q3", "Q8"], "won": 10}]
    view = state.view(0)
    assert view["stacks"] == [50, 110, 100, 100, 100] and view["bank"] == 40 and view["cover"] == 0
    assert view["discards_seen"] == ["Q10", "Q3", "Q8"] and state.to_move() == 2


def test_bust_loses_the_bets_to_the_bank():
    """runner/games/quitlok.md § A hand 5: a bust's bets go to the bank and its turn ends."""
    state = new_session(10, 3, 3, 4, 5, 9, 5)
    events = play(state, fund(50), bet(4), bet(2))
    assert events_of(events, "bust") == [{"type": "bust", "seat": 1, "cards": ["Q10", "Q9", "Q5"], "total": 24, "lost": 6}]
    view = state.view(0)
    assert view["stacks"] == [50, 94, 100, 100, 100] and view["bank"] == 56 and state.to_move() == 2


def test_bets_are_capped_by_uncovered_bank_stack_and_max_bet():
    """runner/games/quitlok.md § The bank: a bet never exceeds the uncovered bank, the bettor's stack, nor max_bet."""
    state = new_session(3, 3, 4, 4, 5, 2, 2, stack=20, min_bank=10, max_bet=12)
    play(state, fund(20))
    assert state.legal_actions()[1] == {"type": "bet", "amount": {"min": 1, "max": 12}}
    play(state, bet(12))
    assert state.legal_actions()[1] == {"type": "bet", "amount": {"min": 1, "max": 8}}
    play(state, bet(8), "stay")
    assert state.to_move() == 0 and state.legal_actions() == [{"type": "draw"}, {"type": "stand"}]


# ----- the banker's turn and settlement -------------------------------------------------------


def test_banker_bust_pays_every_outstanding_bet():
    """runner/games/quitlok.md § A hand 8-9: the banker draws at will; a banker's bust pays every outstanding bet."""
    #                  seats 1..4      banker  s1  s2  banker draws
    state = new_session(10, 9, 3, 4, 10, 6, 1, 8, 9)
    play(state, fund(50), bet(5), "stay", bet(3), "stay", "stay", "stay")
    assert state.to_move() == 0 and state.view(0)["phase"] == "banker"
    events = play(state, "draw", "draw")
    assert events_of(events, "banker_shows") == [
        {"type": "banker_shows", "seat": 0, "cards": ["Q10", "Q8", "Q9"], "total": 27, "bust": True}]
    assert [(e["seat"], e["total"], e["bet"], e["outcome"]) for e in events_of(events, "settle")] == [
        (1, 16, 5, "win"), (2, 10, 3, "win")]
    view = state.view(0)
    assert view["stacks"] == [50, 105, 103, 100, 100] and view["bank"] == 42
    assert view["hand_number"] == 2 and view["direction"] == "anticlockwise" and view["turn_order"] == [4, 3, 2, 1]


@pytest.mark.parametrize("ties_to_bank,outcome,seat_stack,bank", [(True, "lose", 95, 55), (False, "push", 100, 50)])
def test_ties_go_to_the_bank_unless_the_option_is_off(ties_to_bank, outcome, seat_stack, bank):
    """runner/games/quitlok.md § A hand 9: ties go to the bank (house rule ties_to_bank; off returns the bet)."""
    state = new_session(10, 3, 3, 4, 10, 8, 8, ties_to_bank=ties_to_bank)
    play(state, fund(50), bet(5), "stay", "stay", "stay", "stay")
    events = play(state, "draw", "stand")
    assert [(e["total"], e["outcome"]) for e in events_of(events, "settle")] == [(18, outcome)]
    assert events_of(events, "banker_shows")[0]["total"] == 18
    view = state.view(0)
    assert view["stacks"][1] == seat_stack and view["bank"] == bank


def test_player_beats_a_standing_banker():
    """runner/games/quitlok.md § A hand 9: the higher total wins; the player is paid the bet from the bank."""
    state = new_session(10, 3, 3, 4, 10, 9, 8)
    play(state, fund(50), bet(5), "stay", "stay", "stay", "stay")
    events = play(state, "draw", "stand")
    assert [(e["total"], e["outcome"]) for e in events_of(events, "settle")] == [(19, "win")]
    assert state.view(0)["stacks"][:2] == [50, 105] and state.view(0)["bank"] == 45


def test_fully_covered_bank_settles_mid_hand_and_play_resumes():
    """runner/games/quitlok.md § A hand 7: with no uncovered money the banker plays and settles, takes a fresh card, and play goes on."""
    #                  seats 1..4    banker s1 banker fresh s2
    state = new_session(10, 3, 3, 4, 10, 8, 9, 6, 2)
    play(state, fund(10), bet(10))
    assert state.legal_actions() == [{"type": "blot"}, {"type": "stay"}]
    events = play(state, "stay")
    assert events_of(events, "banker_turn") == [{"type": "banker_turn", "seat": 0}]
    assert state.to_move() == 0
    events = play(state, "draw", "stand")
    assert [(e["seat"], e["total"], e["outcome"]) for e in events_of(events, "settle")] == [(1, 18, "lose")]
    assert events_of(events, "banker_fresh_card") == [{"type": "banker_fresh_card", "seat": 0}]
    view = state.view(0)
    assert view["bank"] == 20 and view["stacks"] == [90, 90, 100, 100, 100] and view["hand_number"] == 1
    assert view["hands"][0] == ["Q6"] and state.view(2)["hands"][0] == [None]
    assert state.to_move() == 2
    assert state.legal_actions()[1] == {"type": "bet", "amount": {"min": 1, "max": 20}}


def test_emptied_bank_passes_to_the_right():
    """runner/games/quitlok.md § A hand 10 and § The bank: an empty bank ends the round and passes right."""
    state = new_session(10, 3, 3, 4, 10, 11)
    events = play(state, fund(10), bet(10))
    assert events_of(events, "bank_ends") == [{"type": "bank_ends", "seat": 0, "reason": "bank_empty", "returned": 0}]
    assert events_of(events, "new_banker") == [{"type": "new_banker", "seat": 4}]
    view = state.view(0)
    assert view["stacks"] == [90, 110, 100, 100, 100] and view["bank"] == 0 and view["banks_held"] == 1
    assert state.to_move() == 4 and state.legal_actions() == [{"type": "fund", "amount": {"min": 10, "max": 100}}]


# ----- the bank changing hands ---------------------------------------------------------------


def all_stay(state):
    """Every player stays without betting, which ends the hand without a banker's turn."""
    return play(state, "stay", "stay", "stay", "stay")


RETIREMENT_DECK = (1, 1, 2, 2, 3,  3, 5, 5, 6, 6,  8, 8, 9, 9, 4,  10, 10, 12, 12, 4)


def test_retiring_on_a_4_is_offered_only_from_the_4th_hand():
    """runner/games/quitlok.md § Retiring: from the 4th hand a banker dealt a 4 or 7 may take the bank and pass it right."""
    state = new_session(*RETIREMENT_DECK)
    play(state, fund(40))
    all_stay(state)
    all_stay(state)
    assert state.view(0)["hands"][0] == ["Q4"] and state.view(0)["hand_number"] == 3
    assert state.to_move() == 1 and state.legal_actions()[-1] == {"type": "stay"}
    all_stay(state)
    assert state.view(0)["hand_number"] == 4 and state.view(0)["hands"][0] == ["Q4"]
    assert state.to_move() == 0 and state.legal_actions() == [{"type": "retire"}, {"type": "keep"}]
    events = play(state, "retire")
    assert events_of(events, "retire") == [{"type": "retire", "seat": 0, "card": "Q4"}]
    assert events_of(events, "bank_ends") == [{"type": "bank_ends", "seat": 0, "reason": "retired", "returned": 40}]
    assert state.view(0)["stacks"][0] == 100 and state.to_move() == 4 and state.view(0)["phase"] == "fund"


def test_other_seats_cannot_tell_whether_the_banker_holds_a_retiring_card():
    """runner/games/quitlok.md § What each player sees and § Retiring: the banker's card is face down, so from
    the 4th hand the banker is asked at every card received and only the banker learns whether retiring is offered."""
    holding_4 = new_session(*RETIREMENT_DECK)
    holding_11 = new_session(*RETIREMENT_DECK[:-1], 11)
    for state in (holding_4, holding_11):
        play(state, fund(40))
        for _hand in range(3):
            all_stay(state)
        assert state.view(0)["hand_number"] == 4 and state.to_move() == 0 and state.view(0)["phase"] == "retire"
    assert holding_4.legal_actions() == [{"type": "retire"}, {"type": "keep"}]
    assert holding_11.legal_actions() == [{"type": "keep"}]
    with pytest.raises(IllegalAction):
        holding_11.checked_apply({"type": "retire"})
    for seat in range(1, PLAYERS):
        assert holding_4.view(seat) == holding_11.view(seat)
    assert play(holding_4, "keep") == play(holding_11, "keep") == [{"type": "keep", "seat": 0}]
    for seat in range(1, PLAYERS):
        assert holding_4.view(seat) == holding_11.view(seat)
    assert holding_11.to_move() == 4


def test_keeping_the_bank_goes_on_with_the_hand():
    """runner/games/quitlok.md § Retiring: the decision is offered at that moment only; keeping plays the hand."""
    state = new_session(*RETIREMENT_DECK)
    play(state, fund(40))
    for _hand in range(3):
        all_stay(state)
    play(state, "keep")
    assert state.to_move() == 4 and state.view(0)["turn_order"] == [4, 3, 2, 1]
    assert state.view(0)["hands"][0] == ["Q4"]


def test_retiring_on_a_7_as_the_fresh_card_after_a_mid_hand_settlement():
    """runner/games/quitlok.md § Retiring and § Engine choices (Retirement): the fresh card counts as a card received."""
    hands_1_to_3 = (1, 1, 2, 3, 3,  4, 4, 5, 5, 6,  6, 8, 8, 9, 9)
    hand_4 = (10, 10, 11, 11, 12)  # seat 4 first, the banker last
    state = new_session(*hands_1_to_3, *hand_4, 2, 7)
    play(state, fund(10))
    for _hand in range(3):
        all_stay(state)
    assert state.legal_actions() == [{"type": "keep"}]  # dealt a 12: asked, but may not retire
    play(state, "keep")
    assert state.to_move() == 4
    play(state, bet(10), "stay")
    events = play(state, "stand")
    assert [(e["total"], e["outcome"]) for e in events_of(events, "settle")] == [(12, "lose")]
    assert state.view(0)["hands"][0] == ["Q7"] and state.view(0)["bank"] == 20
    assert state.to_move() == 0 and state.legal_actions() == [{"type": "retire"}, {"type": "keep"}]
    events = play(state, "retire")
    assert events_of(events, "bank_ends") == [{"type": "bank_ends", "seat": 0, "reason": "retired", "returned": 20}]
    view = state.view(0)
    assert view["stacks"] == [110, 100, 100, 100, 90] and view["phase"] == "fund" and view["hand_number"] == 0


def test_bank_passes_after_max_hands_per_bank():
    """runner/games/quitlok.md § Retiring: house rule max_hands_per_bank retires the banker with the bank."""
    state = new_session(max_hands_per_bank=2)
    play(state, fund(25))
    all_stay(state)
    events = all_stay(state)
    assert events_of(events, "bank_ends") == [{"type": "bank_ends", "seat": 0, "reason": "max_hands", "returned": 25}]
    assert state.view(0)["stacks"][0] == 100 and state.to_move() == 4


def test_short_stacked_player_is_skipped_as_banker():
    """runner/games/quitlok.md § The bank: a player whose stack is below min_bank is skipped as banker."""
    state = new_session(3, 3, 4, 10, 5, 9, 5, stack=20, min_bank=15, max_hands_per_bank=1)
    play(state, fund(15), "stay", "stay", "stay")
    events = play(state, bet(10), "blot")
    assert events_of(events, "bust")[0]["lost"] == 10
    assert events_of(events, "banker_skipped") == [{"type": "banker_skipped", "seat": 4, "stack": 10}]
    assert events_of(events, "new_banker") == [{"type": "new_banker", "seat": 3}]
    view = state.view(0)
    assert view["stacks"] == [30, 20, 20, 20, 10] and view["banks_held"] == 2
    assert state.to_move() == 3 and state.legal_actions() == [{"type": "fund", "amount": {"min": 15, "max": 20}}]


def test_session_ends_when_every_player_has_banked():
    """runner/games/quitlok.md § One game: the session ends once every player has held the bank; scores are net chips."""
    state = new_session(max_hands_per_bank=1)
    for banker in (0, 4, 3, 2, 1):
        assert state.to_move() == banker
        play(state, fund(10))
        all_stay(state)
    assert state.is_over() and state.to_move() is None and state.legal_actions() == []
    assert [int(score) for score in state.result().scores] == [0] * PLAYERS


# ----- the deck --------------------------------------------------------------------------------


def test_reshuffle_happens_when_exactly_one_card_is_left():
    """runner/games/quitlok.md § The deck: no reshuffle until exactly one card is left, then it joins all discards."""
    hands_1_to_3 = (3, 3, 4, 4, 5,  5, 6, 6, 7, 7,  8, 8, 9, 9, 10)
    hand_4 = (1, 10, 11, 11, 12)  # seat 4 first, the banker last
    state = new_session(*hands_1_to_3, *hand_4, 1, 2, 2)
    play(state, fund(40))
    for _hand in range(3):
        all_stay(state)
    assert state.view(0)["deck_size"] == 4 and state.view(0)["discards_unseen"] == 15
    play(state, "keep")  # the banker, dealt a 12 in the 4th hand, is asked about retiring
    assert play(state, "blot", "blot") == [
        {"type": "blot", "seat": 4, "card": "Q1"}, {"type": "blot", "seat": 4, "card": "Q2"}]
    assert state.view(0)["deck_size"] == 2
    events = play(state, "blot")
    assert events == [{"type": "blot", "seat": 4, "card": "Q2"}, {"type": "reshuffle", "deck_size": 16}]
    view = state.view(0)
    assert view["deck_size"] == 16 and view["discards_unseen"] == 0 and view["discards_seen"] == []
    assert Counter(state.hidden_cards(4)) == Counter(["Q12", *(f"Q{n}" for n in hands_1_to_3), "Q10", "Q11", "Q11", "Q12"])


# ----- views and errors ----------------------------------------------------------------------


def test_views_hide_other_players_face_down_cards():
    """runner/games/quitlok.md § Views on the wire: own cards shown, others' face-down cards null, face-up shown."""
    state = new_session(7, 3, 3, 4, 10, 9, 2)
    play(state, fund(50), bet(5), "blot")
    assert state.view(1)["hands"][1] == ["Q7", "Q9", "Q2"]
    assert state.view(2)["hands"][1] == [None, None, "Q2"]
    assert state.view(2)["hands"][2] == ["Q3"] and state.view(1)["hands"][2] == [None]
    assert Counter(state.hidden_cards(2)) - Counter(state.hidden_cards(1)) == Counter(["Q7", "Q9"])


@pytest.mark.parametrize("players,options,message", [
    (4, {}, "5 to 10 players, not 4"),
    (11, {}, "5 to 10 players, not 11"),
    (5, {"min_bank": 150}, "'min_bank' \\(150\\) exceeds 'stack' \\(100\\)"),
    (5, {"min_bet": 20}, "'min_bet' \\(20\\) exceeds 'min_bank' \\(10\\)"),
    (5, {"min_bet": 5, "max_bet": 4}, "'max_bet' \\(4\\) is below 'min_bet' \\(5\\)"),
    (5, {"stack": 0}, "'stack' must be at least 1"),
    (5, {"ties": True}, "no option 'ties'"),
])
def test_bad_options_and_player_counts(players, options, message):
    """runner/games/quitlok.md § Engine choices: option limits and combinations are checked."""
    with pytest.raises(OptionError, match=message):
        GAME.new_state(players, options)


@pytest.mark.parametrize("deck,message", [
    (stacked_deck()[:-1], "got 23: missing Q12$"),
    (stacked_deck()[:-1] + ["Q1"], "got 24: missing Q12; extra Q1$"),
    (stacked_deck()[:-1] + ["AS"], "holds 'AS', which is not one of its cards"),
    ("Q1Q2", "a quitlok deck must be a list of its 24 cards, top first; got a str"),
    (24, "got a int"),
    ({f"Q{n}": 2 for n in range(1, 13)}, "got a dict"),
])
def test_bad_deck_is_an_option_error(deck, message):
    """runner/games/quitlok.md § Engine choices (Deal order): a hand-built deck must be the whole Quitli deck."""
    with pytest.raises(OptionError, match=message):
        GAME.new_state(5, deck=deck)


def test_deck_lists_two_identical_copies_of_each_card():
    """runner/games/quitlok.md § Cards on the wire: 24 cards, two copies of each of Q1..Q12."""
    assert Counter(GAME.deck(5)) == Counter({f"Q{n}": 2 for n in range(1, 13)})


# ----- properties ------------------------------------------------------------------------------

@st.composite
def option_sets(draw):
    """Valid option combinations with small stacks, so banks empty and players run short often."""
    stack = draw(st.integers(5, 60))
    min_bank = draw(st.integers(1, stack))
    min_bet = draw(st.integers(1, min_bank))
    return {
        "stack": stack, "min_bank": min_bank, "min_bet": min_bet,
        "max_bet": draw(st.none() | st.integers(min_bet, min_bet + 10)),
        "ties_to_bank": draw(st.booleans()), "max_hands_per_bank": draw(st.integers(1, 6)),
    }


def decision_bound(players: int, max_hands: int) -> int:
    """runner/games/quitlok.md § Engine choices (Bound): the most decisions a session can take."""
    return players * (1 + max_hands * (20 * players - 19))


def concrete_instances(entry: dict) -> list[dict]:
    """The extreme concrete actions of a legal entry: each range at its min and at its max."""
    low = {key: value["min"] if isinstance(value, dict) else value for key, value in entry.items()}
    high = {key: value["max"] if isinstance(value, dict) else value for key, value in entry.items()}
    return [low] if low == high else [low, high]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(5, 10), options=option_sets(), seed=st.integers(0, 2**32))
def test_random_sessions_conserve_chips_end_in_bound_and_replay(players, options, seed):
    """runner/games/quitlok.md § Engine choices (Bound, Score): chips are conserved at every step, every
    listed action applies, the session ends within the bound, and seed plus actions replay it exactly."""
    state = GAME.new_state(players, options, seed)
    total = players * options["stack"]
    rng = random.Random(seed)
    record, events = [], []
    while not state.is_over():
        assert len(record) < decision_bound(players, options["max_hands_per_bank"])
        legal = state.legal_actions()
        for entry in legal:
            for action in concrete_instances(entry):
                branch = state.clone()
                branch.checked_apply(action)
                assert chips_on_table(branch) == total
        action = random_action(legal, rng)
        record.append(action)
        events += state.checked_apply(action)
        view = state.view(0)
        assert chips_on_table(state) == total and view["bank"] >= view["cover"] >= 0
        assert min(view["stacks"]) >= 0
    assert state.view(0)["bank"] == 0
    assert sum(state.result().scores) == 0
    replay = GAME.new_state(players, options, seed)
    replayed = [event for action in record for event in replay.checked_apply(action)]
    assert replayed == events and replay.result() == state.result() and replay.is_over()
