"""Knock Rummy's rules, checked on hand-built deals and by properties over random play."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.cards import NAME, RANK, SUIT, parse
from cardarena.protocol.actions import random_action
from cardarena.games.base import IllegalAction, OptionError
from cardarena.games.knock_rummy import GAME, VALUE, best_arrangement, deadwood, settle

DRAW_STOCK = {"type": "draw", "source": "stock"}
DRAW_DISCARD = {"type": "draw", "source": "discard"}
PASS = {"type": "pass"}


def discard(card: str) -> dict:
    return {"type": "discard", "card": card}


def knock(card: str) -> dict:
    return {"type": "knock", "card": card}


def stacked_deck(hands: list[str], upcard: str, stock_top: list[str] = ()) -> list[str]:
    """A deck (top first) dealing `hands` (space-separated, per seat) with dealer = the last seat."""
    players = len(hands)
    seats = [hand.split() for hand in hands]
    size = len(seats[0])
    dealt = [seats[i % players][i // players] for i in range(size * players)]
    named = dealt + [upcard] + list(stock_top)
    return named + [name for name in NAME if name not in named]


def deal(hands: list[str], upcard: str, stock_top: list[str] = (), **options):
    """A new round from a hand-built deck; the dealer is the last seat, so seat 0 moves first."""
    deck = stacked_deck(hands, upcard, stock_top)
    return GAME.new_state(len(hands), {"dealer": len(hands) - 1, **options}, seed=0, deck=deck)


def play(state, *actions):
    """Apply each action after checking it is legal; return all the events."""
    events = []
    for action in actions:
        events.extend(state.checked_apply(action))
    return events


def cards(text: str) -> list[int]:
    return [parse(name) for name in text.split()]


def rarely_knocking_action(legal: list[dict], rng: random.Random) -> dict:
    """A random legal action, but a knock only one time in ten (else the same card is discarded),
    so that many rounds run long and reach an empty stock."""
    action = random_action(legal, rng)
    if action["type"] == "knock" and rng.random() < 0.9:
        return {"type": "discard", "card": action["card"]}
    return action


# --- deal ---------------------------------------------------------------------------------

@pytest.mark.parametrize("players,size", [(2, 10), (3, 7), (4, 7), (5, 7)])
def test_deal_sizes(players, size):
    """runner/games/knock_rummy.md § Deal: 10 cards each for 2 players, 7 for 3 to 5; one upcard; the rest is stock."""
    state = GAME.new_state(players, seed=5)
    view = state.view(0)
    assert view["hand_sizes"] == [size] * players
    assert len(view["discard_pile"]) == 1
    assert view["stock"] == 52 - players * size - 1


def test_deal_goes_one_at_a_time_from_the_dealers_left():
    """runner/games/knock_rummy.md § Deal / § Play: dealt one at a time; the player left of the dealer starts."""
    deck = list(NAME)  # AC AD AH AS 2C ...
    state = GAME.new_state(3, {"dealer": 1}, seed=0, deck=deck)
    assert state.view(2)["hand"] == [NAME[i] for i in range(0, 21, 3)]
    assert state.view(0)["hand"] == [NAME[i] for i in range(1, 21, 3)]
    assert state.view(1)["hand"] == [NAME[i] for i in range(2, 21, 3)]
    assert state.view(0)["discard_pile"] == [NAME[21]]
    assert state.to_move() == 2
    play(state, DRAW_STOCK)
    assert NAME[22] in state.view(2)["hand"]


def test_first_dealer_comes_from_the_seed():
    """runner/games/knock_rummy.md § Deal: the first dealer is chosen at random from the game seed."""
    dealers = {GAME.new_state(4, seed=seed).view(0)["dealer"] for seed in range(40)}
    assert dealers == {0, 1, 2, 3}


def test_dealer_option_moves_the_deal_but_keeps_the_seeded_deck():
    """runner/games/knock_rummy.md § Engine choices: `dealer` fixes the dealer; the seed alone orders the deck."""
    seeded = GAME.new_state(4, seed=3)
    chosen = (seeded.view(0)["dealer"] + 1) % 4
    moved = GAME.new_state(4, {"dealer": chosen}, seed=3)
    assert moved.view(0)["dealer"] == chosen and moved.to_move() == (chosen + 1) % 4
    assert moved.view(0)["discard_pile"] == seeded.view(0)["discard_pile"]
    assert moved.view(chosen)["hand"] == seeded.view(seeded.view(0)["dealer"])["hand"]


def test_bad_player_counts_options_and_decks_are_refused():
    """runner/games/knock_rummy.md § Players / § Engine choices: 2 to 5 players; options and decks are checked."""
    with pytest.raises(OptionError, match="2 to 5 players, not 6"):
        GAME.new_state(6)
    with pytest.raises(OptionError, match="2 to 5 players, not 1"):
        GAME.new_state(1)
    with pytest.raises(OptionError, match="'dealer' must be a seat below 3, got 3"):
        GAME.new_state(3, {"dealer": 3})
    with pytest.raises(OptionError, match="'dealer' must be at least 0"):
        GAME.new_state(3, {"dealer": -1})
    with pytest.raises(OptionError, match="no option 'stakes'"):
        GAME.new_state(3, {"stakes": 2})
    with pytest.raises(OptionError, match="a knock-rummy deck must be exactly its 52 cards, got 51: missing KS$"):
        GAME.new_state(2, deck=list(NAME[:51]))
    with pytest.raises(OptionError, match="got 52: missing KS; extra AC$"):
        GAME.new_state(2, deck=list(NAME[:51]) + ["AC"])
    with pytest.raises(OptionError, match="holds '1X', which is not one of its cards"):
        GAME.new_state(2, deck=["1X"] + list(NAME[1:]))



@pytest.mark.parametrize("deck", [
    52,
    " ".join(NAME),
    {name: None for name in NAME},
    set(NAME),
])
def test_a_deck_that_is_not_a_list_of_cards_is_refused(deck):
    """runner/games/knock_rummy.md § Engine choices (Dealing): a fixed deck is given top card first,
    so it must be a list (or tuple) of wire cards; a number, a string, a mapping or a set (whose
    order is not fixed) is an OptionError that says so, not a TypeError or a silently read deck."""
    with pytest.raises(OptionError, match="a knock-rummy deck must be a list of its 52 cards, top first; got a "):
        GAME.new_state(2, deck=deck)
    assert GAME.new_state(2, deck=tuple(NAME)).view(0)["discard_pile"] == [NAME[20]]


@pytest.mark.parametrize("value,message", [
    (0, "'max_turns' must be at least 1, got 0"),
    (None, "'max_turns' takes a int, got None"),
    (True, "'max_turns' takes a int, got True"),
    ("200", "'max_turns' takes a int, got '200'"),
])
def test_max_turns_must_be_a_positive_integer(value, message):
    """runner/games/knock_rummy.md § Engine choices: `max_turns` is a positive integer; there is no "no cap"."""
    with pytest.raises(OptionError, match=message):
        GAME.new_state(2, {"max_turns": value})


# --- melds and deadwood -------------------------------------------------------------------

def test_ace_is_low_only():
    """runner/games/knock_rummy.md § Players, cards, values: A-2-3 is a run, Q-K-A and K-A-2 are not."""
    assert deadwood(cards("AS 2S 3S")) == 0
    assert deadwood(cards("QS KS AS")) == 10 + 10 + 1
    assert deadwood(cards("KS AS 2S")) == 10 + 1 + 2


def test_point_values():
    """runner/games/knock_rummy.md § Players, cards, values: A = 1, 2..10 face value, J/Q/K = 10."""
    assert [VALUE[parse(name)] for name in "AH 2H 9H 10H JH QH KH".split()] == [1, 2, 9, 10, 10, 10, 10]


def test_a_four_card_set_lends_a_card_to_a_run():
    """runner/games/knock_rummy.md § Melds: a card is in at most one meld; the optimum may split a 4-card set."""
    total, melds, unmatched = best_arrangement(cards("7C 7D 7H 7S 8S 9S"))
    assert (total, unmatched) == (0, [])
    assert sorted(melds) == sorted([cards("7C 7D 7H"), cards("7S 8S 9S")])


def test_a_long_run_is_split_when_that_helps():
    """runner/games/knock_rummy.md § Melds: a run of 3 or more; the optimum may give a run's ends to sets."""
    total, melds, unmatched = best_arrangement(cards("4C 4D 4H 5H 6H 7H 8H 9H 9C 9D"))
    assert (total, unmatched) == (0, [])
    assert sorted(melds) == sorted([cards("4C 4D 4H"), cards("5H 6H 7H 8H"), cards("9C 9D 9H")])


def test_set_against_run_picks_the_smaller_deadwood():
    """runner/games/knock_rummy.md § Melds: deadwood is the least over all arrangements."""
    assert best_arrangement(cards("3C 3D 3H 4H 5H 2S")) == (8, [cards("3H 4H 5H")], cards("2S 3C 3D"))
    assert best_arrangement(cards("3C 3D 3H 4H 2S")) == (6, [cards("3C 3D 3H")], cards("2S 4H"))


def is_meld(group: list[int]) -> bool:
    """A set (3-4 cards of one rank) or a run (3+ consecutive ranks of one suit, ace low), by definition."""
    if len(group) < 3:
        return False
    if len({RANK[c] for c in group}) == 1:
        return len(group) <= 4
    ranks = sorted(RANK[c] for c in group)
    return len({SUIT[c] for c in group}) == 1 and ranks == list(range(ranks[0], ranks[0] + len(group)))


def brute_force_deadwood(hand: list[int]) -> int:
    """The least deadwood over every partition of the hand into melds and leftover cards."""
    if not hand:
        return 0
    first, rest = hand[0], hand[1:]
    best = VALUE[first] + brute_force_deadwood(rest)
    for size in range(2, len(rest) + 1):
        for partners in itertools.combinations(rest, size):
            if is_meld([first, *partners]):
                remaining = [c for c in rest if c not in partners]
                best = min(best, brute_force_deadwood(remaining))
    return best


# Cards of ranks A..6 only, so random small hands hold many sets and runs.
LOW_CARDS = [c for c in range(52) if RANK[c] <= 6]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(LOW_CARDS), min_size=0, max_size=8, unique=True))
def test_deadwood_is_optimal_against_brute_force(hand):
    """runner/games/knock_rummy.md § Melds: the engine finds the arrangement with the least deadwood."""
    total, melds, unmatched = best_arrangement(hand)
    assert total == brute_force_deadwood(sorted(hand)) == deadwood(hand)
    assert all(is_meld(meld) for meld in melds)
    assert sorted(unmatched + [c for meld in melds for c in meld]) == sorted(hand)
    assert total == sum(VALUE[c] for c in unmatched)



def melds_within(hand: list[int]) -> list[frozenset[int]]:
    """Every set and run that can be formed from the cards of `hand`, by the definitions."""
    found = []
    for rank in range(1, 14):
        same = [c for c in hand if RANK[c] == rank]
        found += [frozenset(group) for size in (3, 4) for group in itertools.combinations(same, size)]
    for suit in range(4):
        held = {RANK[c] for c in hand if SUIT[c] == suit}
        for low in range(1, 12):
            for high in range(low + 2, 14):
                if all(rank in held for rank in range(low, high + 1)):
                    found.append(frozenset((rank - 1) * 4 + suit for rank in range(low, high + 1)))
    return found


def brute_force_by_melds(hand: list[int]) -> int:
    """The least deadwood: the hand's value less the most value any choice of disjoint melds covers."""
    melds = melds_within(hand)
    best = 0

    def choose(start: int, used: frozenset[int], covered: int) -> None:
        nonlocal best
        best = max(best, covered)
        for i in range(start, len(melds)):
            if not melds[i] & used:
                choose(i + 1, used | melds[i], covered + sum(VALUE[c] for c in melds[i]))

    choose(0, frozenset(), 0)
    return sum(VALUE[c] for c in hand) - best


def test_deadwood_is_optimal_on_full_size_hands_with_court_cards():
    """runner/games/knock_rummy.md § Melds, § Players, cards, values: the least deadwood of 7- to
    11-card hands over the whole deck (court cards count 10 but run as J, Q, K), against a brute
    force over every choice of disjoint melds; the hands are drawn from narrow rank windows so
    that they hold many overlapping sets and runs."""
    rng = random.Random(2024)
    for _ in range(600):
        low, width = rng.randint(1, 13), rng.choice([3, 4, 5, 13])
        window = [c for c in range(52) if low <= RANK[c] < low + width]
        size = rng.choice([7, 10, 11])
        hand = rng.sample(window if len(window) >= size else list(range(52)), size)
        total, melds, unmatched = best_arrangement(hand)
        assert total == brute_force_by_melds(hand), [NAME[c] for c in hand]
        assert all(is_meld(meld) for meld in melds)
        assert sorted(unmatched + [c for meld in melds for c in meld]) == sorted(hand)


# --- play -----------------------------------------------------------------------------------

THREE_HANDS = ["AC 2C 3C 5D 5H 5S 4D", "7C 8C 9C 10H JH QH 6S", "2D 3D 9H 9S 10S 4H 6H"]


def test_draw_phase_offers_stock_and_discard():
    """runner/games/knock_rummy.md § Play: draw the top of the stock or of the discard pile."""
    state = deal(THREE_HANDS, "KD", ["KS"])
    assert state.legal_actions() == [DRAW_STOCK, DRAW_DISCARD]
    assert state.view(0)["phase"] == "draw" and state.view(0)["discard_pile"] == ["KD"]


def test_a_card_taken_from_the_discard_pile_cannot_go_back_this_turn():
    """runner/games/knock_rummy.md § Play: a card taken from the discard pile may not be discarded or knocked with that turn."""
    state = deal(THREE_HANDS, "KD", ["KS"])
    events = play(state, DRAW_DISCARD)
    assert events == [{"type": "draw", "seat": 0, "source": "discard", "card": "KD"}]
    hand = "AC 2C 3C 4D 5D 5H 5S".split()
    assert state.legal_actions() == [discard(c) for c in hand] + [knock(c) for c in hand]
    view = state.view(0)
    assert view["hand"][view["taken_from_discard"]] == "KD"
    assert state.view(1)["taken_from_discard"] is None
    assert state.view(1)["known_cards"] == [["KD"], [], []]
    for forbidden in (discard("KD"), knock("KD")):
        with pytest.raises(IllegalAction):
            state.clone().checked_apply(forbidden)
    assert play(state, discard("4D")) == [{"type": "discard", "seat": 0, "card": "4D"}]
    assert state.to_move() == 1 and state.view(1)["discard_pile"] == ["4D"]


def test_a_card_drawn_from_the_stock_may_be_discarded_at_once():
    """runner/games/knock_rummy.md § Play: a card drawn from the stock may be discarded at once."""
    state = deal(THREE_HANDS, "KD", ["KS"])
    assert play(state, DRAW_STOCK) == [{"type": "draw", "seat": 0, "source": "stock"}]
    hand = "AC 2C 3C 4D 5D 5H 5S KS".split()
    assert state.legal_actions() == [discard(c) for c in hand] + [knock(c) for c in hand]
    play(state, discard("KS"))
    assert state.view(2)["discard_pile"] == ["KD", "KS"] and state.view(2)["stock"] == 29



def test_knocked_card_and_stock_draws_are_hidden_from_the_other_seats():
    """runner/games/knock_rummy.md § Engine choices, § Views on the wire: the knocked card is shown
    to the knocker only and a card drawn from the stock to its drawer only; a card taken from the
    discard pile is public (`known_cards`) and so not among another seat's hidden cards."""
    state = deal(THREE_HANDS, "KD", ["KS", "QS"])
    play(state, DRAW_DISCARD, discard("4D"))       # seat 0 takes KD: now public
    play(state, DRAW_STOCK)                        # seat 1 draws KS: its own secret
    assert "KS" in state.view(1)["hand"] and "KS" in state.hidden_cards(0) and "KS" in state.hidden_cards(2)
    assert "KS" not in str(state.view(0)) and "KS" not in str(state.view(2))
    assert "KD" not in state.hidden_cards(1) and state.view(1)["known_cards"][0] == ["KD"]
    play(state, knock("KS"))
    assert state.view(1)["knock_card"] == "KS" and "KS" not in state.hidden_cards(1)
    for other in (0, 2):
        assert state.view(other)["knock_card"] is None and "KS" in state.hidden_cards(other)
        assert "KS" not in str(state.view(other))
    assert state.reveal()["knock_card"] == "KS" and "KS" not in state.reveal()["hands"][1]


# --- scoring ----------------------------------------------------------------------------------

def knock_round(hands, upcard, drawn, knocked):
    """Seat 0 draws `drawn` from the stock and knocks with `knocked`; return (state, events)."""
    state = deal(hands, upcard, [drawn])
    events = play(state, DRAW_STOCK, knock(knocked))
    return state, events


def test_knocker_with_least_deadwood_collects_the_differences():
    """runner/games/knock_rummy.md § Scoring 2: W is one player; everyone else pays the difference."""
    state, events = knock_round(THREE_HANDS, "KD", "KS", "KS")
    assert events[1] == {"type": "knock", "seat": 0}
    assert events[2] == {"type": "round_end", "ending": "knock", "knocker": 0,
                         "deadwood": [4, 6, 43], "payments": [41, -2, -39]}
    assert state.result().scores == (41, -2, -39) and state.result().ranks == (0, 1, 2)
    reveal = state.reveal()
    assert reveal["knock_card"] == "KS" and reveal["collectors"] == [0]
    assert reveal["melds"][0] == [["AC", "2C", "3C"], ["5D", "5H", "5S"]]
    assert reveal["deadwood_cards"][0] == ["4D"]


def test_knocker_beaten_pays_an_extra_ten():
    """runner/games/knock_rummy.md § Scoring 2: a knocker who is not the winner pays the difference plus 10."""
    hands = ["AC 2C 3C 5D 5H 5S 8H", "7C 8C 9C 10H JH QH 3S", "6D 7D 8D 2S 4S 3D 3H"]
    state, _ = knock_round(hands, "KD", "KS", "KS")
    assert state.reveal()["deadwood"] == [8, 3, 12]
    assert state.result().scores == (-15, 24, -9)


def test_knocker_tied_pays_nothing_and_tied_others_split():
    """runner/games/knock_rummy.md § Scoring 3: with the knocker tied, the other tied players share the payments."""
    hands = ["AC 2C 3C 5D 5H 5S 4D", "7C 8C 9C 10H JH QH 4S", "6D 7D 8D 9S 10S JS 4H",
             "QC QD QS 2H 3H 4C 2S"]
    state, _ = knock_round(hands, "9D", "KS", "KS")
    assert state.reveal()["deadwood"] == [4, 4, 4, 11]
    assert state.result().scores == (0, Fraction(7, 2), Fraction(7, 2), -7)
    assert state.reveal()["collectors"] == [1, 2]
    assert state.reveal()["payments"] == [0, [7, 2], [7, 2], -7]


def test_knocker_tied_with_one_player_who_takes_everything():
    """runner/games/knock_rummy.md § Scoring 3: the tied non-knocker collects all; the knocker pays no 10."""
    hands = ["AC 2C 3C 5D 5H 5S 4D", "7C 8C 9C 10H JH QH 4S", "2D 3D 9H 9S 10S 4H 6H"]
    state, _ = knock_round(hands, "KD", "KS", "KS")
    assert state.reveal()["deadwood"] == [4, 4, 43]
    assert state.result().scores == (0, 39, -39)


def test_tied_non_knockers_split_the_pool_including_the_knockers_ten():
    """runner/games/knock_rummy.md § Scoring 4: payments, the knocker's difference and extra 10 included, split equally."""
    hands = ["AC 2C 3C 5D 5H 5S 9D", "7C 8C 9C 10H JH QH 2S", "6D 7D 8D 9S 10S JS 2H"]
    state, _ = knock_round(hands, "KD", "KS", "KS")
    assert state.reveal()["deadwood"] == [9, 2, 2]
    assert state.result().scores == (-17, Fraction(17, 2), Fraction(17, 2))
    assert state.result().ranks == (2, 0, 0)


def test_tied_non_knockers_split_a_whole_pool():
    """runner/games/knock_rummy.md § Scoring 4: all payments are pooled and split equally among the tied players."""
    hands = ["AC 2C 3C 5D 5H 5S 9D", "7C 8C 9C 10H JH QH 2S", "6D 7D 8D 9S 10S JS 2H",
             "QC QD QS KC KH KD 5C"]
    state, _ = knock_round(hands, "9H", "KS", "KS")
    assert state.reveal()["deadwood"] == [9, 2, 2, 5]
    assert state.result().scores == (-17, 10, 10, -3)


def test_rummy_wins_outright_even_against_another_zero():
    """runner/games/knock_rummy.md § Scoring 1: a knocker with 0 deadwood gets each player's deadwood + 25."""
    hands = ["AC 2C 3C 5D 5H 5S KH", "7C 8C 9C 9H 10H JH QH", "6D 7D 8D 9S 10S JS 7S"]
    state, events = knock_round(hands, "KD", "4C", "KH")
    assert state.reveal()["deadwood"] == [0, 0, 7]
    assert state.result().scores == (57, -25, -32)
    assert state.reveal()["collectors"] == [0]
    assert events[-1]["payments"] == [57, -25, -32]


def test_stock_exhausted_ends_with_no_knocker_and_no_ten():
    """runner/games/knock_rummy.md § Play, § Scoring 5: with an empty stock, pass ends the round; tied players split, no extra 10."""
    hands = ["AC 2C 3C 5D 5H 5S 4D", "7C 8C 9C 10H JH QH 4S", "6D 7D 8D 9S 10S JS 9H"]
    deck = stacked_deck(hands, "KD")
    state = GAME.new_state(3, {"dealer": 2}, seed=0, deck=deck)
    stock = deck[22:]
    for turn, card in enumerate(stock):
        assert state.to_move() == turn % 3
        play(state, DRAW_STOCK, discard(card))
    assert state.to_move() == 0 and state.view(0)["stock"] == 0
    assert state.legal_actions() == [DRAW_DISCARD, PASS]
    events = play(state, PASS)
    assert events == [{"type": "pass", "seat": 0},
                      {"type": "round_end", "ending": "stock_exhausted", "knocker": None,
                       "deadwood": [4, 4, 9], "payments": [[5, 2], [5, 2], -5]}]
    assert state.result().scores == (Fraction(5, 2), Fraction(5, 2), -5)


def test_taking_the_discard_with_an_empty_stock_is_a_normal_turn():
    """runner/games/knock_rummy.md § Play: with an empty stock, the player may take the top discard and play on."""
    state = GAME.new_state(2, {"dealer": 1}, seed=0, deck=list(NAME))
    for card in NAME[21:]:
        play(state, DRAW_STOCK, discard(card))
    assert state.to_move() == 1 and state.legal_actions() == [DRAW_DISCARD, PASS]
    play(state, DRAW_DISCARD)
    assert state.view(1)["hand_sizes"] == [10, 11]
    assert discard("KS") not in state.legal_actions()


def test_empty_stock_pickups_option_limits_play_after_the_stock_runs_out():
    """runner/games/knock_rummy.md § Engine choices: `empty_stock_pickups` caps discard pick-ups once the stock is empty."""
    state = GAME.new_state(2, {"dealer": 1, "empty_stock_pickups": 1}, seed=0, deck=list(NAME))
    for card in NAME[21:]:
        play(state, DRAW_STOCK, discard(card))
    assert state.view(0)["pickups_left"] == 1
    play(state, DRAW_DISCARD, discard(state.view(1)["hand"][0]))
    assert state.view(0)["pickups_left"] == 0
    assert state.legal_actions() == [PASS]
    with pytest.raises(IllegalAction):
        state.clone().checked_apply(DRAW_DISCARD)
    play(state, PASS)
    assert state.is_over() and state.reveal()["ending"] == "stock_exhausted"


# --- the turn cap (house rule) ---------------------------------------------------------------

#: Seat 0 holds 9S as its only deadwood (9), seat 1 holds KS (10); the upcard is 6H.
LOOP_HANDS = ["AC 2C 3C 5D 5H 5S 7C 8C 9C 9S", "2D 3D 4D 9H 10H JH 7D 7S 7H KS"]


def take_the_discard_in_a_loop(state, cycle: list[str], turns: int) -> None:
    """`turns` turns that each take the top discard and throw the next card of `cycle`: with three
    cards cycling through two hands, each thrown card was taken the turn before last, so the
    loop never touches the stock and never ends by itself."""
    for turn in range(turns):
        play(state, DRAW_DISCARD, discard(cycle[turn % len(cycle)]))


def test_players_who_only_take_the_discard_end_at_the_default_turn_cap():
    """runner/games/knock_rummy.md § Engine choices (`max_turns`), § Scoring 5, § Events: taking the
    discard for ever is legal, so the round ends after the discard of turn 200 (the default),
    scored as a stock-exhausted round: here 6H has replaced 9S in seat 0 (deadwood 6) and 9S has
    replaced KS in seat 1 (deadwood 9), so seat 1 pays the difference and no extra 10."""
    state = deal(LOOP_HANDS, "6H")
    take_the_discard_in_a_loop(state, ["9S", "KS", "6H"], 199)
    view = state.view(1)
    assert not state.is_over() and (view["turn_number"], view["max_turns"], view["stock"]) == (200, 200, 31)
    knocked = state.clone()
    assert play(knocked, DRAW_DISCARD, knock("KS"))[-1]["ending"] == "knock"  # the last turn may still knock
    events = play(state, DRAW_DISCARD, discard("KS"))
    assert events == [{"type": "draw", "seat": 1, "source": "discard", "card": "9S"},
                      {"type": "discard", "seat": 1, "card": "KS"},
                      {"type": "round_end", "ending": "turn_cap", "knocker": None,
                       "deadwood": [6, 9], "payments": [3, -3]}]
    assert state.is_over() and state.result().scores == (3, -3)
    assert state.reveal()["ending"] == "turn_cap" and state.view(0)["turn_number"] == 200


def test_taking_the_discard_for_ever_from_an_empty_stock_ends_at_the_turn_cap():
    """runner/games/knock_rummy.md § Engine choices (`empty_stock_pickups` with no limit, `max_turns`):
    once the stock is empty, players who keep taking the discard are stopped by the turn cap. The
    stock's last card is KH; after turn 34 seat 0 holds KS for 9S (deadwood 10) and seat 1 holds
    9S for KS (deadwood 9), so seat 0 pays 1."""
    state = deal(LOOP_HANDS, "6H", max_turns=34)
    for _ in range(31):  # draw the whole stock, throwing each card drawn
        drawn = state.stock[-1]
        play(state, DRAW_STOCK, discard(NAME[drawn]))
    assert state.view(1)["stock"] == 0 and state.view(1)["pickups_left"] is None
    take_the_discard_in_a_loop(state, ["KS", "9S", "KH"], 2)
    assert state.legal_actions() == [DRAW_DISCARD, PASS]
    events = play(state, DRAW_DISCARD, discard("KH"))
    assert events[-1] == {"type": "round_end", "ending": "turn_cap", "knocker": None,
                          "deadwood": [10, 9], "payments": [-1, 1]}


@pytest.mark.parametrize("players,seed,ending,last_turn,scores", [
    (3, 1836, "stock_exhausted", 87, (-13, -17, 30)),
    (2, 1188, "stock_exhausted", 79, (-17, 17)),
    (4, 7, "stock_exhausted", 43, (-9, -16, 34, -9)),
    (5, 3, "knock", 23, (-4, 59, -22, -13, -20)),
])
def test_the_default_turn_cap_leaves_seeded_random_rounds_unchanged(players, seed, ending, last_turn, scores):
    """runner/games/knock_rummy.md § Engine choices (`max_turns`): the default is far above normal
    play; these long seeded random rounds end exactly as they did before the cap existed."""
    state = GAME.new_state(players, {}, seed)
    rng = random.Random(seed)
    while not state.is_over():
        play(state, rarely_knocking_action(state.legal_actions(), rng))
    assert (state.reveal()["ending"], state.view(0)["turn_number"]) == (ending, last_turn)
    assert state.result().scores == scores


@pytest.mark.parametrize("deadwoods,knocker,expected", [
    ([5, 10], None, [5, -5]),
    ([5, 10], 1, [15, -15]),
    ([3, 3, 8], None, [Fraction(5, 2), Fraction(5, 2), -5]),
    ([0, 0, 0], 2, [-25, -25, 50]),
    ([7, 7, 7], 0, [0, 0, 0]),
    ([7, 1, 1, 1], 0, [-16, Fraction(16, 3), Fraction(16, 3), Fraction(16, 3)]),
])
def test_settle_examples(deadwoods, knocker, expected):
    """runner/games/knock_rummy.md § Scoring 1-5: worked settlements, exact fractions, summing to zero."""
    payments, _ = settle(deadwoods, knocker)
    assert payments == expected and sum(payments) == 0



def settle_by_the_rules(deadwoods: list[int], knocker: int | None) -> list[Fraction]:
    """Scoring 1-5 transcribed case by case from the rules text, payment by payment."""
    players, net = len(deadwoods), [Fraction(0)] * len(deadwoods)

    def pay(payer: int, payees: list[int], amount: int) -> None:
        net[payer] -= amount
        for payee in payees:
            net[payee] += Fraction(amount, len(payees))

    if knocker is not None and deadwoods[knocker] == 0:  # 1: rummy
        for seat in range(players):
            if seat != knocker:
                pay(seat, [knocker], deadwoods[seat] + 25)
        return net
    least = min(deadwoods)
    winners = [seat for seat in range(players) if deadwoods[seat] == least]
    if len(winners) == 1:  # 2 (and 5 without a knocker)
        for seat in range(players):
            if seat != winners[0]:
                pay(seat, winners, deadwoods[seat] - least)
        if knocker is not None and knocker != winners[0]:
            pay(knocker, winners, 10)
    elif knocker in winners:  # 3: the knocker pays nothing, the other tied players collect
        for seat in range(players):
            if seat not in winners:
                pay(seat, [w for w in winners if w != knocker], deadwoods[seat] - least)
    else:  # 4 (and 5): everything pooled, the knocker's 10 included
        for seat in range(players):
            if seat not in winners:
                pay(seat, winners, deadwoods[seat] - least + (10 if seat == knocker else 0))
    return net


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_settle_agrees_with_the_rules_in_every_tie_combination(players):
    """runner/games/knock_rummy.md § Scoring 1-5: every combination of deadwoods 0-3 (so every tie
    pattern: the knocker alone, the knocker tied with one or several, non-knockers tied, no
    knocker, rummy against other zeros) and every knocker, against a case-by-case transcription."""
    for deadwoods in itertools.product(range(4), repeat=players):
        for knocker in [None, *range(players)]:
            payments, collectors = settle(list(deadwoods), knocker)
            assert payments == settle_by_the_rules(list(deadwoods), knocker), (deadwoods, knocker)
            assert sum(payments) == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 98), min_size=2, max_size=5), st.data())
def test_payments_always_sum_to_zero(deadwoods, data):
    """runner/games/knock_rummy.md § Scoring: every round's payments sum to zero."""
    knocker = data.draw(st.none() | st.integers(0, len(deadwoods) - 1))
    payments, collectors = settle(deadwoods, knocker)
    assert sum(payments) == 0
    assert all(payments[seat] > 0 or max(deadwoods) == min(deadwoods) for seat in collectors)


# --- properties over random play ---------------------------------------------------------------

def all_cards(state) -> list[int]:
    """Every card the state holds anywhere: hands, stock, discard pile and the knocked card."""
    held = [c for hand in state.hands for c in hand] + state.stock + state.pile
    return held + ([state.knock_card] if state.knock_card is not None else [])


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 5), st.integers(0, 2**32), st.sampled_from([None, 0, 3]))
def test_cards_are_conserved_and_replay_reproduces_the_game(players, seed, pickups):
    """runner/games/knock_rummy.md § Deal, § Play: all 52 cards stay accounted for; seed plus actions replays the game."""
    options = {"empty_stock_pickups": pickups}
    state = GAME.new_state(players, options, seed)
    rng = random.Random(seed)
    record, events = [], []
    while not state.is_over():
        assert sorted(all_cards(state)) == list(range(52))
        action = rarely_knocking_action(state.legal_actions(), rng)
        record.append(action)
        events.extend(play(state, action))
    assert sorted(all_cards(state)) == list(range(52))
    assert sum(state.result().scores) == 0
    replay = GAME.new_state(players, options, seed)
    assert play(replay, *record) == events
    assert replay.reveal() == state.reveal() and replay.result() == state.result()
