"""The worked examples of the extension pages run: each page's module blocks are written into a
copy of the package, its test blocks run there, and the new metric or table is in its registry.

A block is marked by the comment line before its fence: ``<!-- file: <path> -->`` (a module,
written at that path of the copy) or ``<!-- test -->`` (test code, run with pytest).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = ("docs/extending-metrics.md", "docs/extending-tables.md")
MARK = re.compile(r"^<!-- (?:file: (?P<path>\S+)|(?P<test>test)) -->$")

#: Runs in the copy: every documented module's declarations are in their registry.
PROBE = """
import importlib
from pathlib import Path

import lecode
from lecode.metrics import registry
from lecode.metrics.declaration import MetricDeclaration
from lecode.report import table_registry

MODULES = {modules!r}


def test_the_copy_is_imported() -> None:
    assert Path(lecode.__file__).resolve().is_relative_to(Path({root!r}).resolve())


def test_each_documented_declaration_is_registered() -> None:
    for name in MODULES:
        for d in importlib.import_module(name).DECLARED:
            if isinstance(d, MetricDeclaration):
                assert registry.get(d.key) is d
                assert d.run_example() == d.example.expected, d.example.why
            else:
                assert table_registry.get(d.name) is d
"""


def doc_blocks(page: Path) -> list[tuple[str, str]]:
    """``(path or "test", code)`` of each marked fenced block of ``page``."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i].strip())
        if m is None:
            i += 1
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            raise ValueError(f"{page}:{i + 1}: a block mark without a fenced block after it")
        end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
        out.append((m.group("path") or "test", "\n".join(lines[i + 2 : end]) + "\n"))
        i = end + 1
    return out


def _module_name(path: str) -> str:
    rel = Path(path).relative_to("workflow").with_suffix("")
    return ".".join(rel.parts)


@pytest.mark.parametrize("page", PAGES)
def test_each_extension_page_has_a_module_and_a_test(page: str) -> None:
    kinds = [k for k, _ in doc_blocks(REPO / page)]
    assert "test" in kinds and any(k.startswith("workflow/lecode/") for k in kinds), kinds


def test_the_worked_examples_run_in_a_copy_of_the_package(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(
        REPO / "workflow",
        copy / "workflow",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    tests = tmp_path / "doc_tests"
    tests.mkdir()
    modules: list[str] = []
    for page in PAGES:
        stem = Path(page).stem.replace("-", "_")
        for n, (kind, code) in enumerate(doc_blocks(REPO / page)):
            if kind == "test":
                (tests / f"test_{stem}_{n}.py").write_text(code, encoding="utf-8")
                continue
            target = copy / kind
            assert not target.exists(), f"{page}: {kind} would overwrite a shipped file"
            target.write_text(code, encoding="utf-8")
            modules.append(_module_name(kind))
    probe = PROBE.format(modules=modules, root=str(copy / "workflow"))
    (tests / "test_probe.py").write_text(probe, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(copy / "workflow"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    # the probe, and one test per page at least
    assert re.search(r"(\d+) passed", done.stdout) and int(
        re.search(r"(\d+) passed", done.stdout).group(1)  # type: ignore[union-attr]
    ) >= 2 + len(PAGES)
