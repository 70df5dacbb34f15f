"""How many ways a hidden Cuajo hand's unseen cards make it purro, and a draw among them (cuajo.md §
Sampling hidden cards, A hand seen purro, dealt purro).

A hand is judged purro after a discard when one more card would complete its 15 cards (cuajo.md §
Purro). The sampler must deal such a hand its unseen cards drawn from the unseen pool without
replacement, *given* the judgements announced: by rejection a random hand is purro about once in
560, and two purro hands make that squared. This module counts, exactly, the draws of `size` cards
from a pool (a count per card type; a draw weighted by the ways to pick it, a product of binomials)
after which each of some judgements (a known part of the hand, `base`, plus the same draw) finds the
hand purro or not as announced, and draws one of them with exactly that weight (`PurroDraw`); and
it makes several hands' draws, each made apart, one joint draw (`conditioned_fills`).

The count splits as the engine's completeness test does (runner/games/cuajo.py, `is_complete`): the
aces, the 3-4-5s and the J-H-Ks are complete apart, and within a group, cards of one rank split into
sets and secrets once a number of sequences per suit (`q`, the same for every rank of the group) is
set aside: a group is complete when some `q` lets every rank split (a king needs no split: a lone
king is a combination, so a king rank only bounds `q`). Per rank the admissible `q` form a bit mask;
a group is complete when the masks of its ranks share a bit, and one card short when adding one card
to one of its ranks (its *short* mask, the union over that card) leaves the masks sharing a bit. A
walk over a group's ranks (`GroupWalk`) carries the two masks so far per judgement and a count per
number of cards drawn; a hand is purro when one group is one short and the other two complete.
"""

from __future__ import annotations

import random
import time
from bisect import bisect_right
from fractions import Fraction
from functools import cached_property, lru_cache, reduce
from itertools import accumulate, combinations, product
from math import comb, prod
from operator import and_, or_
from typing import Any, Callable, Iterator, NamedTuple, Protocol, Sequence

from cardarena.games.cuajo import COPIES, TYPES, rank_splits
from cardarena.search.knowledge import SamplingError, proposal_deadline

SUITS = 4
#: a hand of 16 cards holds at most 5 sequences of 3 cards
MOST_SEQUENCES = 5
#: a choice of sequences per suit, q (0-4 each), is bit q0 + 5 q1 + 25 q2 + 125 q3 of a mask; the
#: split ranks' masks hold only the choices of at most MOST_SEQUENCES sequences
STRIDES = (1, 5, 25, 125)
GRID = 5 ** SUITS
ALL_SEQUENCES = (1 << GRID) - 1
#: per suit, the bits whose count of that suit is not 0 (where a shift up by one count may land)
RAISED = tuple(sum(1 << index for index in range(GRID) if index // stride % 5) for stride in STRIDES)
#: per suit and cap (0-4), the bits whose count of that suit is below the cap (where one more may go)
BELOW = tuple(tuple(sum(1 << index for index in range(GRID) if index // stride % 5 < cap) for cap in range(COPIES + 1))
              for stride in STRIDES)
#: the cards of each group, rank by rank (first type of each rank), and how a rank is judged
GROUPS: tuple[tuple[tuple[int, str], ...], ...] = (
    ((0, "ace"),),
    ((4, "split"), (8, "split"), (12, "split")),
    ((16, "split"), (20, "split"), (24, "king")),
)
#: a group's status: complete, one card short of complete (`SHORT`), both, or neither
COMPLETE, SHORT = 1, 2


def grid_index(counts: Sequence[int]) -> int:
    """The bit of a choice of sequences per suit (or of a rank's counts per suit)."""
    return counts[0] + 5 * counts[1] + 25 * counts[2] + 125 * counts[3]


@lru_cache(maxsize=None)
def rank_masks(kind: str) -> tuple[list[int], list[int]]:
    """Per count of one rank's four suits (by `grid_index`), the sequences it admits, and those it
    admits once one more card of one suit (with a copy left) is added: (complete, short). A split
    rank admits q when its cards less q split into sets and secrets; an ace rank (no sequences) only
    q = 0; a king rank every q up to its counts (a lone king is a combination)."""
    complete = [0] * GRID
    for counts in product(range(COPIES + 1), repeat=SUITS):
        mask = 0
        for q in product(*(range(count + 1) for count in counts)):
            if kind == "king" or (sum(q) <= MOST_SEQUENCES and (kind == "split" or not any(q))
                                  and rank_splits([counts[s] - q[s] for s in range(SUITS)])):
                mask |= 1 << grid_index(q)
        complete[grid_index(counts)] = mask
    short = [0] * GRID
    for counts in product(range(COPIES + 1), repeat=SUITS):
        mask = 0
        for s in range(SUITS):
            if counts[s] < COPIES:
                mask |= complete[grid_index(counts) + STRIDES[s]]
        short[grid_index(counts)] = mask
    return complete, short


def up_closure(mask: int) -> int:
    """Every choice at or above one in `mask`, suit by suit (the king counts that admit one of them)."""
    for stride, raised in zip(STRIDES, RAISED):
        for _ in range(COPIES):
            mask |= (mask << stride) & raised
    return mask


def one_below(mask: int, caps: Sequence[int]) -> int:
    """Every choice one count below one in `mask` in some suit s, with that count below `caps[s]` (the
    king counts one king short of it, where the player may hold one more king of that suit)."""
    below = 0
    for stride, suit_below, cap in zip(STRIDES, BELOW, caps):
        below |= (mask >> stride) & suit_below[cap]
    return below


def _masks(kind: str, row: Sequence[int], laid: Sequence[int]) -> tuple[int, int]:
    """One rank's (complete, short) masks for its counts `row`, where a suit can take one more card
    only while the player holds fewer than 4 copies of it, `laid` in secrets included (cuajo.md §
    Engine choices, Purro: the completing card must be one the player could still draw)."""
    complete, short = rank_masks(kind)
    index = grid_index(row)
    if not any(laid):
        return complete[index], short[index]
    mask = 0
    for s in range(SUITS):
        if row[s] + laid[s] < COPIES:
            mask |= complete[index + STRIDES[s]]
    return complete[index], mask


def group_status(group: int, counts: Sequence[int], laid: Sequence[int] = (0,) * TYPES) -> int:
    """The status (COMPLETE | SHORT bits) of one group's free cards, given the 28 counts of a hand
    and of its laid secrets: one hand at a time, what `GroupWalk` counts over every draw at once (the
    tests hold it to the engine's own purro test)."""
    whole, short = ALL_SEQUENCES, 0
    for first, kind in GROUPS[group]:
        complete_mask, short_mask = _masks(kind, counts[first:first + SUITS], laid[first:first + SUITS])
        whole, short = whole & complete_mask, (short & complete_mask) | (whole & short_mask)
    return (COMPLETE if whole else 0) | (SHORT if short else 0)


def _rank_choices(first: int, kind: str, views: Sequence[tuple[Sequence[int], Sequence[int]]],
                  pool: Sequence[int], width: int) -> list[tuple]:
    """Every draw of one rank's cards: (its bit in the rank grid per view, its ways to draw as a
    polynomial in the cards drawn, packed `width` bits a coefficient, per view the complete and the
    short mask, flat, how many cards, and which: (card type, copies) pairs)."""
    choices = []
    for drawn in product(*(range(pool[first + s] + 1) for s in range(SUITS))):
        rows = [[base[first + s] + drawn[s] for s in range(SUITS)] for base, _ in views]
        if max(max(row) for row in rows) > COPIES:
            continue
        ways = prod(comb(pool[first + s], drawn[s]) for s in range(SUITS)) << (width * sum(drawn))
        masks = tuple(mask for row, (_, laid) in zip(rows, views) for mask in _masks(kind, row, laid[first:first + SUITS]))
        choices.append((tuple(grid_index(row) for row in rows), ways, masks, sum(drawn),
                        tuple((first + s, count) for s, count in enumerate(drawn) if count)))
    return choices


def _bits_of(mask: int) -> Iterator[int]:
    """The positions of the bits set in `mask`, lowest first."""
    while mask:
        lowest = mask & -mask
        yield lowest.bit_length() - 1
        mask ^= lowest


def _walked(state: tuple[int, ...], masks: tuple[int, ...]) -> tuple[int, ...]:
    """A walk's state (per view: complete mask, short mask) after one more rank with these masks."""
    walked = []
    for index in range(0, len(state), 2):
        whole, short, complete_mask, short_mask = state[index], state[index + 1], masks[index], masks[index + 1]
        walked += (whole & complete_mask, (short & complete_mask) | (whole & short_mask))
    return tuple(walked)


def _on_time() -> None:
    """SamplingError once the deadline of the sampling under way (`proposal_deadline`) has passed: a
    walk may take seconds, and a bot's clock does not wait."""
    deadline = proposal_deadline.get()
    if deadline is not None and time.monotonic() > deadline:
        raise SamplingError("no consistent deal found before the deadline (counting a purro hand's draws)")


class GroupWalk:
    """One group's draws of up to `most` cards from `pool`, by the status tuple they give (one status
    0-3 per view: the group's free cards `base` + the draw, beside its `laid` secrets): counted per
    number of cards (`counts`), and drawn with their weight among those of one status tuple and size
    (`draw`).

    A walk over the group's ranks: a state is, per view, the pair of masks so far (the sequences every
    rank admits; those every rank but one admits and that one admits one card short), with the ways
    to reach it as a polynomial in the cards drawn, packed in one integer (`width` bits a coefficient,
    more than any count needs: a product of polynomials is one multiplication). No bit that some rank
    never admits can last, so the masks keep only the others (`reach`). A king rank is last: it admits
    q exactly when its counts are at or above q, so a state is judged by the up-closure of its masks,
    a bit test per king draw, and states with the same closures are merged first. The walk keeps, per
    state, the states and draws it came from, so that a draw goes back along it: the last rank's draw,
    then each state and draw before, each by its share of the ways."""

    def __init__(self, group: int, views: Sequence[tuple[Sequence[int], Sequence[int]]], pool: Sequence[int],
                 most: int):
        self.width = max(comb(sum(pool), k) for k in range(most + 1)).bit_length() + 1  # above every count
        self.kept = (1 << self.width * (most + 1)) - 1  # the coefficients up to `most` cards
        self.kings = GROUPS[group][-1][1] == "king"
        self.ranks = [_rank_choices(first, kind, views, pool, self.width) for first, kind in GROUPS[group]]
        reach = ALL_SEQUENCES
        for choices in self.ranks:
            reach &= reduce(or_, (mask for choice in choices for mask in choice[2]), 0)
        #: per rank but the last, the states after it, with their ways and where they came from
        self.layers: list[dict[tuple[int, ...], int]] = [{(reach, 0) * len(views): 1}]
        self.came_from: list[dict[tuple[int, ...], list[tuple[tuple[int, ...], int]]]] = [{}]
        for choices in self.ranks[:-1]:
            following: dict[tuple[int, ...], int] = {}
            came: dict[tuple[int, ...], list[tuple[tuple[int, ...], int]]] = {}
            for state, ways in self.layers[-1].items():
                _on_time()
                for index, (_, weight, masks, _, _) in enumerate(choices):
                    key = _walked(state, masks)
                    following[key] = following.get(key, 0) + (ways * weight & self.kept)
                    came.setdefault(key, []).append((state, index))
            self.layers.append(following)
            self.came_from.append(came)
        self.last = self._closed(views) if self.kings else self._merged(len(views))
        self._last_ways = {key: sum(self.layers[-1][state] for state in states) for key, states in self.last.items()}
        #: per status tuple and draw of the last rank, the ways of the last states it gives that with
        self._by_draw: dict[tuple[int, ...], dict[int, int]] = {}
        #: per draw of the last rank and status tuple, the last states it gives that with (kings: made here;
        #: the others as `draw` asks, from `_draws_giving`)
        self._matching: dict[tuple[int, tuple[int, ...]], list[tuple[int, ...]]] = {}
        #: per status tuple, each merged last state with the draws (bits) that give it that (not for kings)
        self._draws_giving: dict[tuple[int, ...], list[tuple[tuple[int, ...], int]]] = {}
        self._steps: dict[tuple, tuple[list, list[int]]] = {}
        if self.kings:  # few merged states: every match list is made here, as each draw judges them
            for key, ways in self._last_ways.items():
                _on_time()
                for index, choice in enumerate(self.ranks[-1]):
                    status = self._king_status(key, choice[0])
                    by_draw = self._by_draw.setdefault(status, {})
                    by_draw[index] = by_draw.get(index, 0) + ways
                    self._matching.setdefault((index, status), []).append(key)
        else:
            self._tally_by_bits(len(views))
        limit = (1 << self.width) - 1
        self.counts = {}
        for status, by_draw in self._by_draw.items():
            total = sum(ways * self.ranks[-1][index][1] & self.kept for index, ways in by_draw.items())
            self.counts[status] = [total >> (self.width * k) & limit for k in range(most + 1)]

    def _closed(self, views: Sequence[tuple[Sequence[int], Sequence[int]]]) -> dict[tuple[int, ...], list[tuple[int, ...]]]:
        """The states before the king rank merged by their closures: per view, the up-closure of the
        complete mask, and of the short mask with one king less where one more may be held."""
        first = GROUPS[2][-1][0]
        caps = [[COPIES - laid[first + s] for s in range(SUITS)] for _, laid in views]
        # only the bits of the king counts some draw gives matter: the closures keep those alone
        rows = [reduce(or_, (1 << choice[0][view] for choice in self.ranks[-1]), 0) for view in range(len(views))]
        closed: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
        for state in self.layers[-1]:
            _on_time()
            key = []
            for index, cap, row in zip(range(0, len(state), 2), caps, rows):
                up = up_closure(state[index])
                key += (up & row, (up_closure(state[index + 1]) | one_below(up, cap)) & row)
            closed.setdefault(tuple(key), []).append(state)
        return closed

    def _merged(self, view_count: int) -> dict[tuple[int, ...], list[tuple[int, ...]]]:
        """The states before the last rank (not a king rank) merged by what each draw of that rank
        makes of them: per view, the draws (a bit per draw, by index) after which the group is
        complete (the state's complete mask meets the draw's) and those after which it is one short
        (its short mask meets the draw's complete mask, or its complete mask the draw's short one).
        A mask's draws are found once per distinct mask: states share masks far more than keys, and
        judging every state with every draw apart took 12 s for a 15-card fill of the 3-4-5s."""
        #: per mask of a draw (flat: view, then complete or short), per sequence bit, the draws holding it
        holders: list[dict[int, int]] = [{} for _ in range(2 * view_count)]
        for index, choice in enumerate(self.ranks[-1]):
            for which, mask in enumerate(choice[2]):
                for bit in _bits_of(mask):
                    holders[which][bit] = holders[which].get(bit, 0) | 1 << index
        meeting: dict[tuple[int, int], int] = {}

        def draws_meeting(mask: int, which: int) -> int:
            """The draws (bits) whose mask `which` meets `mask`."""
            found = meeting.get((mask, which))
            if found is None:
                held = holders[which]
                found = meeting[(mask, which)] = reduce(or_, (held.get(bit, 0) for bit in _bits_of(mask)), 0)
            return found

        merged: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
        for state in self.layers[-1]:
            _on_time()
            key: list[int] = []
            for view in range(view_count):
                whole, short = state[2 * view], state[2 * view + 1]
                key += (draws_meeting(whole, 2 * view),
                        draws_meeting(short, 2 * view) | draws_meeting(whole, 2 * view + 1))
            merged.setdefault(tuple(key), []).append(state)
        return merged

    def _tally_by_bits(self, view_count: int) -> None:
        """`_by_draw` for a merged last rank (`_merged`): per merged state, the draws giving each
        status tuple are one bit mask (per view, the draws of each status are the key's complete and
        short masks and their complements), so only the draws of each tuple are visited."""
        by_draws: dict[tuple[int, ...], dict[int, int]] = {}  # per status tuple, the ways per mask of draws
        every = (1 << len(self.ranks[-1])) - 1
        for key, ways in self._last_ways.items():
            _on_time()
            per_view = []
            for view in range(view_count):
                whole, short = key[2 * view], key[2 * view + 1]
                per_view.append(((every & ~(whole | short), 0), (whole & ~short, COMPLETE), (short & ~whole, SHORT),
                                 (whole & short, COMPLETE | SHORT)))
            for combination in product(*per_view):
                draws = reduce(and_, (bits for bits, _ in combination))
                if draws:
                    status = tuple(status for _, status in combination)
                    masks = by_draws.setdefault(status, {})
                    masks[draws] = masks.get(draws, 0) + ways
                    self._draws_giving.setdefault(status, []).append((key, draws))
        for status, masks in by_draws.items():
            tally = [0] * len(self.ranks[-1])
            for draws, ways in masks.items():
                for index in _bits_of(draws):
                    tally[index] += ways
            self._by_draw[status] = {index: ways for index, ways in enumerate(tally) if ways}

    def _keys_matching(self, index: int, status: tuple[int, ...]) -> list[tuple[int, ...]]:
        """The last states (merged) that draw `index` of the last rank gives `status` with."""
        found = self._matching.get((index, status))
        if found is None:  # a merged last rank of the aces or 3-4-5s: made on first use (see `_tally_by_bits`)
            found = [key for key, draws in self._draws_giving.get(status, ()) if draws >> index & 1]
            self._matching[(index, status)] = found
        return found

    @staticmethod
    def _king_status(key: tuple[int, ...], bits: tuple[int, ...]) -> tuple[int, ...]:
        """The status tuple of a last state merged by its closures (`_closed`) with one king draw:
        per view, its complete and short bits at that draw's king counts (`bits`, one per view)."""
        if len(bits) == 1:  # one view, the usual case: no loop
            return ((key[0] >> bits[0] & 1) | (key[1] >> bits[0] & 1) << 1,)
        return tuple((key[2 * view] >> bit & 1) | (key[2 * view + 1] >> bit & 1) << 1 for view, bit in enumerate(bits))

    def _ways(self, poly: int, cards: int) -> int:
        return poly >> (self.width * cards) & ((1 << self.width) - 1) if cards >= 0 else 0

    def draw(self, status: tuple[int, ...], size: int, rng: random.Random) -> list[int]:
        """One draw of `size` cards giving `status`, each with chance its ways over all such (28 counts):
        the last rank's draw, the last state, then back along the walk, each step by its share of the
        ways (each step's shares are kept: the draws of one position repeat them)."""
        last = self.ranks[-1]
        index = self._picked(("last", status, size), rng, lambda: [
            (index, self._ways(ways, size - last[index][3]) * self._ways(last[index][1], last[index][3]))
            for index, ways in self._by_draw[status].items()])
        picked = [last[index]]
        cards = size - last[index][3]
        key = self._picked(("key", index, status, cards), rng, lambda: [
            (key, self._ways(self._last_ways[key], cards)) for key in self._keys_matching(index, status)])
        state = self._picked(("state", key, cards), rng, lambda: [
            (state, self._ways(self.layers[-1][state], cards)) for state in self.last[key]])
        for rank in range(len(self.ranks) - 2, -1, -1):
            choices = self.ranks[rank]
            state, index = self._picked(("back", rank, state, cards), rng, lambda: [
                ((before, index), self._ways(self.layers[rank][before], cards - choices[index][3])
                 * self._ways(choices[index][1], choices[index][3])) for before, index in self.came_from[rank + 1][state]])
            picked.append(choices[index])
            cards -= choices[index][3]
        drawn = [0] * TYPES
        for choice in picked:
            for card, count in choice[4]:
                drawn[card] += count
        return drawn

    def _picked(self, step: tuple, rng: random.Random, shares: Callable[[], list[tuple[Any, int]]]) -> Any:
        """One of a step's options drawn by its share (`shares`, made the first time the step comes)."""
        table = self._steps.get(step)
        if table is None:
            options = [(option, share) for option, share in shares() if share]
            table = self._steps[step] = ([option for option, _ in options], list(accumulate(share for _, share in options)))
        options, running = table
        return options[bisect_right(running, rng.randrange(running[-1]))]


def group_span(group: int) -> range:
    """The card types of one group."""
    return range(GROUPS[group][0][0], GROUPS[group][-1][0] + SUITS)


@lru_cache(maxsize=64)
def shared_group_walk(group: int, views: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...],
                      pool: tuple[int, ...], most: int) -> GroupWalk:
    """`GroupWalk` from the group's own counts only (its span of each view's base and laid, and of
    the pool), kept: the contents of one hand's prefix, and the choices of another hand's secret
    card, change one group or two, so most walks repeat."""
    span = group_span(group)

    def whole(part: tuple[int, ...]) -> list[int]:
        counts = [0] * TYPES
        counts[span.start:span.stop] = part
        return counts

    return GroupWalk(group, [(whole(base), whole(laid)) for base, laid in views], whole(pool), most)


class Judgement(NamedTuple):
    """One purro judgement of a hand (cuajo.md § Purro) as the draw meets it: its free cards but the
    draw (`base`), its laid secrets (`laid`), both 28 counts, and whether it was announced purro."""

    base: tuple[int, ...]
    laid: tuple[int, ...]
    purro: bool


def is_purro(statuses: Sequence[int]) -> bool:
    """Whether a hand whose three groups have these statuses is one card from complete: one group
    short, the other two complete."""
    return any(statuses[g] & SHORT and all(statuses[o] & COMPLETE for o in range(3) if o != g) for g in range(3))


class PurroDraw:
    """The draws of `size` cards from `pool` (28 counts) that every judgement (the same draw added
    to its base) finds as it was announced, counted (`ways`, against `total`, every draw) and drawn
    with their weight (`draw`)."""

    def __init__(self, judgements: Sequence[Judgement], pool: Sequence[int], size: int, most: int | None = None):
        """`most`: the group counts are made up to that many cards (at least `size`), so draws of
        other sizes from the same cards share them (`shared_group_walk`)."""
        self.size = size
        self.total = comb(sum(pool), size)
        most = size if most is None else most
        #: per group, which of its distinct views (base and laid within the group) each judgement has
        self.view_of: list[list[int]] = []
        self.walks: list[GroupWalk] = []
        for group in range(3):
            span = group_span(group)
            views: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
            which = []
            for judgement in judgements:
                view = (tuple(judgement.base[span.start:span.stop]), tuple(judgement.laid[span.start:span.stop]))
                if view not in views:
                    views.append(view)
                which.append(views.index(view))
            self.view_of.append(which)
            self.walks.append(shared_group_walk(group, tuple(views), tuple(pool[span.start:span.stop]), most))
        self._split(judgements, [walk.counts for walk in self.walks], size)

    def _split(self, judgements: Sequence[Judgement], counts: list[dict[tuple[int, ...], list[int]]], size: int) -> None:
        """Every combination of the groups' status tuples that meets every judgement, by group sizes,
        with its ways (`splits`, `running`, `ways`)."""
        self.splits: list[tuple[tuple[tuple[int, ...], ...], tuple[int, int, int]]] = []
        weights = []
        for statuses in product(*(group.items() for group in counts)):
            if not all(is_purro([statuses[group][0][self.view_of[group][index]] for group in range(3)]) == judgement.purro
                       for index, judgement in enumerate(judgements)):
                continue
            rows = [row for _, row in statuses]
            for aces in range(size + 1):
                if not rows[0][aces]:
                    continue
                for middle in range(size - aces + 1):
                    weight = rows[0][aces] * rows[1][middle] * rows[2][size - aces - middle]
                    if weight:
                        self.splits.append((tuple(status for status, _ in statuses), (aces, middle, size - aces - middle)))
                        weights.append(weight)
        self.running = list(accumulate(weights))
        self.ways = self.running[-1] if self.running else 0

    def draw(self, rng: random.Random) -> list[int]:
        """One draw (28 counts), each with chance its ways / `ways`: the groups' status tuples and
        sizes by their counts, then each group's cards by its walk (`GroupWalk.draw`)."""
        statuses, sizes = self.splits[bisect_right(self.running, rng.randrange(self.ways))]
        drawn = [0] * TYPES
        for walk, status, size in zip(self.walks, statuses, sizes):
            for card, count in enumerate(walk.draw(status, size, rng)):
                drawn[card] += count
        return drawn


class PurroHand:
    """A hidden hand dealt purro at one of its judgements seen purro (cuajo.md § Sampling hidden
    cards, A hand seen purro, dealt purro): its `prefix` first chain positions (its packet and the
    unseen draws before that discard) hold the copies of its requirements placed there, and the
    rest of them a draw from the unseen pool (`rest`, counts) that `PurroDraw` makes meet every
    judgement with that prefix (`judgements`: per judgement, what the hand took less what it gave
    up by then, as `delta`, its secrets laid by then, and its flag).

    Which of its later requirements (`later`, copies per card, due by draws after the judgement, so
    placed in the prefix or in one of the `later_room` draws after it) fall in the prefix varies with
    the placement, and so does the chance that a random fill meets the judgements (`chance`). The
    proposal keeps a placement with `chance` over the largest (`most_chance`, the largest over the
    choices of hidden cards too), which makes the draw exactly the uniform fill conditioned on the
    judgements."""

    def __init__(self, prefix: int, judgements: Sequence[tuple[Sequence[int], Sequence[int], bool]],
                 due: Sequence[int], later: Sequence[int], later_room: int, rest: Sequence[int]):
        self.prefix, self.judgements, self.due, self.later = prefix, list(judgements), list(due), list(later)
        self.later_room, self.rest = later_room, list(rest)
        self._draws: dict[tuple[int, ...], PurroDraw] = {}

    def draw_for(self, placed: Sequence[int]) -> PurroDraw:
        """The draws that fill the prefix around `placed` (counts of the copies placed there)."""
        key = tuple(placed)
        if key not in self._draws:
            judgements = []
            for delta, laid, purro in self.judgements:
                base = tuple(count + change for count, change in zip(placed, delta))
                if min(base) < 0:
                    raise ValueError("a hand's placed copies do not cover what it gave up by its judgement")
                judgements.append(Judgement(base, tuple(laid), purro))
            self._draws[key] = PurroDraw(judgements, self.rest, self.prefix - sum(placed), self.prefix - sum(self.due))
        return self._draws[key]

    def chance(self, placed: Sequence[int]) -> Fraction:
        """The chance that a uniform fill of the prefix around `placed` meets the judgements."""
        draw = self.draw_for(placed)
        return Fraction(draw.ways, draw.total)

    @cached_property
    def most_chance(self) -> Fraction:
        """The largest `chance` over every placement: the due copies, and the later ones but at most
        `later_room` of them (those placed after the prefix)."""
        cards = [t for t in range(TYPES) for _ in range(self.later[t])]
        contents = set()
        for outside in range(min(self.later_room, len(cards)) + 1):
            for left_out in combinations(cards, outside):
                placed = [due + later for due, later in zip(self.due, self.later)]
                for card in left_out:
                    placed[card] -= 1
                if sum(placed) <= self.prefix:
                    contents.add(tuple(placed))
        if not contents:
            raise ValueError("a hand's requirements do not fit in its chain")
        return max(self.chance(placed) for placed in contents)


class Fill(Protocol):
    """A draw of `size` cards from a pool, conditioned on some property of what it draws."""

    size: int

    def draw(self, rng: random.Random) -> list[int]:
        """The counts per card type drawn."""


def conditioned_fills(rest: Sequence[int], fills: Sequence[tuple[Fill, Fraction]], most_spread: Fraction,
                      rng: random.Random, joint: bool = True) -> list[list[int]] | None:
    """Draws for several hands, each from the pool `rest` (counts), each conditioned on its own
    property, jointly as if drawn one after the other without replacement: exactly, or None when a
    coin rejects (try again).

    Each fill comes with a keep chance, tossed first (its placement's, see `PurroHand`), and draws from the
    whole pool as if the others had drawn nothing. The coins that make the draws one joint draw:
    per fill after the first, prod C(rest - drawn before, its cards) / prod C(rest, its cards), at
    most 1; and for the sizes, `spread` over its largest, `most_spread`. Together they are the
    chance of drawing these cards one hand after the other over that of drawing each from the whole
    pool, divided by a bound that no draw depends on.

    `joint=False` leaves those coins out: the fills are kept whenever they fit in the pool together,
    which weights each set of fills by the product of their chances drawn apart, not by their chance
    drawn one after the other (close, not equal: fills that leave each other fewer cards are
    favoured). With three Cuajo hands seen purro it keeps some 400 times as many deals."""
    taken, drawn_all = [0] * len(rest), []
    for fill, keep in fills:
        if keep > 1:
            raise ValueError("a fill's keep chance is above 1: its bound missed this placement")
        if rng.randrange(keep.denominator) >= keep.numerator:
            return None
        drawn = fill.draw(rng)
        if drawn_all and not joint:
            if any(before + count > left for left, before, count in zip(rest, taken, drawn)):
                return None
        elif drawn_all:
            apart = prod(comb(left - before, count) for left, before, count in zip(rest, taken, drawn) if count)
            together = prod(comb(left, count) for left, count in zip(rest, drawn) if count)
            if rng.randrange(together) >= apart:
                return None
        taken = [a + b for a, b in zip(taken, drawn)]
        drawn_all.append(drawn)
    if not joint:
        return drawn_all
    kept = spread(sum(rest), [fill.size for fill, _ in fills]) / most_spread
    if kept > 1:
        raise ValueError("most_spread is below the spread of these fills")
    if rng.randrange(kept.denominator) >= kept.numerator:
        return None
    return drawn_all


def spread(pool: int, sizes: Sequence[int]) -> Fraction:
    """How much likelier a draw of `sizes` cards per hand, one hand after the other, from `pool`
    cards is than each drawn from the whole pool, but for the cards: prod over the hands after the
    first of C(pool, size) / C(pool - sizes before, size). It grows with every size."""
    spread_so_far, before = Fraction(1), 0
    for size in sizes:
        spread_so_far *= Fraction(comb(pool, size), comb(pool - before, size))
        before += size
    return spread_so_far
