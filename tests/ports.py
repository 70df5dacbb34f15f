"""A free TCP port for a server a test starts in another process."""

from __future__ import annotations

import random
import socket
from pathlib import Path

#: the kernel's ephemeral range's low end when /proc does not say (Linux's default)
DEFAULT_EPHEMERAL_LOW = 32768
#: the lowest port drawn: above the well-known and most registered services' ports
LOWEST = 20000


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now, drawn below the kernel's ephemeral range.
    A port the kernel handed out for `bind(0)` comes from that range, from which every outgoing
    connection (a Dask worker's, a browser's) takes its own port too: one could take it between this
    probe and the server's bind (a scheduler once failed to start so, `Address already in use`)."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = DEFAULT_EPHEMERAL_LOW
    draw = random.Random()  # not the tests' seeded global generator: two runs at once draw apart
    for _ in range(200):
        port = draw.randrange(LOWEST, max(low, LOWEST + 1000))
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free TCP port of 127.0.0.1 between {LOWEST} and {low}")
