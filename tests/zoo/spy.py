"""Reports what a bot can see and do (environment, ids, files, processes, network, limits) as one
`SPY {json}` line on stderr, then plays random legal moves.

Usage: python spy.py [--probe PATH]... [--port N]
"""

import argparse
import json
import os
import resource
import socket
import sys

from cardarena.protocol.bot import RandomBot, run


def readable(path):
    try:
        with open(path, "rb") as handle:
            handle.read(1)
        return True
    except OSError as error:
        return f"{type(error).__name__}: {error.strerror}"


def connects(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError as error:
        return f"{type(error).__name__}: {error}"


def command_lines():
    lines = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    lines.append(handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip())
            except OSError:
                pass
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--probe", action="append", default=[])
    parser.add_argument("--port", type=int)
    args = parser.parse_args()
    with open("/proc/self/status") as status:
        ids = {line.split(":")[0]: line.split(":", 1)[1].split() for line in status
               if line.startswith(("Uid", "Gid", "CapEff", "CapPrm", "NoNewPrivs"))}
    report = {
        "env": dict(os.environ),
        "uid": os.getuid(), "euid": os.geteuid(), "status": ids,
        "root_listing": sorted(os.listdir("/")),
        "readable": {path: readable(path) for path in args.probe},
        "processes": command_lines(),
        "connect": None if args.port is None else connects(args.port),
        "limits": {name: resource.getrlimit(getattr(resource, name))  # (soft, hard)
                   for name in ("RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_AS", "RLIMIT_NPROC")},
        "cores": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cwd_writable": os.access(".", os.W_OK),
        "startup_finders": sorted(name for name in sys.modules if name.startswith("__editable__")),
        "home_writable": os.access(os.environ.get("HOME", "/nonexistent"), os.W_OK),
    }
    sys.stderr.write("SPY " + json.dumps(report) + "\n")
    sys.stderr.flush()
    run(RandomBot(0))


main()
