"""What this machine offers the sandbox: its system programs, whether a tool that makes namespaces
works here, and the error for a bot that cannot be started as the sandbox settings require."""

from __future__ import annotations

import functools
import shutil
import subprocess

from cardarena.errors import UsageError

NOBODY = 65534  # the unprivileged gid a bot runs as when the organiser is root (`nogroup`)
MIB = 1 << 20


class SandboxError(UsageError):
    """A bot cannot be started as the sandbox settings require; the message says why in one line."""


@functools.cache
def tool(name: str) -> str | None:
    """The absolute path of a system program, or None when it is not installed."""
    return shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin")


def namespace_probe(tool: str, probe: list[str]) -> str | None:
    """Why `probe`, `tool`'s command that makes namespaces around /bin/true, fails here, or None."""
    try:
        result = subprocess.run(probe, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{tool} does not run here: {error}"
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {result.returncode}"]
        return f"{tool} cannot create namespaces here ({reason[0]})"
    return None
