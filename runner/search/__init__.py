"""Search support for Python bots: a seat's knowledge of one game, and full engine states sampled
from it (determinization), so a bot can simulate the game forward with the referee's own rules.

    from cardarena.search import SeatKnowledge

    knowledge = SeatKnowledge(game_start_message)
    knowledge.observe(decision_message)        # every decision and the game_end, as received
    knowledge.answered(action)                 # this seat's own answer to the last decision
    state = knowledge.sample(rng)              # a full GameState consistent with all of it

The meaning of "consistent" is in `knowledge.py`; each game's sampler is a module of this package.
"""

__all__ = ["DealSampler", "Proposal", "SamplingError", "SeatKnowledge", "Transcript", "first_consistent", "replay"]


def __getattr__(name: str) -> object:
    """`knowledge`'s names, imported on first use: a bot that needs only a module of this package
    (the heuristic bot's Cuajo strategy, `evaluate`) does not import the samplers and the engines
    at every start (some 28 ms)."""
    if name in __all__:
        from cardarena.search import knowledge

        return getattr(knowledge, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
