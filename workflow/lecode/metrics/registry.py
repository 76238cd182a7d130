"""Every per-dialogue metric, collected from the modules of :mod:`lecode.metrics.declared`.

The modules are found by listing the package (no import statement names them), each holding a
``DECLARED`` tuple. :data:`METRICS` is ordered by each declaration's ``order``; tables and
figures choose their columns with :func:`with_tag`, never by position.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import ModuleType

from lecode.columns import Metric
from lecode.metrics import declared
from lecode.metrics.declaration import TAGS, MetricDeclaration
from lecode.registries import declaration_modules as modules_of
from lecode.registries import declared_in


class RegistryError(ValueError):
    """A declaration module or declaration is malformed; names the module and field."""


def declaration_modules(package: ModuleType = declared) -> list[str]:
    """The modules of ``package`` (recursively), by name."""
    return modules_of(package)


def _declared_in(name: str) -> tuple[MetricDeclaration, ...]:
    return declared_in(name, MetricDeclaration, RegistryError)


def collect(modules: Iterable[str]) -> tuple[MetricDeclaration, ...]:
    """The declarations of ``modules``, ordered by ``order``; keys and orders must be unique."""
    by_key: dict[str, str] = {}
    by_order: dict[int, str] = {}
    out: list[MetricDeclaration] = []
    for name in modules:
        for d in _declared_in(name):
            if d.key in by_key:
                raise RegistryError(f"{name}: metric {d.key!r} is declared in {by_key[d.key]} too")
            if d.order in by_order:
                raise RegistryError(
                    f"{name}: metric {d.key!r} has order {d.order}, as {by_order[d.order]!r} does"
                )
            by_key[d.key] = name
            by_order[d.order] = d.key
            out.append(d)
    return tuple(sorted(out, key=lambda d: d.order))


#: Every declared metric, in registry order.
METRICS: tuple[MetricDeclaration, ...] = collect(declaration_modules())
_BY_KEY: dict[str, MetricDeclaration] = {m.key: m for m in METRICS}


def get(key: str) -> MetricDeclaration:
    """The declaration of ``key``; :class:`KeyError` lists the declared keys."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"no metric {key!r}; declared: {', '.join(_BY_KEY)}") from None


def find(key: str) -> MetricDeclaration | None:
    """The declaration of ``key``, or None for a column that is no declared metric."""
    return _BY_KEY.get(key)


def with_tag(tag: str) -> tuple[MetricDeclaration, ...]:
    """The metrics whose ``tags`` name ``tag``, in registry order."""
    if tag not in TAGS:
        raise ValueError(f"unknown tag {tag!r}; known: {', '.join(TAGS)}")
    return tuple(m for m in METRICS if tag in m.tags)


def need_witness(need: str) -> str | None:
    """A metric that is present exactly where a dialogue meets ``need``: the first, in registry
    order, of that need whose missing value is a failure and that no model computes. Tables
    tell a "not applicable" value from a failure with it; None for ``dialogue`` (a dialogue
    meets it unless it failed) and where no metric qualifies."""
    if need == "dialogue":
        return None
    return next(
        (m.key for m in METRICS if m.need == need and not m.not_applicable and not m.uses_model),
        None,
    )


def not_computed(*, judge: bool, bertscore: bool) -> tuple[str, ...]:
    """Keys of the metrics a run does not compute, in registry order: those that need a
    judgement when no judge is configured, those of the BERTScore model when it is off."""
    return tuple(
        m.key
        for m in METRICS
        if (not judge and m.need == "judgement") or (not bertscore and m.uses_model)
    )


def scale_note(metrics: Sequence[Metric]) -> str:
    """How the values of ``metrics`` are shown, for a table's notes: headers grouped by their
    display scale, largest first, with the raw range a declaration names, e.g.
    ``R, WR ×100; OA (1-10) ×10; AT raw``."""
    groups: dict[tuple[float, str], list[str]] = {}
    for m in metrics:
        declared = _BY_KEY.get(m.key)
        raw_range = declared.raw_range if declared is not None else ""
        groups.setdefault((m.scale, raw_range), []).append(m.header)
    parts = []
    for (scale, raw_range), headers in sorted(groups.items(), key=lambda g: -g[0][0]):
        shown = "raw" if scale == 1 else f"×{scale:g}"
        span = f" ({raw_range})" if raw_range else ""
        parts.append(f"{', '.join(headers)}{span} {shown}")
    return "; ".join(parts)
