"""The manual's references hold: every relative link in README.md, docs/*.md and
benchmarks/README.md reaches an existing file (and heading, for an anchor), every
``configs/*.yaml`` and ``make <target>`` they name exists, and README.md stays a front page."""

from __future__ import annotations

import argparse
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README_MAX_LINES = 300

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
CONFIG = re.compile(r"\bconfigs/[\w.-]+\.ya?ml\b")
BARE_YAML = re.compile(r"[\w.-]+\.ya?ml")
MAKE = re.compile(r"(?:^|[\s;&|(`])make\s+(.*)")
MAKE_TARGET = re.compile(r"[A-Za-z_][\w-]*")
RULE = re.compile(r"^([A-Za-z_][\w.-]*(?:[ \t]+[A-Za-z_][\w.-]*)*)[ \t]*:(?!=)")
PHONY = re.compile(r"^\.PHONY\s*:(.*)$", re.MULTILINE)
LECODE = re.compile(r"(?:^|[/`(])lecode\s+([a-z][a-z-]*)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
#: Top-level folders of the repository: a code span naming a path under one of them names a
#: file or folder that must exist (run outputs live elsewhere: results/, reports/, store/).
REPO_DIRS = (
    "workflow/",
    "tests/",
    "scripts/",
    "profiles/",
    "configs/",
    "benchmarks/",
    "docs/",
    "data/",
)
#: Paths the manual names that a user provides (the released LeCoDe files) or that a target
#: builds (the dataset built from transcripts, ``make dataset``).
USER_PATHS = frozenset({"data/lecode/", "data/built/"})
PLACEHOLDER = re.compile(r"[<>…*{}$]|\.\.\.|NNN")


def manual_files(root: Path = REPO) -> list[Path]:
    """The pages this test covers: README.md, docs/*.md and benchmarks/README.md."""
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    pages.append(root / "benchmarks" / "README.md")
    return [p for p in pages if p.is_file()]


def split_code(text: str) -> tuple[list[str], list[str]]:
    """(prose lines, code lines): fenced blocks are code, everything else prose."""
    prose: list[str] = []
    code: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            prose.append("")  # a fence ends the paragraph around it
            continue
        (code if in_fence else prose).append(line)
    return prose, code


def paragraphs(prose: list[str]) -> list[str]:
    """Prose lines joined into paragraphs (a code span or link may continue on the next line)."""
    out: list[str] = []
    current: list[str] = []
    for line in [*prose, ""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            out.append(" ".join(current))
            current = []
    return out


def code_spans(text: str) -> list[str]:
    """The content of every code span in the prose of ``text``."""
    prose, _ = split_code(text)
    return [m.group(2) for para in paragraphs(prose) for m in CODE_SPAN.finditer(para)]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: markup dropped, lower case, punctuation removed
    (letters, digits, ``_`` and ``-`` kept, CJK included), spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "").lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in ("L", "N"))
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of ``page`` (repeated headings get -1, -2, ... as on GitHub)."""
    prose, _ = split_code(page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in prose:
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(text: str) -> Iterator[str]:
    """Link targets in prose (not in code blocks or code spans)."""
    prose, _ = split_code(text)
    for para in paragraphs(prose):
        # code spans inside link text keep the link: drop only their content
        yield from LINK.findall(CODE_SPAN.sub("", para))


def link_problems(page: Path, root: Path = REPO) -> list[str]:
    problems = []
    for target in links(page.read_text(encoding="utf-8")):
        if SCHEME.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        where = f"{page.relative_to(root)}: link {target!r}"
        if not dest.exists():
            problems.append(f"{where}: {path_part} does not exist")
        elif anchor:
            if dest.suffix != ".md":
                problems.append(f"{where}: an anchor into a file that is not Markdown")
            elif anchor not in anchors(dest):
                problems.append(f"{where}: {dest.name} has no heading with anchor #{anchor}")
    return problems


def makefile_targets(makefile: Path) -> set[str]:
    """Explicit targets of the Makefile: rule heads and .PHONY names (variables excluded)."""
    text = makefile.read_text(encoding="utf-8")
    targets: set[str] = set()
    for line in text.splitlines():
        m = RULE.match(line)
        if m:
            targets.update(m.group(1).split())
    for names in PHONY.findall(text):
        targets.update(names.split())
    return targets


def named_make_targets(text: str) -> Iterator[str]:
    """Targets of every ``make ...`` command in code (blocks and spans): the words after
    ``make`` up to the first variable assignment, option or comment."""
    _, code = split_code(text)
    spans = code_spans(text)
    for line in code + spans:
        for m in MAKE.finditer(line):
            for word in m.group(1).split():
                if not MAKE_TARGET.fullmatch(word):
                    break
                yield word


def repository_paths(text: str) -> Iterator[str]:
    """Paths under the repository's folders named in code spans and code blocks,
    placeholders such as ``<step>`` or ``NNN`` excluded."""
    _, code = split_code(text)
    spans = code_spans(text)
    for chunk in spans + code:
        for word in chunk.split():
            path = word.strip("()[],;:'\"")
            if path.startswith(REPO_DIRS) and not PLACEHOLDER.search(path):
                yield path


def named_lecode_commands(text: str) -> Iterator[str]:
    """Subcommands of every ``lecode ...`` command in code (blocks and spans)."""
    _, code = split_code(text)
    spans = code_spans(text)
    for line in code + spans:
        yield from LECODE.findall(line)


def lecode_subcommands() -> set[str]:
    from lecode.cli import build_parser

    return {
        name
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    }


def reference_problems(page: Path, root: Path = REPO) -> list[str]:
    text = page.read_text(encoding="utf-8")
    name = page.relative_to(root)
    problems = [
        f"{name}: {ref} does not exist"
        for ref in sorted(set(CONFIG.findall(text)))
        if not (root / ref).is_file()
    ]
    problems += [
        f"{name}: `{ref}` does not exist"
        for ref in sorted(set(repository_paths(text)))
        if not any(ref.startswith(u) or ref == u.rstrip("/") for u in USER_PATHS)
        and not (root / ref).exists()
    ]
    # a YAML file named on its own (`paper.yaml`) is a configuration or a root file
    bare = set(code_spans(text))
    problems += [
        f"{name}: `{ref}` is neither in configs/ nor at the repository root"
        for ref in sorted(r for r in bare if BARE_YAML.fullmatch(r))
        if not (root / "configs" / ref).is_file() and not (root / ref).is_file()
    ]
    targets = makefile_targets(root / "Makefile")
    problems += [
        f"{name}: `make {t}` is not a target of the Makefile"
        for t in sorted(set(named_make_targets(text)))
        if t not in targets
    ]
    return problems


# --------------------------------------------------------------------------- the repository


@pytest.mark.parametrize("page", manual_files(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_reaches_a_file_and_heading(page: Path) -> None:
    problems = link_problems(page)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", manual_files(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_named_config_and_make_target_exists(page: Path) -> None:
    problems = reference_problems(page)
    assert not problems, "\n".join(problems)


def test_every_named_lecode_command_exists() -> None:
    commands = lecode_subcommands()
    problems = [
        f"{page.relative_to(REPO)}: `lecode {name}` is not a subcommand"
        for page in manual_files()
        for name in sorted(set(named_lecode_commands(page.read_text(encoding="utf-8"))))
        if name not in commands
    ]
    assert not problems, "\n".join(problems)


def test_readme_is_a_front_page() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_the_manual_has_a_table_of_contents_linking_every_page() -> None:
    index = REPO / "docs" / "index.md"
    linked = {
        (index.parent / t.partition("#")[0]).resolve()
        for t in links(index.read_text(encoding="utf-8"))
        if not SCHEME.match(t) and t.partition("#")[0]
    }
    pages = {p.resolve() for p in (REPO / "docs").glob("*.md")} - {index.resolve()}
    assert sorted(p.name for p in pages - linked) == []


# --------------------------------------------------------------------------- the checks fail


def test_slugs_follow_githubs_rules() -> None:
    assert slug("Where a number comes from: `lecode explain`") == (
        "where-a-number-comes-from-lecode-explain"
    )
    assert slug("Reading Table 4, the audit and the noise report") == (
        "reading-table-4-the-audit-and-the-noise-report"
    )
    assert slug("Kubernetes (untested)") == "kubernetes-untested"
    assert slug("The paper's experiment: `configs/paper.yaml`") == (
        "the-papers-experiment-configspaperyaml"
    )
    assert slug("a_b 中文") == "a_b-中文"


def test_broken_links_names_and_targets_are_reported(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text(
        "VAR := x\nFLAG ?= 1\n.PHONY: all_tables test\n\nall_tables: env\n\techo\n"
        "env: $(VENV)/.installed\n",
        encoding="utf-8",
    )
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "paper.yaml").write_text("{}\n", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.md").write_text("# Page\n\n## Two words\n\n## Two words\n", encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(
        "# Front\n\n"
        "[ok](docs/page.md) [ok too](docs/page.md#two-words-1) [self](#front)\n"
        "[gone](docs/missing.md) [bad anchor](docs/page.md#three-words) [web](https://x.org/a)\n"
        "[`configs/paper.yaml`](configs/paper.yaml) and `configs/paper-zero-shot.yaml`\n"
        "`paper.yaml` (in configs/), `params.yml` and `x.yaml` (nowhere)\n"
        "`make all_tables REPLAY=0`, `make env test`, to make sure, `[not](a/link.md)`\n"
        "`configs/` `tests/gone.py` `workflow/rules/<rule>.smk` `data/lecode/`\n"
        "a command cut by the line's end, `make all_tables\nnolonger`, and a [link cut by\n"
        "it](docs/cut.md)\n"
        "```bash\nmake nosuch  # comment\n[also not](b/link.md)\n```\n",
        encoding="utf-8",
    )
    assert link_problems(readme, tmp_path) == [
        "README.md: link 'docs/missing.md': docs/missing.md does not exist",
        "README.md: link 'docs/page.md#three-words': page.md has no heading with anchor "
        "#three-words",
        "README.md: link 'docs/cut.md': docs/cut.md does not exist",
    ]
    assert reference_problems(readme, tmp_path) == [
        "README.md: configs/paper-zero-shot.yaml does not exist",
        "README.md: `configs/paper-zero-shot.yaml` does not exist",
        "README.md: `tests/gone.py` does not exist",
        "README.md: `params.yml` is neither in configs/ nor at the repository root",
        "README.md: `x.yaml` is neither in configs/ nor at the repository root",
        "README.md: `make nolonger` is not a target of the Makefile",
        "README.md: `make nosuch` is not a target of the Makefile",
    ]
    assert makefile_targets(tmp_path / "Makefile") == {"all_tables", "test", "env"}
    text = "`lecode explain t3` and\n```bash\n.venv/bin/lecode frobnicate\n```\nlecode decides"
    assert sorted(named_lecode_commands(text)) == ["explain", "frobnicate"]
