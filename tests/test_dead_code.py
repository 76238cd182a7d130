"""No public function or method of the package is referenced nowhere: each name a ``def`` in
``workflow/lecode`` gives appears somewhere else in the project (the package, the rules, the
scripts, the benchmarks, the tests or the profiles). A name that is written only where it is
defined is dead code; remove it, or list it in ``HOOKS`` when a library calls it by name.

Any other occurrence of the name counts as a use (the check reads words, not bindings), so a
common name passes whether or not that function is used; what it catches is the function
nobody names.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "workflow" / "lecode"
#: where a use may be written
SOURCES = (
    "workflow/**/*.py",
    "workflow/**/*.smk",
    "Snakefile",
    "scripts/**/*",
    "benchmarks/**/*.py",
    "tests/**/*.py",
    "profiles/**/*",
)
#: names a library calls by name -> the library
HOOKS = {"do_GET": "http.server.BaseHTTPRequestHandler"}
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def public_defs(package: Path) -> list[tuple[str, str]]:
    """``(name, "file:line")`` of every public function and method of the package."""
    out = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
            is_def = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if is_def and not node.name.startswith("_"):
                out.append((node.name, f"{path.relative_to(REPO)}:{node.lineno}"))
    return out


def word_counts(repo: Path) -> Counter[str]:
    words: Counter[str] = Counter()
    for pattern in SOURCES:
        for path in repo.glob(pattern):
            if path.is_file() and "__pycache__" not in path.parts:
                try:
                    words.update(WORD.findall(path.read_text(encoding="utf-8")))
                except UnicodeDecodeError:
                    continue
    return words


def unreferenced(defs: list[tuple[str, str]], words: Counter[str]) -> list[str]:
    """The definitions whose name occurs no more often than it is defined."""
    defined = Counter(name for name, _ in defs)
    return [
        f"{where}: {name}"
        for name, where in defs
        if words[name] <= defined[name] and name not in HOOKS
    ]


def test_no_public_function_is_referenced_nowhere() -> None:
    dead = unreferenced(public_defs(PACKAGE), word_counts(REPO))
    assert not dead, "defined but named nowhere else:\n" + "\n".join(dead)


def test_the_check_finds_a_function_named_only_where_it_is_defined() -> None:
    defs = [("used", "a.py:1"), ("orphan", "a.py:5"), ("twice", "a.py:9"), ("twice", "b.py:2")]
    words = Counter({"used": 2, "orphan": 1, "twice": 2})
    assert unreferenced(defs, words) == ["a.py:5: orphan", "a.py:9: twice", "b.py:2: twice"]
