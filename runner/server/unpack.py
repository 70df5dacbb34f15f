"""Safe unpacking of an uploaded bot folder (.zip or .tar.gz) into a fresh folder.

An upload is hostile until proven otherwise. Each entry's name, type and declared size are checked
before a byte of it is read; the bytes actually decompressed are counted while they are written
(headers can lie); and only regular files and folders are ever made, with names that stay inside
the new folder. Anything else refuses the whole upload with one line saying why
(`UploadRefused`), and the half-made folder is removed.
"""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from cardarena.referee.faults import printable

CHUNK = 1 << 16


class UploadRefused(ValueError):
    """An upload that is not unpacked; the message says why in one line."""


@dataclass(frozen=True)
class Caps:
    """What one upload may unpack to."""

    max_bytes: int = 64 << 20  # the files' total size, unpacked
    max_files: int = 2_000  # files and folders
    max_ratio: int = 200  # unpacked bytes per byte of the upload (a zip bomb's is in the thousands)
    max_depth: int = 32  # folders inside each other
    max_name_bytes: int = 255  # one part of a path (a file system's limit)

    def ratio_allows(self, unpacked: int, packed: int) -> bool:
        """Whether `unpacked` bytes from `packed` is an ordinary compression ratio (small files always are)."""
        return unpacked <= max(packed, 1) * self.max_ratio or unpacked <= 1 << 20


@dataclass(frozen=True)
class Entry:
    """One member of an archive, as checked: its path in the folder, and whether it is a folder."""

    path: str
    is_folder: bool
    mode: int
    declared_size: int


def unpack(archive: Path, folder: Path, caps: Caps = Caps()) -> list[str]:
    """Unpack `archive` (zip or gzipped tar, told apart by their first bytes) into `folder`, which
    must not exist yet; the files made, as sorted relative paths. UploadRefused, with nothing left
    behind, when the archive breaks any rule."""
    with open(archive, "rb") as file:
        magic = file.read(4)
    if magic[:2] == b"\x1f\x8b":
        reader = _tar_entries
    elif magic in (b"PK\x03\x04", b"PK\x05\x06"):
        reader = _zip_entries
    else:
        raise UploadRefused("the upload is neither a .zip nor a .tar.gz archive")
    if folder.exists():
        raise UploadRefused(f"{folder}: already exists; an upload is unpacked into a fresh folder only")
    seen: dict[str, bool] = {}  # path -> is a folder
    for entry, _ in reader(archive, caps):  # a first pass reads every header: nothing is written for a refusal
        if len(seen) >= caps.max_files:
            raise UploadRefused(f"the archive holds more than {caps.max_files:,} files and folders")
        _claim(entry, seen)
    try:
        folder.mkdir(mode=0o755)
        folder.chmod(0o755)
    except FileExistsError:
        raise UploadRefused(f"{folder}: already exists; an upload is unpacked into a fresh folder only") from None
    try:
        return _write(reader(archive, caps), folder, caps, archive.stat().st_size)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _write(entries: Iterator[tuple[Entry, Callable[[], BinaryIO] | None]], folder: Path, caps: Caps,
           packed: int) -> list[str]:
    """Make each entry (checked by a first pass) in `folder`, counting the bytes really written against the caps."""
    files, written = [], 0
    for entry, opener in entries:
        target = folder / entry.path
        for made in _make_folders(folder, target if entry.is_folder else target.parent):
            made.chmod(0o755)
        if entry.is_folder:
            continue
        mode = 0o755 if entry.mode & 0o111 else 0o644  # readable by the bot's own uid in the sandbox, whatever the umask
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        os.fchmod(descriptor, mode)
        with os.fdopen(descriptor, "wb") as out, opener() as source:
            while chunk := _read(source):
                written += len(chunk)
                if written > caps.max_bytes:
                    raise UploadRefused(f"the archive unpacks to more than {_mib(caps.max_bytes)} (counted while "
                                        "unpacking, whatever its headers say)")
                if not caps.ratio_allows(written, packed):
                    raise UploadRefused(f"the archive unpacks to over {caps.max_ratio} times its size: a "
                                        "compression bomb, not a bot folder")
                out.write(chunk)
        files.append(entry.path)
    return sorted(files)


def _make_folders(top: Path, folder: Path) -> list[Path]:
    """Make `folder` and its missing parents below `top`: those made."""
    missing = []
    while folder != top and not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        made.mkdir()
    return missing


def _read(source: BinaryIO) -> bytes:
    """The next chunk of a member's content; a CRC or stream error is the archive's damage, said so."""
    try:
        return source.read(CHUNK)
    except (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError, gzip.BadGzipFile) as error:
        raise UploadRefused(f"the archive is damaged: {printable(str(error))}") from None


def _claim(entry: Entry, seen: dict[str, bool]) -> None:
    """Record `entry`'s path, refusing a name given twice or a file that is also a folder's parent."""
    parts = entry.path.split("/")
    for depth in range(1, len(parts)):
        parent = "/".join(parts[:depth])
        if seen.setdefault(parent, True) is False:
            raise UploadRefused(f"{_show(entry.path)}: lies inside {_show(parent)}, which is a file")
    if entry.path in seen and not (entry.is_folder and seen[entry.path]):
        raise UploadRefused(f"{_show(entry.path)}: named twice in the archive")
    seen[entry.path] = entry.is_folder


def checked_path(name: str, caps: Caps) -> str:
    """The archive member name `name` as a relative path inside the folder ('' for the folder itself),
    or UploadRefused: absolute, climbing out (`..`), invalid UTF-8, control characters, too deep or long."""
    if any("\ud800" <= char <= "\udfff" for char in name):
        raise UploadRefused(f"{_show(name)}: the name is not valid UTF-8")
    if any(ord(char) < 32 or ord(char) == 127 for char in name):
        raise UploadRefused(f"{_show(name)}: the name holds control characters")
    if "\\" in name:
        raise UploadRefused(f"{_show(name)}: the name holds a backslash (archives separate folders with '/')")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise UploadRefused(f"{_show(name)}: an absolute path; an archive's names must be relative to its folder")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UploadRefused(f"{_show(name)}: climbs out of the folder ('..')")
    if len(parts) > caps.max_depth:
        raise UploadRefused(f"{_show(name)}: nested more than {caps.max_depth} folders deep")
    if any(len(part.encode()) > caps.max_name_bytes for part in parts):
        raise UploadRefused(f"{_show(name)}: a part of the name is over {caps.max_name_bytes} bytes long")
    return "/".join(parts)


def _check_size(path: str, declared: int, total: int, caps: Caps) -> None:
    """Refuse a member whose declared size, or the declared sizes so far, pass the cap (nothing read yet)."""
    if declared > caps.max_bytes:
        raise UploadRefused(f"{_show(path)}: declares {declared:,} bytes, over the cap of {_mib(caps.max_bytes)} "
                            "for the whole folder")
    if total > caps.max_bytes:
        raise UploadRefused(f"the archive's files declare {total:,} bytes in all, over the cap of "
                            f"{_mib(caps.max_bytes)}")


def _zip_entries(archive: Path, caps: Caps) -> Iterator[tuple[Entry, Callable[[], BinaryIO] | None]]:
    """The checked members of a zip file, each with an opener of its content (None for a folder)."""
    try:
        with zipfile.ZipFile(archive) as bundle:
            members = bundle.infolist()
            if len(members) > caps.max_files:
                raise UploadRefused(f"the archive holds {len(members):,} files and folders, over the cap of "
                                    f"{caps.max_files:,}")
            checked = [_zip_entry(info, caps) for info in members]  # every header before any content
            total = sum(info.file_size for info in members)
            _check_size("", 0, total, caps)
            for info, entry in zip(members, checked):
                if entry is not None:
                    yield entry, None if entry.is_folder else (lambda info=info: bundle.open(info))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, NotImplementedError) as error:
        raise UploadRefused(f"the zip archive is damaged or unsupported: {printable(str(error))}") from None


def _zip_entry(info: zipfile.ZipInfo, caps: Caps) -> Entry | None:
    """A zip member checked by its header alone (None for the archive's own top folder)."""
    name = _zip_name(info)
    path = checked_path(name, caps)
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        raise UploadRefused(f"{_show(name)}: a symbolic link; a bot folder is uploaded with the files themselves")
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise UploadRefused(f"{_show(name)}: a special file (device, fifo or socket), not a file or folder")
    if info.flag_bits & 0x1:
        raise UploadRefused(f"{_show(name)}: encrypted; upload the files unencrypted")
    _check_size(name, info.file_size, 0, caps)
    return Entry(path, info.is_dir() or kind == stat.S_IFDIR, mode, info.file_size) if path else None


def _zip_name(info: zipfile.ZipInfo) -> str:
    """A zip member's name as UTF-8 text; names without the UTF-8 flag are read as zipfile decoded
    them (cp437) and re-encoded to their bytes, which must be UTF-8 (surrogates mark those that are not)."""
    if info.flag_bits & 0x800:
        return info.orig_filename
    return info.orig_filename.encode("cp437").decode("utf-8", "surrogateescape")


class _Budget:
    """A file object passing on at most `limit` bytes of `source`: a tar read from a gzip stream
    counts what it decompresses, so a gzip bomb or a huge header stops at the cap, not in memory."""

    def __init__(self, source: BinaryIO, limit: int, caps: Caps, packed: int):
        self.source, self.limit, self.caps, self.packed, self.read_so_far = source, limit, caps, packed, 0

    def read(self, size: int = -1) -> bytes:
        data = self.source.read(CHUNK if size is None or size < 0 else min(size, CHUNK * 16))
        self.read_so_far += len(data)
        if self.read_so_far > self.limit:
            raise UploadRefused(f"the archive decompresses to more than {_mib(self.limit)} (counted while "
                                "unpacking, whatever its headers say)")
        if not self.caps.ratio_allows(self.read_so_far, self.packed):
            raise UploadRefused(f"the archive decompresses to over {self.caps.max_ratio} times its size: a "
                                "compression bomb, not a bot folder")
        return data


def _tar_entries(archive: Path, caps: Caps) -> Iterator[tuple[Entry, Callable[[], BinaryIO] | None]]:
    """The checked members of a gzipped tar, read as a stream, each with an opener of its content."""
    headroom = caps.max_files * 3 * tarfile.BLOCKSIZE + (1 << 20)  # headers and padding around the files
    try:
        with gzip.open(archive, "rb") as unzipped:
            stream = _Budget(unzipped, caps.max_bytes + headroom, caps, archive.stat().st_size)
            with tarfile.open(fileobj=stream, mode="r|", encoding="utf-8", errors="surrogateescape") as bundle:
                total = count = 0
                for member in bundle:
                    count += 1
                    if count > caps.max_files:
                        raise UploadRefused(f"the archive holds more than {caps.max_files:,} files and folders")
                    path = checked_path(member.name, caps)
                    if member.issym() or member.islnk():
                        kind = "symbolic" if member.issym() else "hard"
                        raise UploadRefused(f"{_show(member.name)}: a {kind} link (to {_show(member.linkname)}); a "
                                            "bot folder is uploaded with the files themselves")
                    if not (member.isreg() or member.isdir()):
                        raise UploadRefused(f"{_show(member.name)}: a special file (device, fifo or other), not a "
                                            "file or folder")
                    total += member.size
                    _check_size(member.name, member.size, total, caps)
                    if path:
                        yield (Entry(path, member.isdir(), member.mode, member.size),
                               None if member.isdir() else (lambda member=member: bundle.extractfile(member)))
    except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
        raise UploadRefused(f"the tar.gz archive is damaged: {printable(str(error))}") from None


def _show(name: str) -> str:
    """An archive name for a message: quoted, control characters and bad bytes made visible, cut short."""
    text = repr(name if len(name) <= 120 else name[:120] + "…")
    return printable(text)


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"
