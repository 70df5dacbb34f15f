"""Rules tests of the Cuajo engine, on hand-built deals, plus property tests of its invariants."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations, product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.protocol.actions import random_action
from cardarena.games.base import OptionError
from cardarena.games.cuajo import (
    GAME,
    NAME,
    TYPES,
    completing_cards,
    counts_of,
    is_complete,
    is_special,
    parse_card,
    rank_splits,
)

DOC = "runner/games/cuajo.md"
DEALER = 3  # seat 0 plays first, seat 3 makes the opening discard
FILLER_SEED = 11

#: one card (3e) away: sets of A, J and H, 3-4-5 of coins, lone Ko, 4e 5e
ONE_AWAY_3E = "Ao Ac Ae 3o 4o 5o Jo Jc Je Ho Hc He Ko 4e 5e"
#: one card (Ho or Hb) away: as above with Hc He instead of 4e 5e
ONE_AWAY_H = "Ao Ac Ae 3o 4o 5o 3c 4c 5c Jo Jc Je Ko Hc He"
#: fifteen stock cards that help none of the payment conditions tested below
HARMLESS = "Ho Ho Hc Hc He 4b 4b 3b 3b Ab Ab Ae Ae 5o 5o"


def cards(text: str) -> list[str]:
    """A list of wire cards from a space-separated string."""
    return text.split()


def counts(text: str) -> list[int]:
    """The 28 counts of a space-separated list of cards."""
    return counts_of([parse_card(name) for name in cards(text)])


def build_deck(hands: dict[int, str], sowee: str, stock: str = "") -> list[str]:
    """A full 112-card deck dealing `hands` (completed with filler where short), the sowee, then
    `stock` on top of the stock; the filler is the rest of the deck in a fixed shuffled order."""
    pool = Counter(GAME.deck(4))
    fixed = [c for text in hands.values() for c in cards(text)] + [sowee] + cards(stock)
    pool.subtract(fixed)
    assert min(pool.values()) >= 0, "the hand-built deal uses a card more than four times"
    filler = sorted(pool.elements())
    random.Random(FILLER_SEED).shuffle(filler)
    order: list[str] = []
    for position in range(4):
        seat = (DEALER + 1 + position) % 4
        size = 16 if seat == DEALER else 15
        given_cards = cards(hands.get(seat, ""))
        assert len(given_cards) <= size, f"seat {seat} is dealt only {size} cards"
        order += given_cards + [filler.pop() for _ in range(size - len(given_cards))]
    return order + [sowee] + cards(stock) + filler


def new_game(hands: dict[int, str], sowee: str, stock: str = "", **options):
    """A game dealt from `build_deck` with seat 3 dealing, and any further `options`."""
    return GAME.new_state(4, {"dealer": DEALER, **options}, deck=build_deck(hands, sowee, stock))


def discard(state, card: str) -> list[dict]:
    return state.checked_apply({"type": "discard", "card": card})


def draw(state) -> list[dict]:
    return state.checked_apply({"type": "draw"})


def open_with(state, card: str | None = None) -> None:
    """The dealer's opening discard: `card`, or the first card the dealer may discard."""
    assert state.to_move() == DEALER and state.phase == "discard"
    discard(state, card or state.legal_actions()[-1]["card"])


def draw_and_throw(state) -> list[dict]:
    """One turn that draws from the stock and discards the drawn card."""
    seat = state.to_move()
    before = Counter(state.view(seat)["hand"])
    events = draw(state)
    drawn = list((Counter(state.view(seat)["hand"]) - before).elements())
    return events + discard(state, drawn[0])


# ---------------------------------------------------------------- combinations


@pytest.mark.parametrize(
    "hand,complete",
    [
        ("Ao Ac Ae", True),
        ("Ao Ac Ae Ab", True),
        ("Ao Ao Ac", False),
        ("3o 4o 5o", True),
        ("Jb Hb Kb", True),
        ("3o 4o 5c", False),
        ("4o 5o Jo", False),
        ("Ao 3o 4o", False),
        ("5e 5e 5e 5e", True),
        ("5e 5e 5e", False),
        ("Ke", True),
        ("Ko Ko Kc", True),
        ("Ho Hc", False),
    ],
)
def test_each_combination_kind(hand, complete):
    """runner/games/cuajo.md § Combinations: sets of 3-4 different suits, only the 3-4-5 and J-H-K
    sequences in one suit, four identical cards, and lone kings; nothing else."""
    assert is_complete(counts(hand)) is complete


def test_full_hand_of_every_kind_is_complete():
    """runner/games/cuajo.md § Combinations: a 16-card hand split into a set, both sequences, a
    secret, and lone kings is complete; without one king's partner cards it is not."""
    assert is_complete(counts("Ao Ac Ae 3b 4b 5b Jc Hc Kc 5e 5e 5e 5e Ko Ke Kb"))
    assert not is_complete(counts("Ao Ac Ae 3b 4b 5b Jc Hc Ko 5e 5e 5e 5e Ke Kb Kb"))


def test_king_in_sequence_or_alone():
    """runner/games/cuajo.md § Combinations: a king may complete J-H-K or stand alone; the same
    J and H need the king of their own suit."""
    assert is_complete(counts("Jo Ho Ko"))
    assert not is_complete(counts("Jo Ho Kc"))
    assert is_complete(counts("Jo Jc Je Ho Hc He Ko"))  # sets of J and H, Ko alone


def test_special_hand_needs_the_one_king_in_a_sequence():
    """runner/games/cuajo.md § Payments: with one king the hand is special only if a complete
    arrangement puts that king in J-H-K."""
    rest = "Ao Ac Ae 3o 4o 5o "
    assert is_special(counts(rest + "Jc Je Jb Jo Ho Ko 3c 4c 5c Ab"))
    assert not is_special(counts(rest + "Jo Jc Je Ho Hc He Ko 3c 4c 5c"))
    assert is_special(counts(rest + "Jo Jc Je Ho Hc He 3c 4c 5c Ab"))  # no king at all
    assert not is_special(counts(rest + "Jo Ho Ko Kc 3c 4c 5c Jc Je Jb"))


def test_special_hand_counts_kings_in_laid_secrets():
    """runner/games/cuajo.md § Payments: kings in laid secrets count among the 16 cards, and the
    sowee cards of a sowee secret (here three jacks of coins) never block the one king's sequence."""
    free = counts("Ao Ac Ae 3o 4o 5o 3c 4c 5c Jc Hc Kc Ab")  # plus a laid sowee secret Jo Jo Jo
    assert is_special(free, laid_kings=0)
    assert not is_special(free, laid_kings=4)
    assert not is_special(counts("Ao Ac Ae 3o 4o 5o 3c 4c 5c Jc Je Jb"), laid_kings=4)
    assert is_special(counts("Ao Ac Ae 3o 4o 5o 3c 4c 5c Jc Je Jb"), laid_kings=0)


def test_one_card_away():
    """runner/games/cuajo.md § Purro: the cards that would complete a 15-card hand."""
    assert [NAME[t] for t in completing_cards(counts(ONE_AWAY_3E))] == ["3e"]
    assert [NAME[t] for t in completing_cards(counts(ONE_AWAY_H))] == ["Ho", "Hb"]
    complete_15 = "Ao Ac Ae 3o 4o 5o 3c 4c 5c Jo Jc Je Ho Hc He"
    assert [NAME[t] for t in completing_cards(counts(complete_15))] == cards("Ab Jb Hb Ko Kc Ke Kb")
    assert completing_cards(counts("Ao Ac Ae 3o 4o 5o 3c 4c 5c Jo Jc Je Ko 4e Hb")) == []


ALL_COMBINATIONS = (
    [counts_of([r * 4 + s for s in suits]) for r in range(7) for k in (3, 4) for suits in combinations(range(4), k)]
    + [counts_of([(first + i) * 4 + s for i in range(3)]) for first in (1, 4) for s in range(4)]
    + [counts_of([t] * 4) for t in range(TYPES)]
    + [counts_of([t]) for t in range(24, 28)]
)


def brute_force_complete(hand: list[int]) -> bool:
    """Completeness by trying every combination containing the first remaining card."""
    first = next((t for t in range(TYPES) if hand[t]), None)
    if first is None:
        return True
    for combination in ALL_COMBINATIONS:
        if combination[first] and all(hand[t] >= combination[t] for t in range(TYPES)):
            if brute_force_complete([h - c for h, c in zip(hand, combination)]):
                return True
    return False


small_hands = st.lists(st.integers(0, TYPES - 1), max_size=10).filter(
    lambda types: max(Counter(types).values(), default=0) <= 4
)


@settings(max_examples=300, deadline=None)
@given(types=small_hands)
def test_evaluation_agrees_with_brute_force(types):
    """runner/games/cuajo.md § Combinations: the memoised evaluation equals an exhaustive search."""
    hand = counts_of(types)
    assert is_complete(hand) == brute_force_complete(hand)


@settings(max_examples=200, deadline=None)
@given(types=small_hands)
def test_completing_cards_agree_with_adding_each_card(types):
    """runner/games/cuajo.md § Purro: the one-card-away search equals trying each of the 28 cards."""
    hand = counts_of(types)
    expected = [t for t in range(TYPES) if hand[t] < 4 and is_complete(counts_of(types + [t]))]
    assert completing_cards(hand) == expected


# ---------------------------------------------------------------- deal, options, views


def test_deal_and_opening():
    """runner/games/cuajo.md § Deal: 15 cards each, 16 to the dealer, the sowee face up, the dealer
    opens with any card but a king and play goes to the right."""
    state = new_game({DEALER: "Ko Kc Ke Kb Ao Ao Ao 3o 3o 3o 4b 4b 4b Hc Hc Hc"}, "Jb", "5e")
    assert state.view(DEALER)["hand_sizes"] == [15, 15, 15, 16]
    assert state.view(0)["sowee"] == "Jb" and state.view(0)["stock"] == 112 - 62
    assert state.legal_actions() == [{"type": "discard", "card": c} for c in ("Ao", "3o", "4b", "Hc")]
    discard(state, "Hc")
    assert state.to_move() == 0 and state.legal_actions() == [{"type": "draw"}, {"type": "take"}]
    assert state.view(1)["discards"] == ["Hc"]


def test_bad_options_and_decks():
    """runner/games/cuajo.md § Players, cards: exactly four players and the 112-card deck."""
    with pytest.raises(OptionError, match="played by 4 players, not 3"):
        GAME.new_state(3)
    with pytest.raises(OptionError, match="'dealer' must be at most 3"):
        GAME.new_state(4, {"dealer": 4})
    deck = build_deck({}, "Ao")
    with pytest.raises(OptionError, match="a cuajo deck must be exactly its 112 cards, got 111: missing "):
        GAME.new_state(4, deck=deck[:-1])
    swapped = deck[:]
    swapped[swapped.index("Ao")] = "Ko"
    with pytest.raises(OptionError, match="got 112: missing Ao; extra Ko$"):
        GAME.new_state(4, deck=swapped)
    with pytest.raises(OptionError, match="holds '7o', which is not one of its cards"):
        GAME.new_state(4, deck=["7o"] + deck[1:])


@pytest.mark.parametrize("value,message", [
    (0, "'max_turns' must be at least 1, got 0"),
    (None, "'max_turns' takes a int, got None"),
    (False, "'max_turns' takes a int, got False"),
    (2.5, "'max_turns' takes a int, got 2.5"),
])
def test_max_turns_must_be_a_positive_integer(value, message):
    """runner/games/cuajo.md § Engine choices: `max_turns` is a positive integer; there is no "no cap"."""
    with pytest.raises(OptionError, match=message):
        GAME.new_state(4, {"max_turns": value})


def test_dealer_complete_on_the_deal_wins_as_from_stock():
    """runner/games/cuajo.md § Deal: a complete 16-card deal wins at once, paid as from the stock."""
    state = new_game({DEALER: "Ao Ac Ae 3o 4o 5o 3c 4c 5c Jo Jc Je Ho Hc He Kc"}, "Ab")
    assert state.is_over()
    assert state.reveal()["outcome"] == {
        "drawn": False, "winner": 3, "card": None, "source": "deal", "special": False,
        "kings": 20, "base": 110, "payment": 130,
    }
    assert [int(s) for s in state.result().scores] == [-260, 260, -260, 260]


# ---------------------------------------------------------------- winning from the stock


@pytest.mark.parametrize(
    "hand,drawn,special,payment",
    [
        (ONE_AWAY_3E, "3e", False, 50 + 110),
        ("3o 4o 5o 3c 4c 5c Jo Jc Je Ko Kc Ke Kb 4e 5e", "3e", False, 50 + 3 * 20 + 110),
        ("Ao Ac Ae 3o 4o 5o 3c 4c 5c Jo Jc Je Ho Hc He", "Ab", True, 300),
        ("Ao Ac Ae Ab 3o 4o 5o 3c 4c 5c Jc Je Jb Jo Ho", "Ko", True, 300),
        ("Ao Ac Ae 3o 4o 5o 3c 4c 5c Jc Je Jb Ho Hc He", "Ko", False, 50 + 110),
    ],
    ids=["one-king", "four-kings", "special-no-king", "special-king-in-JHK", "lone-king"],
)
def test_win_from_stock(hand, drawn, special, payment):
    """runner/games/cuajo.md § Payments: special hand 300 and nothing else; otherwise kings (50 the
    king of coins, 20 others) plus 110 for a card from the stock; each opponent pays."""
    state = new_game({0: hand}, "Ab" if drawn != "Ab" else "Ac", drawn)
    open_with(state)
    events = draw(state)
    assert events[0] == {"type": "draw", "seat": 0}
    win = events[-1]
    assert (win["type"], win["source"], win["card"], win["special"], win["payment"]) == (
        "win", "stock", drawn, special, payment,
    )
    assert [int(s) for s in state.result().scores] == [2 * payment, -2 * payment] * 2
    assert state.reveal()["next_dealer"] == 0 and state.to_move() is None


# ---------------------------------------------------------------- winning with a taken card


@pytest.mark.parametrize(
    "hand,card,sowee,stock,conditions,base,extra",
    [
        (ONE_AWAY_3E, "3e", "Ac", HARMLESS, [True, True], 110, ""),
        (ONE_AWAY_3E, "3e", "Hb", HARMLESS, [True, False], 60, HARMLESS),
        (ONE_AWAY_H, "Hb", "Ac", HARMLESS, [False, True], 70, HARMLESS),
        (ONE_AWAY_H, "Hb", "5b", HARMLESS, [False, False], 20, HARMLESS),
        (ONE_AWAY_H, "Hb", "Ac", "3b Jb 4b Ab Kb " + HARMLESS, [True, True], 110, "3b Jb 4b Ab Kb"),
        (ONE_AWAY_H, "Hb", "Hb", "Ho Jb Kb", [True, True], 110, "Ho Jb Kb"),
    ],
    ids=["both", "only-1", "only-2", "neither", "extra-cards-meet-both", "sowee-is-the-card"],
)
def test_win_with_the_discard(hand, card, sowee, stock, conditions, base, extra):
    """runner/games/cuajo.md § Payments: a taken winning card pays 110/60/70/20 by conditions 1
    and 2, and up to 15 stock cards are turned up, stopping once both are met."""
    state = new_game({0: hand, DEALER: card}, sowee, stock)
    open_with(state, card)
    events = state.checked_apply({"type": "take"})
    assert events[0] == {"type": "take", "seat": 0, "card": card}
    assert events[1] == {
        "type": "win", "seat": 0, "drawn": False, "winner": 0, "card": card, "source": "discard",
        "special": False, "kings": 50, "conditions": conditions, "extra_cards": cards(extra),
        "base": base, "payment": 50 + base,
    }
    assert state.balance == [2 * (50 + base), -2 * (50 + base)]


# ---------------------------------------------------------------- secrets


def test_lay_a_secret():
    """runner/games/cuajo.md § Secrets: four identical cards may be laid before discarding; each
    opponent pays 50 at once; the cards leave the hand and other seats see only a count."""
    state = new_game({0: "5b 5b 5b 5b Ao Ac Ae 3o 4o 5o Jo Jc Je Ko 4e"}, "Hb", "Hc")
    open_with(state)
    draw(state)
    assert state.legal_actions() == [{"type": "secret", "card": "5b"}] + [
        {"type": "discard", "card": c} for c in cards("Ao Ac Ae 3o 4o 4e 5o 5b Jo Jc Je Hc")
    ]
    events = state.checked_apply({"type": "secret", "card": "5b"})
    assert events == [{"type": "secret", "seat": 0, "kind": "four", "payment": 50}]
    assert state.view(0)["secrets"] == [["5b"] * 4] and "5b" not in state.view(0)["hand"]
    assert state.view(1)["secrets"] == [] and state.view(1)["secret_counts"] == [1, 0, 0, 0]
    assert state.view(2)["balance"] == [100, -100]
    assert {"type": "secret", "card": "5b"} not in state.legal_actions()


def test_sowee_secret_whose_fourth_card_fits_wins():
    """runner/games/cuajo.md § Secrets (and Engine choices): the three sowee cards with a chosen
    fourth are paid like a secret; once laid, the 16 cards are complete, so the player wins."""
    state = new_game({0: "4c 4c 4c Ao Ac Ae 3o 4o 5o Jo Jc Je 3e 5e Ke"}, "4c", "4e")
    open_with(state)
    draw(state)
    assert state.phase == "discard"  # three loose sowee cards are no combination
    sowee_options = [a["card"] for a in state.legal_actions() if a["type"] == "sowee_secret"]
    assert sowee_options == cards("Ao Ac Ae 3o 3e 4o 4e 5o 5e Jo Jc Je Ke")
    events = state.checked_apply({"type": "sowee_secret", "card": "4e"})
    assert events[0] == {"type": "secret", "seat": 0, "kind": "sowee", "payment": 50}
    assert (events[1]["type"], events[1]["source"], events[1]["payment"]) == ("win", "stock", 20 + 110)
    assert state.balance == [2 * (50 + 130), -2 * (50 + 130)]
    assert state.reveal()["secrets"][0] == [cards("4c 4c 4c 4e")]


def test_sowee_secret_fourth_card_must_fit():
    """runner/games/cuajo.md § Secrets: the fourth card stays in the hand's combinations; a card
    that fits nothing (Hb) keeps the hand incomplete and can no longer be discarded."""
    hand = "4c 4c 4c Ao Ac Ae 3o 4o 5o Jo Jc Je 3e 5e Hb"
    state = new_game({0: hand}, "4c", "4e")
    open_with(state)
    draw(state)
    state.checked_apply({"type": "sowee_secret", "card": "Hb"})
    assert state.phase == "discard" and not state.is_over()
    assert [a["card"] for a in state.legal_actions()] == cards("Ao Ac Ae 3o 3e 4o 4e 5o 5e Jo Jc Je")
    discard(state, "Ao")
    assert state.view(0)["purro"][0] is False
    # The same hand fixing 4e instead may throw Hb and is then one card from winning.
    state = new_game({0: hand}, "4c", "4e")
    open_with(state)
    draw(state)
    state.checked_apply({"type": "sowee_secret", "card": "4e"})
    assert state.phase == "discard"
    events = discard(state, "Hb")
    assert {"type": "purro", "seat": 0, "purro": True, "broken": False} in events


# ---------------------------------------------------------------- purro and claims


def purro_at_seat_1(seat_2_hand: str = "", extra_stock: str = ""):
    """Seat 1 holds a hand one card (3e) away and becomes purro at its first discard."""
    hands = {1: ONE_AWAY_3E}
    if seat_2_hand:
        hands[2] = seat_2_hand
    state = new_game(hands, "Ac", "Ho Hc " + extra_stock)
    open_with(state)
    assert state.view(0)["purro"] == [False] * 4
    draw_and_throw(state)
    events = draw_and_throw(state)
    assert events[-1] == {"type": "purro", "seat": 1, "purro": True, "broken": False}
    assert state.view(3)["purro"] == [False, True, False, False]
    return state


def test_claim_of_a_shown_card():
    """runner/games/cuajo.md § Purro: while a player is purro, others' stock draws are shown; a
    purro player the card completes may claim it and wins as with a card taken from another."""
    state = purro_at_seat_1(extra_stock="3e")
    assert draw(state) == [{"type": "draw", "seat": 2, "card": "3e"}]
    assert state.to_move() == 1 and state.legal_actions() == [{"type": "claim"}, {"type": "pass"}]
    assert state.view(0)["shown"] == "3e" and state.view(0)["turn"] == 2
    events = state.checked_apply({"type": "claim"})
    assert events[0] == {"type": "claim", "seat": 1, "card": "3e"}
    assert (events[1]["source"], events[1]["conditions"], events[1]["payment"]) == ("claim", [True, True], 160)
    assert [int(s) for s in state.result().scores] == [-320, 320, -320, 320]


def test_passing_a_shown_card_leaves_it_with_the_drawer():
    """runner/games/cuajo.md § Purro: claiming is a decision; after a pass the drawer keeps it."""
    state = purro_at_seat_1(extra_stock="3e")
    draw(state)
    assert state.checked_apply({"type": "pass"}) == [{"type": "pass", "seat": 1}]
    assert state.to_move() == 2 and state.phase == "discard" and state.view(2)["shown"] is None
    assert Counter(state.view(2)["hand"])["3e"] >= 1


def test_the_drawer_wins_before_any_claim():
    """runner/games/cuajo.md § Purro: a shown card that completes the drawer's own hand wins for
    the drawer; purro players get no claim."""
    state = purro_at_seat_1(seat_2_hand=ONE_AWAY_3E, extra_stock="3e")
    events = draw(state)
    assert events[0] == {"type": "draw", "seat": 2, "card": "3e"}
    assert (events[1]["type"], events[1]["winner"], events[1]["source"]) == ("win", 2, "stock")


def test_broken_purro_and_its_penalty():
    """runner/games/cuajo.md § Purro: a purro player who draws a king must break the hand and
    loses purro; for two turns their draws are shown, they may not win nor be purro again."""
    hand = "Ao Ac Ae Ab 3o 4o 5o 3c 4c 5c Jo Jc Je 4e 5e"
    state = new_game({1: hand}, "Ac", "Ho Hc He Hb 5o Kb Ho Hc He 4e 5o 5c 5o 3e Hb 5c 3b Hb")
    open_with(state)
    for _ in range(5):
        draw_and_throw(state)
    assert state.view(0)["purro"] == [False, True, False, False]
    assert draw(state) == [{"type": "draw", "seat": 1}]  # Kb, not shown: nobody else is purro
    assert {"type": "discard", "card": "Kb"} not in state.legal_actions()
    assert discard(state, "4e")[-1] == {"type": "purro", "seat": 1, "purro": False, "broken": True}
    assert state.view(0)["penalty"] == [0, 2, 0, 0]
    for _ in range(3):
        assert "card" not in draw_and_throw(state)[0]  # nobody is purro now
    assert draw(state) == [{"type": "draw", "seat": 1, "card": "4e"}]
    assert discard(state, "Ab") == [{"type": "discard", "seat": 1, "card": "Ab"}]  # one away, no purro
    assert state.view(0)["penalty"] == [0, 1, 0, 0]
    for _ in range(3):
        draw_and_throw(state)
    assert draw(state) == [{"type": "draw", "seat": 1, "card": "3e"}]
    assert state.phase == "discard"  # complete, but a penalty turn cannot win
    assert discard(state, "3e") == [{"type": "discard", "seat": 1, "card": "3e"}]
    assert state.view(0)["penalty"] == [0, 0, 0, 0] and state.view(0)["purro"][1] is False
    for _ in range(3):
        draw_and_throw(state)
    assert draw(state) == [{"type": "draw", "seat": 1}]
    assert discard(state, "Hb")[-1] == {"type": "purro", "seat": 1, "purro": True, "broken": False}


# ---------------------------------------------------------------- the stock runs out


def test_drawn_hand_when_the_stock_runs_out():
    """runner/games/cuajo.md § A turn: with an empty stock a player who cannot win with the last
    discard ends the hand drawn; nobody pays and the same dealer deals next. (The stock is cut
    short here to reach its end quickly.)"""
    state = new_game({}, "Ac", "Ho")
    open_with(state)
    state.stock = state.stock[-1:]
    events = draw_and_throw(state)
    assert events[-1] == {"type": "drawn", "turn_cap": False} and state.is_over()
    assert [int(s) for s in state.result().scores] == [0, 0, 0, 0]
    assert state.reveal()["next_dealer"] == DEALER
    assert state.reveal()["outcome"] == {"drawn": True, "turn_cap": False}


def test_last_discard_wins_with_an_empty_stock():
    """runner/games/cuajo.md § A turn: with an empty stock the next player takes the last discard
    only to win; no stock card is left to turn up for the conditions. (Stock cut short.)"""
    state = new_game({0: "3e", 1: ONE_AWAY_3E}, "Hb", "Ho")
    open_with(state)
    state.stock = state.stock[-1:]
    draw(state)
    events = discard(state, "3e")
    assert events[-2] == {"type": "take", "seat": 1, "card": "3e"}
    assert (events[-1]["source"], events[-1]["conditions"], events[-1]["extra_cards"]) == (
        "discard", [True, False], [],
    )
    assert state.balance == [-2 * 110, 2 * 110]


# ---------------------------------------------------------------- the turn cap (house rule)


def take_and_throw_back(state) -> list[dict]:
    """One turn that takes the previous discard and discards that same card again."""
    events = state.checked_apply({"type": "take"})
    return events + discard(state, events[0]["card"])


def test_players_who_only_take_and_throw_back_end_drawn_at_the_default_turn_cap():
    """runner/games/cuajo.md § Engine choices (`max_turns`), § Events: taking the previous discard and
    throwing it back is always legal, so the hand ends after turn 400 (the default; the dealer's
    opening is turn 1), drawn as when the stock runs out: nobody pays for the hand, and the dealer's
    secret, paid 50 by each opponent, stands."""
    state = new_game({DEALER: "5b 5b 5b 5b Jc"}, "Hb")
    state.checked_apply({"type": "secret", "card": "5b"})
    open_with(state, "Jc")
    for _ in range(398):
        take_and_throw_back(state)
    view = state.view(2)
    assert (view["turn_number"], view["max_turns"], view["stock"], view["turn"]) == (400, 400, 50, 2)
    events = take_and_throw_back(state)
    assert events[-1] == {"type": "drawn", "turn_cap": True} and state.is_over()
    assert state.result().scores == (-100, 100, -100, 100)
    assert state.reveal()["outcome"] == {"drawn": True, "turn_cap": True}
    assert state.reveal()["next_dealer"] == DEALER


def test_the_last_discard_still_wins_when_the_turn_cap_ends_the_hand():
    """runner/games/cuajo.md § Engine choices (`max_turns`), § A turn: after the last turn the stock
    counts as exhausted, so the next player takes the last discard only to win; the stock still
    holds cards, so all 15 are turned up for the payment conditions (condition 2 is never met
    here): base 60 plus 50 for the king of coins."""
    state = new_game({0: "3e", 1: ONE_AWAY_3E}, "Hb", "Ho", max_turns=2)
    open_with(state)
    draw(state)
    events = discard(state, "3e")
    assert events[-2] == {"type": "take", "seat": 1, "card": "3e"}
    win = events[-1]
    assert (win["winner"], win["source"], win["conditions"], len(win["extra_cards"])) == (1, "discard", [True, False], 15)
    assert (win["base"], win["payment"]) == (60, 110) and state.result().scores == (-220, 220, -220, 220)


@pytest.mark.parametrize("seed,drawn,last_turn,scores", [
    (1690, True, 141, (-100, 100, -100, 100)),
    (2563, True, 139, (100, -100, 100, -100)),
    (0, True, 97, (0, 0, 0, 0)),
    (283, False, 15, (-360, 360, -360, 360)),
])
def test_the_default_turn_cap_leaves_seeded_random_hands_unchanged(seed, drawn, last_turn, scores):
    """runner/games/cuajo.md § Engine choices (`max_turns`): the default is far above normal play;
    these long seeded random hands (and one won) end exactly as they did before the cap existed."""
    state = GAME.new_state(4, {}, seed)
    rng = random.Random(seed)
    while not state.is_over():
        state.checked_apply(random_action(state.legal_actions(), rng))
    assert (state.outcome["drawn"], state.view(0)["turn_number"]) == (drawn, last_turn)
    assert state.result().scores == scores


# ---------------------------------------------------------------- properties


def card_census(state) -> Counter:
    """Every card of the game wherever it is: hands, secrets, sowee, pile, stock, table, extras."""
    census = Counter(state.view(0)["discards"] + [state.view(0)["sowee"]])
    census.update(NAME[t] for t in state.stock)
    if state.shown is not None:
        census[NAME[state.shown]] += 1
    for seat in range(4):
        census.update(c for c in cards(" ".join(" ".join(s) for s in state.reveal()["secrets"][seat])))
        census.update(state.reveal()["hands"][seat])
    census.update(state.outcome.get("extra_cards", []))
    return census


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_cards_money_and_actions_stay_consistent(seed):
    """runner/games/cuajo.md § Players, cards and § Payments: all 112 cards are always somewhere,
    the partnerships' balances cancel, and every listed action applies and differs from the rest."""
    state = GAME.new_state(4, {}, seed)
    rng = random.Random(seed)
    full_deck = Counter(GAME.deck(4))
    while not state.is_over():
        assert card_census(state) == full_deck
        assert state.balance[0] == -state.balance[1]
        legal = state.legal_actions()
        outcomes = set()
        for action in legal:
            branch = state.clone()
            branch.checked_apply(action)
            outcomes.add(repr((branch.reveal(), [branch.view(s) for s in range(4)])))
        assert len(outcomes) == len(legal)
        state.apply(random_action(legal, rng))
    assert card_census(state) == full_deck and sum(state.result().scores) == 0


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_seeded_game_replays_identically(seed):
    """runner/games/cuajo.md § Deal: the seed fixes the deal; seed plus actions replay the game."""
    state, rng, record, events = GAME.new_state(4, {}, seed), random.Random(seed), [], []
    while not state.is_over():
        record.append(random_action(state.legal_actions(), rng))
        events += state.apply(record[-1])
    replay, replayed = GAME.new_state(4, {}, seed), []
    for action in record:
        replayed += replay.checked_apply(action)
    assert replayed == events and replay.reveal() == state.reveal()


# ---------------------------------------------------------------- review fixes


def test_sowee_secret_that_wins_is_offered_with_only_its_four_cards_in_hand():
    """runner/games/cuajo.md § Secrets, § Engine choices (Winning by laying a sowee secret): a sowee
    secret whose fourth card fits wins, even when those four are the last cards in hand; the
    "leaves a card to discard" limit only matters when no win follows. Here the dealer lays three
    secrets, then 4e 4e 4e (the sowee's copies) with Kb, a lone king: 16 cards complete."""
    state = new_game({DEALER: "5b 5b 5b 5b 3c 3c 3c 3c Jo Jo Jo Jo 4e 4e 4e Kb"}, "4e")
    for card in ("3c", "5b", "Jo"):
        state.checked_apply({"type": "secret", "card": card})
    assert state.legal_actions() == [{"type": "sowee_secret", "card": "Kb"}, {"type": "discard", "card": "4e"}]
    events = state.checked_apply({"type": "sowee_secret", "card": "Kb"})
    assert events[0] == {"type": "secret", "seat": DEALER, "kind": "sowee", "payment": 50}
    assert (events[1]["type"], events[1]["source"], events[1]["kings"], events[1]["payment"]) == ("win", "deal", 20, 130)
    assert state.balance == [-(4 * 100 + 2 * 130), 4 * 100 + 2 * 130]


def test_no_purro_for_a_card_the_player_holds_all_four_of():
    """runner/games/cuajo.md § Purro, § Engine choices (Purro): one card away means a card of the deck
    would complete the 16 cards; with all four 5o laid in a secret, 3o 4o can never be completed,
    just as when the four 5o are still in hand (then no fifth 5o is looked for either)."""
    hand = "5o 5o 5o 5o 3o 4o Ao Ac Ae Jo Jc Je Ko Kc Kb"
    for lay in (False, True):
        state = new_game({0: hand}, "Ab", "Hb")
        open_with(state)
        draw(state)
        if lay:
            state.checked_apply({"type": "secret", "card": "5o"})
        events = discard(state, "Hb")
        assert events == [{"type": "discard", "seat": 0, "card": "Hb"}]
        assert state.view(1)["purro"] == [False] * 4


def test_a_deck_given_as_one_string_is_refused_plainly():
    """runner/games/cuajo.md § Cards on the wire: a deck is a list of 112 wire cards; one string of
    them is refused as such rather than read letter by letter."""
    with pytest.raises(OptionError, match="a cuajo deck must be a list of its 112 cards, top first; got a str"):
        GAME.new_state(4, deck=" ".join(build_deck({}, "Ao")))


def test_evaluation_memo_tables_are_bounded():
    """runner/games/cuajo.md § Engine choices (Performance): a tournament plays many hands in one
    process, so the memoised hand evaluation must not grow without bound."""
    from cardarena.games import cuajo

    for memo in (cuajo._middle_complete, cuajo._high_complete):  # _rank_splits has at most 70 keys
        assert memo.cache_info().maxsize is not None


def test_only_kings_left_beside_a_sowee_fourth_that_fits_nothing():
    """runner/games/cuajo.md § Engine choices (Only kings left to discard): not only under a
    penalty — after a sowee secret whose fourth card (Hb) fits nothing, a hand of four kings is
    incomplete and holds nothing else, so a king is the one discard allowed."""
    state = new_game({DEALER: "5b 5b 5b 5b 3c 3c 3c 3c 4e 4e 4e Hb Ko Kc Ke Kb"}, "4e")
    for card in ("3c", "5b"):
        state.checked_apply({"type": "secret", "card": card})
    state.checked_apply({"type": "sowee_secret", "card": "Hb"})
    assert not state.is_over() and state.view(DEALER)["penalty"] == [0] * 4
    assert state.legal_actions() == [{"type": "discard", "card": c} for c in ("Ko", "Kc", "Ke", "Kb")]


def test_a_rank_splits_exactly_when_no_suit_holds_more_than_a_third_of_it():
    """cuajo.md § Combinations: one rank's cards split into sets (3 or 4 different suits) and secrets
    (4 identical cards) exactly when, once some suits holding all four copies are laid aside as
    secrets, no suit holds more than a third of the cards left (k sets each miss at most one suit:
    k >= the largest suit and 3k <= the cards <= 4k). The local test per rank that a count of complete
    hands by rank could use (cuajo.md § Sampling hidden cards (cardarena.search), what blocks it)."""
    for counts in product(range(5), repeat=4):
        fours = [suit for suit in range(4) if counts[suit] == 4]
        closed_form = any(3 * max(left) <= sum(left)
                          for size in range(len(fours) + 1) for laid in combinations(fours, size)
                          for left in [[0 if suit in laid else counts[suit] for suit in range(4)]])
        assert rank_splits(counts) == closed_form, counts
