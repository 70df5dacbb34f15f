"""Tournaments: the schedule, its execution in worker processes, the results store and the commands."""
