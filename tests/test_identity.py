"""A bot's identity covers its files (less build output), so `run --resume` notices changed code
and names it; the work is bounded however big the folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import cardarena.manifest as manifest
from cardarena.cli import main
from cardarena.manifest import ManifestError, bot_files, entrant_from_command, load_manifest
from tests.conftest import RANDOM_BOT


def make_bot(folder: Path, files: dict[str, str]) -> Path:
    """A bot folder running the sample random bot, with extra files."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(f'name = "{folder.name}"\ncommand = ["{sys.executable}", "{RANDOM_BOT}"]\n')
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_changed_code_changes_the_identity_and_names_the_file(tmp_path):
    bot = make_bot(tmp_path / "mine", {"bot.py": "print(1)\n", "lib/util.py": "X = 1\n"})
    before = load_manifest(bot).identity
    (bot / "lib" / "util.py").write_text("X = 2\n")
    after = load_manifest(bot).identity
    assert after.digest != before.digest
    assert after.changes(dict(before.files)) == ["lib/util.py"]
    (bot / "lib" / "new.py").write_text("")
    (bot / "bot.py").unlink()
    assert load_manifest(bot).identity.changes(dict(after.files)) == ["bot.py", "lib/new.py"]


def test_build_output_and_caches_are_left_out_of_a_folder_outside_git(tmp_path):
    bot = make_bot(tmp_path / "mine", {"bot.py": "print(1)\n"})
    before = load_manifest(bot).identity
    for name in ["node_modules/pkg/index.js", "__pycache__/bot.cpython-311.pyc", "build/bot.o", "bot.pyc",
                 ".git/HEAD", "sub/__pycache__/x.pyc"]:
        (bot / name).parent.mkdir(parents=True, exist_ok=True)
        (bot / name).write_text("output")
    assert load_manifest(bot).identity == before
    assert bot_files(bot) == ["bot.py", "bot.toml"]


def test_in_a_git_work_tree_ignored_files_are_left_out_and_untracked_ones_count(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("out/\n*.bin\n")
    bot = make_bot(tmp_path / "mine", {"bot.py": "print(1)\n", "out/cache.txt": "x", "model.bin": "weights",
                                       "build/keep.txt": "not ignored by this repo"})
    assert bot_files(bot) == ["bot.py", "bot.toml", "build/keep.txt"]
    before = load_manifest(bot).identity
    (bot / "out" / "cache.txt").write_text("y")
    assert load_manifest(bot).identity == before
    (bot / "notes.md").write_text("untracked but not ignored")
    assert load_manifest(bot).identity.changes(dict(before.files)) == ["notes.md"]


def test_a_huge_folder_is_refused_and_content_past_the_budget_counts_by_size_and_mtime(tmp_path, monkeypatch):
    bot = make_bot(tmp_path / "mine", {"a.py": "1" * 100, "b.dat": "2" * 100})
    monkeypatch.setattr(manifest, "CONTENT_BUDGET", 150)  # bot.toml and a.py fit; b.dat does not
    before = load_manifest(bot).identity
    stamp = os.stat(bot / "b.dat")
    (bot / "b.dat").write_text("3" * 100)  # same size
    os.utime(bot / "b.dat", ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # same mtime: not noticed
    assert load_manifest(bot).identity == before
    (bot / "b.dat").write_text("3" * 101)
    assert load_manifest(bot).identity.changes(dict(before.files)) == ["b.dat"]
    monkeypatch.setattr(manifest, "MAX_BOT_FILES", 2)
    with pytest.raises(ManifestError, match="more than 2 files make up this bot"):
        load_manifest(bot)


def test_a_command_bot_is_its_command_and_its_script(tmp_path):
    script = tmp_path / "bot.py"
    script.write_text("print(1)\n")
    text = f"a={sys.executable} {script} --seed 1"
    before = entrant_from_command(text).identity
    script.write_text("print(2)\n")
    assert entrant_from_command(text).identity.changes(dict(before.files)) == [str(script)]
    assert entrant_from_command(text + "0").identity.changes(dict(before.files)) == sorted(["command", str(script)])


def test_resume_refuses_a_bot_whose_code_changed_though_its_manifest_did_not(tmp_path):
    bot = make_bot(tmp_path / "mine", {"strategy.py": "AGGRESSION = 1\n", "bot.py": RANDOM_BOT.read_text()})
    (bot / "bot.toml").write_text('name = "mine"\ncommand = ["python", "bot.py"]\n')  # the sandbox shows only its folder
    out = tmp_path / "t.sqlite"
    args = ["run", "--bot", str(bot), "--bot", f"b={sys.executable} {RANDOM_BOT}", "--game", "casino",
            "--deals", "1", "--timeout", "10", "--jobs", "1", "--bootstrap", "0", "--out", str(out)]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(main, args + ["--resume"])
    assert again.exit_code == 0 and "(2 already played)" in again.output, again.output
    (bot / "strategy.py").write_text("AGGRESSION = 2\n")
    refused = CliRunner().invoke(main, args + ["--resume"])
    assert refused.exit_code == 1
    assert [line for line in refused.stderr.splitlines() if line.strip()] == [
        f"Error: {out}: bot 'mine' changed since its games were recorded (changed: 'strategy.py'); "
        "use --out for a new results file"]


def test_identifying_a_bot_never_runs_a_command_its_git_config_names(tmp_path):
    """A downloaded bot folder may ship its own .git: git's `core.fsmonitor` would run any command
    as the organiser the moment the folder is listed."""
    bot = make_bot(tmp_path / "mine", {"bot.py": "print(1)\n"})
    subprocess.run(["git", "init", "-q", str(bot)], check=True)
    marker = tmp_path / "pwned"
    subprocess.run(["git", "-C", str(bot), "config", "core.fsmonitor", f"touch {marker}; false"], check=True)
    assert bot_files(bot) == ["bot.py", "bot.toml"]
    assert not marker.exists()


def test_hostile_folder_entries_are_identified_without_being_opened_or_followed(tmp_path):
    """A pipe or device would hang or leak if read, a link may point anywhere (a loop, /etc): each
    counts by what it is, and a link by its target, a link to a folder included."""
    bot = make_bot(tmp_path / "mine", {"bot.py": "print(1)\n"})
    os.mkfifo(bot / "fifo")
    (bot / "loop1").symlink_to("loop2")
    (bot / "loop2").symlink_to("loop1")
    (bot / "secret").symlink_to("/etc/shadow")
    (bot / "lib").symlink_to("/etc")
    before = load_manifest(bot).identity
    assert [name for name, _ in before.files] == ["bot.py", "bot.toml", "fifo", "lib", "loop1", "loop2", "secret"]
    (bot / "lib").unlink()
    (bot / "lib").symlink_to("/usr")
    assert load_manifest(bot).identity.changes(dict(before.files)) == ["lib"]


def test_a_bot_folder_cannot_hide_its_code_from_its_identity(tmp_path):
    """Issue 20 item 6: a bot shipping its own .git whose info/exclude is `*` had an empty file list, so
    --resume ran new code under the old name. Nothing in the folder decides what its identity covers:
    not its own repository (exclude file, index, core.worktree, core.excludesFile), nor a .gitignore of
    its own inside the organiser's work tree; the organiser's rules outside the folder still apply."""
    bot = make_bot(tmp_path / "own" / "mine", {"bot.py": "print(1)\n", "lib/strategy.py": "X = 1\n"})
    subprocess.run(["git", "init", "-q", str(bot)], check=True)
    (bot / ".git" / "info" / "exclude").write_text("*\n")
    subprocess.run(["git", "-C", str(bot), "config", "core.worktree", "/usr"], check=True)
    subprocess.run(["git", "-C", str(bot), "config", "core.excludesFile", str(bot / "lib" / "strategy.py")],
                   check=True)
    assert bot_files(bot) == ["bot.py", "bot.toml", "lib/strategy.py"]
    before = load_manifest(bot).identity
    (bot / "lib" / "strategy.py").write_text("X = 2  # NEW CODE v2\n")
    assert load_manifest(bot).identity.changes(dict(before.files)) == ["lib/strategy.py"]

    organisers = tmp_path / "organiser"
    subprocess.run(["git", "init", "-q", str(organisers)], check=True)
    (organisers / ".gitignore").write_text("*.log\n")
    (organisers / ".git" / "info" / "exclude").write_text("scratch/\n")
    inside = make_bot(organisers / "bots" / "mine", {"bot.py": "print(1)\n", "plugin.hidden": "v1",
                                                     "sub/.gitignore": "*\n", "sub/more.py": "1",
                                                     "run.log": "organiser ignores this", "scratch/x": "and this"})
    (inside / ".gitignore").write_text("*.hidden\n.gitignore\n")
    nested = inside / "nested"
    subprocess.run(["git", "init", "-q", str(nested)], check=True)  # a repository inside: its files count too
    (nested / "code.py").write_text("Y = 1\n")
    assert bot_files(inside) == [".gitignore", "bot.py", "bot.toml", "nested/code.py", "plugin.hidden",
                                 "sub/.gitignore", "sub/more.py"]
