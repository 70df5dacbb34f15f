"""cardarena's own sandbox launcher (runner/referee/launch.c, launcher.py): what it makes of the
sandbox that bubblewrap did not have to be trusted for, how it refuses what it does not know, and
how the referee falls back to bubblewrap where it cannot be built (SANDBOX.md, "The launcher").
The promises both makers keep are tested with each of them (the `maker` fixture) in
test_sandbox.py and test_channels.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from cardarena.config import SandboxSettings
from cardarena.referee import bubblewrap, launcher, sandbox

OWN = launcher.own_launcher()
needs_launcher = pytest.mark.skipif(OWN is None, reason=f"cardarena's own launcher is not used here: "
                                                        f"{launcher.launcher_problem()}")

#: what a non-root organiser's sandbox starts with (SANDBOX.md, "The launcher"): a user namespace
USER_NAMESPACE = [] if os.geteuid() == 0 else ["--unshare-user"]
#: a sandbox as the referee asks for one, less what only a bot folder needs
OPTIONS = [*USER_NAMESPACE, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
           "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
           "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev",
           "--perms", "1777", "--tmpfs", "/tmp", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin"]


def memfd(data: bytes) -> int:
    fd = os.memfd_create("launcher-test")
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def launch(options: list[str], script: str, prefix: list[str] | None = None, program: str | None = None,
           data: dict[str, bytes] | None = None) -> subprocess.CompletedProcess:
    """`sh -c script` in the sandbox that `options` describe, the launcher run after `prefix`, with
    a --bind-data of each of `data`'s files (path -> content), readable by all."""
    fds = [memfd(content) for content in (data or {}).values()]
    options = [*options, *(arg for fd, path in zip(fds, data or {}) for arg in ("--perms", "0444", "--bind-data", str(fd), path))]
    fds.append(memfd("".join(f"{option}\0" for option in options).encode()))
    try:
        return subprocess.run([*(prefix or []), program or str(OWN), "--args", str(fds[-1]), "--", "/bin/sh", "-c",
                               script], pass_fds=fds, capture_output=True, text=True, timeout=30)
    finally:
        for fd in fds:
            os.close(fd)


def mounts(mountinfo: str) -> dict[str, set[str]]:
    """Each mount point of a /proc/self/mountinfo text and its mount options."""
    seen = {}
    for line in mountinfo.splitlines():
        fields = line.split()
        seen[fields[4]] = set(fields[5].split(","))
    return seen


@needs_launcher
def test_every_mount_is_nosuid_and_all_but_the_private_folders_are_read_only():
    """The new root itself is read-only (bubblewrap leaves its tmpfs writable by root), so a bot
    writes only where SANDBOX.md says it may: its private /tmp, /dev/shm and HOME."""
    options = [*OPTIONS, "--perms", "1777", "--tmpfs", "/dev/shm", "--uid", "1500000000", "--gid", "65534"]
    if os.geteuid() != 0:
        options = [*OPTIONS, "--disable-userns"]
    result = launch(options, "cat /proc/self/mountinfo; echo END; cat /proc/loadavg; touch /new 2>/dev/null && echo WROTE; "
                             "echo 9 >/proc/loadavg 2>/dev/null && echo WROTE; true",
                    data={"/proc/loadavg": b"0.00 0.00 0.00 0/0 0\n"})
    assert result.returncode == 0, result.stderr
    assert "WROTE" not in result.stdout and "0.00 0.00 0.00 0/0 0\n" in result.stdout
    seen = mounts(result.stdout.split("END")[0])
    writable = {point for point, flags in seen.items() if "rw" in flags}
    assert writable <= {"/tmp", "/dev/shm", "/proc", "/dev/pts", "/dev/null", "/dev/zero", "/dev/full",
                        "/dev/random", "/dev/urandom", "/dev/tty", "/dev"}, writable
    assert all("ro" in seen[point] for point in ("/", "/usr", "/proc/sys", "/proc/loadavg"))
    assert all("nosuid" in flags for flags in seen.values()), seen


@needs_launcher
@pytest.mark.skipif(os.geteuid() != 0, reason="runs the launcher as an unprivileged user, which needs root to arrange")
def test_an_unprivileged_organisers_bot_gets_no_capability_and_no_user_namespace_of_its_own(tmp_path):
    """What a non-root organiser gets (the launcher in a user namespace mapping its own uid): no
    capability, no_new_privs, the organiser's umask, and no user namespace below the sandbox's (the
    seccomp filter refuses them too; this is the launcher's own bar, as bubblewrap's
    --disable-userns is)."""
    folder = Path(tempfile.mkdtemp(prefix="launcher-"))
    try:
        folder.chmod(0o755)
        program = folder / "launch"
        shutil.copy(OWN, program)
        program.chmod(0o755)
        probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "unshare", "-U",
                                "true"], capture_output=True)
        if probe.returncode != 0:
            pytest.skip("an unprivileged user cannot make a user namespace on this machine")
        result = launch([*OPTIONS, "--unshare-user", "--disable-userns"],
                        "id -u; umask; grep -E '^(CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status; "
                        "cat /proc/sys/user/max_user_namespaces; unshare -U true 2>/dev/null && echo NESTED; true",
                        prefix=["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"], program=str(program))
    finally:
        shutil.rmtree(folder)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("\n")
    assert lines[0] == "65534" and lines[1] == "0022"
    assert all(line.split()[1] in ("0000000000000000", "1") for line in lines[2:7]) and "NoNewPrivs:\t1" in lines
    assert lines[7] == "0" and "NESTED" not in result.stdout


@needs_launcher
@pytest.mark.parametrize("options, complaint", [
    (["--unshare-pid", "--frobnicate"], "unknown option --frobnicate"),
    (["--unshare-net"], "--unshare-pid is required"),
    (["--unshare-pid", "--ro-bind", "/usr"], "--ro-bind needs 2 argument(s)"),
    (["--unshare-pid", "--perms", "rwx", "--tmpfs", "/tmp"], "not a mode: rwx"),
    (["--unshare-pid", "--seccomp", "x1"], "not a file descriptor: x1"),
    (["--unshare-pid", "--uid", "1500000000"], "--uid needs --gid and an organiser running as root"),
    (["--unshare-pid", "--disable-userns", "--proc", "/proc"], "--disable-userns needs --unshare-user and --proc"),
    ([*USER_NAMESPACE, "--unshare-pid", "--ro-bind", "/no/such/folder", "/x"], "/no/such/folder: No such file or directory"),
    (["--unshare-pid", "--rlimit", "stack", "8192"], "not a limit this launcher sets: stack"),
    (["--unshare-pid", "--rlimit", "nofile", "-1"], "not a limit: -1"),
    ([*USER_NAMESPACE, "--unshare-pid", "--join-cgroup", "/no/such/cgroup/tasks"], "writing /no/such/cgroup/tasks: No such file or directory"),
])
def test_the_launcher_refuses_what_it_does_not_know_and_says_what(options, complaint):
    """An option the launcher does not take, or takes otherwise, would be a promise silently not
    kept: it stops before the bot runs, with a line naming it (the referee's start fault shows it)."""
    result = launch(options, "echo RAN")
    assert result.returncode == 1 and "RAN" not in result.stdout
    assert result.stderr == f"cardarena-launch: {complaint}\n"  # one line, naming paths as the options do


@needs_launcher
def test_a_bots_exit_status_and_its_killing_signal_come_through_as_from_bubblewrap():
    assert launch(OPTIONS, "exit 7").returncode == 7
    assert launch(OPTIONS, "kill -SEGV $$").returncode == 128 + 11


@pytest.fixture
def tried_afresh(monkeypatch, tmp_path):
    """The launcher looked for again, as a new referee would, with an empty cache of its own (and
    forgotten after the test, for the next one)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(launcher.CHOICE, raising=False)
    launcher._launcher.cache_clear()
    yield
    launcher._launcher.cache_clear()


def test_without_a_compiler_bubblewrap_makes_the_sandbox_and_the_report_says_why(tried_afresh, monkeypatch):
    monkeypatch.setattr(launcher, "tool", lambda name: None)
    assert launcher.own_launcher() is None
    assert launcher.launcher_problem() == "no C compiler (cc, gcc or clang) to build it with"
    if shutil.which("bwrap") is not None and bubblewrap.bwrap_problem() is None:
        assert bubblewrap.sandbox_program() == shutil.which("bwrap")
        assert "made by bubblewrap" in sandbox.describe(SandboxSettings(mode="bwrap"))


@needs_launcher
def test_a_cached_launcher_that_others_could_have_replaced_is_built_again(monkeypatch, tmp_path):
    """The launcher runs with the organiser's rights (root's, often): a cached copy that another
    user could have written is never run."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = Path(launcher._built())
    assert built.parent == tmp_path / "cardarena" and built.stat().st_mode & 0o777 == 0o700
    built.write_bytes(b"#!/bin/sh\necho planted\n")
    built.chmod(0o777)
    again = Path(launcher._built())
    assert again == built and b"planted" not in again.read_bytes() and again.stat().st_mode & 0o777 == 0o700



def test_an_installation_without_the_launchers_source_falls_back_with_the_reason(tried_afresh, monkeypatch, tmp_path):
    monkeypatch.setattr(launcher, "SOURCE", tmp_path / "launch.c")
    assert launcher.own_launcher() is None
    assert launcher.launcher_problem().startswith("it could not be built: [Errno 2] No such file or directory")
