"""Bot packs: a folder packed reproducibly with its built files, named by content, unpacked safely once."""

from __future__ import annotations

import gzip
import hashlib
import io
import multiprocessing
import os
import tarfile
from pathlib import Path

import pytest

from cardarena.tournament.execution.shipping import PackError, pack_folder, unpack


def make_bot(folder: Path) -> Path:
    """A bot folder with a script, a built executable, node_modules and a git folder."""
    (folder / "node_modules" / "lib").mkdir(parents=True)
    (folder / "node_modules" / "lib" / "index.js").write_text("module.exports = 1;\n")
    (folder / "bot.toml").write_text('name = "x"\ncommand = ["./bot"]\n')
    (folder / "bot").write_bytes(b"#!/bin/sh\necho built\n")
    (folder / "bot").chmod(0o755)
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    os.symlink("node_modules/lib/index.js", folder / "entry.js")
    return folder


def test_a_pack_holds_built_files_keeps_modes_and_links_and_leaves_git_out(tmp_path):
    pack = pack_folder(make_bot(tmp_path / "bot"))
    folder = unpack(pack.digest, pack.data, tmp_path / "cache")
    assert folder == tmp_path / "cache" / pack.digest
    assert (folder / "node_modules" / "lib" / "index.js").read_text() == "module.exports = 1;\n"
    assert os.access(folder / "bot", os.X_OK)
    assert os.readlink(folder / "entry.js") == "node_modules/lib/index.js"
    assert not (folder / ".git").exists()


def test_the_same_content_gives_the_same_pack_and_any_change_a_new_one(tmp_path):
    first = pack_folder(make_bot(tmp_path / "one"))
    second_folder = make_bot(tmp_path / "two")
    os.utime(second_folder / "bot", (1, 1))  # other times and another place: the same content
    assert pack_folder(second_folder) == first
    (second_folder / "bot").write_bytes(b"#!/bin/sh\necho rebuilt\n")
    assert pack_folder(second_folder).digest != first.digest


def test_the_working_folder_travels_relative_and_may_not_leave_the_bot(tmp_path):
    folder = make_bot(tmp_path / "bot")
    assert pack_folder(folder, folder / "node_modules").workdir == "node_modules"
    with pytest.raises(PackError, match="outside its folder"):
        pack_folder(folder, tmp_path)


def test_a_cached_pack_is_not_unpacked_again(tmp_path):
    pack = pack_folder(make_bot(tmp_path / "bot"))
    folder = unpack(pack.digest, pack.data, tmp_path / "cache")
    (folder / "marker").write_text("kept")
    assert unpack(pack.digest, pack.data, tmp_path / "cache") == folder
    assert (folder / "marker").exists()
    assert [path.name for path in (tmp_path / "cache").iterdir()] == [pack.digest]  # no staging left over


def _unpack_in_child(args: tuple[str, bytes, Path]) -> Path:
    return unpack(*args)


def test_processes_unpacking_the_same_pack_at_once_agree_on_one_folder(tmp_path):
    pack = pack_folder(make_bot(tmp_path / "bot"))
    with multiprocessing.get_context("fork").Pool(4) as pool:
        folders = pool.map(_unpack_in_child, [(pack.digest, pack.data, tmp_path / "cache")] * 8)
    assert set(folders) == {tmp_path / "cache" / pack.digest}
    assert (folders[0] / "bot.toml").is_file()
    assert [path.name for path in (tmp_path / "cache").iterdir()] == [pack.digest]


def test_a_damaged_pack_is_refused(tmp_path):
    pack = pack_folder(make_bot(tmp_path / "bot"))
    with pytest.raises(PackError, match="do not match its name"):
        unpack(pack.digest, pack.data[:-1] + bytes([pack.data[-1] ^ 1]), tmp_path / "cache")
    assert not (tmp_path / "cache" / pack.digest).exists()


def hostile_pack(entries: list[tuple[str, bytes | None, str | None]]) -> tuple[str, bytes]:
    """A pack written by hand: (name, tar type, link target) per entry, a file's content empty."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as zipped, tarfile.open(fileobj=zipped, mode="w") as tar:
        for name, kind, link in entries:
            entry = tarfile.TarInfo(name)
            entry.type = kind
            if link is not None:
                entry.linkname = link
            tar.addfile(entry, io.BytesIO(b"") if kind == tarfile.REGTYPE else None)
    data = buffer.getvalue()
    return hashlib.sha256(data).hexdigest()[:32], data


FILE, LINK, FOLDER = tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.DIRTYPE


@pytest.mark.parametrize("entries", [
    [("../escape", FILE, None)],
    [("/tmp/escape", FILE, None)],
    [("link", LINK, "/etc/passwd")],
    [("link", LINK, "../../outside")],
    # each link leads inside when it is written; together, the first leads out (b is the folder itself)
    [("a", LINK, "b/.."), ("b", LINK, ".")],
    # a write through a link that leads out, before the end's check of links could see it
    [("out", LINK, "../.."), ("out/escape", FILE, None)],
    [("out", LINK, "../.."), ("out", FOLDER, None), ("out/escape", FILE, None)],
    # a file written at a link's name would be written where the link points
    [("f", LINK, "../escape"), ("f", FILE, None)],
    [("hard", tarfile.LNKTYPE, "/etc/passwd")],
    [("device", tarfile.CHRTYPE, None)],
    [("fifo", tarfile.FIFOTYPE, None)],
], ids=["dot-dot", "absolute", "absolute-link", "climbing-link", "link-chain", "through-a-link",
        "folder-at-a-link", "file-at-a-link", "hard-link", "device", "fifo"])
def test_a_pack_whose_entries_leave_its_folder_is_refused(tmp_path, entries):
    """Whatever tarfile offers on this Python (its "data" filter came in 3.11.4), the unpacking is
    shipping.py's own: nothing lands outside the cache, nothing of the pack is kept."""
    cache = tmp_path / "deep" / "cache"
    digest, data = hostile_pack(entries)
    with pytest.raises(PackError, match="cannot unpack"):
        unpack(digest, data, cache)
    assert not (cache / digest).exists()
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["cache", "deep"]
    assert not Path("/tmp/escape").exists()


def test_a_folder_holding_a_pipe_cannot_be_packed(tmp_path):
    folder = make_bot(tmp_path / "bot")
    os.mkfifo(folder / "fifo")
    with pytest.raises(PackError, match="only files, folders and links"):
        pack_folder(folder)
