"""Cuajo: PIMC over cheap deals rebuilt from the view, rollouts of a greedy policy for a fixed
number of moves, scored by money and by how near each hand is to winning.

The SDK's exact sampler replays the hand and rejects deals that contradict any view or event;
late in a hand that takes 0.2-1.3 s a sample (and may give up), far over both rungs' budgets. A
deal here is the seat's latest view with the unseen cards dealt anew, keeping the hard
constraints that cost nothing to keep: every hand's size, the stock's size, the cards another
seat was seen to take or draw (still in its hand unless seen discarded), and another seat's laid
secrets (four copies of a card still unseen, or the sowee's three and a chosen fourth card).
The fast rung's deals ignore what the public purro flags and the discards say about the hidden
hands; the strong rung's (READING_PLAN) give every other seat flagged purro a hand one card from
complete, so that its search sees which discards and draws hand that seat the win.

Random rollouts tell the candidates apart in no way (a hand is won after dozens of turns), so the
rollouts play a greedy policy: win whenever the engine allows, take the discard when it completes
the hand or adds two cards to its combinations, lay every secret (a sowee secret with a king, or
the card the hand needs least), and discard the card that leaves the hand closest to complete:
the most cards held in combinations, then the most copies left of the cards that would complete
it at once, then the most beginnings of combinations (two suits of a rank, two cards of a 3-4-5 or
J-H-K of one suit). A rollout stops at the end of the hand or after the rung's number of moves,
and scores the partnerships' money, plus 40 cents for each purro player (one card from winning)
and 5 for each card a player holds in combinations, partners counting for the seat and opponents
against it.
"""

from __future__ import annotations

import random
from functools import lru_cache
from itertools import combinations
from typing import Any, Callable

from cardarena.games.base import Action, GameState
from cardarena.games.cuajo import COPIES, NAME, TYPES, CuajoState, completing_cards, parse_card
from cardarena.search.bot import payoff

#: the worth of a player being one card from winning, in cents, at a rollout's horizon
PURRO_WORTH = 40
#: the worth of each card a player holds in combinations, in cents, at a rollout's horizon
COVERED_WORTH = 5
THREE, JACK, KING = 1, 4, 6
#: one more card adds at most this many cards to the combinations (it makes a set of four)
MOST_ONE_CARD_GAIN = 4
#: the card groups no combination crosses: aces; 3, 4 and 5; jacks, horses and kings
GROUPS = ((0, 4), (4, 16), (16, 28))
#: every combination of distinct cards (cuajo.md § Combinations): a lone king, a set of three or
#: four suits of a rank, a 3-4-5 or J-H-K sequence of a suit
COMBINATIONS = tuple(
    [(KING * 4 + suit,) for suit in range(4)]
    + [tuple(rank * 4 + suit for suit in suits) for rank in range(KING + 1)
       for size in (3, 4) for suits in combinations(range(4), size)]
    + [tuple(rank * 4 + suit for rank in (low, low + 1, low + 2)) for low in (THREE, JACK) for suit in range(4)])
#: the combinations that hold each card type
WITH_CARD = tuple(tuple(combo for combo in COMBINATIONS if card in combo) for card in range(TYPES))
#: attempts at a hand one card from complete before a purro seat's hand is dealt at random
PURRO_TRIES = 20


@lru_cache(maxsize=1 << 16)
def group_covered(counts: tuple[int, ...], first_rank: int) -> int:
    """The most cards of one group (`counts` per card type of ranks from `first_rank`) that
    combinations can hold: its first card is either left over or opens a secret, a set, a
    sequence or (a king) a combination of its own; the other cards of a set or sequence come
    after it in card order."""
    index = next((i for i, count in enumerate(counts) if count), None)
    if index is None:
        return 0
    rank, suit = first_rank + index // 4, index % 4
    rest = list(counts)
    rest[index] -= 1
    best = group_covered(tuple(rest), first_rank)
    if rank == KING:
        return 1 + best
    if counts[index] >= 4:
        secret = list(counts)
        secret[index] -= 4
        best = max(best, 4 + group_covered(tuple(secret), first_rank))
    mates = [index - suit + other for other in range(suit + 1, 4) if counts[index - suit + other]]
    for size in (2, 3):
        for chosen in combinations(mates, size):
            taken = list(rest)
            for mate in chosen:
                taken[mate] -= 1
            best = max(best, size + 1 + group_covered(tuple(taken), first_rank))
    if rank in (THREE, JACK):
        run = [index + 4, index + 8]
        if all(counts[card] for card in run):
            taken = list(rest)
            for card in run:
                taken[card] -= 1
            best = max(best, 3 + group_covered(tuple(taken), first_rank))
    return best


def covered(counts: list[int]) -> int:
    """The most cards of the hand `counts` that combinations can hold (16 of 16: complete)."""
    return sum(group_covered(tuple(counts[low:high]), low // 4) for low, high in GROUPS)


def closeness(counts: list[int], dead: list[int]) -> tuple[int, int]:
    """How near the hand is to complete: cards covered, then the copies still to be found of the
    cards that would complete it at once (its outs; `dead` counts the copies in sight elsewhere)."""
    held = covered(counts)
    if sum(counts) - held > MOST_ONE_CARD_GAIN - 1:  # no single card completes it
        return held, 0
    return held, sum(max(0, COPIES - counts[card] - dead[card]) for card in completing_cards(counts))


def promise(counts: list[int]) -> int:
    """How many two-card beginnings of a set (two suits of a rank) or of a sequence (two of 3-4-5 or
    of J-H-K in one suit) the hand holds."""
    total = 0
    for rank in range(KING):
        suits = sum(1 for suit in range(4) if counts[rank * 4 + suit])
        total += suits * (suits - 1) // 2
    for suit in range(4):
        for low in (THREE, JACK):
            total += sum(1 for rank in range(low, low + 3) if counts[rank * 4 + suit]) == 2
    return total


def best_discard(counts: list[int], allowed: list[int], dead: list[int], rng: random.Random) -> int:
    """The allowed card whose discard leaves the hand closest to complete, then with the most beginnings."""
    def keep(card: int) -> tuple[int, int, int, float]:
        counts[card] -= 1
        near = closeness(counts, dead), promise(counts)
        counts[card] += 1
        return near[0][0], near[0][1], near[1], rng.random()
    return max(allowed, key=keep)


def worth_taking(counts: list[int], card: int) -> bool:
    """Whether the last discard adds at least two covered cards (it starts a new combination)."""
    before = covered(counts)
    counts[card] += 1
    after = covered(counts)
    counts[card] -= 1
    return after - before >= 2


def in_sight(state: CuajoState, seat: int) -> list[int]:
    """Copies per card that `seat` sees outside its free cards: the discard pile, the sowee, its secrets."""
    dead = [0] * TYPES
    for card in state.pile:
        dead[card] += 1
    dead[state.sowee] += 1
    for card in state.secrets[seat]:
        dead[card] += COPIES
    return dead


class CuajoPlan:
    def prefilter(self, view: dict[str, Any], legal: list[Action]) -> list[Action]:
        if view["phase"] == "claim":
            return [{"type": "claim"}]  # winning is never worse than letting the card go
        secrets = [action for action in legal if action["type"] == "secret"]
        if secrets:
            return secrets[:1]  # each opponent pays 50 at once; the cards still count for the hand
        if view["phase"] != "discard":
            return legal
        hand = [0] * TYPES
        fourths = [secret[3] for secret in view["secrets"] if len(set(secret)) > 1]
        for card in view["hand"] + fourths:  # the cards that must still fit into combinations
            hand[parse_card(card)] += 1
        discards = [action for action in legal if action["type"] == "discard"]
        # the search's order: the discards that leave the hand closest to complete first
        rng = random.Random(0)
        order = []
        allowed = [parse_card(action["card"]) for action in discards]
        dead = [0] * TYPES
        for card in view["discards"] + [view["sowee"]] + [card for secret in view["secrets"] for card in secret]:
            dead[parse_card(card)] += 1
        while allowed:
            card = best_discard(hand, allowed, dead, rng)
            order.append({"type": "discard", "card": NAME[card]})
            allowed.remove(card)
        discards = order
        sowee = [action for action in legal if action["type"] == "sowee_secret"]
        return sowee + discards

    def __init__(self, reads_purro: bool = False):
        self.reads_purro = reads_purro

    def determinize(self, bot: Any) -> GameState:
        return rebuilt(bot, bot.rng, self.reads_purro)

    def policy(self, state: GameState, rng: random.Random) -> Action:
        phase = state.phase
        seat = state.to_move()
        if phase == "claim":
            return {"type": "claim"}
        if phase == "draw":
            if state.pile and (state.can_win_with(seat, state.pile[-1])
                               or worth_taking(state.free_cards(seat)[:], state.pile[-1])):
                return {"type": "take"}
            return {"type": "draw"}
        legal = state.legal_actions()
        for action in legal:
            if action["type"] == "secret":
                return action
        fourths = [parse_card(action["card"]) for action in legal if action["type"] == "sowee_secret"]
        if fourths:  # paid like a secret: the fourth card is a king, or the one the hand needs least
            kings = [card for card in fourths if card >= KING * 4]
            card = kings[0] if kings else best_discard(state.free_cards(seat)[:], fourths, in_sight(state, seat), rng)
            return {"type": "sowee_secret", "card": NAME[card]}
        allowed = [parse_card(action["card"]) for action in legal if action["type"] == "discard"]
        card = best_discard(state.free_cards(seat)[:], allowed, in_sight(state, seat), rng)
        return {"type": "discard", "card": NAME[card]}

    def horizon(self, start: GameState, depth: int) -> Callable[[GameState], bool]:
        """After `depth` moves (a draw, a discard, a secret, a claim each count one)."""
        moves = [-1]

        def reached(state: GameState) -> bool:
            moves[0] += 1
            return moves[0] >= depth

        return reached

    def value(self, state: GameState, seat: int) -> float:
        if state.is_over():
            return payoff(state.result(), seat)
        team = seat % 2
        near = [PURRO_WORTH * state.purro[other] + COVERED_WORTH * covered(state.free_cards(other))
                for other in range(4)]
        return state.balance[team] - state.balance[1 - team] + sum(
            worth if other % 2 == team else -worth for other, worth in enumerate(near))


def rebuilt(bot: Any, rng: random.Random, reads_purro: bool) -> CuajoState:
    """A full state consistent with the seat's latest view and the hard constraints listed above;
    with `reads_purro`, the hand of another seat flagged purro is one card from complete."""
    transcript = bot.knowledge.transcript
    view = transcript.current_view()
    seat = view["seat"]
    unseen = [COPIES] * TYPES
    hands = [[0] * TYPES for _ in range(4)]
    for card in view["hand"]:
        hands[seat][parse_card(card)] += 1
    seen = list(view["hand"]) + [card for secret in view["secrets"] for card in secret] + list(view["discards"])
    seen.append(view["sowee"])
    if view["shown"] is not None:
        seen.append(view["shown"])
    for card in seen:
        unseen[parse_card(card)] -= 1
    held = [[] for _ in range(4)]  # cards others were seen to get and not seen to give up
    laid: list[list[str]] = [[] for _ in range(4)]
    for event in transcript.events():
        other = event.get("seat")
        if other == seat or other is None:
            continue
        kind = event["type"]
        if kind in ("take", "claim") or (kind == "draw" and "card" in event):
            held[other].append(parse_card(event["card"]))
        elif kind == "discard" and parse_card(event["card"]) in held[other]:
            held[other].remove(parse_card(event["card"]))
        elif kind == "secret":
            laid[other].append(event["kind"])
    secrets: list[list[int]] = [[] for _ in range(4)]
    fourth: list[int | None] = [None] * 4
    sowee = parse_card(view["sowee"])
    for other in range(4):
        for card in held[other]:
            if unseen[card] > 0:
                unseen[card] -= 1
                hands[other][card] += 1
        for kind in laid[other]:
            if kind == "sowee":
                unseen[sowee] = max(0, unseen[sowee] - 3)
            else:
                choices = [card for card in range(TYPES) if unseen[card] >= COPIES]
                if choices:
                    card = rng.choice(choices)
                    unseen[card] -= COPIES
                    secrets[other].append(card)
    for other in range(4):
        if reads_purro and other != seat and view["purro"][other] and "sowee" not in laid[other]:
            hands[other] = purro_hand(hands[other], view["hand_sizes"][other], unseen, rng) or hands[other]
    pool = [card for card in range(TYPES) for _ in range(unseen[card])]
    rng.shuffle(pool)
    for other in range(4):
        if other == seat:
            continue
        if "sowee" in laid[other] and pool:
            fourth[other] = pool.pop()
        while sum(hands[other]) < view["hand_sizes"][other] and pool:
            hands[other][pool.pop()] += 1
    state = object.__new__(CuajoState)
    state.adopt_rng(random.Random(rng.getrandbits(64)))
    state.dealer, state.max_turns, state.turn_number = view["dealer"], view["max_turns"], view["turn_number"]
    state.hands, state.sowee = hands, sowee
    state.stock = pool[:view["stock"]]
    state.pile = [parse_card(card) for card in view["discards"]]
    own = [parse_card(secret[0]) for secret in view["secrets"] if len(set(secret)) == 1]
    own_fourth = [parse_card(secret[3]) for secret in view["secrets"] if len(set(secret)) > 1]
    secrets[seat], fourth[seat] = own, (own_fourth[0] if own_fourth else None)
    state.secrets, state.fourth = secrets, fourth
    state.purro, state.penalty, state.balance = list(view["purro"]), list(view["penalty"]), list(view["balance"])
    state.current, state.phase = view["turn"], view["phase"]
    state.shown = None if view["shown"] is None else parse_card(view["shown"])
    state.claimants = []
    state.turn_card, state.turn_source = turn_card(transcript), "stock"
    state.outcome, state.next_dealer = {}, view["dealer"]
    return state


def purro_hand(must: list[int], size: int, unseen: list[int], rng: random.Random) -> list[int] | None:
    """A hand of `size` cards (counts) holding the cards `must`, the rest taken from `unseen` (which
    loses them), that one card would complete: random combinations, those of the `must` cards
    first, make up `size` + 1 cards, then one card taken from `unseen` is left out. None when
    PURRO_TRIES attempts fail (the `must` cards fit no such hand, or the combinations overshoot)."""
    for _ in range(PURRO_TRIES):
        left, spare, hand, taken = must[:], unseen[:], [0] * TYPES, []
        placed, owed = 0, sum(must)
        while placed <= size:
            room = size + 1 - placed
            candidates = WITH_CARD[next(card for card in range(TYPES) if left[card])] if owed else COMBINATIONS
            fits = [combo for combo in candidates if len(combo) <= room
                    and all(left[card] or spare[card] for card in combo)]
            if not fits:
                break
            combo = rng.choice(fits)
            placed += len(combo)
            for card in combo:
                hand[card] += 1
                if left[card]:
                    left[card] -= 1
                    owed -= 1
                else:
                    spare[card] -= 1
                    taken.append(card)
        if placed == size + 1 and not owed and taken:
            missing = rng.choice(taken)
            hand[missing] -= 1
            spare[missing] += 1
            unseen[:] = spare
            return hand
    return None


def turn_card(transcript: Any) -> int | None:
    """The card this seat's turn began with: the one its latest hand holds beyond the hand before."""
    if len(transcript.decisions) < 2:
        return None
    now, before = (transcript.decisions[index]["view"]["hand"] for index in (-1, -2))
    extra = list(now)
    for card in before:
        if card in extra:
            extra.remove(card)
    return parse_card(extra[0]) if extra else None


PLAN = CuajoPlan()
#: the strong rung's: another seat's purro flag shapes its hand in every deal
READING_PLAN = CuajoPlan(reads_purro=True)
