"""What the registries share: declaration modules found by listing a package, each holding its
declarations in a module-level tuple ``DECLARED`` (the metric registry,
:mod:`lecode.metrics.registry`, and the table registry, :mod:`lecode.report.table_registry`)."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import TypeVar

T = TypeVar("T")


def declaration_modules(package: ModuleType) -> list[str]:
    """The modules of ``package`` (recursively), by name."""
    found = pkgutil.walk_packages(package.__path__, prefix=package.__name__ + ".")
    return sorted(m.name for m in found if not m.ispkg)


def declared_in(name: str, kind: type[T], error: type[Exception]) -> tuple[T, ...]:
    """The ``DECLARED`` tuple of module ``name``; ``error`` naming the module otherwise."""
    module = importlib.import_module(name)
    decls = getattr(module, "DECLARED", None)
    if not isinstance(decls, tuple) or not all(isinstance(d, kind) for d in decls):
        raise error(f"{name}: DECLARED must be a tuple of {kind.__name__}")
    return decls
