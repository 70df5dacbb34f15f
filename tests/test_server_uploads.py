"""Hostile uploads to the league server (issue 23, "Safety" and the hostile-upload suite of Done when):
each bad archive is refused with a clear one-line reason and leaves no folder behind; a good one
unpacks to exactly its files. Archives are built in memory, with small caps where a big one would
only cost time."""

from __future__ import annotations

import gzip
import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from cardarena.errors import UsageError
from cardarena.server.unpack import Caps, UploadRefused, checked_path, unpack

SMALL = Caps(max_bytes=1 << 20, max_files=100)


def make_zip(path: Path, members: list[tuple[str, bytes]], attrs: dict[str, int] | None = None,
             compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as bundle:
        for name, data in members:
            info = zipfile.ZipInfo(name)
            info.compress_type = compression
            info.external_attr = (attrs or {}).get(name, 0o100644) << 16
            bundle.writestr(info, data)
    return path


def make_tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz", encoding="utf-8", errors="surrogateescape") as bundle:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                bundle.addfile(member)
            else:
                info = tarfile.TarInfo(member[0])
                info.size = len(member[1])
                bundle.addfile(info, io.BytesIO(member[1]))
    return path


def special(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info


def refused(archive: Path, tmp_path: Path, caps: Caps = SMALL) -> str:
    """The reason `archive` is refused; the destination must not be left behind."""
    folder = tmp_path / "unpacked"
    with pytest.raises(UploadRefused) as error:
        unpack(archive, folder, caps)
    assert not folder.exists()
    message = str(error.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("maker", ["zip", "tar"])
def test_a_plain_bot_folder_unpacks_to_its_files(tmp_path, maker):
    members = [("bot.toml", b'name = "x"\ncommand = ["python3", "bot.py"]\n'), ("bot.py", b"print(1)\n"),
               ("lib/util.py", b"")]
    archive = (make_zip(tmp_path / "a.zip", members) if maker == "zip" else make_tar(tmp_path / "a.tgz", members))
    assert unpack(archive, tmp_path / "out", SMALL) == ["bot.py", "bot.toml", "lib/util.py"]
    assert (tmp_path / "out" / "bot.py").read_bytes() == b"print(1)\n"


def test_the_executable_bit_is_kept_and_nothing_else(tmp_path):
    archive = make_zip(tmp_path / "a.zip", [("run.sh", b"#!/bin/sh\n"), ("data", b"")],
                       attrs={"run.sh": 0o104777, "data": 0o106666})  # setuid, world-writable: dropped
    unpack(archive, tmp_path / "out", SMALL)
    assert stat.S_IMODE((tmp_path / "out" / "run.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "out" / "data").stat().st_mode) == 0o644


def test_only_a_fresh_folder_is_unpacked_into(tmp_path):
    archive = make_zip(tmp_path / "a.zip", [("bot.py", b"")])
    (tmp_path / "out").mkdir()
    with pytest.raises(UploadRefused, match="fresh folder"):
        unpack(archive, tmp_path / "out", SMALL)
    assert (tmp_path / "out").exists()  # someone else's folder is not removed


def test_a_zip_bomb_is_refused_by_its_declared_size_before_reading(tmp_path):
    archive = make_zip(tmp_path / "bomb.zip", [("zeros", bytes(8 << 20))])  # 8 MiB of zeros in ~8 KiB
    assert "declares 8,388,608 bytes, over the cap of 1 MiB" in refused(archive, tmp_path)


def test_a_zip_bomb_under_the_size_cap_is_refused_by_its_ratio(tmp_path):
    archive = make_zip(tmp_path / "bomb.zip", [("zeros", bytes(4 << 20))])
    assert "over 200 times its size: a compression bomb" in refused(archive, tmp_path, Caps(max_bytes=16 << 20))


def test_many_small_members_that_add_up_past_the_cap_are_refused(tmp_path):
    archive = make_zip(tmp_path / "many.zip", [(f"f{index}", bytes(300_000)) for index in range(5)],
                       compression=zipfile.ZIP_STORED)
    assert "declare 1,500,000 bytes in all, over the cap of 1 MiB" in refused(archive, tmp_path)


def test_a_zip_whose_header_understates_its_size_is_caught_while_unpacking(tmp_path):
    """The declared size in both headers says 10 bytes; the data holds 2 MiB: never trusted."""
    archive = make_zip(tmp_path / "liar.zip", [("zeros", bytes(2 << 20))], compression=zipfile.ZIP_STORED)
    data = bytearray(archive.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # uncompressed size fields
        at = data.find(signature)
        data[at + offset:at + offset + 4] = (10).to_bytes(4, "little")
    archive.write_bytes(bytes(data))
    message = refused(archive, tmp_path, Caps(max_bytes=1 << 20, max_ratio=10**6))
    assert "damaged" in message or "more than 1 MiB" in message


def test_a_gzip_bomb_is_refused_while_decompressing(tmp_path):
    """A tar.gz member declared 8 MiB: refused at its header; a body of zeros behind a lying header
    would stop at the decompression budget instead (the same reader counts every byte)."""
    archive = make_tar(tmp_path / "bomb.tgz", [("zeros", bytes(8 << 20))])
    assert "declares 8,388,608 bytes" in refused(archive, tmp_path)
    assert "compression bomb" in refused(archive, tmp_path, Caps(max_bytes=16 << 20))


def test_a_2_gib_declared_size_is_refused_before_reading(tmp_path):
    info = tarfile.TarInfo("huge.bin")
    info.size = 2 << 30
    header = info.tobuf(tarfile.GNU_FORMAT)
    archive = tmp_path / "huge.tgz"
    archive.write_bytes(gzip.compress(header + bytes(4096)))  # the body is not there: it is never read
    assert "declares 2,147,483,648 bytes, over the cap of 64 MiB" in refused(archive, tmp_path, Caps())
    zipped = make_zip(tmp_path / "huge.zip", [("small", b"x")], compression=zipfile.ZIP_STORED)
    data = bytearray(zipped.read_bytes())
    at = data.find(b"PK\x01\x02")
    data[at + 24:at + 28] = (2 << 30).to_bytes(4, "little")
    zipped.write_bytes(bytes(data))
    assert "declares 2,147,483,648 bytes" in refused(zipped, tmp_path, Caps())


@pytest.mark.parametrize("name", ["../evil.py", "bot/../../evil.py", "a/./../../b"])
@pytest.mark.parametrize("maker", ["zip", "tar"])
def test_path_traversal_is_refused(tmp_path, name, maker):
    archive = (make_zip(tmp_path / "a.zip", [(name, b"x")]) if maker == "zip"
               else make_tar(tmp_path / "a.tgz", [(name, b"x")]))
    assert "climbs out of the folder ('..')" in refused(archive, tmp_path)
    assert not (tmp_path / "evil.py").exists()


@pytest.mark.parametrize("name", ["/etc/cron.d/evil", "C:/evil"])
def test_absolute_paths_are_refused(tmp_path, name):
    assert "an absolute path" in refused(make_tar(tmp_path / "a.tgz", [(name, b"x")]), tmp_path)
    assert "an absolute path" in refused(make_zip(tmp_path / "a.zip", [(name, b"x")]), tmp_path)


def test_links_are_refused_whether_in_or_out_of_the_folder(tmp_path):
    out = make_tar(tmp_path / "a.tgz", [special("secret", tarfile.SYMTYPE, "/etc/passwd")])
    assert "a symbolic link (to '/etc/passwd')" in refused(out, tmp_path)
    hard = make_tar(tmp_path / "b.tgz", [("bot.py", b"x"), special("copy", tarfile.LNKTYPE, "../../etc/shadow")])
    assert "a hard link" in refused(hard, tmp_path)
    zipped = make_zip(tmp_path / "c.zip", [("link", b"/etc/passwd")], attrs={"link": 0o120777})
    assert "a symbolic link" in refused(zipped, tmp_path)


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_device_files_and_fifos_are_refused(tmp_path, kind):
    assert "a special file" in refused(make_tar(tmp_path / "a.tgz", [special("dev", kind)]), tmp_path)


def test_a_zip_device_file_is_refused(tmp_path):
    archive = make_zip(tmp_path / "a.zip", [("null", b"")], attrs={"null": 0o020666})
    assert "a special file" in refused(archive, tmp_path)


def test_a_10000_file_archive_is_refused(tmp_path):
    members = [(f"f{index}", b"") for index in range(10_000)]
    assert "10,000 files and folders, over the cap of 2,000" in refused(
        make_zip(tmp_path / "many.zip", members, compression=zipfile.ZIP_STORED), tmp_path, Caps())
    assert "more than 2,000 files and folders" in refused(make_tar(tmp_path / "many.tgz", members), tmp_path, Caps())


def test_duplicate_names_are_refused(tmp_path):
    archive = make_tar(tmp_path / "a.tgz", [("bot.py", b"good"), ("./bot.py", b"evil")])
    assert "'bot.py': named twice" in refused(archive, tmp_path)
    clash = make_zip(tmp_path / "b.zip", [("lib", b"file"), ("lib/x.py", b"")])
    assert "lies inside 'lib', which is a file" in refused(clash, tmp_path)


def test_names_that_are_not_utf8_are_refused(tmp_path):
    assert "not valid UTF-8" in refused(make_tar(tmp_path / "a.tgz", [("caf\udce9.py", b"")]), tmp_path)
    zipped = make_zip(tmp_path / "b.zip", [("cafX.py", b"")])
    zipped.write_bytes(zipped.read_bytes().replace(b"cafX", b"caf\xe9"))  # no UTF-8 flag: raw byte 0xE9
    assert "not valid UTF-8" in refused(zipped, tmp_path)


def test_names_with_control_characters_or_backslashes_are_refused():
    with pytest.raises(UploadRefused, match="control characters"):
        checked_path("bot\x1b[2J.py", SMALL)
    with pytest.raises(UploadRefused, match="backslash"):
        checked_path("..\\evil", SMALL)


def test_what_is_not_an_archive_is_refused(tmp_path):
    (tmp_path / "x").write_bytes(b"#!/bin/sh\nrm -rf /\n")
    assert "neither a .zip nor a .tar.gz" in refused(tmp_path / "x", tmp_path)
    (tmp_path / "y").write_bytes(b"\x1f\x8b" + bytes(100))
    assert "damaged" in refused(tmp_path / "y", tmp_path)


def test_submit_packs_the_files_run_identifies_the_bot_by(tmp_path):
    """`cardarena submit` packs manifest.bot_files' list (build output left out), which the server unpacks
    to the same files; a link is refused before anything is sent."""
    from cardarena.manifest import bot_files
    from cardarena.server.commands import pack_bot

    bot = tmp_path / "bot"
    (bot / "__pycache__").mkdir(parents=True)
    (bot / "bot.toml").write_text('name = "b"\ncommand = ["python3", "bot.py"]\n')
    (bot / "bot.py").write_text("print(1)\n")
    (bot / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "bot.tgz").write_bytes(pack_bot(bot))
    assert unpack(tmp_path / "bot.tgz", tmp_path / "out", SMALL) == bot_files(bot) == ["bot.py", "bot.toml"]
    (bot / "secret").symlink_to("/etc/passwd")
    with pytest.raises(UsageError, match="not a plain file"):
        pack_bot(bot)
