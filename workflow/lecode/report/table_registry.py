"""Every metrics table, collected from the modules of :mod:`lecode.report.declared`.

As the metric registry (:mod:`lecode.metrics.registry`): the modules are found by listing the
package (no import statement names them), each holding a ``DECLARED`` tuple of
:class:`~lecode.report.tabledecl.TableDeclaration`; :data:`TABLES` is ordered by ``order``.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType

from lecode.registries import declaration_modules as modules_of
from lecode.registries import declared_in
from lecode.report import declared
from lecode.report.tabledecl import TableDeclaration


class TableRegistryError(ValueError):
    """A table declaration module or declaration is malformed; names the module and field."""


def declaration_modules(package: ModuleType = declared) -> list[str]:
    """The modules of ``package`` (recursively), by name."""
    return modules_of(package)


def _declared_in(name: str) -> tuple[TableDeclaration, ...]:
    return declared_in(name, TableDeclaration, TableRegistryError)


#: Names the tables step writes besides the declared tables: a declaration may not take them.
RESERVED = frozenset({"table2", "usage", "audit", "robustness", "metrics", "table4"})


def collect(modules: Iterable[str]) -> tuple[TableDeclaration, ...]:
    """The declarations of ``modules``, ordered by ``order``; names and orders must be unique."""
    by_name: dict[str, str] = {}
    by_order: dict[int, str] = {}
    out: list[TableDeclaration] = []
    for module in modules:
        for d in _declared_in(module):
            if d.name in RESERVED:
                raise TableRegistryError(f"{module}: table name {d.name!r} is reserved")
            if d.name in by_name:
                raise TableRegistryError(
                    f"{module}: table {d.name!r} is declared in {by_name[d.name]} too"
                )
            if d.order in by_order:
                raise TableRegistryError(
                    f"{module}: table {d.name!r} has order {d.order}, as {by_order[d.order]!r} does"
                )
            by_name[d.name] = module
            by_order[d.order] = d.name
            out.append(d)
    return tuple(sorted(out, key=lambda d: d.order))


#: Every declared table, in order.
TABLES: tuple[TableDeclaration, ...] = collect(declaration_modules())


def names() -> tuple[str, ...]:
    return tuple(d.name for d in TABLES)


def get(name: str) -> TableDeclaration:
    """The declaration of ``name``; :class:`KeyError` lists the declared tables."""
    for d in TABLES:
        if d.name == name:
            return d
    raise KeyError(f"no table {name!r}; declared: {', '.join(names())}")


def tags_used() -> set[str]:
    """The metric tags the declared tables choose their columns by."""
    return {t for d in TABLES for t in d.columns.tags}
