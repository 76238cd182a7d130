"""Code fingerprints of the pipeline steps, correct by construction.

A step's fingerprint covers every module of the ``lecode`` package that its entry module can
import (the transitive closure over ``import`` statements anywhere in a module, lazy imports
included, plus the ``__init__`` of each package on the way, plus whole packages that declare
``DISCOVERY = "all"``), and the Snakemake script every step rule runs. Nothing is listed by
hand, so a new helper module is covered the moment a step imports it, and editing a module
changes the fingerprint of exactly the steps that import it.

Each file enters as its path relative to ``workflow/`` and its *normalised* syntax tree:
docstrings and other bare string statements are dropped and comments, blank lines and layout
are never part of a syntax tree, so only a change of what the code does (a changed string
literal or error message included) changes a fingerprint.

Files are read through a :class:`CodeTree`: by default the installed ``workflow/`` directory;
:func:`reading` makes another tree (another checkout, or one file set taken from a second
tree) the one every function of this module reads, which is how ``lecode plan --diff``
plans a git ref and the working tree with the same code.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

PACKAGE = "lecode"
PACKAGE_DIR = Path(__file__).resolve().parent
WORKFLOW_DIR = PACKAGE_DIR.parent
SCRIPTS_DIR = WORKFLOW_DIR / "scripts"
#: The one Snakemake script of every step rule, relative to ``workflow/``.
STEP_SCRIPT = "scripts/step.py"
#: values of a package's ``DISCOVERY`` constant
DISCOVERY_ALL = "all"
DISCOVERY_PER_JOB = "per_job"


class FingerprintError(ValueError):
    """A file of the tree cannot be fingerprinted; the message names it."""


# --------------------------------------------------------------------------- one file


@dataclass(frozen=True)
class Analysis:
    """What the fingerprints need from one Python file."""

    #: sha256 of the normalised syntax tree
    digest: str
    #: ``(level, module, imported names)`` of each import statement (``import a.b``: level
    #: -1, module ``a.b``, no names), at any depth
    imports: tuple[tuple[int, str, tuple[str, ...]], ...]
    #: the module-level ``DISCOVERY`` constant ("" when not assigned)
    discovery: str


Imports = list[tuple[int, str, tuple[str, ...]]]


def _is_bare_string(node: object) -> bool:
    """A docstring, or another string statement: it does nothing when run."""
    return (
        type(node) is ast.Expr
        and type(node.value) is ast.Constant
        and isinstance(node.value.value, str)
    )


def _dump(node: object, out: list[str], imports: Imports) -> None:
    """A canonical text of a syntax tree, in one pass: node types and fields, no positions,
    bare string statements (docstrings) left out. Fields that are None or empty are left out
    too, so the text does not depend on fields a newer Python adds. Import statements are
    collected into ``imports`` on the way."""
    cls = type(node)
    if cls is ast.Constant:
        assert isinstance(node, ast.Constant)
        kind = f",{node.kind}" if node.kind else ""
        out.append(f"Constant({type(node.value).__name__}:{node.value!r}{kind})")
        return
    if isinstance(node, ast.AST):
        if cls is ast.Import:
            assert isinstance(node, ast.Import)
            imports += [(-1, a.name, ()) for a in node.names]
        elif cls is ast.ImportFrom:
            assert isinstance(node, ast.ImportFrom)
            imports.append((node.level, node.module or "", tuple(a.name for a in node.names)))
        out.append(cls.__name__ + "(")
        for name in node._fields:
            value = getattr(node, name, None)
            if value is None or (type(value) is list and not value):
                continue
            out.append(name + "=")
            _dump(value, out, imports)
            out.append(",")
        out.append(")")
    elif cls is list:
        assert isinstance(node, list)
        out.append("[")
        for item in node:
            if not _is_bare_string(item):
                _dump(item, out, imports)
                out.append(",")
        out.append("]")
    else:
        out.append(f"{cls.__name__}:{node!r}")


def _discovery(tree: ast.Module, name: str) -> str:
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        if not any(isinstance(t, ast.Name) and t.id == "DISCOVERY" for t in targets):
            continue
        if not (
            isinstance(value, ast.Constant) and value.value in (DISCOVERY_ALL, DISCOVERY_PER_JOB)
        ):
            shown = ast.unparse(value) if value is not None else "nothing"
            raise FingerprintError(
                f"{name}: DISCOVERY must be the literal {DISCOVERY_ALL!r} or "
                f"{DISCOVERY_PER_JOB!r}, not {shown}"
            )
        return str(value.value)
    return ""


@lru_cache(maxsize=4096)
def analyse(source: bytes, name: str = "<source>") -> Analysis:
    """Normalised digest, imports and discovery rule of one Python file (cached by content)."""
    try:
        tree = ast.parse(source, filename=name)
    except SyntaxError as exc:
        raise FingerprintError(f"{name}: cannot be parsed ({exc.msg}, line {exc.lineno})") from None
    imports: Imports = []
    out: list[str] = []
    _dump(tree, out, imports)
    discovery = _discovery(tree, name)
    digest = hashlib.sha256("".join(out).encode("utf-8")).hexdigest()
    return Analysis(digest=digest, imports=tuple(imports), discovery=discovery)


def normalised_digest(source: bytes, name: str = "<source>") -> str:
    """sha256 of the normalised syntax tree of ``source`` (comments and docstrings ignored)."""
    return analyse(source, name).digest


# --------------------------------------------------------------------------- one tree


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


class CodeTree:
    """The ``lecode`` package and the Snakemake scripts under one ``workflow/`` directory.

    ``overlay`` maps paths relative to ``root`` to another ``workflow/`` directory that those
    files are read from instead (a file missing there is missing in this tree). A tree is
    read once: make a new one after editing its files.
    """

    def __init__(self, root: str | Path, overlay: Mapping[str, Path] | None = None) -> None:
        self.root = Path(root).resolve()
        self.overlay = {rel: Path(base).resolve() for rel, base in (overlay or {}).items()}
        self._bytes: dict[str, bytes | None] = {}
        self._module_rel: dict[str, str | None] = {}
        self._imports: dict[str, frozenset[str]] = {}
        self._closures: dict[str, tuple[str, ...]] = {}
        self._steps: dict[str, str] = {}
        self._step_modules: dict[str, str] | None = None

    def with_files_from(self, other: CodeTree, rels: Iterable[str]) -> CodeTree:
        """This tree with the files ``rels`` (relative to ``workflow/``) as ``other`` has them."""
        return CodeTree(self.root, {**self.overlay, **{r: other.source_of(r) for r in rels}})

    def source_of(self, rel: str) -> Path:
        """The ``workflow/`` directory the file ``rel`` is read from."""
        return self.overlay.get(rel, self.root)

    # -- files -----------------------------------------------------------------------------

    def read(self, rel: str) -> bytes | None:
        """The bytes of ``rel`` (relative to ``workflow/``), or None when it does not exist."""
        if rel not in self._bytes:
            path = self.source_of(rel) / rel
            self._bytes[rel] = path.read_bytes() if path.is_file() else None
        return self._bytes[rel]

    def exists(self, rel: str) -> bool:
        return self.read(rel) is not None

    def python_files(self, under: str) -> list[str]:
        """Every ``.py`` file below the directory ``under`` (relative to ``workflow/``)."""
        found = {
            p.relative_to(self.root).as_posix()
            for p in (self.root / under).rglob("*.py")
            if "__pycache__" not in p.parts
        }
        found |= {r for r in self.overlay if r.startswith(under.rstrip("/") + "/")}
        return sorted(r for r in found if r.endswith(".py") and self.exists(r))

    def file_digest(self, rel: str) -> str:
        """Normalised digest of the Python file ``rel``."""
        raw = self.read(rel)
        if raw is None:
            raise FingerprintError(f"{rel}: no such file under {self.source_of(rel)}")
        return normalised_digest(raw, rel)

    def digest(self, rels: Iterable[str]) -> str:
        """sha256 over (path relative to ``workflow/``, normalised digest) of each Python
        file, sorted by path; 16 hex."""
        h = hashlib.sha256()
        for rel in sorted(set(rels)):
            h.update(rel.encode() + b"\0" + self.file_digest(rel).encode() + b"\0")
        return h.hexdigest()[:16]

    # -- modules ---------------------------------------------------------------------------

    def module_rel(self, module: str) -> str | None:
        """The file of a ``lecode`` module relative to ``workflow/``, or None."""
        if module not in self._module_rel:
            rel: str | None = None
            if module == PACKAGE or module.startswith(PACKAGE + "."):
                stem = "/".join(module.split("."))
                for candidate in (f"{stem}/__init__.py", f"{stem}.py"):
                    if self.exists(candidate):
                        rel = candidate
                        break
            self._module_rel[module] = rel
        return self._module_rel[module]

    def module_file(self, module: str) -> Path | None:
        rel = self.module_rel(module)
        return None if rel is None else self.source_of(rel) / rel

    def _analysis(self, module: str) -> Analysis | None:
        rel = self.module_rel(module)
        raw = None if rel is None else self.read(rel)
        return None if raw is None else analyse(raw, rel or module)

    def discovery(self, module: str) -> str:
        """The ``DISCOVERY`` rule of package ``module`` ("" for none or a plain module)."""
        rel = self.module_rel(module)
        if rel is None or not rel.endswith("/__init__.py"):
            return ""
        a = self._analysis(module)
        return a.discovery if a else ""

    def submodules(self, package: str) -> list[str]:
        """Every module below ``package`` (recursively), without the package itself."""
        rel = self.module_rel(package)
        if rel is None or not rel.endswith("/__init__.py"):
            return []
        out = []
        for f in self.python_files(rel.rsplit("/", 1)[0]):
            parts = f.removesuffix(".py").split("/")
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join(parts)
            if name != package:
                out.append(name)
        return out

    def direct_imports(self, module: str) -> frozenset[str]:
        """``lecode`` modules named by the import statements of ``module`` (at any depth)."""
        if module in self._imports:
            return self._imports[module]
        a = self._analysis(module)
        found: set[str] = set()
        is_pkg = (self.module_rel(module) or "").endswith("/__init__.py")
        for level, base, names in a.imports if a else ():
            if level < 0:
                found.add(base)
                continue
            if level:
                anchor = module.split(".")
                anchor = anchor if is_pkg else anchor[:-1]
                anchor = anchor[: len(anchor) - (level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            # ``from lecode.agents import base`` imports the submodule lecode.agents.base.
            found.update(f"{base}.{n}" for n in names if n != "*")
        result = frozenset(m for m in found if self.module_rel(m) is not None)
        self._imports[module] = result
        return result

    def closure(self, entry: str) -> tuple[str, ...]:
        """Every ``lecode`` module that importing ``entry`` can load, sorted: imports followed
        transitively, the packages on the way, and all modules of a ``DISCOVERY = "all"``
        package once that package is reached (a ``"per_job"`` package adds none of its
        modules by itself; what is imported by name is still followed)."""
        if entry in self._closures:
            return self._closures[entry]
        seen: set[str] = set()
        todo = [entry]
        while todo:
            m = todo.pop()
            for name in (m, *_parents(m)):
                if name in seen or self.module_rel(name) is None:
                    continue
                seen.add(name)
                todo.extend(self.direct_imports(name))
                if self.discovery(name) == DISCOVERY_ALL:
                    todo.extend(self._discovered(name))
        result = tuple(sorted(seen))
        self._closures[entry] = result
        return result

    def _discovered(self, package: str) -> list[str]:
        """The modules of an ``all`` package, not descending into ``per_job`` subpackages."""
        out = []
        for m in self.submodules(package):
            inner = [p for p in _parents(m) if len(p) > len(package)]
            if any(self.discovery(p) == DISCOVERY_PER_JOB for p in inner):
                continue
            out.append(m)
        return out

    # -- digests ---------------------------------------------------------------------------

    def code_digest(self, modules: Iterable[str]) -> str:
        """Normalised digest of the files of the given ``lecode`` modules (not their closure)."""
        rels = []
        for m in modules:
            rel = self.module_rel(m)
            if rel is None:
                raise FingerprintError(f"{m}: not a module of the {PACKAGE} package")
            rels.append(rel)
        return self.digest(rels)

    def steps(self) -> dict[str, str]:
        """Every step of the pipeline -> its entry module: a module ``<step>.py`` in the
        ``steps`` package of the study that declares it (``lecode/<study>/steps/``)."""
        if self._step_modules is None:
            found: dict[str, list[str]] = {}
            for rel in self.python_files(PACKAGE):
                parts = rel.removesuffix(".py").split("/")
                if len(parts) >= 3 and parts[-2] == "steps" and parts[-1] != "__init__":
                    found.setdefault(parts[-1], []).append(".".join(parts))
            twice = {s: m for s, m in found.items() if len(m) > 1}
            if twice:
                raise FingerprintError(f"steps declared twice: {twice}")
            self._step_modules = {s: m[0] for s, m in sorted(found.items())}
        return self._step_modules

    def step_module(self, step: str) -> str:
        """The entry module of step ``step``."""
        module = self.steps().get(step)
        if module is None:
            raise FingerprintError(f"no step {step!r}: no module lecode/<study>/steps/{step}.py")
        return module

    def step_files(self, step: str) -> list[str]:
        """The files of step ``step``'s fingerprint, relative to ``workflow/``."""
        rels = [r for m in self.closure(self.step_module(step)) if (r := self.module_rel(m))]
        if self.exists(STEP_SCRIPT):
            rels.append(STEP_SCRIPT)
        return sorted(set(rels))

    def step_code(self, step: str) -> str:
        """Fingerprint of step ``step``: its entry module's closure (:meth:`step_module`) and
        the script every step rule runs (``workflow/scripts/step.py``)."""
        if step not in self._steps:
            self._steps[step] = self.digest(self.step_files(step))
        return self._steps[step]

    def read_path(self, path: Path) -> bytes | None:
        """The bytes of ``path`` as this tree has them: a path inside the installed
        ``workflow/`` directory is read from this tree; any other path as it is."""
        path = path.resolve()
        if path.is_relative_to(WORKFLOW_DIR):
            return self.read(path.relative_to(WORKFLOW_DIR).as_posix())
        return path.read_bytes() if path.is_file() else None


# --------------------------------------------------------------------------- the active tree

_ACTIVE: ContextVar[CodeTree | None] = ContextVar("lecode_code_tree", default=None)


@cache
def installed() -> CodeTree:
    """The tree this package was imported from."""
    return CodeTree(WORKFLOW_DIR)


def active() -> CodeTree:
    """The tree the functions below read: :func:`installed` unless :func:`reading` says."""
    return _ACTIVE.get() or installed()


@contextmanager
def reading(tree: CodeTree) -> Iterator[CodeTree]:
    """Within the block, fingerprints and :func:`digest_files` read ``tree``."""
    token = _ACTIVE.set(tree)
    try:
        yield tree
    finally:
        _ACTIVE.reset(token)


def module_file(module: str) -> Path | None:
    """The source file of a ``lecode`` module, or None when it is not one."""
    return active().module_file(module)


def direct_imports(module: str) -> frozenset[str]:
    return active().direct_imports(module)


def closure(entry: str) -> tuple[str, ...]:
    return active().closure(entry)


def code_digest(modules: Iterable[str]) -> str:
    """Normalised digest of the given ``lecode`` modules' files (16 hex)."""
    return active().code_digest(modules)


def step_code(step: str) -> str:
    return active().step_code(step)


def step_module(step: str) -> str:
    """The entry module of step ``step`` (``lecode.<study>.steps.<step>``)."""
    return active().step_module(step)


def steps() -> dict[str, str]:
    """Every step -> its entry module."""
    return active().steps()


MISSING = b"\0missing\0"


def digest_files(files: Iterable[Path], root: Path | None = None) -> str:
    """sha256 over (path relative to ``root``, bytes) of each file, sorted; 16 hex. For data
    such as prompt templates, byte for byte; files of the installed ``workflow/`` directory
    are read from the active tree (a file that tree lacks hashes as missing)."""
    root = WORKFLOW_DIR if root is None else root
    tree = active()
    h = hashlib.sha256()
    for f in sorted(set(files)):
        raw = tree.read_path(f)
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + (raw or MISSING) + b"\0")
    return h.hexdigest()[:16]
