"""What a bot is shown of the organiser's files: its own folder, the Python that runs Python bots,
and its view of the `cardarena` package (the SDK and the engines); and `check_layout`, which refuses
a layout in which a bot would be shown more than its own files (the results, the logs, other bots).
"""

from __future__ import annotations

import atexit
import compileall
import functools
import itertools
import os
import shutil
import site
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import cardarena
import cardarena.protocol
from cardarena.referee.system import SandboxError, process_tag

SDK_ROOT = "/opt/cardarena"  # the `cardarena` package a bot imports is SDK_ROOT/lib/cardarena (read-only)
#: the parts of the `cardarena` package a bot sees, besides the SDK (`protocol`, mapped in from wherever
#: it lives): the engines, what they import, and the search SDK; not the referee, the tournament code
#: or the sample bots (tests/test_structure.py checks that these import nothing else). Under bubblewrap a
#: bot sees a copy of them that its referee makes once (`sdk_copy`), without it links (`sdk_farm`).
SDK_ENTRIES = ("__init__.py", "__pycache__", "cards.py", "errors.py", "games", "search")
#: system folders visible read-only inside the sandbox (symlinks, as on merged-/usr systems, are copied)
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
EDITABLE_HOOKS = "__editable__.cardarena-*.pth"  # setuptools' name for an editable install's startup hook
SDK_FARM_PREFIX = "cardarena-sdk-"  # a referee's links to the SDK for bots without bubblewrap: <prefix><process tag>-...
SHARED_MEMORY = "/dev/shm"  # the system's tmpfs, where the referee's prepared folders go (`prepared_root`)
#: the least free room on SHARED_MEMORY for the prepared folders to go there (they take 2-3 MiB)
LEAST_SHARED_MEMORY = 64 << 20


def sdk_entries() -> dict[str, str]:
    """What a bot sees of the `cardarena` package, as name -> path: `SDK_ENTRIES` and the SDK as
    `protocol`, wherever each lives (an installed wheel has one folder; a source tree maps
    `protocol/` into the package)."""
    package = Path(cardarena.__file__).resolve().parent
    entries = {name: str(package / name) for name in SDK_ENTRIES if (package / name).exists()}
    entries["protocol"] = str(Path(cardarena.protocol.__file__).resolve().parent)
    return entries


@functools.cache
def prepared_root() -> str:
    """Where a referee's prepared folders go (its /etc copy, the SDK's copy and links, `prepared_folder`):
    the system's tmpfs, /dev/shm, where it is a shared folder with room, unless the organiser chose a
    temporary folder (TMPDIR, TEMP or TMP); else the system's temporary folder. Filling them takes
    hundreds of file and link creations (the /etc copy alone holds some 700 entries, mostly the TLS
    roots' links): on the development machine's ext4 /tmp the /etc copy took 190-230 ms, on its tmpfs
    13 ms, at the start of every `run`, `check` and `play`. Only these folders of fixed, small content go
    there: a bot's own scratch folder never does, since what a bot writes must not fill memory."""
    if any(os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")):
        return tempfile.gettempdir()
    try:
        mode = os.stat(SHARED_MEMORY).st_mode
        room = os.statvfs(SHARED_MEMORY)
    except OSError:
        return tempfile.gettempdir()
    if (stat.S_ISDIR(mode) and mode & stat.S_ISVTX and os.access(SHARED_MEMORY, os.W_OK | os.X_OK)
            and room.f_bavail * room.f_frsize >= LEAST_SHARED_MEMORY):
        return SHARED_MEMORY
    return tempfile.gettempdir()


_sdk_farms: dict[int, str] = {}  # referee pid -> its folder of links (a fork makes its own)


def sdk_farm() -> str:
    """Without bubblewrap: this process's folder holding the bot's view of `cardarena` as links,
    made once and shared by every bot it starts (removed at exit, or by a later sweep)."""
    pid = os.getpid()
    if pid not in _sdk_farms:
        root = tempfile.mkdtemp(prefix=f"{SDK_FARM_PREFIX}{process_tag()}-", dir=prepared_root())
        _link_sdk(root)
        os.chmod(root, 0o755)  # a bot running as another user reads it
        atexit.register(lambda: os.getpid() == pid and shutil.rmtree(root, ignore_errors=True))
        _sdk_farms[pid] = root
    return _sdk_farms[pid]


_prepared: dict[str, str] = {}  # what -> its folder, made by this process or the one that forked it


def prepared_folder(what: str, fill: Callable[[str], None]) -> str:
    """This process's folder of `what`, filled by `fill(folder)` the first time it is asked for and
    shared by every bot it starts, and by the processes it forks afterwards (a tournament's workers,
    which it outlives: see `sandbox.prepare_shared`). Named for the process that made it, so a later
    sweep removes it when that process was killed; removed when it exits otherwise."""
    pid = os.getpid()
    if what not in _prepared:
        root = tempfile.mkdtemp(prefix=f"{SDK_FARM_PREFIX}{process_tag()}-{what}-", dir=prepared_root())
        try:
            fill(root)
            os.chmod(root, 0o755)  # a bot running as another uid enters it
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        atexit.register(lambda: os.getpid() == pid and shutil.rmtree(root, ignore_errors=True))
        _prepared[what] = root
    return _prepared[what]


def sdk_copy() -> str:
    """Under bubblewrap: this process's copy of what a bot is shown at SDK_ROOT (`lib/cardarena`, the
    entries of `sdk_entries`, and `moved`, the old import's stub), its modules compiled once, readable
    by every uid, mounted read-only at every start. A bot's Python cannot write bytecode to a
    read-only mount, so without it every start compiled the SDK afresh; and the copy is one mount
    instead of one per entry."""
    return prepared_folder("sdk", _fill_sdk)


def _fill_sdk(root: str) -> None:
    """The SDK's copy under `root`, compiled by this Python (the one that runs Python bots)."""
    package = os.path.join(root, "lib", "cardarena")
    os.makedirs(package)
    for name, path in sdk_entries().items():
        if name != "__pycache__":  # compiled below
            _copy(path, os.path.join(package, name))
    _copy(moved_stub(), os.path.join(root, "moved"))
    _compile_beside_sources(root)
    for folder, _, files in os.walk(root):
        os.chmod(folder, 0o755)
        for file in files:
            os.chmod(os.path.join(folder, file), 0o644)


def _compile_beside_sources(root: str) -> None:
    """Compile every module under `root` into the `__pycache__` folders beside it, where a bot's
    Python looks: an organiser's PYTHONPYCACHEPREFIX (`sys.pycache_prefix`) would send the bytecode
    to a tree that no bot is shown, and every start would compile the SDK afresh."""
    prefix, sys.pycache_prefix = sys.pycache_prefix, None
    try:
        compileall.compile_dir(root, quiet=2, ddir=SDK_ROOT)
    finally:
        sys.pycache_prefix = prefix


def _copy(source: str, target: str) -> None:
    """A file or folder copied (the bytecode the organiser's Python left beside the sources, left out)."""
    if os.path.isdir(source):
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copyfile(source, target)


def moved_stub() -> str:
    """The folder whose `protocol` package fails with the SDK's new import name."""
    return str(Path(cardarena.__file__).resolve().parent / "moved")


def _link_sdk(root: str) -> None:
    """Without bubblewrap: the bot's view of `cardarena` as a folder of links under `root`."""
    package = os.path.join(root, "lib", "cardarena")
    os.makedirs(package)
    for name, path in sdk_entries().items():
        os.symlink(path, os.path.join(package, name))
    os.symlink(moved_stub(), os.path.join(root, "moved"))


def visible_folders(command: Sequence[str], cwd: str | None, folder: str | None) -> list[str]:
    """The bot's own folder, visible read-only: `folder`, else its working directory, else (a
    NAME=CMD bot) the folder of its program or, for an interpreter, of the script it runs first.
    SandboxError when that is a place shared with other files, such as / or the temporary folder."""
    if folder is not None or cwd is not None:
        return [str(Path(folder or cwd).resolve())]
    program = _program_file(command)
    if program is None:
        return []
    word, path = program
    parent = path.parent
    if parent in {Path("/"), Path(tempfile.gettempdir()).resolve(), Path.home().resolve()}:
        raise SandboxError(f"the bot's command names {word}, whose folder {parent} is shared with other "
                           "files; put the bot in a folder of its own (with a bot.toml)")
    return [str(parent)]


def _program_file(command: Sequence[str]) -> tuple[str, Path] | None:
    """The file a NAME=CMD bot is made of, as (the word naming it, its resolved path): its program, or for an
    interpreter the script it runs first; None when its command names no file outside the system and Python."""
    for word in command:
        path = Path(word)
        if path.is_file() and not _already_visible(path.resolve().parent):
            return word, path.resolve()
    return None


@functools.cache
def python_folders() -> tuple[str, ...]:
    """The folders the Python that runs Python bots needs for its standard library and installed packages,
    shown read-only: its prefixes, its site-packages folders (the user's too, where that Python uses it)
    and the folders their .pth files add (where a virtual environment or a dependency may live), less
    those under /usr (shown anyway) and any .pth folder holding cardarena's own source (the project
    tree of an editable install: the SDK is shown apart, and a bot sees nothing else of it)."""
    source = [Path(module.__file__).resolve().parent for module in (cardarena, cardarena.protocol)]
    folders = [Path(prefix) for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)]
    for site_folder in _site_folders():
        folders.append(Path(site_folder))
        folders += [added for added in _pth_folders(Path(site_folder))
                    if not any(added == path or added in path.parents for path in source)]
    resolved = list(dict.fromkeys(path.resolve() for path in folders if path.is_dir()))
    shown = [path for path in resolved if path != Path("/usr") and Path("/usr") not in path.parents]
    return tuple(str(path) for path in shown if not any(other in path.parents for other in shown))


@functools.cache
def own_startup_hooks() -> tuple[str, ...]:
    """The .pth files of cardarena's own editable install (`pip install -e`) in this Python's
    site-packages folders. Each makes every Python start import a finder that maps `cardarena` to
    the project tree, which a sandboxed bot is not shown (it imports the SDK's copy); the sandbox
    covers them with an empty file, which spares each Python bot's start that import (about a
    fifth of its `site` time here)."""
    return tuple(str(pth) for site_folder in _site_folders() for pth in sorted(Path(site_folder).glob(EDITABLE_HOOKS)))


def _site_folders() -> list[str]:
    """This Python's site-packages folders, the user's own among them where this Python uses it."""
    folders = list(site.getsitepackages())
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        folders.append(site.getusersitepackages())
    return folders


def _pth_folders(site_folder: Path) -> list[Path]:
    """The folders the .pth files of a site-packages folder add to sys.path, as `site` reads them (a line
    is a path relative to the folder, unless it is a comment or starts with `import`)."""
    added = []
    for pth in sorted(site_folder.glob("*.pth")):
        try:
            lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue  # unreadable: `site` skips it too
        added += [site_folder / line.rstrip() for line in lines
                  if line.strip() and not line.startswith(("#", "import ", "import\t"))]
    return added


def _already_visible(path: Path) -> bool:
    """True for a folder the sandbox shows anyway: the system's programs, or the Python installation."""
    tops = [Path("/usr"), *(Path(prefix).resolve() for prefix in (sys.prefix, sys.base_prefix))]
    return any(path == top or top in path.parents for top in tops)


@dataclass(frozen=True)
class BotView:
    """What one bot sees of the organiser's files (`folders`, read-only, under bubblewrap) and what of that
    is the bot itself (`own`: its folder, or the file a NAME=CMD bot's command runs; None: no file at all)."""

    name: str
    own: Path | None
    folders: tuple[Path, ...]
    script: str | None = None  # the word of a NAME=CMD bot's command naming `own`, for advice


def bot_view(name: str, command: Sequence[str], cwd: str | None, folder: str | None) -> BotView:
    """The view of a bot started with `command` (interpreter resolved) in `cwd`, from its `folder` or none."""
    folders = tuple(Path(path) for path in visible_folders(command, cwd, folder))
    if folder is not None or cwd is not None:
        return BotView(name, folders[0], folders)
    program = _program_file(command)
    return BotView(name, None if program is None else program[1], folders, None if program is None else program[0])


def _overlap(first: Path, second: Path) -> bool:
    """True when one path is the other or lies inside it: a view of either shows (some of) the other."""
    return first == second or first in second.parents or second in first.parents


def _remedy(inner: Path, outer: Path, *bots: BotView) -> str:
    """What the organiser can do when `outer` shows a bot `inner`: give a NAME=CMD bot among `bots` a
    folder of its own, else move `inner` out of `outer` (or `outer` out of `inner`, when it lies inside)."""
    script = next((bot.script for bot in bots if bot.script is not None), None)
    if script is not None:
        return f"put {Path(script).name} in a folder of its own (with a bot.toml)"
    return f"move {inner} out of {outer}" if outer in inner.parents else f"move {outer} out of {inner}"


def check_layout(views: Sequence[BotView], protected: Sequence[tuple[str, Path]],
                 trusted: Sequence[BotView] = ()) -> None:
    """SandboxError, in one line saying what to do, when a bot would see more than its own files: a
    `protected` path (results file, bot logs, league file: each as (what, path)), another bot's files, or
    either of these through a folder every bot is shown (the Python that runs Python bots, cardarena's own
    package). `trusted` bots (check's opponents, the packaged random bot) are held to the protected paths only."""
    protected = [(what, Path(path).resolve()) for what, path in protected]
    shipped = Path(cardarena.__file__).resolve().parent  # the sample bots a wheel ships: public, like the rest
    for shared in (Path(path) for path in (*python_folders(), *sdk_entries().values(), moved_stub())):
        for what, path in protected:
            if _overlap(shared, path):
                raise SandboxError(f"every bot would see {what} {path}: {shared} is shown to every bot (the Python "
                                   "that runs Python bots, or cardarena's own package); keep the two apart")
        for other in views:
            if other.own is not None and shared in other.own.parents and shipped not in other.own.parents:
                raise SandboxError(f"every bot would see bot {other.name}'s files {other.own}: {shared} is shown to "
                                   "every bot (the Python that runs Python bots); move the bot out of it")
    for view in (*views, *trusted):
        for folder, (what, path) in itertools.product(view.folders, protected):
            if _overlap(folder, path):
                where = "lies inside" if path in folder.parents else "holds"
                raise SandboxError(f"bot {view.name} would see {what} {path}: the folder it is shown, {folder}, "
                                   f"{where} it; {_remedy(path, folder, view)}")
    for view, other in itertools.permutations(views, 2):
        for folder in view.folders:
            if other.own is not None and other.own != view.own and _overlap(folder, other.own):
                runs = next((f"{a.name} runs a file of bot {b.name}'s folder: enter only one of them, or "
                             for a, b in ((view, other), (other, view))
                             if a.script is not None and b.script is None and b.own in a.own.parents), "")
                raise SandboxError(f"bot {view.name} would see bot {other.name}'s files {other.own}: the folder "
                                   f"{view.name} is shown is {folder}; {runs}{_remedy(other.own, folder, other, view)}")


def check_readable_by_nobody(folders: list[str], who: str) -> None:
    """SandboxError when the unprivileged bot (`who`: as root, bots run as a uid of their own under
    bubblewrap, as nobody without it) could not read a folder (or file) it needs (mode 0700, say)."""
    for path in folders:
        mode = os.stat(path).st_mode
        needed = 0o005 if stat.S_ISDIR(mode) else 0o004
        if mode & needed != needed:
            raise SandboxError(f"the bot runs as {who}, which cannot read {path} "
                               f"(mode {mode & 0o777:04o}): make it readable by others (chmod -R o+rX)")
