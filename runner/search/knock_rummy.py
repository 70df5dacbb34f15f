"""Knock Rummy's deal sampler: the actions a seat saw played, and deals proposed uniformly from
every deal that puts each card the seat has seen where it saw it (rules: games/knock_rummy.md,
whose section "Sampling hidden cards (cardarena.search)" lists every constraint and how it is met).

Deck positions follow the engine's deal (knock_rummy.md § Engine choices, Dealing): position i
below `dealt` goes to seat (dealer + 1 + i) mod players, position `dealt` is the first face-up
discard (the up-card), and position dealt + 1 + n is the n-th card drawn from the stock. So every
public move says which positions a card can come from: a stock draw names its position, and a
card another seat discards without having taken it from the pile lay in that seat's dealt
positions or in a stock position it drew before the discard.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from cardarena.cards import NAME
from cardarena.games.base import Action
from cardarena.search.knowledge import DealSampler, Proposal, SamplingError, Transcript

#: where the up-card sits in the pile until someone names it (its position is `dealt`)
UP_CARD = None


@dataclass
class DealKnowledge:
    """What a transcript fixes about the deck order: cards at known positions, and for each other
    seat the cards it showed from its hidden hand, each with the slots it may have come from."""

    players: int
    dealer: int
    #: position -> wire card, for every card whose deck position the seat knows
    fixed: dict[int, str] = field(default_factory=dict)
    #: the seat's own dealt cards (they fill its dealt positions in any order: one hand, one deal)
    own_dealt: list[str] = field(default_factory=list)
    #: per seat, its slots in the order they filled: dealt positions, then each stock draw's
    slots: list[list[int]] = field(default_factory=list)
    #: per seat, (card, n): the card left that seat's hidden hand, so it lay in its first n slots
    shown: list[list[tuple[str, int]]] = field(default_factory=list)
    #: after game_end, per other seat, the revealed cards of its final hand that came from its slots
    #: (not taken from the pile): they fill the slots its shown cards left (empty before game_end)
    kept: list[list[str]] = field(default_factory=list)

    @property
    def dealt(self) -> int:
        return (10 if self.players == 2 else 7) * self.players

    def dealt_positions(self, seat: int) -> list[int]:
        """The deck positions dealt to `seat` (knock_rummy.md § Engine choices, Dealing)."""
        return list(range((seat - self.dealer - 1) % self.players, self.dealt, self.players))


class KnockRummySampler(DealSampler):
    """Reads a Knock Rummy seat's transcript and proposes deals consistent with every card it saw."""

    def actions(self, transcript: Transcript) -> list[tuple[int, Action]]:
        answers = iter(transcript.answers)
        played: list[tuple[int, Action]] = []
        for event in transcript.events():
            mover, kind = event.get("seat"), event["type"]
            if kind == "round_end":
                continue
            if mover == transcript.seat:
                played.append((mover, next(answers)))
            elif kind == "draw":
                played.append((mover, {"type": "draw", "source": event["source"]}))
            elif kind == "discard":
                played.append((mover, {"type": "discard", "card": event["card"]}))
            elif kind == "knock":  # the face-down card is named only by game_end's reveal
                played.append((mover, {"type": "knock", "card": transcript.game_end["reveal"]["knock_card"]}))
            else:
                played.append((mover, {"type": kind}))
        # the seat's answer to its latest decision, whose events have not come back yet
        played += [(transcript.seat, answer) for answer in answers]
        return played

    def propose(self, transcript: Transcript, rng: random.Random) -> Proposal:
        known = read_deal(transcript)
        deck: list[str | None] = [None] * 52
        for position, card in known.fixed.items():
            deck[position] = card
        own = known.dealt_positions(transcript.seat) if known.own_dealt else []
        own_cards = list(known.own_dealt)
        rng.shuffle(own_cards)
        for position, card in zip(own, own_cards):
            deck[position] = card
        # A card seat t showed from its hidden hand lay in its first n slots (n grows with each of
        # its stock draws, so these sets are nested). Placed in the order shown, the card with n
        # slots has exactly n - (cards placed before it for t) free choices whatever those earlier
        # cards chose, since they all lie inside its n slots: each placement that meets every
        # constraint has the same probability, the product of 1 / choices.
        # After game_end the cards each hand kept (the reveal) fill its slots left, in any order.
        for seat, shown in enumerate(known.shown):
            open_slots: list[int] = []
            reached = 0
            for card, within in shown:
                open_slots += known.slots[seat][reached:within]
                reached = within
                if not open_slots:
                    raise SamplingError(f"seat {transcript.seat}'s transcript has seat {seat} show {card} "
                                        f"from a hidden hand with no card left in it")
                pick = rng.randrange(len(open_slots))
                open_slots[pick], open_slots[-1] = open_slots[-1], open_slots[pick]
                deck[open_slots.pop()] = card
            if known.kept[seat]:
                open_slots += known.slots[seat][reached:]
                kept = list(known.kept[seat])
                rng.shuffle(kept)
                for position, card in zip(open_slots, kept):
                    deck[position] = card
        placed = set(deck)
        unseen = [card for card in NAME if card not in placed]
        rng.shuffle(unseen)
        free = iter(unseen)
        return Proposal([card if card is not None else next(free) for card in deck], {"dealer": known.dealer})


def read_deal(transcript: Transcript) -> DealKnowledge:
    """Walk the seat's messages in order and note where each card it saw must sit in the deck."""
    seat, players = transcript.seat, transcript.players
    known = DealKnowledge(players, _dealer(transcript))
    known.slots = [known.dealt_positions(other) if other != seat else [] for other in range(players)]
    known.shown = [[] for _ in range(players)]
    known.kept = [[] for _ in range(players)]
    public_holdings: list[set[str]] = [set() for _ in range(players)]  # taken from the pile, not yet shown to leave
    pile: list[str | None] = [UP_CARD]
    stock_drawn = 0
    own_hand: list[str] | None = None  # the seat's hand at its previous decision
    own_draw: int | None = None  # position of the seat's stock draw whose card its next view names
    messages = transcript.decisions + ([transcript.game_end] if transcript.game_end is not None else [])
    for message in messages:
        for event in message["events"]:
            kind, mover = event["type"], event.get("seat")
            if kind == "draw" and event["source"] == "stock":
                position = known.dealt + 1 + stock_drawn
                stock_drawn += 1
                if mover == seat:
                    own_draw = position
                else:
                    known.slots[mover].append(position)
            elif kind == "draw":
                card = event["card"]
                if pile.pop() is UP_CARD:
                    known.fixed[known.dealt] = card
                if mover != seat:
                    public_holdings[mover].add(card)
            elif kind == "discard" or (kind == "knock" and mover != seat):
                # the knocker's face-down card is named only by game_end's reveal
                card = event["card"] if kind == "discard" else transcript.game_end["reveal"]["knock_card"]
                if mover != seat:
                    if card in public_holdings[mover]:
                        public_holdings[mover].remove(card)
                    else:
                        known.shown[mover].append((card, len(known.slots[mover])))
                if kind == "discard":
                    pile.append(card)
        if message is transcript.game_end:
            _read_reveal(known, seat, message, public_holdings, own_hand)
            break
        view = message["view"]
        if own_hand is None:  # the seat's first decision opens its first turn: its hand is as dealt
            known.own_dealt = list(view["hand"])
        if own_draw is not None:
            (drawn,) = set(view["hand"]) - set(own_hand)
            known.fixed[own_draw] = drawn
            own_draw = None
        if pile and pile[0] is UP_CARD:  # still at the bottom of the pile, which the view shows whole
            pile[0] = known.fixed[known.dealt] = view["discard_pile"][0]
        own_hand = view["hand"]
    return known


def _read_reveal(known: DealKnowledge, seat: int, game_end: dict, public_holdings: list[set[str]],
                 own_hand: list[str] | None) -> None:
    """Use game_end's reveal (knock_rummy.md § Reveal: every final hand): each other seat kept in its
    slots the cards of its final hand it did not take from the pile, and a seat that never decided
    never moved, so it holds its dealt hand. (The seat's own stock draws are all in its views: a
    draw never ends the round, the drawer's next decision follows it.)"""
    hands = game_end["reveal"]["hands"]
    if own_hand is None:
        known.own_dealt = list(hands[seat])
    for other in range(known.players):
        if other == seat:
            continue
        kept = [card for card in hands[other] if card not in public_holdings[other]]
        if len(kept) + len(known.shown[other]) != len(known.slots[other]):
            raise SamplingError(f"seat {other}'s revealed hand does not fill the cards it was dealt and drew")
        known.kept[other] = kept


def _dealer(transcript: Transcript) -> int:
    """The dealer's seat: in every view, else the seat before the first mover."""
    if transcript.decisions:
        return transcript.decisions[0]["view"]["dealer"]
    events = transcript.events()
    if not events:
        raise SamplingError("a Knock Rummy transcript with no decision and no event does not name the dealer")
    return (events[0]["seat"] - 1) % transcript.players


SAMPLER = KnockRummySampler()
