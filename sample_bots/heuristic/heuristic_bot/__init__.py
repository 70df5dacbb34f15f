"""One heuristic strategy per game, each a pure `decide(view, legal, rng)` working from wire data only."""
