"""Every engine's behaviour, pinned by a digest of many seeded games recorded before the speed work.

The engines are rewritten for speed (issue 21, item 5) while their wire forms, legal-action order,
views, events and results must stay exactly as they were. The old engines cannot be imported here,
so their transcripts were digested once, before any change: each game below is played by a seeded
policy (uniform, or type-first with the game-ending moves made rare so that games run long), and at
every step the seat to move, its legal list, every seat's view and hidden cards, and the events
are fed to the digest; at the end, the result and the reveal. Half the games start from a dealt
`deck=` instead of a seed (in Cuajo, hands dealt close to complete, so that hands get won), and
half clone the state before every move and play on with the clone, so the sampling path and
`clone` (random generator included) are pinned too.

If an intended rule change breaks this test, rerun `python -m tests.test_engine_golden` and
replace the digest it prints, saying why in the commit.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any, Iterator

from cardarena.games import all_games, cuajo
from cardarena.protocol.actions import random_action

#: (game, players, options) played here; the options reach every ending and house rule
CASES: dict[str, list[tuple[int, dict[str, Any]]]] = {
    "knock-rummy": [
        (2, {}), (3, {}), (4, {"dealer": 1}), (5, {}),
        (2, {"empty_stock_pickups": 0}), (3, {"empty_stock_pickups": 2}), (2, {"max_turns": 6}),
    ],
    "casino": [
        (2, {}), (3, {"sweeps": True}), (4, {}), (4, {"partnerships": True, "lenient_builds": True}),
        (2, {"lenient_builds": True, "target": 11}), (3, {"target": 50, "max_rounds": 2}),
    ],
    "cuajo": [(4, {}), (4, {"dealer": 2}), (4, {"max_turns": 30})],
    "quitlok": [
        (5, {}), (7, {"max_bet": 5, "ties_to_bank": False}), (10, {"max_hands_per_bank": 3}),
        (6, {"stack": 30, "min_bank": 20, "min_bet": 2}),
    ],
}
#: seeded games per case: Knock Rummy, the one timed against OpenSpiel, gets the most
GAMES_PER_CASE = {"knock-rummy": 60, "casino": 6, "cuajo": 16, "quitlok": 4}
#: action types a patient policy plays only one time in twenty when it has another choice
RARE_TYPES = frozenset({"knock", "retire", "pass"})

GOLDEN_DIGEST = "d284bc9da0f81e0ab354b0baedb2d8fb0b9f9854713466d4285bb2f79d9e059e"


def purro_discards(view: dict[str, Any], legal: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cuajo's discards that leave the hand one card from complete (so that hands get won)."""
    hand = cuajo.counts_of([cuajo.parse_card(card) for card in view["hand"]])
    found = []
    for entry in legal:
        if entry["type"] == "discard":
            rest = list(hand)
            rest[cuajo.parse_card(entry["card"])] -= 1
            if cuajo.completing_cards(rest):
                found.append(entry)
    return found


def near_complete_cuajo_deck(rng: random.Random) -> list[str]:
    """A Cuajo deck whose four hands are each five combinations with one card swapped for stock
    cards, so that random play reaches purro, claims and wins of every kind."""
    copies = [cuajo.COPIES] * cuajo.TYPES
    hands = []
    for _ in range(4):
        hand: list[int] = []
        while len(hand) < cuajo.HAND_SIZE:
            suit = rng.randrange(4)
            if rng.random() < 0.5:
                rank = rng.randrange(7)
                suits = rng.sample([s for s in range(4) if s != suit], 2) + [suit]
                combination = [rank * 4 + s for s in suits]
            else:
                combination = [rank * 4 + suit for rank in rng.choice(((1, 2, 3), (4, 5, 6)))]
            if all(copies[t] for t in combination):
                for t in combination:
                    copies[t] -= 1
                hand += combination
        hands.append(hand)
    rest = [t for t in range(cuajo.TYPES) for _ in range(copies[t])]
    rng.shuffle(rest)
    for hand in hands:
        slot, spare = rng.randrange(len(hand)), rng.randrange(len(rest))
        hand[slot], rest[spare] = rest[spare], hand[slot]
    return [cuajo.NAME[t] for t in [t for hand in hands for t in hand] + rest]


def choose(legal: list[dict[str, Any]], view: dict[str, Any], rng: random.Random, patient: bool) -> dict[str, Any]:
    """A uniform legal action, or (patient) a uniform action type first, rare types avoided, and
    in Cuajo a discard that keeps the hand one card from complete where there is one."""
    if not patient:
        return random_action(legal, rng)
    if view.get("phase") == "discard" and "sowee" in view:
        legal = purro_discards(view, legal) or legal
    types = sorted({entry["type"] for entry in legal})
    common = [kind for kind in types if kind not in RARE_TYPES]
    if common and rng.random() >= 0.05:
        types = common
    kind = types[rng.randrange(len(types))]
    return random_action([entry for entry in legal if entry["type"] == kind], rng)


def transcript(name: str, players: int, options: dict[str, Any], seed: int) -> Iterator[str]:
    """Everything observable in one seeded game, as text, step by step."""
    game = all_games()[name]
    rng = random.Random(seed)
    if seed % 2:
        if name == "cuajo":
            deck = near_complete_cuajo_deck(rng)
        else:
            deck = game.deck(players, options)
            rng.shuffle(deck)
        state = game.new_state(players, options, deck=deck)
        state.rng = random.Random(seed)
    else:
        state = game.new_state(players, options, seed)
    patient, cloning = seed % 3 != 0, seed % 4 >= 2
    while not state.is_over():
        seat = state.to_move()
        legal = state.legal_actions()
        yield repr((seat, legal))
        for other in range(players):
            yield repr((state.view(other), state.hidden_cards(other)))
        action = choose(legal, state.view(seat), rng, patient)
        if cloning:
            state = state.clone()
        yield repr((action, state.apply(action)))
    yield repr((state.to_move(), state.legal_actions(), state.result().to_wire(), state.reveal()))
    for other in range(players):
        yield repr(state.view(other))


def digest() -> str:
    """The digest of every case's seeded games, in a fixed order."""
    hasher = hashlib.sha256()
    for name, cases in CASES.items():
        for players, options in cases:
            for seed in range(GAMES_PER_CASE[name]):
                for line in transcript(name, players, options, seed):
                    hasher.update(line.encode())
                    hasher.update(b"\n")
    return hasher.hexdigest()


def test_every_game_is_covered():
    assert sorted(CASES) == sorted(all_games())


def test_seeded_transcripts_match_the_engines_before_the_speed_work():
    assert digest() == GOLDEN_DIGEST


if __name__ == "__main__":
    print(digest())
