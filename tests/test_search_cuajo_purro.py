"""The counts and draws that deal a hidden Cuajo hand purro (runner/search/cuajo_purro.py; cuajo.md §
Sampling hidden cards, A hand seen purro, dealt purro): counted exactly as the engine judges purro
(cuajo.md § Purro: one card from a complete hand), drawn with exactly those weights, and several
hands' draws made one joint draw without replacement."""

from __future__ import annotations

import random
import time
from collections import Counter
from fractions import Fraction
from itertools import product
from math import comb, prod

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.games.cuajo import COPIES, TYPES, completing_cards, is_complete, one_card_away
from cardarena.search.cuajo_purro import (COMPLETE, SHORT, Judgement, PurroDraw, PurroHand, conditioned_fills,
                                          group_status, spread)
from cardarena.search.knowledge import SamplingError, proposal_deadline
from tests.chi_square import chi_square_pooled_p_value

#: the combinations of cuajo.md § Combinations, as lists of card types (rank * 4 + suit)
SETS = [[rank * 4 + suit for suit in suits] for rank in range(7)
        for suits in ([0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3], [0, 1, 2, 3])]
SEQUENCES = [[rank * 4 + suit for rank in ranks] for suit in range(4) for ranks in ((1, 2, 3), (4, 5, 6))]
COMBINATIONS = SETS + SEQUENCES + [[king] for king in range(24, 28)] + [[t] * COPIES for t in range(TYPES)]


def complete_hand(rng: random.Random) -> list[int]:
    """A random complete 16-card hand (28 counts), built from combinations."""
    while True:
        hand, size = [0] * TYPES, 0
        for _ in range(200):
            cards = rng.choice(COMBINATIONS)
            if size + len(cards) <= 16 and all(hand[t] + cards.count(t) <= COPIES for t in cards):
                for card in cards:
                    hand[card] += 1
                size += len(cards)
            if size == 16:
                assert is_complete(hand)
                return hand


def purro_case(rng: random.Random, size: int, extra: int) -> tuple[list[int], list[int]]:
    """A purro hand of 15 cards with `size` of them taken out into a pool, plus `extra` other unseen
    cards: (base, pool), so that some draws of `size` from the pool leave the base purro."""
    hand = complete_hand(rng)
    hand[rng.choice([t for t in range(TYPES) for _ in range(hand[t])])] -= 1
    pool = [0] * TYPES
    for card in rng.sample([t for t in range(TYPES) for _ in range(hand[t])], size):
        hand[card] -= 1
        pool[card] += 1
    for _ in range(extra):
        card = rng.randrange(TYPES)
        if hand[card] + pool[card] < COPIES:
            pool[card] += 1
    return hand, pool


def draws_of(pool: list[int], size: int):
    """Every multiset of `size` cards from `pool` (counts), with its ways to be drawn."""
    types = [t for t in range(TYPES) if pool[t]]
    for counts in product(*(range(pool[t] + 1) for t in types)):
        if sum(counts) == size:
            drawn = [0] * TYPES
            for t, count in zip(types, counts):
                drawn[t] = count
            yield drawn, prod(comb(pool[t], drawn[t]) for t in types)


def purro_draw(base: list[int], pool: list[int], size: int, laid: list[int] | None = None) -> PurroDraw:
    """The draws that leave `base` purro beside `laid` (one judgement, announced purro)."""
    return PurroDraw([Judgement(tuple(base), tuple(laid or [0] * TYPES), True)], pool, size)


def purro(hand: list[int], laid: list[int] | None = None) -> bool:
    """The engine's own test: free cards `hand`, beside secrets `laid` (counted as held)."""
    return one_card_away(hand, hand if laid is None else [h + l for h, l in zip(hand, laid)])


def exact_purro_draws(base: list[int], pool: list[int], size: int, laid: list[int] | None = None) -> dict[tuple[int, ...], int]:
    """The purro draws by enumeration, with their ways."""
    found = {}
    for drawn, ways in draws_of(pool, size):
        if purro([b + d for b, d in zip(base, drawn)], laid):
            found[tuple(drawn)] = ways
    return found


def secrets_beside(base: list[int], pool: list[int], rng: random.Random, kind: str) -> list[int]:
    """Secrets laid beside a hand (cuajo.md § Secrets): a card's four copies ("four"), or three copies
    of a card the hand may hold one more of ("sowee"), among the cards neither the hand nor the pool
    holds too many of; all zero for "none"."""
    laid = [0] * TYPES
    if kind == "four":
        laid[rng.choice([t for t in range(TYPES) if not base[t] and not pool[t]])] = COPIES
    elif kind == "sowee":
        laid[rng.choice([t for t in range(TYPES) if base[t] + pool[t] <= 1])] = COPIES - 1
    return laid


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), size=st.integers(1, 5), extra=st.integers(0, 12),
       secret=st.sampled_from(["none", "four", "sowee"]))
def test_purro_draws_are_counted_exactly(seed, size, extra, secret):
    """cuajo.md § Purro: the draws counted are exactly those after which the engine's own test
    (`one_card_away`) finds the hand one card from complete, each weighted by its ways; with a
    secret laid, a card of which the player holds all four copies cannot complete it (cuajo.md §
    Engine choices, Purro)."""
    rng = random.Random(seed)
    base, pool = purro_case(rng, size, extra)
    laid = secrets_beside(base, pool, rng, secret)
    counted = purro_draw(base, pool, size, laid)
    assert counted.total == comb(sum(pool), size)
    assert counted.ways == sum(exact_purro_draws(base, pool, size, laid).values())
    if secret == "none":
        assert counted.ways > 0  # the taken-out cards themselves are one purro draw


def test_a_laid_secret_changes_the_count_exactly_where_the_engine_says():
    """cuajo.md § Engine choices, Purro: a card of which the player holds all four copies, laid
    secrets included, cannot complete the hand. Purro hands with one completing card, held at most
    once: all its other copies laid (four of a card the hand lacks, or three of one it holds once,
    as a sowee secret), two cards taken out into a pool: the draws that are purro beside the secret
    are those the engine finds, and fewer than without it (putting the two cards back no longer is)."""
    cases = 0
    for seed in range(300):
        rng = random.Random(seed)
        hand = complete_hand(rng)
        hand[rng.choice([t for t in range(TYPES) for _ in range(hand[t])])] -= 1
        completing = completing_cards(hand)
        if len(completing) != 1 or hand[completing[0]] > 1:
            continue
        card = completing[0]
        laid = [0] * TYPES
        laid[card] = COPIES - hand[card]
        pool = [0] * TYPES
        for taken in rng.sample([t for t in range(TYPES) for _ in range(hand[t])], 2):
            hand[taken] -= 1
            pool[taken] += 1
        for other in rng.sample(range(TYPES), 6):
            if hand[other] + pool[other] + laid[other] < COPIES:
                pool[other] += 1
        with_secret = purro_draw(hand, pool, 2, laid).ways
        assert with_secret == sum(exact_purro_draws(hand, pool, 2, laid).values())
        assert with_secret < purro_draw(hand, pool, 2).ways
        cases += 1
    assert cases >= 20, cases


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 10**6), near=st.booleans())
def test_a_hand_is_purro_exactly_when_one_group_is_short_and_the_others_complete(seed, near):
    """cuajo.md § Combinations: no combination mixes aces, 3-4-5s and J-H-Ks, so one added card
    completes the hand exactly when it completes its own group and the other two are complete."""
    rng = random.Random(seed)
    if near:
        hand = complete_hand(rng)
        hand[rng.choice([t for t in range(TYPES) for _ in range(hand[t])])] -= 1
        for _ in range(rng.randrange(3)):  # a swap or two, often leaving purro
            out = rng.choice([t for t in range(TYPES) for _ in range(hand[t])])
            into = rng.choice([t for t in range(TYPES) if hand[t] < COPIES])
            hand[out] -= 1
            hand[into] += 1
    else:
        deck = [t for t in range(TYPES) for _ in range(COPIES)]
        hand = Counter(rng.sample(deck, 15))
        hand = [hand[t] for t in range(TYPES)]
    statuses = [group_status(group, hand) for group in range(3)]
    by_groups = any(statuses[g] & SHORT and all(statuses[o] & COMPLETE for o in range(3) if o != g) for g in range(3))
    assert by_groups == purro(hand)


def judgements_along(rng: random.Random, base: list[int], pool: list[int], size: int) -> list[Judgement]:
    """A hand's judgements with one prefix (no unseen draw between them): the last is `base`, each
    earlier one a turn before it (a shown card drawn, one discarded), each announced as the engine
    judges it with a draw taken from the pool (so that some draw meets them all)."""
    truth = [0] * TYPES
    for card in rng.sample([t for t in range(TYPES) for _ in range(pool[t])], size):
        truth[card] += 1
    bases = [base[:]]
    for _ in range(rng.randrange(1, 4)):
        earlier = bases[0][:]
        held = [card for card in range(TYPES) for _ in range(earlier[card])]
        shown = rng.choice([card for card in range(TYPES) if earlier[card] + truth[card] + pool[card] < COPIES] or held)
        if earlier[shown] + truth[shown] < COPIES:
            earlier[shown] += 1  # discarded later: was in the hand before
        if held:
            earlier[rng.choice(held)] -= 1  # drawn shown later: not in the hand before
        bases.insert(0, earlier)
    return [Judgement(tuple(b), (0,) * TYPES, purro([x + y for x, y in zip(b, truth)])) for b in bases]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), size=st.integers(1, 4))
def test_draws_meeting_several_judgements_of_one_prefix_are_counted_exactly(seed, size):
    """cuajo.md § Purro: each judgement of a hand after a discard; once its draws are shown, its
    judgements share the unseen cards, so one draw must meet them all (purro or not, as announced)."""
    rng = random.Random(seed)
    base, pool = purro_case(rng, size, 8)
    judgements = judgements_along(rng, base, pool, size)
    counted = PurroDraw(judgements, pool, size)
    exact = 0
    for drawn, ways in draws_of(pool, size):
        if all(purro([b + d for b, d in zip(judgement.base, drawn)]) == judgement.purro for judgement in judgements):
            exact += ways
    assert counted.ways == exact and exact > 0
    for drawn in (counted.draw(rng) for _ in range(20)):
        assert all(purro([b + d for b, d in zip(j.base, drawn)]) == j.purro for j in judgements)


def small_case() -> tuple[list[int], list[int], int, dict[tuple[int, ...], int]]:
    """A purro base with a pool of 11 cards and draws of 4, where many draws are purro."""
    rng = random.Random(2)
    while True:
        base, pool = purro_case(rng, 4, 7)
        exact = exact_purro_draws(base, pool, 4)
        if len(exact) >= 12:
            return base, pool, 4, exact


def draw_p_value(draw: PurroDraw, exact: dict[tuple[int, ...], int], samples: int, rng: random.Random) -> float:
    observed = Counter(tuple(draw.draw(rng)) for _ in range(samples))
    total = sum(exact.values())
    return chi_square_pooled_p_value(observed, {key: ways / total for key, ways in exact.items()})


def test_purro_draws_follow_their_exact_weights():
    """4,000 draws against the enumeration of every purro draw with its ways: chi-square p > 0.001
    (a fixed seed, so the test is repeatable; a correct sampler fails it once in 1,000 seeds)."""
    base, pool, size, exact = small_case()
    draw = purro_draw(base, pool, size)
    assert draw.ways == sum(exact.values())
    assert draw_p_value(draw, exact, 4000, random.Random(1)) > 0.001


def several_judgements_case() -> tuple[list[Judgement], list[int], int, dict[tuple[int, ...], int]]:
    """Judgements of one prefix (three: the aces' walk sees two views, the 3-4-5s' three) with a pool of 14
    cards and draws of 4, where 771 draws meet them all, each with its ways (by enumeration)."""
    rng = random.Random(2)
    while True:
        base, pool = purro_case(rng, 4, 10)
        judgements = judgements_along(rng, base, pool, 4)
        exact = {tuple(drawn): ways for drawn, ways in draws_of(pool, 4)
                 if all(purro([b + d for b, d in zip(j.base, drawn)]) == j.purro for j in judgements)}
        if len(judgements) >= 2 and len(exact) >= 12:
            return judgements, pool, 4, exact


def test_draws_meeting_several_judgements_follow_their_exact_weights():
    """As above with several judgements of one prefix, where a walk's last rank judges every view at
    once (runner/search/cuajo_purro.py, `GroupWalk._tally_by_bits`): 4,000 draws against the
    enumeration, chi-square p > 0.001 (fixed seeds). Each step of `GroupWalk.draw` taken uniformly
    among its options instead of by its ways fails it: the last rank's draw p = 5e-70, the merged
    state 6e-66, the state within it 5e-12."""
    judgements, pool, size, exact = several_judgements_case()
    draw = PurroDraw(judgements, pool, size)
    assert draw.ways == sum(exact.values())
    assert draw_p_value(draw, exact, 4000, random.Random(3)) > 0.001


class NeverTheFirstCard(PurroDraw):
    """A planted bias: a draw holding the pool's first card type is drawn again."""

    def __init__(self, base: list[int], pool: list[int], size: int):
        super().__init__([Judgement(tuple(base), (0,) * TYPES, True)], pool, size)
        self.avoided = next(t for t in range(TYPES) if pool[t])

    def draw(self, rng: random.Random) -> list[int]:
        while True:
            drawn = super().draw(rng)
            if not drawn[self.avoided]:
                return drawn


def test_a_draw_with_a_planted_bias_fails_the_same_test():
    base, pool, size, exact = small_case()
    first = next(t for t in range(TYPES) if pool[t])
    assert sum(ways for key, ways in exact.items() if key[first]) / sum(exact.values()) > 0.1
    assert draw_p_value(NeverTheFirstCard(base, pool, size), exact, 4000, random.Random(1)) < 0.001


# ---------------------------------------------------------------- several hands, one joint draw

#: a small pool of 4 card types (counts) for the joint draws
TINY_POOL = [2, 2, 1, 2]


class TinyFill:
    """A draw of `size` cards from TINY_POOL conditioned on `allowed`, by enumeration."""

    def __init__(self, size: int, allowed):
        self.size = size
        self.options = [(drawn[:4], ways) for drawn, ways in draws_of(TINY_POOL + [0] * (TYPES - 4), size)
                        if allowed(drawn[:4])]
        self.chance = Fraction(sum(ways for _, ways in self.options), comb(sum(TINY_POOL), size))

    def draw(self, rng: random.Random) -> list[int]:
        pick = rng.randrange(sum(ways for _, ways in self.options))
        for drawn, ways in self.options:
            pick -= ways
            if pick < 0:
                return drawn
        raise AssertionError("unreachable")


def first_holds_type_0(drawn):
    return drawn[0] >= 1


def second_holds_no_pair(drawn):
    return max(drawn) <= 1


#: the first hand's placements: (prior, fill size); a larger placement leaves a smaller fill
PLACEMENTS = ((Fraction(1, 3), 2), (Fraction(2, 3), 3))


def joint_target() -> dict[tuple, Fraction]:
    """By enumeration: a placement by its prior, then the first fill and the second drawn one after
    the other without replacement, kept when both hold their property."""
    target = {}
    total_cards = sum(TINY_POOL)
    for placement, (prior, size) in enumerate(PLACEMENTS):
        for first, first_ways in draws_of(TINY_POOL + [0] * (TYPES - 4), size):
            first = first[:4]
            if not first_holds_type_0(first):
                continue
            left = [a - b for a, b in zip(TINY_POOL, first)]
            for second, second_ways in draws_of(left + [0] * (TYPES - 4), 2):
                second = second[:4]
                if second_holds_no_pair(second):
                    chance = prior * Fraction(first_ways, comb(total_cards, size)) * Fraction(
                        second_ways, comb(total_cards - size, 2))
                    target[(placement, tuple(first), tuple(second))] = chance
    whole = sum(target.values())
    return {key: chance / whole for key, chance in target.items()}


def apart_target() -> dict[tuple, Fraction]:
    """By enumeration, what `conditioned_fills(joint=False)` draws: a placement by its prior and its
    keep coin, then each fill drawn from the whole pool by its own law, kept when the two fit in
    the pool together (no coin for their joint chance)."""
    fills = {size: TinyFill(size, first_holds_type_0) for _, size in PLACEMENTS}
    second = TinyFill(2, second_holds_no_pair)
    target = {}
    for placement, (prior, size) in enumerate(PLACEMENTS):
        first = fills[size]
        first_total = sum(ways for _, ways in first.options)
        second_total = sum(ways for _, ways in second.options)
        for drawn, ways in first.options:
            for other, other_ways in second.options:
                if all(a + b <= c for a, b, c in zip(drawn, other, TINY_POOL)):
                    target[(placement, tuple(drawn), tuple(other))] = (prior * first.chance * Fraction(ways, first_total)
                                                                        * Fraction(other_ways, second_total))
    whole = sum(target.values())
    return {key: chance / whole for key, chance in target.items()}


def joint_samples(samples: int, rng: random.Random, faithful: bool = True, joint: bool = True) -> Counter:
    """Joint draws as `_dealt_purro` makes them: a placement by its prior, its keep coin (its fill's
    chance over the largest), then `conditioned_fills`. Unfaithful: no keep coin, and each hand's
    draw kept as soon as it fits beside the other (no joint coins), a planted bias."""
    fills = {size: TinyFill(size, first_holds_type_0) for _, size in PLACEMENTS}
    second = TinyFill(2, second_holds_no_pair)
    most_chance = max(fill.chance for fill in fills.values())
    most_spread = spread(sum(TINY_POOL), [max(size for _, size in PLACEMENTS), 2])
    seen = Counter()
    while sum(seen.values()) < samples:
        placement = 0 if rng.randrange(3) == 0 else 1
        first = fills[PLACEMENTS[placement][1]]
        if faithful:
            drawn = conditioned_fills(TINY_POOL, [(first, first.chance / most_chance), (second, Fraction(1))],
                                      most_spread, rng, joint)
        else:
            drawn = [first.draw(rng), second.draw(rng)]
            if any(a + b > c for a, b, c in zip(*drawn, TINY_POOL)):
                drawn = None
        if drawn is not None:
            seen[(placement, tuple(drawn[0]), tuple(drawn[1]))] += 1
    return seen


def test_several_conditioned_fills_make_one_joint_draw():
    """The coins of `conditioned_fills` turn draws made apart, each from the whole pool, into the
    joint draw one after the other, with the first hand's placements weighted by their prior:
    6,000 joint draws against the enumeration, chi-square p > 0.001."""
    assert chi_square_pooled_p_value(joint_samples(6000, random.Random(4)), joint_target()) > 0.001


def test_fills_drawn_apart_without_the_coins_fail_the_same_test():
    assert chi_square_pooled_p_value(joint_samples(6000, random.Random(4), faithful=False), joint_target()) < 0.001


def test_fills_kept_whenever_they_fit_follow_the_law_drawn_apart_not_the_joint_one():
    """`joint=False` (SeatKnowledge.sample's exact=False, cuajo.md § Sampling hidden cards, Its
    limits) keeps fills that fit together without the joint coins: 6,000 draws follow the law of
    fills drawn apart and kept when they fit (p > 0.001), and fail the joint draw's (p < 0.001), so
    the approximation is what the docs say it is, and a real one."""
    drawn = joint_samples(6000, random.Random(4), joint=False)
    assert chi_square_pooled_p_value(drawn, apart_target()) > 0.001
    assert chi_square_pooled_p_value(drawn, joint_target()) < 0.001


def test_spread_grows_with_every_size_and_is_one_for_a_single_hand():
    assert spread(80, [15]) == 1
    assert spread(80, [12, 12]) == Fraction(comb(80, 12), comb(68, 12))
    assert spread(80, [12, 13]) > spread(80, [12, 12]) and spread(80, [13, 12]) > spread(80, [12, 12])


def test_a_hands_keep_chance_is_its_fills_purro_chance_over_the_largest():
    """`PurroHand`: which later requirements land in the prefix changes the fill; each content of the
    prefix is kept with its purro chance over the largest among them (cuajo.md § Sampling hidden
    cards, A hand seen purro, dealt purro)."""
    base, pool = purro_case(random.Random(5), 4, 10)
    later = [0] * TYPES
    later[next(t for t in range(TYPES) if base[t])] = 1  # one of the base's cards may come later
    due = base[:]
    due[next(t for t in range(TYPES) if base[t])] -= 1
    hand = PurroHand(prefix=sum(base) + 4, judgements=[([0] * TYPES, [0] * TYPES, True)], due=due, later=later,
                     later_room=1, rest=pool)
    chances = {hand.chance(base), hand.chance(due)}
    assert hand.most_chance == max(chances) and hand.most_chance > 0
    assert hand.chance(base) == Fraction(purro_draw(base, pool, 4).ways, comb(sum(pool), 4))


def test_counting_stops_at_the_deadline_of_the_sampling_under_way():
    """A walk may take seconds (cuajo.md § Sampling hidden cards, A hand seen purro, dealt purro), so
    it stops with SamplingError once `SeatKnowledge.sample`'s deadline has passed, as the proposals do."""
    base, pool = purro_case(random.Random(8), 12, 60)
    token = proposal_deadline.set(time.monotonic() - 1)
    try:
        with pytest.raises(SamplingError, match="deadline"):
            purro_draw(base, pool, 12)
    finally:
        proposal_deadline.reset(token)
    assert purro_draw(base, pool, 12).ways > 0


def test_a_bound_below_a_chance_is_an_error_not_a_silent_bias():
    """The coins divide by bounds (`PurroHand.most_chance`, `Plan.most_spread`): a chance above its
    bound would make a coin that always keeps, a bias no test of the output might see, so it raises."""
    fill = TinyFill(2, first_holds_type_0)
    with pytest.raises(ValueError, match="keep chance"):
        conditioned_fills(TINY_POOL, [(fill, Fraction(3, 2))], Fraction(1), random.Random(0))
    with pytest.raises(ValueError, match="most_spread"):
        for seed in range(50):  # the spread coin comes once both fills are drawn and kept
            conditioned_fills(TINY_POOL, [(fill, Fraction(1)), (TinyFill(2, second_holds_no_pair), Fraction(1))],
                              Fraction(1), random.Random(seed))
