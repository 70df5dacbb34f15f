"""Quitlok (Kvitlach): a banking game of 21 with the 24-card Quitli deck, for 5 to 10 players.

The rules, the wire forms and every engine choice are in runner/games/quitlok.md. Inside the
engine a card is its number 1..12 (two copies of each); on the wire it is "Q1" .. "Q12".
Seats run clockwise in increasing order, so a player's left is seat + 1 and right is seat - 1.
"""

from __future__ import annotations

import random
from typing import Any, Mapping, Sequence

from cardarena.games.base import (
    Action, Event, Game, GameError, GameSpec, GameState, IllegalAction, Option, OptionError, Result,
    check_deck, shuffle,
)

CARD_NAME = {number: f"Q{number}" for number in range(1, 13)}
CARD_BY_NAME = {name: number for number, name in CARD_NAME.items()}
FULL_DECK = tuple(number for number in range(1, 13) for _copy in range(2))
FRAMED = frozenset((2, 11))
RETIREMENT_CARDS = frozenset((4, 7))
FIRST_HAND_TO_RETIRE = 4
TWENTY_ONE = 21

CLOCKWISE, ANTICLOCKWISE = 1, -1
DIRECTION_NAME = {CLOCKWISE: "clockwise", ANTICLOCKWISE: "anticlockwise"}

# Phases: who is deciding what.
FUND, RETIRE, TURN, BANKER, OVER = "fund", "retire", "turn", "banker", "over"
# Seat statuses within a hand.
WAITING, PLAYING, STAYED, DONE, BANKING = "waiting", "playing", "stayed", "done", "banker"


def hand_value(cards: Sequence[int], framed_pair_counts: bool) -> int:
    """Best total of `cards` not over 21 (a 12 counts 12 or 9); a player's framed first pair is 21."""
    if framed_pair_counts and len(cards) >= 2 and cards[0] in FRAMED and cards[1] in FRAMED:
        return TWENTY_ONE
    total = sum(cards)
    twelves = cards.count(12)
    while total > TWENTY_ONE and twelves:
        total -= 3
        twelves -= 1
    return total


def names(cards: Sequence[int]) -> list[str]:
    """Wire forms of `cards`, in order."""
    return [CARD_NAME[card] for card in cards]


def check_option_combination(options: Mapping[str, Any]) -> None:
    """Raise OptionError for option values that are each valid but cannot work together."""
    if options["min_bank"] > options["stack"]:
        raise OptionError(
            f"option 'min_bank' ({options['min_bank']}) exceeds 'stack' ({options['stack']}): nobody could bank"
        )
    if options["min_bet"] > options["min_bank"]:
        raise OptionError(
            f"option 'min_bet' ({options['min_bet']}) exceeds 'min_bank' ({options['min_bank']}):"
            " a smallest bank could not cover a smallest bet"
        )
    if options["max_bet"] is not None and options["max_bet"] < options["min_bet"]:
        raise OptionError(
            f"option 'max_bet' ({options['max_bet']}) is below 'min_bet' ({options['min_bet']})"
        )


def parse_deck(deck: Sequence[str]) -> list[int]:
    """The fixed card order `deck` (wire forms, top first) as ints; OptionError unless it is the Quitli deck."""
    return [CARD_BY_NAME[name] for name in check_deck(deck, names(FULL_DECK), "quitlok")]


class QuitlokState(GameState):
    """A Quitlok session in progress: every player banks once, chips move only between stacks, bank and bets."""

    def __init__(self, players: int, options: dict[str, Any], rng: random.Random, deck: list[int], first_banker: int):
        self.players = players
        self.options = options
        self.adopt_rng(rng)
        self.deck = deck[::-1]  # top card last, so drawing is a pop
        self.face_down_discards: list[int] = []  # never shown to the table
        self.face_up_discards: list[int] = []  # shown to everyone since the last reshuffle
        self.stacks = [options["stack"]] * players
        self.bank = 0
        self.bets = [0] * players
        self.hands: list[list[int]] = [[] for _ in range(players)]
        self.face_up: list[list[bool]] = [[] for _ in range(players)]
        self.eleven_called = [False] * players
        self.status = [WAITING] * players
        self.banker = first_banker
        self.banks_held = 0  # seats that have banked or been skipped as banker
        self.hand_number = 0  # hands of the current banker, the current one included
        self.direction = CLOCKWISE
        self.turn_order: list[int] = []
        self.turn_index = 0
        self.phase = FUND
        self.events: list[Event] = []
        self._open_bank(first_banker)

    # ----- the interface -------------------------------------------------------------------

    def to_move(self) -> int | None:
        if self.phase == TURN:
            return self.turn_order[self.turn_index]
        if self.phase == OVER:
            return None
        return self.banker

    def legal_actions(self) -> list[Action]:
        phase = self.phase
        if phase == TURN:
            return self._player_actions(self.turn_order[self.turn_index])
        if phase == BANKER:
            return [{"type": "draw"}, {"type": "stand"}] if self._can_draw() else [{"type": "stand"}]
        if phase == FUND:
            return [{"type": "fund", "amount": {"min": self.options["min_bank"], "max": self.stacks[self.banker]}}]
        if phase == RETIRE:
            return [{"type": "retire"}, {"type": "keep"}] if self._may_retire() else [{"type": "keep"}]
        return []

    def apply(self, action: Action) -> list[Event]:
        self.events = []
        kind = action.get("type")
        if self.phase == TURN and kind in ("blot", "bet", "stay", "eleven_blot", "eleven_bet"):
            self._player_action(self.turn_order[self.turn_index], kind, action.get("amount", 0))
        elif self.phase == BANKER and kind in ("draw", "stand"):
            self._banker_action(kind)
        elif self.phase == FUND and kind == "fund":
            self._fund(action["amount"])
        elif self.phase == RETIRE and (kind == "keep" or kind == "retire" and self._may_retire()):
            self._retirement_decision(kind == "retire")
        else:
            raise IllegalAction(f"{action!r} is not an action of the {self.phase!r} phase")
        return self.events

    def view(self, seat: int) -> dict[str, Any]:
        hands = []
        for other in range(self.players):
            shown = other == seat
            hands.append([
                CARD_NAME[card] if shown or up else None
                for card, up in zip(self.hands[other], self.face_up[other])
            ])
        return {
            "seat": seat,
            "phase": self.phase,
            "to_move": self.to_move(),
            "banker": self.banker if self.phase != OVER else None,
            "hand_number": self.hand_number,
            "direction": DIRECTION_NAME[self.direction],
            "turn_order": list(self.turn_order),
            "bank": self.bank,
            "cover": sum(self.bets),
            "stacks": list(self.stacks),
            "bets": list(self.bets),
            "hands": hands,
            "face_up": [list(flags) for flags in self.face_up],
            "total": hand_value(self.hands[seat], seat != self.banker) if self.hands[seat] else None,
            "status": list(self.status),
            "eleven_called": list(self.eleven_called),
            "banks_held": self.banks_held,
            "deck_size": len(self.deck),
            "discards_seen": names(self.face_up_discards),
            "discards_unseen": len(self.face_down_discards),
        }

    def is_over(self) -> bool:
        return self.phase == OVER

    def result(self) -> Result:
        if self.phase != OVER:
            raise GameError("the Quitlok session is not over")
        return Result.from_scores(self._net_changes())

    def reveal(self) -> dict[str, Any]:
        return {"stacks": list(self.stacks), "net": self._net_changes()}

    def hidden_cards(self, seat: int) -> list[str]:
        hidden = self.deck + self.face_down_discards
        for other in range(self.players):
            if other != seat:
                hidden += [card for card, up in zip(self.hands[other], self.face_up[other]) if not up]
        return names(hidden)

    def clone(self) -> "QuitlokState":
        copy = object.__new__(QuitlokState)
        copy.__dict__.update(self.__dict__)
        self._clone_rng_into(copy)
        for name in ("deck", "face_down_discards", "face_up_discards", "stacks", "bets",
                     "eleven_called", "status", "turn_order", "events"):
            setattr(copy, name, list(getattr(self, name)))
        copy.hands = [list(hand) for hand in self.hands]
        copy.face_up = [list(flags) for flags in self.face_up]
        return copy

    # ----- helpers of the interface ------------------------------------------------------

    def _net_changes(self) -> list[int]:
        """Each seat's chip change since the start of the session."""
        return [stack - self.options["stack"] for stack in self.stacks]

    def _player_actions(self, seat: int) -> list[Action]:
        """The legal choices of `seat` on its turn, in the canonical order blot, bet, stay, eleven."""
        can_draw = self._can_draw()
        largest_bet = min(self.bank - sum(self.bets), self.stacks[seat])
        if self.options["max_bet"] is not None:
            largest_bet = min(largest_bet, self.options["max_bet"])
        bet_range = {"min": self.options["min_bet"], "max": largest_bet}
        can_bet = can_draw and largest_bet >= self.options["min_bet"]
        actions: list[Action] = []
        if can_draw:
            actions.append({"type": "blot"})
        if can_bet:
            actions.append({"type": "bet", "amount": bet_range})
        actions.append({"type": "stay"})
        if can_draw and not self.eleven_called[seat] and hand_value(self.hands[seat], True) == 11:
            actions.append({"type": "eleven_blot"})
            if can_bet:
                actions.append({"type": "eleven_bet", "amount": dict(bet_range)})
        return actions

    # ----- cards ---------------------------------------------------------------------------

    def _can_draw(self) -> bool:
        """Whether a card can be had from the deck or, by reshuffling, from the discards."""
        return bool(self.deck or self.face_down_discards or self.face_up_discards)

    def _reshuffle_if_due(self) -> None:
        """With one card (or none) left, shuffle it together with every discard into a new deck."""
        if len(self.deck) <= 1 and (self.face_down_discards or self.face_up_discards):
            self.deck += self.face_down_discards + self.face_up_discards
            self.face_down_discards = []
            self.face_up_discards = []
            shuffle(self._private_rng(), self.deck)
            self.events.append({"type": "reshuffle", "deck_size": len(self.deck)})

    def _draw(self) -> int:
        """The top card of the deck, reshuffling when exactly one card is left."""
        self._reshuffle_if_due()
        card = self.deck.pop()
        self._reshuffle_if_due()
        return card

    def _give(self, seat: int, card: int, face_up: bool) -> None:
        self.hands[seat].append(card)
        self.face_up[seat].append(face_up)

    def _discard_hand(self, seat: int, shown: bool) -> None:
        """Move a seat's cards to the discards; `shown` means the whole hand was revealed to the table."""
        for card, up in zip(self.hands[seat], self.face_up[seat]):
            (self.face_up_discards if shown or up else self.face_down_discards).append(card)
        self.hands[seat] = []
        self.face_up[seat] = []

    # ----- the bank ------------------------------------------------------------------------

    def _open_bank(self, seat: int) -> None:
        """Offer the bank to `seat`, passing right over players short of `min_bank`; end when all have had it."""
        while self.banks_held < self.players:
            if self.stacks[seat] >= self.options["min_bank"]:
                self.banker = seat
                self.phase = FUND
                self.hand_number = 0
                self.turn_order = []
                self.status = [WAITING] * self.players
                self.events.append({"type": "new_banker", "seat": seat})
                return
            self.events.append({"type": "banker_skipped", "seat": seat, "stack": self.stacks[seat]})
            self.banks_held += 1
            seat = (seat - 1) % self.players
        self.phase = OVER
        self.events.append({"type": "session_over", "net": self._net_changes()})

    def _fund(self, amount: int) -> None:
        self.stacks[self.banker] -= amount
        self.bank = amount
        self.events.append({"type": "fund", "seat": self.banker, "amount": amount})
        self._start_hand()

    def _end_bank(self, reason: str) -> None:
        """The banker takes what is left in the bank and it passes to the right."""
        for seat in range(self.players):
            self._discard_hand(seat, False)
        self.events.append({"type": "bank_ends", "seat": self.banker, "reason": reason, "returned": self.bank})
        self.stacks[self.banker] += self.bank
        self.bank = 0
        self.banks_held += 1
        self._open_bank((self.banker - 1) % self.players)

    def _retirement_question_due(self) -> bool:
        """Whether the banker is asked about retiring on the card just received: every card from their 4th hand on.

        Asked whatever the card, so that the question itself tells the other seats nothing about a face-down card.
        """
        return self.hand_number >= FIRST_HAND_TO_RETIRE

    def _may_retire(self) -> bool:
        """Whether the banker's newest card lets them retire now: a 4 or a 7."""
        return self.hands[self.banker][-1] in RETIREMENT_CARDS

    def _retirement_decision(self, retire: bool) -> None:
        if not retire:
            self.events.append({"type": "keep", "seat": self.banker})
            self._next_turn()
            return
        card = self.hands[self.banker][-1]
        self.events.append({"type": "retire", "seat": self.banker, "card": CARD_NAME[card]})
        self._discard_hand(self.banker, True)
        self._end_bank("retired")

    # ----- a hand --------------------------------------------------------------------------

    def _start_hand(self) -> None:
        """Deal one card face down to every player, banker last, and start the first turn."""
        self.hand_number += 1
        self.direction = CLOCKWISE if self.hand_number % 2 else ANTICLOCKWISE
        banker, players = self.banker, self.players
        self.turn_order = [(banker + self.direction * step) % players for step in range(1, players)]
        self.turn_index = 0
        self.events.append({
            "type": "hand", "banker": banker, "number": self.hand_number,
            "direction": DIRECTION_NAME[self.direction], "order": list(self.turn_order),
        })
        for seat in self.turn_order + [banker]:
            self._give(seat, self._draw(), False)
            self.status[seat] = WAITING
            self.eleven_called[seat] = False
        self.status[banker] = BANKING
        self._continue_after_banker_card()

    def _continue_after_banker_card(self) -> None:
        """After the banker receives a card with no bet outstanding: ask about retiring (from the 4th hand) or go on."""
        if self._retirement_question_due():
            self.phase = RETIRE
        else:
            self._next_turn()

    def _next_turn(self) -> None:
        """Give the turn to the next player in order, or move on to the banker once all have played."""
        if self.turn_index < len(self.turn_order):
            self.phase = TURN
            self.status[self.turn_order[self.turn_index]] = PLAYING
        elif any(self.bets):
            self._start_banker_turn()
        else:
            self._finish_hand()

    def _player_action(self, seat: int, kind: str, amount: int) -> None:
        if kind == "stay":
            self.events.append({"type": "stay", "seat": seat})
            self._end_turn(seat)
            return
        if amount:
            self.stacks[seat] -= amount
            self.bets[seat] += amount
        face_up = kind in ("blot", "eleven_blot")
        if kind in ("blot", "bet"):
            before_draw = len(self.events)
            card = self._draw()
            self._give(seat, card, face_up)
            # The card's event goes before a reshuffle that its draw caused.
            self.events.insert(before_draw, {"type": "blot", "seat": seat, "card": CARD_NAME[card]} if face_up
                               else {"type": "bet", "seat": seat, "amount": amount})
        else:
            self._call_eleven(seat, amount, face_up)
        total = hand_value(self.hands[seat], True)
        if total > TWENTY_ONE:
            self._bust(seat, total)
        elif total == TWENTY_ONE:
            self._pay_twenty_one(seat)

    def _call_eleven(self, seat: int, amount: int, face_up: bool) -> None:
        """Take a card that cannot bust the hand: busting cards are set aside, shown and discarded."""
        self.eleven_called[seat] = True
        burned: list[int] = []
        received = None
        while self._can_draw():
            card = self._draw()
            if hand_value(self.hands[seat] + [card], True) <= TWENTY_ONE:
                received = card
                break
            burned.append(card)
        self.face_up_discards += burned
        if received is not None:
            self._give(seat, received, face_up)
        self.events.append({
            "type": "eleven", "seat": seat, "amount": amount, "burned": names(burned),
            "received": received is not None,
            "card": CARD_NAME[received] if face_up and received is not None else None,
        })

    def _bust(self, seat: int, total: int) -> None:
        """The player's bets go to the bank and the turn ends with the hand shown."""
        lost = self.bets[seat]
        self.bank += lost
        self.bets[seat] = 0
        self.events.append({"type": "bust", "seat": seat, "cards": names(self.hands[seat]), "total": total, "lost": lost})
        self._discard_hand(seat, True)
        self.status[seat] = DONE
        self._end_turn(seat)

    def _pay_twenty_one(self, seat: int) -> None:
        """An exact 21 is shown and its bets are paid from the bank at once."""
        won = self.bets[seat]
        self.bank -= won
        self.stacks[seat] += 2 * won
        self.bets[seat] = 0
        self.events.append({"type": "twenty_one", "seat": seat, "cards": names(self.hands[seat]), "won": won})
        self._discard_hand(seat, True)
        self.status[seat] = DONE
        self._end_turn(seat)

    def _end_turn(self, seat: int) -> None:
        """Close a turn; if the bank has no uncovered money left the banker plays now (or the bank is empty)."""
        if self.status[seat] == PLAYING:
            if self.bets[seat]:
                self.status[seat] = STAYED
            else:
                self._discard_hand(seat, False)
                self.status[seat] = DONE
        self.turn_index += 1
        if self.bank == sum(self.bets):
            if self.bank:
                self._start_banker_turn()
            else:
                self._end_bank("bank_empty")
        else:
            self._next_turn()

    # ----- the banker's turn and settlement -------------------------------------------------

    def _start_banker_turn(self) -> None:
        self.phase = BANKER
        self.events.append({"type": "banker_turn", "seat": self.banker})

    def _banker_action(self, kind: str) -> None:
        if kind == "stand":
            self.events.append({"type": "stand", "seat": self.banker})
            self._settle()
            return
        before_draw = len(self.events)
        self._give(self.banker, self._draw(), False)
        self.events.insert(before_draw, {"type": "draw", "seat": self.banker})
        if hand_value(self.hands[self.banker], False) > TWENTY_ONE:
            self._settle()

    def _settle(self) -> None:
        """Pay or collect every outstanding bet against the banker's shown hand, then go on with the hand."""
        banker = self.banker
        banker_total = hand_value(self.hands[banker], False)
        banker_bust = banker_total > TWENTY_ONE
        self.events.append({
            "type": "banker_shows", "seat": banker, "cards": names(self.hands[banker]),
            "total": banker_total, "bust": banker_bust,
        })
        self._discard_hand(banker, True)
        for seat in self.turn_order[:self.turn_index]:
            bet = self.bets[seat]
            if not bet:
                continue
            total = hand_value(self.hands[seat], True)
            if banker_bust or total > banker_total:
                outcome, self.stacks[seat], self.bank = "win", self.stacks[seat] + 2 * bet, self.bank - bet
            elif total == banker_total and not self.options["ties_to_bank"]:
                outcome, self.stacks[seat] = "push", self.stacks[seat] + bet
            else:
                outcome, self.bank = "lose", self.bank + bet
            self.events.append({
                "type": "settle", "seat": seat, "cards": names(self.hands[seat]), "total": total,
                "bet": bet, "outcome": outcome,
            })
            self.bets[seat] = 0
            self._discard_hand(seat, True)
            self.status[seat] = DONE
        if self.bank == 0:
            self._end_bank("bank_empty")
        elif self.turn_index < len(self.turn_order):
            before_draw = len(self.events)
            self._give(banker, self._draw(), False)
            self.events.insert(before_draw, {"type": "banker_fresh_card", "seat": banker})
            self._continue_after_banker_card()
        else:
            self._finish_hand()

    def _finish_hand(self) -> None:
        """Clear the table (the bank still holds money); after `max_hands_per_bank` it passes, else a new hand."""
        for seat in range(self.players):
            self._discard_hand(seat, False)
        if self.hand_number >= self.options["max_hands_per_bank"]:
            self._end_bank("max_hands")
        else:
            self._start_hand()


class Quitlok(Game):
    """Quitlok's rules and options; makes seeded sessions."""

    spec = GameSpec(
        name="quitlok",
        title="Quitlok (Kvitlach)",
        min_players=5,
        max_players=10,
        partnerships="none",
        zero_sum=True,
        rules_version="2",
        summary="A banking game of 21 with the 24-card Quitli deck; every player holds the bank once.",
        options=(
            Option("stack", 100, "chips each player starts with", minimum=1),
            Option("min_bank", 10, "smallest bank a banker may put up", minimum=1),
            Option("min_bet", 1, "smallest single bet", minimum=1),
            Option("max_bet", None, "largest single bet (none: only the bank's cover limits it)", minimum=1),
            Option("ties_to_bank", True, "a tie between player and banker goes to the bank (else the bet is returned)"),
            Option("max_hands_per_bank", 10, "after this many hands the banker retires with the bank", minimum=1),
        ),
    )

    def new_state(
        self,
        players: int,
        options: Mapping[str, Any] | None = None,
        seed: int = 0,
        deck: Sequence[str] | None = None,
    ) -> QuitlokState:
        resolved = self._resolve(players, options)
        rng = random.Random(seed)
        first_banker = rng.randrange(players)
        if deck is None:
            cards = list(FULL_DECK)
            shuffle(rng, cards)
        else:
            cards = parse_deck(deck)
        return QuitlokState(players, resolved, rng, cards, first_banker)

    def deck(self, players: int, options: Mapping[str, Any] | None = None) -> list[str]:
        self._resolve(players, options)
        return names(FULL_DECK)

    def _resolve(self, players: int, options: Mapping[str, Any] | None) -> dict[str, Any]:
        """Checked player count and options, defaults filled in."""
        self.spec.check_players(players)
        resolved = self.spec.resolve_options(options)
        check_option_combination(resolved)
        return resolved


GAME = Quitlok()
