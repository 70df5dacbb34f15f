"""Search support for Python bots: a seat's knowledge of one game, and full engine states sampled
from it (determinization), so a bot can simulate the game forward with the referee's own rules.

    from cardarena.search import SeatKnowledge

    knowledge = SeatKnowledge(game_start_message)
    knowledge.observe(decision_message)        # every decision and the game_end, as received
    knowledge.answered(action)                 # this seat's own answer to the last decision
    state = knowledge.sample(rng)              # a full GameState consistent with all of it

The meaning of "consistent" is in `knowledge.py`; each game's sampler is a module of this package.
"""

from cardarena.search.knowledge import (DealSampler, Proposal, SamplingError, SeatKnowledge, Transcript,
                                        first_consistent, replay)

__all__ = ["DealSampler", "Proposal", "SamplingError", "SeatKnowledge", "Transcript", "first_consistent", "replay"]
