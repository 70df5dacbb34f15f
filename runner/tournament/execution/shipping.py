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
from pathlib import Path

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
    if not hasattr(tarfile, "data_filter"):
        raise PackError("unpacking a bot safely needs Python 3.11.4 or newer (tarfile's data filter)")
    if hashlib.sha256(data).hexdigest()[:32] != digest:
        raise PackError(f"pack {digest}: its bytes do not match its name (damaged on the way)")
    try:
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=root))
    except OSError as error:
        raise PackError(f"cannot make the bot cache {root}: {error.strerror}") from None
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(staging, filter="data")
        staging.chmod(0o755)
        try:
            staging.rename(final)
        except OSError:
            if not final.is_dir():  # not a concurrent unpack of the same pack that won the race
                raise
    except (OSError, tarfile.TarError) as error:
        raise PackError(f"pack {digest}: cannot unpack it into {root}: {error}") from None
    finally:
        if staging.exists():  # not renamed into place
            shutil.rmtree(staging)
    return final
