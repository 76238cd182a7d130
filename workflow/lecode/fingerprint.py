"""Code fingerprints of the pipeline steps, correct by construction.

A step's fingerprint covers every module of the ``lecode`` package that its entry module can
import (the transitive closure over ``import`` statements anywhere in a module, lazy imports
included, plus the ``__init__`` of each package on the way), the step's Snakemake script, and
the prompt templates its roles read. Nothing is listed by hand, so a new helper module is
covered the moment a step imports it, and editing a module changes the fingerprint of exactly
the steps that import it.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from functools import cache
from pathlib import Path

PACKAGE = "lecode"
PACKAGE_DIR = Path(__file__).resolve().parent
WORKFLOW_DIR = PACKAGE_DIR.parent
SCRIPTS_DIR = WORKFLOW_DIR / "scripts"


def module_file(module: str) -> Path | None:
    """The source file of a ``lecode`` module, or None when it is not one."""
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    rel = Path(*module.split(".")[1:])
    pkg = PACKAGE_DIR / rel / "__init__.py"
    if pkg.is_file():
        return pkg
    mod = (PACKAGE_DIR / rel).with_suffix(".py")
    return mod if mod.is_file() else None


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


@cache
def direct_imports(module: str) -> frozenset[str]:
    """``lecode`` modules named by the import statements of ``module`` (at any depth)."""
    path = module_file(module)
    if path is None:
        return frozenset()
    tree = ast.parse(path.read_bytes(), filename=str(path))
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_pkg else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            # ``from lecode.agents import base`` imports the submodule lecode.agents.base.
            found.update(f"{base}.{a.name}" for a in node.names if a.name != "*")
    return frozenset(m for m in found if module_file(m) is not None)


@cache
def closure(entry: str) -> tuple[str, ...]:
    """Every ``lecode`` module that importing ``entry`` can load, sorted."""
    seen: set[str] = set()
    todo = [entry]
    while todo:
        m = todo.pop()
        for name in (m, *_parents(m)):
            if name in seen or module_file(name) is None:
                continue
            seen.add(name)
            todo.extend(direct_imports(name))
    return tuple(sorted(seen))


def files_of(modules: Iterable[str]) -> list[Path]:
    return sorted({p for m in modules if (p := module_file(m)) is not None})


def digest_files(files: Iterable[Path], root: Path | None = None) -> str:
    """sha256 over (path relative to ``workflow/``, bytes) of each file, sorted; 16 hex."""
    root = WORKFLOW_DIR if root is None else root
    h = hashlib.sha256()
    for f in sorted(set(files)):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


@cache
def step_code(step: str) -> str:
    """Fingerprint of step ``step``: its entry module ``lecode.steps.<step>``'s import
    closure and its script ``workflow/scripts/<step>.py``."""
    files = files_of(closure(f"{PACKAGE}.steps.{step}"))
    script = SCRIPTS_DIR / f"{step}.py"
    if script.is_file():
        files.append(script)
    return digest_files(files)
