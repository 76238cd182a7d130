"""Layers of the ``lecode`` package: no import cycles between modules nor between the files
and packages directly under ``lecode`` (so no import climbs from a lower layer back up), the
LLM layer below the roles, the mock endpoint used only by its command, and no test scaffolding
in the shipped package.

The import graph is the one the code fingerprints use (:func:`lecode.fingerprint.direct_imports`:
every ``import`` statement of a module, lazy ones inside functions and ``TYPE_CHECKING`` blocks
included), so a cycle hidden behind a lazy import fails here too. A lazy cycle that is ever
needed must be listed in ``ALLOWED_LAZY_CYCLES`` with the reason; module-level cycles are never
allowed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

from lecode.fingerprint import PACKAGE, PACKAGE_DIR, direct_imports, module_file

#: frozenset of the modules of an allowed lazy cycle -> why it is needed. None today.
ALLOWED_LAZY_CYCLES: dict[frozenset[str], str] = {}

#: what the LLM layer (``lecode.llm``) must never import: the layers built on top of it.
ABOVE_LLM = (
    "lecode.agents",
    "lecode.evaluation.consultations",
    "lecode.evaluation",
    "lecode.noise",
    "lecode.sentinel",
    "lecode.reliability",
    "lecode.report",
    "lecode.metrics",
    "lecode.evaluation.scoring",
    "lecode.report.explain",
    "lecode.selftest",
    "lecode.cli",
)
MOCK = "lecode.mock"
#: the only modules outside the mock package that may import it: ``lecode mock-server``.
MOCK_USERS = {"lecode.cli.llm"}


def modules() -> list[str]:
    out = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append(".".join(parts))
    return out


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def import_graph() -> dict[str, frozenset[str]]:
    return {m: direct_imports(m) - {m} for m in modules()}


def module_level_imports(module: str) -> frozenset[str]:
    """The ``lecode`` modules ``module`` imports when it is itself imported: statements at
    module level (also under a module-level ``if``/``try``), not in functions or classes and
    not under ``if TYPE_CHECKING``."""
    path = module_file(module)
    assert path is not None
    tree = ast.parse(path.read_bytes(), filename=str(path))
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.If):
                if "TYPE_CHECKING" not in ast.unparse(node.test):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody):
                    visit(block)
                for handler in node.handlers:
                    visit(handler.body)

    visit(tree.body)
    return frozenset(m for m in found if module_file(m) is not None and m != module)


def cycles(graph: Mapping[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return out


def describe(component: list[str], graph: Mapping[str, frozenset[str]]) -> Iterator[str]:
    members = set(component)
    yield " <-> ".join(component)
    for a in component:
        top = module_level_imports(a)
        for b in sorted(graph[a] & members):
            yield f"    {a} -> {b} ({'module level' if b in top else 'lazy'})"


def test_the_graph_sees_lazy_imports() -> None:
    graph = import_graph()
    assert len(graph) > 50 and PACKAGE in graph
    # experts.py imports its LLM expert inside a function: a lazy edge
    assert "lecode.agents.llm_expert" in graph["lecode.agents.experts"]
    assert "lecode.agents.llm_expert" not in module_level_imports("lecode.agents.experts")


def test_cycles_are_found() -> None:
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": frozenset({"b"}), "b": frozenset()}) == []


def test_no_import_cycles() -> None:
    graph = import_graph()
    top = {m: module_level_imports(m) for m in graph}
    problems = []
    for component in cycles(top):
        problems.append("module-level cycle (never allowed):")
        problems.extend(describe(component, graph))
    for component in cycles(graph):
        if frozenset(component) not in ALLOWED_LAZY_CYCLES:
            problems.append("cycle through lazy imports (not in ALLOWED_LAZY_CYCLES):")
            problems.extend(describe(component, graph))
    assert not problems, "\n".join(problems)


def node_of(module: str) -> str:
    """The file or package directly under ``lecode`` that holds ``module``."""
    return ".".join(module.split(".")[:2])


def node_graph(graph: Mapping[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """The import graph between the files and packages directly under ``lecode`` (every import,
    lazy and ``TYPE_CHECKING`` ones included)."""
    out: dict[str, set[str]] = {}
    for m, deps in graph.items():
        out.setdefault(node_of(m), set()).update(node_of(d) for d in deps)
    return {n: frozenset(d - {n}) for n, d in out.items()}


def layers(nodes: Mapping[str, frozenset[str]]) -> list[list[str]]:
    """The nodes by layer: each imports only nodes of the layers below it (the graph must be
    acyclic)."""
    level: dict[str, int] = {}

    def depth(n: str) -> int:
        if n not in level:
            level[n] = 1 + max((depth(d) for d in nodes.get(n, ())), default=-1)
        return level[n]

    for n in nodes:
        depth(n)
    out: list[list[str]] = [[] for _ in range(max(level.values()) + 1)]
    for n, k in sorted(level.items()):
        out[k].append(n)
    return out


def test_files_and_packages_are_layered() -> None:
    """Between the files and packages of ``lecode`` (a package counts as one), no import runs
    from a lower layer back up: the graph has no cycle. A failure names the imports of each
    cycle; move the code they need down, or the importing module up."""
    graph = import_graph()
    nodes = node_graph(graph)
    problems = []
    for component in cycles(nodes):
        members = set(component)
        problems.append("cycle between " + " <-> ".join(component) + ":")
        examples: dict[tuple[str, str], str] = {}
        for m, deps in sorted(graph.items()):
            for d in sorted(deps):
                a, b = node_of(m), node_of(d)
                if a in members and b in members and a != b:
                    examples.setdefault((a, b), f"{m} -> {d}")
        problems.extend(f"    {a} -> {b} (e.g. {e})" for (a, b), e in sorted(examples.items()))
    assert not problems, "\n".join(problems)
    stack = layers(nodes)
    # the shared records sit at the bottom, the command line at the top
    assert "lecode.records" in stack[0] and stack[-1] == ["lecode.cli"], stack


def test_layering_finds_a_climb_back_up() -> None:
    graph = {
        "lecode.a.x": frozenset({"lecode.b"}),
        "lecode.b": frozenset({"lecode.a.y"}),  # b imports a module of package a: a cycle
        "lecode.a.y": frozenset(),
    }
    nodes = node_graph(graph)
    assert nodes == {"lecode.a": frozenset({"lecode.b"}), "lecode.b": frozenset({"lecode.a"})}
    assert cycles(nodes) == [["lecode.a", "lecode.b"]]
    assert layers({"lecode.a": frozenset({"lecode.b"}), "lecode.b": frozenset()}) == [
        ["lecode.b"],
        ["lecode.a"],
    ]


def test_allowed_lazy_cycles_still_exist() -> None:
    found = {frozenset(c) for c in cycles(import_graph())}
    assert not (set(ALLOWED_LAZY_CYCLES) - found), "remove the cycles that are gone"


def test_llm_layer_does_not_import_the_layers_above_it() -> None:
    bad = sorted(
        f"{m} -> {d}"
        for m, deps in import_graph().items()
        if within(m, "lecode.llm")
        for d in deps
        if any(within(d, above) for above in ABOVE_LLM)
    )
    assert not bad, bad


def test_only_the_mock_server_command_imports_the_mock() -> None:
    bad = sorted(
        f"{m} -> {d}"
        for m, deps in import_graph().items()
        if not within(m, MOCK) and m not in MOCK_USERS
        for d in deps
        if within(d, MOCK)
    )
    assert not bad, bad


def test_the_package_does_not_import_test_support() -> None:
    bad = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            bad += [f"{path.relative_to(PACKAGE_DIR)}: {n}" for n in names if within(n, "tests")]
    assert not bad, bad


def public_classes() -> dict[str, list[str]]:
    """Public (non-underscore) class name -> the modules that define a class of that name
    (at module level or nested)."""
    out: dict[str, list[str]] = {}
    for module in modules():
        path = module_file(module)
        assert path is not None
        for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                out.setdefault(node.name, []).append(module)
    return out


def test_public_classes_are_found() -> None:
    found = public_classes()
    assert found["Cell"] == found["Row"] == ["lecode.report.model"]
    assert found["TableDocument"] == ["lecode.report.document"]
    assert "_Model" not in found  # private names are not compared


def test_no_public_class_name_is_defined_in_two_modules() -> None:
    twins = {
        name: sorted(set(where)) for name, where in public_classes().items() if len(set(where)) > 1
    }
    assert not twins, "\n".join(f"{n}: {', '.join(w)}" for n, w in sorted(twins.items()))
