"""The heuristic sample bot: its per-game choices on hand-built positions, and real games against random."""

import random
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.protocol.actions import find_legal, random_action
from cardarena.cards import NAME as RUMMY_NAMES
from cardarena.games import get_game
from cardarena.games import casino as casino_engine
from cardarena.games import cuajo as cuajo_engine
from cardarena.games import knock_rummy as rummy_engine
from tests.test_casino import complete_moves, completed

ROOT = Path(__file__).resolve().parent.parent
HEURISTIC_DIR = ROOT / "sample_bots" / "heuristic"
sys.path.insert(0, str(HEURISTIC_DIR))

from heuristic_bot import casino, cuajo, knock_rummy, quitlok  # noqa: E402  (the bot's folder is not a package)

RNG = random.Random(0)


# ---------------------------------------------------------------- Knock Rummy

def rummy_view(hand, phase="discard", pile=("9H",), known=((), ()), players=2):
    return {"seat": 0, "players": players, "phase": phase, "hand": list(hand), "discard_pile": list(pile),
            "known_cards": [list(cards) for cards in known], "taken_from_discard": None}


def rummy_legal(hand, kinds=("discard", "knock")):
    return [{"type": kind, "card": card} for kind in kinds for card in hand]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(RUMMY_NAMES), min_size=1, max_size=11, unique=True))
def test_rummy_deadwood_matches_the_engine(hand):
    assert knock_rummy.least_deadwood(knock_rummy.hand_mask(hand)) == \
        rummy_engine.deadwood([RUMMY_NAMES.index(card) for card in hand])


def test_rummy_discards_the_card_that_leaves_least_deadwood_and_fewest_chances():
    # melds 3C-4C-5C and 7D-7H-7S; JD, QS, KD cost 10 each, but JD and KD could still run together
    hand = ["2H", "3C", "4C", "5C", "7D", "7H", "7S", "9C", "JD", "QS", "KD"]
    assert knock_rummy.decide(rummy_view(hand), rummy_legal(hand), RNG) == {"type": "discard", "card": "QS"}


def test_rummy_knocks_when_deadwood_is_low():
    hand = ["AC", "2D", "3C", "4C", "5C", "7D", "7H", "7S", "9H", "10H", "JH"]
    assert knock_rummy.decide(rummy_view(hand), rummy_legal(hand), RNG) == {"type": "knock", "card": "2D"}


def test_rummy_keeps_back_a_card_the_opponent_is_known_to_want():
    # 8D and 8S are alike for us; once the opponent has taken the 9D, the 8D would help its run
    hand = ["3C", "4C", "5C", "7D", "7H", "7S", "8D", "8S", "JC", "QC", "KC"]
    legal = rummy_legal(hand, ("discard",))
    assert knock_rummy.decide(rummy_view(hand), legal, RNG) == {"type": "discard", "card": "8D"}
    assert knock_rummy.decide(rummy_view(hand, known=((), ("9D",))), legal, RNG) == {"type": "discard", "card": "8S"}


def test_rummy_takes_the_discard_only_when_it_lowers_deadwood():
    hand = ["3C", "4C", "7D", "7H", "9S", "10H", "JD", "QS", "KD", "KH"]
    legal = [{"type": "draw", "source": "stock"}, {"type": "draw", "source": "discard"}]
    assert knock_rummy.decide(rummy_view(hand, "draw", ["5C"]), legal, RNG) == legal[1]
    assert knock_rummy.decide(rummy_view(hand, "draw", ["QH"]), legal, RNG) == legal[0]


def test_rummy_passes_on_an_empty_stock_rather_than_take_a_useless_card():
    hand = ["3C", "4C", "7D", "7H", "9S", "10H", "JD", "QS", "KD", "KH"]
    legal = [{"type": "draw", "source": "discard"}, {"type": "pass"}]
    assert knock_rummy.decide(rummy_view(hand, "draw", ["QH"]), legal, RNG) == {"type": "pass"}


# ---------------------------------------------------------------- Casino

def casino_view(hand, loose, builds=(), captured=(0, 0), move=None):
    return {"seat": 0, "teams": None, "hand": list(hand),
            "table": {"loose": list(loose), "builds": [dict(build) for build in builds]},
            "players": [{"hand_size": len(hand), "captured": count} for count in captured], "move": move}


def casino_position(hand, loose, builds=()):
    """An engine position whose mover holds `hand`, with `loose` cards and an opponent's `builds` (value, cards)."""
    state = get_game("casino").new_state(2, seed=0)
    state.hands[state.turn] = sorted(RUMMY_NAMES.index(card) for card in hand)
    state.loose = sorted(RUMMY_NAMES.index(card) for card in loose)
    state.builds = [casino_engine.Build(number, value, True, state.turn ^ 1, [RUMMY_NAMES.index(c) for c in cards])
                    for number, (value, cards) in enumerate(builds, start=1)]
    return state


def heuristic_casino_move(state):
    """The heuristic makes one whole move through the steps, each answer from the legal list; the move made."""
    seat = state.to_move()
    while True:
        legal = state.legal_actions()
        action = casino.decide(state.view(seat), legal, RNG)
        assert find_legal(legal, action) is not None, (action, legal)
        events = state.apply(action)
        if events:
            return completed(events)
        assert state.to_move() == seat


def test_casino_takes_the_capture_worth_most_points_not_the_most_cards():
    # the A 2 3 5 6 8 table of the rules: {8},{6,2},{5,3} is six cards, {8},{5,2,A} holds little casino and an ace
    state = casino_position(["8S", "KD"], ["AS", "2S", "3C", "5D", "6H", "8D"])
    assert state.legal_actions()[0] == {"type": "capture", "card": "8S"}
    assert heuristic_casino_move(state) == {"type": "capture", "card": "8S", "loose": ["AS", "2S", "5D", "8D"],
                                            "builds": []}


def test_casino_takes_an_opponents_build_with_its_loose_cards():
    state = casino_position(["9C", "2D"], ["4D", "5S"], [(9, ["4H", "5C"])])
    assert heuristic_casino_move(state) == {"type": "capture", "card": "9C", "loose": ["4D", "5S"], "builds": [1]}


def test_casino_trails_the_cheapest_card_and_never_big_casino_when_it_can_help():
    view = casino_view(["10D", "7H", "AS"], ["KC"])
    legal = [{"type": "trail", "card": "AS"}, {"type": "trail", "card": "7H"}, {"type": "trail", "card": "10D"}]
    assert casino.decide(view, legal, RNG) == {"type": "trail", "card": "7H"}


def test_casino_builds_when_no_opponent_can_steal_the_build_then_makes_it_step_by_step():
    # every other 8 is in sight, so building 8 with 3+5 and capturing it later is safe
    view = casino_view(["3H", "8C", "8D"], ["5C", "8H", "8S"])
    start = {"type": "build", "card": "3H", "value": 8}
    assert casino.steal_chance(view, 8) == 0.0
    assert casino.decide(view, [start, {"type": "trail", "card": "3H"}, {"type": "trail", "card": "8C"}], RNG) == start
    in_progress = casino_view(["8C", "8D"], ["5C", "8H", "8S"], move={**start, "loose": []})
    assert casino.decide(in_progress, [{"type": "take", "loose": "5C"}], RNG) == {"type": "take", "loose": "5C"}
    complete = casino_view(["8C", "8D"], ["8H", "8S"], move={**start, "loose": ["5C"]})
    assert casino.decide(complete, [{"type": "done"}], RNG) == {"type": "done"}


def test_casino_lists_its_candidate_moves_like_the_engine():
    """The bot's own complete moves (uncapped with up to 9 loose cards) are the engine's, reached through the steps.

    Its captures take every build of their value (each adds to the pile), so they are a subset of the engine's.
    """
    rng = random.Random(5)
    game = get_game("casino")
    for seed in range(40):
        state = game.new_state(2, {"lenient_builds": seed % 2 == 1}, seed=seed)
        for _ in range(rng.randrange(0, 30)):
            state.apply(random_action(state.legal_actions(), rng))
            if state.is_over():
                break
        if state.is_over() or state.view(state.to_move())["move"] is not None or len(state.loose) > 9:
            continue
        view = state.view(state.to_move())
        mine = [complete for entry in state.legal_actions()
                for complete in casino.completions(view, casino.started(entry))]
        engine = complete_moves(state)
        assert all(move in engine for move in mine)
        assert (sorted(repr(move) for move in engine if move["type"] != "capture")
                == sorted(repr(move) for move in mine if move["type"] != "capture"))



# ---------------------------------------------------------------- Cuajo

CUAJO_NAMES = [rank + suit for rank in "A345JHK" for suit in "oceb"]


def cuajo_view(hand, discards=(), sowee="Ab", secrets=()):
    return {"phase": "discard", "hand": list(hand), "secrets": [list(s) for s in secrets],
            "discards": list(discards), "sowee": sowee}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(CUAJO_NAMES), min_size=3, max_size=16).filter(
    lambda hand: all(hand.count(card) <= 4 for card in hand)))
def test_cuajo_completeness_matches_the_engine(hand):
    counts = cuajo.counts_of(hand)
    engine_counts = cuajo_engine.counts_of([cuajo_engine.parse_card(card) for card in hand])
    assert (cuajo.covered(counts) == len(hand)) == cuajo_engine.is_complete(engine_counts)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(CUAJO_NAMES), min_size=1, max_size=17).filter(
    lambda hand: all(hand.count(card) <= 4 for card in hand)))
def test_cuajo_covered_by_group_equals_the_search_over_the_whole_hand(hand):
    """`covered` searches each card group apart (no combination crosses groups: cuajo.md §
    Combinations); the search over the whole hand at once must give the same count."""
    from cardarena.search import evaluate

    counts = cuajo.counts_of(hand)
    kings = counts[evaluate.KING * 4:]
    whole = sum(kings) + evaluate._covered_below_kings(counts[:evaluate.KING * 4], kings)
    assert cuajo.covered(counts) == whole


def test_cuajo_discards_the_card_that_keeps_the_hand_one_card_from_complete():
    # combinations: Ao Ac Ae, 3o 4o 5o, Jc Hc Kc, 5c 5e 5b, Kb, Ke; loose: Ho and Jb (which Hb would complete with Kb)
    hand = ["Ao", "Ac", "Ae", "3o", "4o", "5o", "5c", "5e", "5b", "Jc", "Jb", "Ho", "Hc", "Kc", "Ke", "Kb"]
    legal = [{"type": "discard", "card": card} for card in dict.fromkeys(hand) if card[0] != "K"]
    assert cuajo.decide(cuajo_view(hand), legal, RNG) == {"type": "discard", "card": "Ho"}
    assert cuajo.outs(cuajo.counts_of([card for card in hand if card != "Ho"]), [4] * 28) == 4


def test_cuajo_lays_secrets_and_gives_a_sowee_secret_a_king_as_fourth_card():
    hand = ["Ao", "Ao", "Ao", "Ac", "3e", "Kb"]
    legal = [{"type": "sowee_secret", "card": card} for card in ("Ac", "3e", "Kb")] + \
        [{"type": "discard", "card": card} for card in ("Ao", "Ac", "3e")]
    assert cuajo.decide(cuajo_view(hand, sowee="Ao"), legal, RNG) == {"type": "sowee_secret", "card": "Kb"}
    four = [{"type": "secret", "card": "3e"}, {"type": "discard", "card": "3e"}]
    assert cuajo.decide(cuajo_view(["3e"] * 4 + ["Ac"]), four, RNG) == four[0]


def test_cuajo_takes_a_discard_that_makes_a_combination_and_always_claims():
    hand = ["3o", "4o", "Jc", "Je"]
    legal = [{"type": "draw"}, {"type": "take"}]
    assert cuajo.decide({**cuajo_view(hand, ["5o"]), "phase": "draw"}, legal, RNG) == {"type": "take"}
    assert cuajo.decide({**cuajo_view(hand, ["Hb"]), "phase": "draw"}, legal, RNG) == {"type": "draw"}
    assert cuajo.decide({"phase": "claim"}, [{"type": "claim"}, {"type": "pass"}], RNG) == {"type": "claim"}


# ---------------------------------------------------------------- Quitlok

def quitlok_view(phase, total, stacks=(100, 100, 100, 100, 100), bank=0, bets=(0, 0, 0, 0, 0)):
    return {"seat": 0, "phase": phase, "total": total, "stacks": list(stacks), "bank": bank, "bets": list(bets)}


def test_quitlok_bets_only_where_no_card_can_bust_and_bets_most_on_eleven():
    bet_range = {"min": 1, "max": 50}
    turn = [{"type": "blot"}, {"type": "bet", "amount": bet_range}, {"type": "stay"}]
    assert quitlok.decide(quitlok_view("turn", 9), turn, RNG) == {"type": "bet", "amount": 5}
    assert quitlok.decide(quitlok_view("turn", 13), turn, RNG) == {"type": "stay"}
    assert quitlok.decide(quitlok_view("turn", 13, bets=(5, 0, 0, 0, 0)), turn, RNG) == {"type": "blot"}
    assert quitlok.decide(quitlok_view("turn", 17, bets=(5, 0, 0, 0, 0)), turn, RNG) == {"type": "stay"}
    eleven = turn + [{"type": "eleven_blot"}, {"type": "eleven_bet", "amount": bet_range}]
    assert quitlok.decide(quitlok_view("turn", 11), eleven, RNG) == {"type": "eleven_bet", "amount": 15}


def test_quitlok_banker_draws_to_a_threshold_funds_modestly_and_retires_when_ahead():
    banker = [{"type": "draw"}, {"type": "stand"}]
    assert quitlok.decide(quitlok_view("banker", 16), banker, RNG) == {"type": "draw"}
    assert quitlok.decide(quitlok_view("banker", 17), banker, RNG) == {"type": "stand"}
    fund = [{"type": "fund", "amount": {"min": 10, "max": 100}}]
    assert quitlok.decide(quitlok_view("fund", None), fund, RNG) == {"type": "fund", "amount": 25}
    retire = [{"type": "retire"}, {"type": "keep"}]
    ahead = quitlok_view("retire", 4, stacks=(75, 90, 100, 100, 100), bank=35)
    behind = quitlok_view("retire", 4, stacks=(75, 110, 100, 100, 100), bank=15)
    assert quitlok.decide(ahead, retire, RNG) == {"type": "retire"}
    assert quitlok.decide(behind, retire, RNG) == {"type": "keep"}
    assert quitlok.decide(ahead, [{"type": "keep"}], RNG) == {"type": "keep"}  # a card that is no 4 or 7


# ---------------------------------------------------------------- real games

HEURISTIC_COMMAND = f"{sys.executable} {HEURISTIC_DIR / 'bot.py'} --seed 1"
RANDOM_COMMAND = f"{sys.executable} {ROOT / 'sample_bots' / 'random' / 'bot.py'} --seed 2"


def test_one_game_of_each_against_random_through_the_cli_without_faults():
    for game, players in (("knock-rummy", 2), ("casino", 2), ("cuajo", 4), ("quitlok", 5)):
        bots = []
        for seat in range(players):
            command = HEURISTIC_COMMAND if seat % 2 == 0 else RANDOM_COMMAND
            bots += ["--bot", f"{'heuristic' if seat % 2 == 0 else 'random'}{seat}={command}"]
        done = subprocess.run([sys.executable, "-m", "cardarena.cli", "play", game, *bots, "--seed", "7", "--quiet"],
                              capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        assert not [line for line in done.stderr.splitlines() if line.startswith("FAULT")], done.stderr
        assert "heuristic0" in done.stdout


def test_every_strategy_answers_legally_in_engine_played_games():
    """In-process games (heuristic in even seats, random in odd) where each heuristic answer must be legal."""
    strategies = {"knock-rummy": (knock_rummy, 3), "casino": (casino, 4), "cuajo": (cuajo, 4), "quitlok": (quitlok, 6)}
    for name, (strategy, players) in strategies.items():
        game = get_game(name)
        for seed in range(3):
            state = game.new_state(players, seed=seed)
            rng = random.Random(seed)
            while not state.is_over():
                seat, legal = state.to_move(), state.legal_actions()
                if seat % 2:
                    action = random_action(legal, rng)
                else:
                    action = strategy.decide(state.view(seat), legal, rng)
                    assert find_legal(legal, action) is not None, (name, seed, action, legal)
                state.apply(action)
