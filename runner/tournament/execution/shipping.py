"""Bots shipped to machines that do not share the organiser's files: a bot folder packed once,
named by a hash of its content, and unpacked into a cache on each machine that runs it.

A pack holds the whole folder as it is on the organiser's disk, built files included
(`node_modules`, compiled binaries), less `.git`. Its name is the SHA-256 of the pack's bytes,
so a cached copy is used only when every shipped byte is the same (a rebuilt binary is a new
pack), and processes on one machine that unpack the same pack at once agree on one folder.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from cardarena.errors import CardarenaError

SKIPPED_FOLDERS = frozenset({".git"})  # history a bot never needs at run time
MAX_PACK_BYTES = 512 << 20  # a packed bot larger than this is refused before the run, not sent to every worker
CACHE_ENV = "CARDARENA_BOT_CACHE"  # where a worker machine keeps unpacked bots (default: the user's cache folder)


class PackError(CardarenaError, RuntimeError):
    """A bot folder that cannot be packed, or a pack that cannot be unpacked; the message says why."""


@dataclass(frozen=True)
class BotPack:
    """A packed bot folder: its content hash (the pack's name), its gzip'd tar bytes, and where its
    command runs relative to the folder (the manifest's `cwd`)."""

    digest: str
    data: bytes
    workdir: str = "."


def pack_folder(folder: Path, workdir: Path | None = None) -> BotPack:
    """Pack `folder` (every file, link and folder under it, less SKIPPED_FOLDERS) reproducibly: the
    same content gives the same bytes and name, whatever the files' times and owners."""
    folder = folder.resolve()
    relative = "." if workdir is None else os.path.relpath(workdir.resolve(), folder)
    if relative.startswith(".."):
        raise PackError(f"{folder}: the bot's working directory {workdir} lies outside its folder")
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as zipped, \
            tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in _walk(folder):
            entry, content = _entry(folder, path)
            try:
                tar.addfile(entry, content)
            finally:
                if content is not None:
                    content.close()
            if buffer.tell() > MAX_PACK_BYTES:
                raise PackError(f"{folder}: packed, this bot is over {MAX_PACK_BYTES >> 20} MiB; "
                                "leave what it does not need to run out of its folder")
    data = buffer.getvalue()
    return BotPack(hashlib.sha256(data).hexdigest()[:32], data, Path(relative).as_posix())


def _walk(folder: Path) -> list[Path]:
    """Every entry under `folder` in a fixed order (sorted), without following links."""
    entries = []
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if name not in SKIPPED_FOLDERS)
        entries += [Path(root, name) for name in folders + sorted(files)]
    return sorted(entries, key=lambda path: path.relative_to(folder).as_posix())


def _entry(folder: Path, path: Path) -> tuple[tarfile.TarInfo, io.BufferedReader | None]:
    """The tar header of one entry, with owner and times left out, and its content for a file."""
    try:
        info = os.lstat(path)
        entry = tarfile.TarInfo(path.relative_to(folder).as_posix())
        entry.mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISDIR(info.st_mode):
            entry.type = tarfile.DIRTYPE
            return entry, None
        if stat.S_ISLNK(info.st_mode):
            entry.type, entry.linkname = tarfile.SYMTYPE, os.readlink(path)
            return entry, None
        if not stat.S_ISREG(info.st_mode):
            raise PackError(f"{path}: a bot folder may hold only files, folders and links (this is a "
                            "device, socket or pipe)")
        entry.size = info.st_size
        return entry, open(path, "rb")
    except OSError as error:
        raise PackError(f"{path}: cannot read it to pack the bot: {error.strerror}") from None


def cache_root() -> Path:
    """The folder of unpacked bots on this machine: $CARDARENA_BOT_CACHE, else the user's cache folder."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cardarena" / "bots"


def unpack(digest: str, data: bytes, root: Path | None = None) -> Path:
    """The folder of pack `digest` under the cache `root`, unpacked from `data` unless already there.

    Unpacking goes to a private folder renamed into place at the end, so another process that
    unpacks the same pack meanwhile, or a crash half-way, never leaves a half-filled folder behind.
    The pack's entries may not leave its folder (absolute paths, `..`, links pointing outside).
    """
    root = root or cache_root()
    final = root / digest
    if final.is_dir():
        return final
    if hashlib.sha256(data).hexdigest()[:32] != digest:
        raise PackError(f"pack {digest}: its bytes do not match its name (damaged on the way)")
    try:
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=root))
    except OSError as error:
        raise PackError(f"cannot make the bot cache {root}: {error.strerror}") from None
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            _extract_inside(tar, staging)
        staging.chmod(0o755)
        try:
            staging.rename(final)
        except OSError:
            if not final.is_dir():  # not a concurrent unpack of the same pack that won the race
                raise
    except (OSError, tarfile.TarError, PackError) as error:
        raise PackError(f"pack {digest}: cannot unpack it into {root}: {error}") from None
    finally:
        if staging.exists():  # not renamed into place
            shutil.rmtree(staging)
    return final


def _extract_inside(tar: tarfile.TarFile, folder: Path) -> None:
    """Write a pack's entries into the empty `folder`, refusing (PackError) any that would reach
    outside it: a name that is absolute or climbs with `..`, a write through a link that leads out,
    a link that leads out once every entry is in place, or an entry that is not a file, folder or
    link. Written here rather than left to tarfile's "data" filter, which Python gained only in
    3.11.4 (Debian 12's Python is 3.11.2); the modes kept are a file's permission bits, less the
    set-id, sticky and group or other write bits."""
    root = os.path.realpath(folder)
    for entry in tar:
        parts = PurePosixPath(entry.name).parts
        if not parts or entry.name.startswith("/") or ".." in parts:
            raise PackError(f"entry {entry.name!r} names a place outside the pack's folder")
        target = os.path.join(root, *parts)
        _require_inside(root, os.path.dirname(target), entry.name)
        if entry.isdir():
            os.makedirs(target, mode=0o755, exist_ok=True)
            _require_inside(root, target, entry.name)  # not an earlier link's way out
        elif entry.issym():
            if entry.linkname.startswith("/"):
                raise PackError(f"link {entry.name!r} points to an absolute path, {entry.linkname}")
            os.symlink(entry.linkname, target)
        elif entry.isreg():
            _write_file(tar, entry, target)
        else:
            raise PackError(f"entry {entry.name!r} is not a file, folder or link")
    for place, folders, files in os.walk(root):  # each link checked as the whole tree finally resolves it
        for name in folders + files:
            path = os.path.join(place, name)
            if os.path.islink(path):
                _require_inside(root, path, os.path.relpath(path, root))


def _write_file(tar: tarfile.TarFile, entry: tarfile.TarInfo, target: str) -> None:
    """One regular file of a pack, created afresh (never through a link at its own name)."""
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as out, tar.extractfile(entry) as content:
        shutil.copyfileobj(content, out)
        os.fchmod(out.fileno(), (entry.mode & 0o755) | 0o600)


def _require_inside(root: str, path: str, name: str) -> None:
    """PackError unless `path`, its links followed, lies within `root`."""
    resolved = os.path.realpath(path)
    if resolved != root and not resolved.startswith(root + os.sep):
        raise PackError(f"entry {name!r} leads outside the pack's folder (to {resolved})")
