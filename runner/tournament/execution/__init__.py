"""Executing a plan: the events that cross processes, supervised workers, portion hosts, the Dask
executor, shipping bots to workers, and the progress display."""
