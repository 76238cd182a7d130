"""Declared tables: a new table is one module; grouped columns (with an empty group shown as
n = 0); a metric whose missing value means "not applicable", counted apart from failures."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from lecode.metrics import registry
from lecode.metrics.declaration import Dialogue, Example, MetricDeclaration, example_tools
from lecode.metrics.registry import get
from lecode.report import explain, table_registry
from lecode.report.document import Provenance, metrics_document
from lecode.report.grouping import Group, buckets
from lecode.report.outputs import TableOptions, build_tables, write_tables
from lecode.report.render import markdown_cell
from lecode.report.spec import ReportedSystem
from lecode.report.table_registry import TableRegistryError
from lecode.report.tabledecl import GroupedColumns, MetricColumns, TableDeclaration
from lecode.score_io import SCORE_SCHEMA

PLAN = TableOptions(resamples=200)
BOOT = {"resamples": 200, "seed": 0, "confidence": 0.95}

#: The new table: recall by number of key facts, in a module of its own.
FACTS_TABLE = '''"""Recall by number of key facts."""

from lecode.report.grouping import buckets
from lecode.report.tabledecl import GroupedColumns, TableDeclaration, coverage_note, group_note

DECLARED = (
    TableDeclaration(
        name="recall_by_fact_count",
        title="Recall by number of key facts",
        order=55,
        rows="systems",
        columns=GroupedColumns(metric="recall", by="n_facts", groups=buckets(1, 4, 7)),
        notes=(group_note, coverage_note),
        description="recall per system, averaged within each bucket of key facts",
    ),
)
'''


def _row(expert: str, case: str, n_facts: int, stop: str = "advice", **values: object) -> dict:
    row: dict = {k: None for k in SCORE_SCHEMA}
    row.update(case_id=case, expert=expert, strategy="zero_shot", n_facts=n_facts)
    row.update(stop_reason=stop, **values)
    return row


SYSTEMS = [ReportedSystem("a", "zero_shot", "A"), ReportedSystem("b", "zero_shot", "B")]


def _facts_frame() -> pl.DataFrame:
    rows = [
        # A: 1-3 facts: recall 0.5 and 1.0 -> 75.0 (2/2); 4-6: 0.2 -> 20.0 (1/1); 7+: none
        _row("a", "c1", 2, recall=0.5),
        _row("a", "c2", 3, recall=1.0),
        _row("a", "c3", 5, recall=0.2),
        # B: 1-3: 0.0 (1/1); 4-6: c5 failed, c6 0.6 -> 60.0 over 1 of 2 (†); 7+: none
        _row("b", "c1", 1, recall=0.0),
        _row("b", "c2", 4, stop="error"),
        _row("b", "c3", 6, recall=0.6),
    ]
    return pl.DataFrame(rows, schema=SCORE_SCHEMA, orient="row")


@pytest.fixture
def facts_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The registry with the new table's module (written under ``tmp_path``) added."""
    pkg = tmp_path / "extra_tables"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "recall_by_fact_count.py").write_text(FACTS_TABLE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    modules = [*table_registry.declaration_modules(), "extra_tables.recall_by_fact_count"]
    monkeypatch.setattr(table_registry, "TABLES", table_registry.collect(modules))
    yield "recall_by_fact_count"
    for name in [n for n in sys.modules if n.startswith("extra_tables")]:
        del sys.modules[name]


def test_a_new_grouped_table_is_one_module_and_shows_an_empty_group_as_n_0(
    facts_table: str, tmp_path: Path
) -> None:
    tables = build_tables(_facts_frame(), SYSTEMS, 3, settings=PLAN)
    assert list(tables) == ["table3", "paired", facts_table]  # after paired (20), by order 55
    t = tables[facts_table]
    assert [m.header for m in t.metrics] == ["1–3", "4–6", "7+"]
    a, b = ([(c.value, c.n, c.N) for c in r.cells] for r in t.rows)
    assert a == [(pytest.approx(75.0), 2, 2), (pytest.approx(20.0), 1, 1), (None, 0, 0)]
    assert b == [(pytest.approx(0.0), 1, 1), (pytest.approx(60.0), 1, 2), (None, 0, 0)]
    shown = [[markdown_cell(c, r) for c in r.cells] for r in t.rows]
    assert shown[0][2] == shown[1][2] == "n = 0"
    assert shown[1][1] == "**60.0** (1/2)†"  # B best in 4-6 (60 > 20)
    assert shown[0][0].startswith("**75.0**")  # ranked by recall's direction: A best in 1-3
    assert "1–3: n_facts in 1-3; 4–6: n_facts in 4-6; 7+: n_facts >= 7" in t.notes[0]
    # written like every table, and explained cell by cell
    written = write_tables(_facts_frame(), SYSTEMS, 3, tmp_path / "out", settings=PLAN)
    assert facts_table in written
    md = (tmp_path / "out" / f"{facts_table}.md").read_text(encoding="utf-8")
    assert "| Models | 1–3 | 4–6 | 7+ |" in md and "n = 0" in md
    doc = metrics_document(t, Provenance.bare(SYSTEMS), threshold=0.9, bootstrap=BOOT)
    cell = explain.find_cell(doc, "B", "4–6")
    assert cell.aggregation == "group_mean" and cell.value == pytest.approx(60.0)
    assert "dialogues with n_facts in 4-6 where recall is present" in cell.description
    empty = explain.find_cell(doc, "A", "7+")
    assert empty.status == "empty" and "no dialogue in this group" in explain._value_line(empty)
    assert doc.column(cell.column).group() == Group("4–6", lo=4, hi=6)


def test_table_declarations_are_checked_and_names_are_unique(
    facts_table: str, tmp_path: Path
) -> None:
    assert facts_table in table_registry.names()
    pkg = tmp_path / "extra_tables"
    (pkg / "twice.py").write_text(FACTS_TABLE.replace("order=55", "order=56"), encoding="utf-8")
    (pkg / "reserved.py").write_text(
        FACTS_TABLE.replace('"recall_by_fact_count"', '"usage"'), encoding="utf-8"
    )
    base = table_registry.declaration_modules()
    with pytest.raises(TableRegistryError, match="'recall_by_fact_count' is declared in"):
        table_registry.collect([*base, "extra_tables.recall_by_fact_count", "extra_tables.twice"])
    with pytest.raises(TableRegistryError, match="table name 'usage' is reserved"):
        table_registry.collect(["extra_tables.reserved"])
    decl = table_registry.get(facts_table)
    with pytest.raises(ValueError, match="rows 'cases' is not one of"):
        dataclasses.replace(decl, rows="cases")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="exactly one of tag and keys"):
        MetricColumns()
    with pytest.raises(ValueError, match="group labels repeat"):
        GroupedColumns(metric="recall", by="n_facts", groups=(*buckets(1, 4), Group("4+", lo=9)))
    assert [g.label for g in buckets(1, 4, 7)] == ["1–3", "4–6", "7+"]
    with pytest.raises(KeyError, match="no table 'nope'; declared: table3"):
        table_registry.get("nope")


# --------------------------------------------------------------------------- not applicable


def first_fact_turn(d: Dialogue) -> int | None:
    """The question (1-based) that first elicited a key fact; undefined when none did."""
    return next((q + 1 for q, facts in enumerate(d.matched) if facts), None)


FIRST_FACT = MetricDeclaration(
    key="first_fact_turn",
    header="FFT",
    scale=1.0,
    direction="lower",
    section="efficiency",
    value_type=int,
    need="matches",
    compute=first_fact_turn,
    tags=(),
    missing="no question elicited a key fact",
    missing_is="not_applicable",
    order=995,
    description="the question that first elicited a key fact",
    example=Example(expected=1, why="question 1 elicits fact 1"),
)


@pytest.fixture
def with_first_fact(monkeypatch: pytest.MonkeyPatch) -> MetricDeclaration:
    metrics = (*registry.METRICS, FIRST_FACT)
    monkeypatch.setattr(registry, "METRICS", metrics)
    monkeypatch.setattr(registry, "_BY_KEY", {m.key: m for m in metrics})
    return FIRST_FACT


def _na_frame() -> pl.DataFrame:
    schema = {**SCORE_SCHEMA, "first_fact_turn": pl.Int64}
    rows = [
        {**_row("a", "c1", 3, recall=0.3), "first_fact_turn": 2},
        {**_row("a", "c2", 3, recall=0.0), "first_fact_turn": None},  # none elicited: n/a
        {**_row("a", "c3", 3, stop="error"), "first_fact_turn": None},  # failed
        {**_row("a", "c4", 3, recall=0.6), "first_fact_turn": 4},
        {**_row("a", "c5", 3, stop="max_turns"), "first_fact_turn": None},  # matching failed
    ]
    return pl.DataFrame([{k: r.get(k) for k in schema} for r in rows], schema=schema)


def test_a_not_applicable_value_is_counted_apart_from_failures(
    with_first_fact: MetricDeclaration,
) -> None:
    tools = example_tools()
    elicits = Example(expected=2, why="", per_question=((), (1,), (0,)))
    nothing = Example(expected=None, why="", per_question=((), ()))
    assert FIRST_FACT.values([elicits.dialogue(tools), nothing.dialogue(tools)]) == [2, None]
    decl = TableDeclaration(
        name="first_fact",
        title="First fact",
        order=999,
        rows="systems",
        columns=MetricColumns(keys=("first_fact_turn", "recall")),
        notes=(),
        description="test table",
    )
    from lecode.report.tables import BuildContext, build_declared

    t = build_declared(decl, BuildContext(_na_frame(), SYSTEMS[:1], 5))
    assert t is not None
    cell = t.rows[0].cells[0]
    # mean over the 2 dialogues where it applies and is present: (2 + 4) / 2 = 3.0; of the 5,
    # 1 does not apply (c2), 2 failed (c3 error, c5 without matches): coverage 2/4 -> †
    assert (cell.value, cell.n, cell.N, cell.n_na) == (pytest.approx(3.0), 2, 5, 1)
    assert cell.applicable_n == 4 and cell.coverage_below(0.9)
    text = markdown_cell(cell, t.rows[0])
    assert text.endswith(" (2/4)† (1 n/a)‡")
    recall = t.rows[0].cells[1]
    assert recall.n_na is None and markdown_cell(recall, t.rows[0]).endswith("(3/5)†")
    assert any(n.startswith("‡ (k n/a)") and "no question elicited" in n for n in t.notes)
    # explain words each missing value from the declaration
    rows = _na_frame().to_dicts()
    reasons = {r["case_id"]: explain.missing_reason(FIRST_FACT, r) for r in rows[1:3] + rows[4:]}
    assert reasons == {
        "c2": "does not apply: no question elicited a key fact",
        "c3": "failed dialogue: stop reason error",
        "c5": "failure: the dialogue lacks fact matches with status ok for a case with facts",
    }
    doc = metrics_document(t, Provenance.bare(SYSTEMS), threshold=0.9, bootstrap=BOOT)
    described = explain.find_cell(doc, "A", "FFT")
    assert "counted apart as n/a, not as a failure" in described.description
    assert "does not apply to 1 (n/a, not failures)" in explain._value_line(described)
    assert "counted apart" not in explain.find_cell(doc, "A", "recall").description
    from lecode.report.outputs import metrics_json

    summary = metrics_json(_na_frame(), SYSTEMS[:1], 5, metrics=(FIRST_FACT, get("recall")))
    assert summary["A"]["first_fact_turn_na"] == 1 and summary["A"]["first_fact_turn_n"] == 2
    assert "recall_na" not in summary["A"]


def test_every_dialogue_not_applicable_is_not_a_failure(
    with_first_fact: MetricDeclaration,
) -> None:
    from lecode.report.results import metric_cell
    from lecode.stats import ResamplePlan

    frame = _na_frame().filter(pl.col("case_id") == "c2")
    cell = metric_cell(frame, FIRST_FACT, ResamplePlan(resamples=20), 1)
    assert (cell.value, cell.n, cell.N, cell.n_na) == (None, 0, 1, 1)
    assert not cell.coverage_below(0.9)
    from lecode.report.model import Row

    assert markdown_cell(cell, Row(label="A", cells=(cell,))) == "— (1 n/a)‡"


def test_the_shipped_tables_are_declared_in_order() -> None:
    names = table_registry.names()
    assert names[:2] == ("table3", "paired")
    assert {"table6", "table7", "comparison"} <= set(names)
    assert get("recall") in table_registry.get("table3").columns.metrics()


def test_every_table_module_is_in_the_code_of_the_tables_step() -> None:
    from lecode.fingerprint import closure

    declared = set(table_registry.declaration_modules())
    assert {"lecode.report.declared.table3", "lecode.report.declared.paired"} <= declared
    assert declared <= set(closure("lecode.report.steps.tables"))
