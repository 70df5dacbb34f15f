"""The documents hold together (issue 24 item 4): README.md is a front page of at most 150 lines
whose two set-up commands are the ones CI runs; every guide is one click from it; every relative
link in a Markdown file leads to a file that exists, and every anchor to a heading of that file;
and every `§` citation in the documents, the code and the tests names a section that exists.

Links: `[text](target)` and `[label]: target` outside code, in every *.md file of the repository
(build output, dependencies and virtual environments left out). A target with a scheme
(https:, mailto:) is not followed. A path is relative to the linking file's folder; an anchor
(`#slug`, alone or after a path) must be the slug of a heading of the target Markdown file, as
GitHub makes it: the heading's text without Markdown (code backticks, emphasis, link targets),
lower-cased, every character dropped that is not a letter, mark, digit, connector (`_`), space or
hyphen, spaces turned into hyphens, and `-1`, `-2` ... appended to repeats.

`§` citations. A citation is `§`, an optional space, then a section: a section number (`§ 8`,
`§4.2`) or a section title, which starts with a letter and runs to the first of
`: , ; ( ) [ ] . / | " '`, a backtick, the end of the line or the next `§` (a trailing "and" or
"or" dropped); a `§` followed by anything else (`§ <title>`, in a regular expression) cites nothing.
This file's own examples are not citations. What follows it (`§ Engine
choices, Dealing`, `§ Retiring: the decision ...`) is prose about the section, not checked.
- The cited file: the `*.md` name (or path) written right before the `§`, with only spaces or a
  line break between (`casino.md § Build`, `runner/games/cuajo.md\n    § Deal`); else, in a
  Markdown file, the last name cited before it on the same line, or the file itself
  (`§ Engine choices` in casino.md); elsewhere, the last `*.md` name written before it in the same
  file (`casino.md § Build, § Capture`; `(§ Deadlines)` after `PROTOCOL.md § Messages`).
- A name is found relative to the citing file's folder, then to the repository's root, then as the
  one Markdown file of the repository whose path ends with it (`PROTOCOL.md`, `games/cuajo.md`);
  none, or several, is an error.
- A number resolves to a heading numbered so (`## 8. Faults`). A title resolves to a heading of
  the cited file whose text, less its number, equals it (case aside); or to the one heading it is
  a word-for-word start of (`§ Payments` for "Payments when a player wins"); or it is such a
  heading followed by item numbers, `N` or `N-M` (`§ A hand 9`, `§ Scoring 1-5`), and the
  section holds numbered items of those numbers.
"""

from __future__ import annotations

import os
import re
import unicodedata
from functools import cache
from pathlib import Path

from click.testing import CliRunner

from cardarena.cli import main
from tests.conftest import ROOT

README_LINES = 150
#: folders never searched: build output, dependencies, virtual environments, results
SKIPPED = frozenset({".git", "node_modules", "target", "build", "dist", "__pycache__", ".venv", "venv",
                     ".pytest_cache", ".mypy_cache", "results", "cardarena.egg-info"})
#: files whose `§` citations are checked besides Markdown: code, tests, build and configuration files
CITING_SUFFIXES = (".md", ".py", ".toml", ".js", ".ts", ".c", ".h", ".cpp", ".hpp", ".go", ".rs", ".java",
                   ".rb", ".sh", ".html", ".css", ".txt")
#: guides that need not be one click from README.md: each kit's ten lines (in sample_bots/README.md's table)
SECOND_CLICK = ("sample_bots/*/README.md",)

LINK = re.compile(r"(?<!\!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
NAMED = re.compile(r"((?:[\w.-]+/)*[\w.-]+\.md)(\s*)$")
CITATION = re.compile(r"§ ?(\d+(?:\.\d+)*|[A-Za-z][^§:,;()\[\].\"'`/|\n]*)")
ITEMS = re.compile(r"^(.*?) (\d+)(?:-(\d+))?$")


def files(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """The repository's files with these endings, outside SKIPPED folders (not even walked), in path order."""
    found = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [name for name in subfolders if name not in SKIPPED]
        found += [Path(folder) / name for name in names if name.endswith(suffixes)]
    return sorted(found)


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of a Markdown text outside fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def link_targets(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every link of a Markdown text, outside code blocks and code spans."""
    lines = [(number, re.sub(r"`[^`]*`", "``", line)) for number, line in prose_lines(text)]
    return ([(number, match.group(1)) for number, line in lines for match in LINK.finditer(line)]
            + [(number, match.group(1)) for number, line in lines for match in REFERENCE.finditer(line)])


def heading_text(markdown: str) -> str:
    """A heading's text as GitHub renders it: link targets, code backticks and emphasis gone."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    return re.sub(r"[`*]|(?<!\w)_|_(?!\w)", "", text)


def slug(text: str) -> str:
    """GitHub's anchor for a heading's rendered text."""
    kept = "".join(char for char in text.lower()
                   if unicodedata.category(char)[0] in "LMN" or unicodedata.category(char) == "Pc" or char in " -")
    return kept.replace(" ", "-")


@cache
def headings(path: Path) -> list[tuple[str, int]]:
    """The rendered text of each heading of a Markdown file, with its line number."""
    return [(heading_text(match.group(1)), number) for number, line in prose_lines(path.read_text())
            if (match := HEADING.match(line))]


def anchors(path: Path) -> set[str]:
    """Every anchor GitHub gives the headings of a Markdown file (repeats get -1, -2 ...)."""
    seen: dict[str, int] = {}
    result = set()
    for text, _ in headings(path):
        base = slug(text)
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def link_problems(root: Path) -> list[str]:
    """Every relative link of every Markdown file that leads nowhere: a missing file or heading."""
    problems = []
    for path in files(root, (".md",)):
        for number, target in link_targets(path.read_text()):
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # https:, mailto: ... are not followed
            where = f"{path.relative_to(root)}:{number}: {target}"
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            if not linked.exists():
                problems.append(f"{where}: no such file")
            elif anchor and linked.suffix != ".md":
                problems.append(f"{where}: an anchor into a file that is not Markdown")
            elif anchor and anchor not in anchors(linked):
                problems.append(f"{where}: no heading of {linked.relative_to(root)} has this anchor")
    return problems


def resolve_name(root: Path, citing: Path, name: str, markdown: list[Path]) -> Path | str:
    """The Markdown file a cited name means (see the module's docstring), or why there is none."""
    for folder in (citing.parent, root):
        if (folder / name).is_file():
            return (folder / name).resolve()
    ending = [path for path in markdown if path.relative_to(root).as_posix().endswith(("/" + name.lstrip("./")))
              or path.relative_to(root).as_posix() == name]
    if len(ending) == 1:
        return ending[0].resolve()
    return f"no Markdown file {name}" if not ending else f"{name} is ambiguous ({len(ending)} files)"


def numbered_items(path: Path, heading_line: int) -> set[int]:
    """The numbers of the numbered list items in the section that starts at `heading_line`."""
    numbers = set()
    for number, line in prose_lines(path.read_text()):
        if number <= heading_line:
            continue
        if HEADING.match(line):
            break
        if match := re.match(r"\s*(\d+)\. ", line):
            numbers.add(int(match.group(1)))
    return numbers


def section_problem(path: Path, section: str) -> str | None:
    """Why `section` (a number or a title, as cited) names no section of `path`; None when it does."""
    titled = [(re.sub(r"^\d+(?:\.\d+)*\.? ", "", text).strip().lower(), text, line) for text, line in headings(path)]
    if re.fullmatch(r"\d+(?:\.\d+)*", section):
        if any(re.match(rf"{re.escape(section)}\.? ", text) for _, text, _ in titled):
            return None
        return f"no section numbered {section}"
    wanted = " ".join(section.split()).lower()
    if any(title == wanted for title, _, _ in titled):
        return None
    starting = [line for title, _, line in titled if title.startswith(wanted + " ") or
                (title.startswith(wanted) and not title[len(wanted)].isalnum())]
    if len(starting) == 1:
        return None
    if items := ITEMS.match(wanted):
        title, first, last = items.group(1), int(items.group(2)), int(items.group(3) or items.group(2))
        for candidate, _, line in titled:
            if candidate == title or candidate.startswith(title + " ") or candidate.startswith(title + " ("):
                missing = set(range(first, last + 1)) - numbered_items(path, line)
                return None if not missing else f"section {title!r} has no item {sorted(missing)}"
    return f"no section titled {section!r}" if not starting else f"{section!r} starts {len(starting)} headings"


def citations(root: Path) -> list[tuple[str, Path | str, str]]:
    """Every `§` citation in the repository's documents, code and tests: where it is, the Markdown file
    it cites (or why there is none) and the section, as cited."""
    markdown = files(root, (".md",))
    found = []
    checked = [path for path in files(root, CITING_SUFFIXES) if path.resolve() != Path(__file__).resolve()]
    for path in checked + [root / ".ci" / "run"] * (root / ".ci" / "run").is_file():
        lines = path.read_text(errors="replace").splitlines()
        last_named: str | None = None
        for number, line in enumerate(lines, 1):
            line_named: str | None = None
            position = 0
            for match in CITATION.finditer(line):
                before = line[position:match.start()]
                named = NAMED.search(before) or (NAMED.search(lines[number - 2])
                                                 if not before.strip() and number > 1 else None)
                mentions = re.findall(r"[\w./-]+\.md\b", before)
                if mentions:
                    line_named = last_named = mentions[-1]
                name = named.group(1) if named else line_named if path.suffix == ".md" else last_named
                position = match.end()
                section = re.sub(r"\s+(?:and|or)\s*$", "", match.group(1)).strip()
                target = path.resolve() if name is None and path.suffix == ".md" else (
                    resolve_name(root, path, name, markdown) if name else "no document named before it")
                found.append((f"{path.relative_to(root)}:{number}: § {section}", target, section))
            mentions = re.findall(r"[\w./-]+\.md\b", line[position:])
            if mentions:
                last_named = mentions[-1]
    return found


def citation_problems(root: Path) -> list[str]:
    """Every `§` citation that names no section, with where it is and why."""
    problems = []
    for where, target, section in citations(root):
        if isinstance(target, str):
            problems.append(f"{where}: {target}")
        elif problem := section_problem(target, section):
            problems.append(f"{where}: {target.relative_to(root.resolve())}: {problem}")
    return problems


def test_every_relative_link_and_anchor_resolves():
    assert link_problems(ROOT) == []


def test_every_section_citation_resolves():
    assert len(citations(ROOT)) > 250  # the rules tests alone cite their sections some 200 times
    problems = citation_problems(ROOT)
    assert problems == [], "\n".join(problems)


def test_a_planted_broken_link_anchor_or_citation_is_found(tmp_path):
    """The checks fail where they should: a missing file, a missing heading, a citation of a section
    that does not exist, of an item a section does not have, and of a document nobody wrote."""
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "rules.md").write_text(
        "# Rules\n\n## 2. A hand\n\n1. one\n2. two\n\n## Engine choices\n\n## Is it better? `--sprt`\n\n"
        "Dealing is in § Engine choices, Dealing; see § 2 and § A hand 2.\n")
    (tmp_path / "README.md").write_text(
        "[ok](guide/rules.md#is-it-better---sprt) [ok](guide/rules.md#2-a-hand) [ok](#top)\n"
        "[gone](guide/missing.md) [no anchor](guide/rules.md#deal) `[in code](nowhere.md)`\n\n"
        "# Top\n\nrules.md § Engine choices, and rules.md § Deal; guide/rules.md § 3 and § A hand 3.\n")
    (tmp_path / "bot.py").write_text('"""rules.md § A hand 1-2, § Engine choices (Dealing)."""\n'
                                     '# unknown.md § Deal\n')
    assert link_problems(tmp_path) == [
        "README.md:2: guide/missing.md: no such file",
        "README.md:2: guide/rules.md#deal: no heading of guide/rules.md has this anchor"]
    assert citation_problems(tmp_path) == [
        "README.md:6: § Deal: guide/rules.md: no section titled 'Deal'",
        "README.md:6: § 3: guide/rules.md: no section numbered 3",
        "README.md:6: § A hand 3: guide/rules.md: section 'a hand' has no item [3]",
        "bot.py:2: § Deal: no Markdown file unknown.md"]


def test_slugs_follow_githubs_rules():
    assert slug(heading_text("5. Checking your bot: `cardarena check`")) == "5-checking-your-bot-cardarena-check"
    assert slug(heading_text("Quitlok (Kvitlach) — rules as this project implements them")) == \
        "quitlok-kvitlach--rules-as-this-project-implements-them"
    assert slug(heading_text("Sampling hidden cards (cardarena.search)")) == "sampling-hidden-cards-cardarenasearch"


def test_readme_is_a_front_page_with_the_two_set_up_commands_ci_runs():
    """At most 150 lines; its two set-up commands make a venv and run the main job and the tests, and
    .ci/run ends with the same test command."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= README_LINES
    setup = readme[readme.index("## Set-up: two commands"):]
    block = setup[setup.index("```sh\n") + 6:]
    block = block[:block.index("```")]
    commands = [line for line in block.splitlines() if line and not line.startswith("#")]
    venv = "python3 -m venv .venv && . .venv/bin/activate && python3 -m pip install -e "
    assert commands == [venv + ". && cardarena run", venv + "'.[test]' && python3 -m pytest -q"]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == commands[1].rsplit(" && ", 1)[1] == "python3 -m pytest -q"


def test_every_guide_is_one_click_from_the_readme():
    readme = (ROOT / "README.md").read_text()
    linked = {(ROOT / target.partition("#")[0]).resolve() for _, target in link_targets(readme)}
    guides = [path for path in files(ROOT, (".md",)) if path != ROOT / "README.md"
              and not any(path.relative_to(ROOT).match(pattern) for pattern in SECOND_CLICK)]
    assert [str(path.relative_to(ROOT)) for path in guides if path.resolve() not in linked] == []


def test_the_readmes_example_bot_passes_check(tmp_path, monkeypatch):
    """The ten lines of README.md's example, in the folder it describes, pass `check` (one game)."""
    readme = (ROOT / "README.md").read_text()
    code = readme[readme.index("```python\n") + 10:]
    bot = tmp_path / "my-bot"
    bot.mkdir()
    (bot / "bot.py").write_text(code[:code.index("\n```")] + "\n")
    (bot / "bot.toml").write_text('name = "my-bot"\ncommand = ["python", "bot.py"]\n')
    assert 'name = "my-bot"' in readme and 'command = ["python", "bot.py"]' in readme
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["check", "my-bot", "--games", "knock-rummy", "--games-per-game", "1"])
    assert done.exit_code == 0, done.output
    assert "PASS: my-bot played 1 game without a fault" in done.output


def test_the_bot_guides_table_lists_every_kit_and_each_kit_has_ten_lines():
    """Every bot folder of sample_bots/ is a row of sample_bots/README.md's table (language, msgpack
    library, build, run), and each starter kit's README is at most ten lines ending in `check`."""
    guide = (ROOT / "sample_bots" / "README.md").read_text()
    table = guide[:guide.index("\n## ")]
    rows = dict(re.findall(r"^\| \[`([\w-]+)/`\]\(\1/\) \|(.*)\|$", table, re.M))
    folders = {path.parent.name for path in (ROOT / "sample_bots").glob("*/bot.toml")}
    assert set(rows) == folders
    assert all(len(row.split(" | ")) == 4 and "" not in map(str.strip, row.split(" | ")) for row in rows.values())
    for kit in folders - {"random", "heuristic"}:
        lines = (ROOT / "sample_bots" / kit / "README.md").read_text().rstrip().splitlines()
        assert len(lines) <= 10 and "cardarena check ." in lines[-1], kit
