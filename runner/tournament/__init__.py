"""Tournaments, in four parts that import only downwards:

- `planning`: what is played, decided before any bot starts (league files, schedules, the SPRT);
- `execution`: playing it (the events that cross processes, supervised workers, portion hosts, Dask);
- `store`: the results file;
- `service`: a run driven to its end (options, plan, session), for `cardarena run` and a league server;

and `commands`, the click commands on top, which no module imports.
"""
