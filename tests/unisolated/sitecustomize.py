"""Imported at the start of every Python process with this folder on PYTHONPATH (a referee, its
workers, a Dask worker's portion hosts; never a bot, whose environment is clean): the referee
then takes this machine for one where unshare cannot give a bot a PID namespace of its own (a
non-root organiser without user namespaces), so that tests reach the defences of a referee whose
bots, under --sandbox none, can signal it."""
from cardarena.referee import sandbox

sandbox.isolation_problem = lambda: "unshare cannot create namespaces here (simulated by tests/unisolated)"
