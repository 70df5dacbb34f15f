"""The search rungs of the ladder: determinized search (PIMC) with per-game rollout policies."""
