"""The metric registry: declarations, what derives from them, and what must not import them."""

from __future__ import annotations

import ast
import dataclasses
import sys
from pathlib import Path

import polars as pl
import pytest

from lecode import selftest
from lecode.fingerprint import closure, step_module
from lecode.metrics import registry
from lecode.metrics.declaration import TAGS, Example, MetricDeclaration, example_tools
from lecode.metrics.declared.judge import EXAMPLE_SCORES
from lecode.metrics.registry import METRICS, RegistryError, get, scale_note, with_tag
from lecode.recordio import RecordError
from lecode.report import table_registry
from lecode.report.spec import ReportedSystem
from lecode.report.tabledecl import MetricColumns
from lecode.report.tables import shot_table_named, table3
from lecode.score_io import SCORE_SCHEMA, read_scores, write_scores
from lecode.score_records import DialogueScores
from lecode.stats import ResamplePlan

PACKAGE = Path(registry.__file__).resolve().parents[1]


def test_keys_and_orders_are_unique_and_the_registry_is_in_order() -> None:
    keys = [m.key for m in METRICS]
    assert len(set(keys)) == len(keys)
    orders = [m.order for m in METRICS]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)
    # every declaration of every declaration module, none twice
    found = [d.key for name in registry.declaration_modules() for d in registry._declared_in(name)]
    assert sorted(found) == sorted(keys)


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: m.key)
def test_each_declarations_example_gives_its_hand_computed_value(
    metric: MetricDeclaration,
) -> None:
    expected = metric.example.expected
    got = metric.run_example()
    assert expected is not None and got == pytest.approx(expected, abs=1e-12), metric.example.why


def test_a_wrong_compute_function_fails_its_example_in_the_selftest() -> None:
    recall = get("recall")
    broken = dataclasses.replace(recall, compute=lambda d: 0.5)
    assert broken.run_example() == 0.5 != recall.example.expected
    checks = selftest.example_checks()
    assert all(c.ok for c in checks) and {c.name for c in checks} == {
        f"examples/{m.key}" for m in METRICS
    }


def _tags_used_by_the_report() -> set[str]:
    """Tags named by a ``with_tag("...")`` call in the report, step and explain modules, and
    by the columns of the declared tables."""
    files = [*(PACKAGE / "report").rglob("*.py"), *PACKAGE.glob("*/steps/*.py")]
    used: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "with_tag"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                used.add(str(node.args[0].value))
    return used | table_registry.tags_used()


def test_every_declared_tag_is_used_by_some_table_or_figure() -> None:
    used = _tags_used_by_the_report()
    declared = {t for m in METRICS for t in m.tags}
    assert declared <= used, declared - used
    assert set(TAGS) <= used, set(TAGS) - used


@pytest.mark.parametrize(
    "decl",
    [d for d in table_registry.TABLES if isinstance(d.columns, MetricColumns)],
    ids=lambda d: d.name,
)
def test_each_declared_table_shows_the_metrics_its_columns_name(decl) -> None:
    cols = decl.columns
    want = (
        [m.key for m in sorted(METRICS, key=lambda m: m.order) if cols.tag in m.tags]
        if cols.tag is not None
        else list(cols.keys)
    )
    assert [m.key for m in cols.metrics()] == want
    if decl.rows == "shot_pairs":
        plan = ResamplePlan(resamples=20)
        built = shot_table_named(decl.name, _frame(), SYSTEMS, 2, plan=plan)
        assert [m.key for m in built.metrics] == want
        assert all(len(r.cells) == len(want) for r in built.rows) and built.rows


def test_tags_select_by_declaration() -> None:
    for tag in TAGS:
        assert [m.key for m in with_tag(tag)] == [m.key for m in METRICS if tag in m.tags]
    # Table 6 and 7 share no column; the radar shows main-table metrics only
    assert not {m.key for m in with_tag("table6")} & {m.key for m in with_tag("table7")}
    assert {m.key for m in with_tag("radar")} <= {m.key for m in with_tag("table3")}
    with pytest.raises(ValueError, match="unknown tag 'tabel6'"):
        with_tag("tabel6")
    with pytest.raises(KeyError, match="no metric 'nope'; declared: recall"):
        get("nope")


def _parsed_scale_note(note: str) -> list[tuple[list[str], str, str]]:
    """``[(headers, raw range, shown)]`` of a scale note, in its order."""
    out = []
    for part in note.split("; "):
        heads, shown = part.rsplit(" ", 1)
        raw = ""
        if heads.endswith(")"):
            heads, raw = heads[:-1].rsplit(" (", 1)
        out.append((heads.split(", "), raw, shown))
    return out


@pytest.mark.parametrize("tag", ["table3", "table6", "table7"])
def test_the_table_note_is_derived_from_the_declarations(tag: str) -> None:
    metrics = with_tag(tag)
    parts = _parsed_scale_note(scale_note(metrics))
    seen = [h for heads, _, _ in parts for h in heads]
    order = [m.header for m in metrics]
    assert all(heads == sorted(heads, key=order.index) for heads, _, _ in parts)
    assert sorted(seen) == sorted(m.header for m in metrics)
    for heads, raw, shown in parts:
        for h in heads:
            m = next(m for m in metrics if m.header == h)
            assert raw == m.raw_range
            assert shown == ("raw" if m.scale == 1 else f"×{m.scale:g}")
    scales = [1.0 if shown == "raw" else float(shown[1:]) for _, _, shown in parts]
    assert scales == sorted(scales, reverse=True)  # largest scale first
    # by hand, for two made-up columns
    a = dataclasses.replace(get("recall"), key="x_a", header="XA", order=901)
    b = dataclasses.replace(get("turns"), key="x_b", header="XB", order=902)
    assert scale_note([b, a]) == "XA ×100; XB raw"


def _frame() -> pl.DataFrame:
    rows = []
    for strategy, value in (("zero_shot", 0.25), ("few_shot", 0.75)):
        for c in ("a", "b"):
            row: dict = {k: None for k in SCORE_SCHEMA}
            row |= {"case_id": c, "expert": "e", "strategy": strategy, "n_facts": 4}
            row |= {"stop_reason": "advice", "recall": value, "turns": 3, "overall": 5.0}
            row["early_share"] = value
            rows.append(row)
    return pl.DataFrame(rows, schema={**SCORE_SCHEMA, "early_share": pl.Float64}, orient="row")


SYSTEMS = [ReportedSystem("e", "zero_shot", "E"), ReportedSystem("e", "few_shot", "E FS")]


def _inserted(order: int, tags: tuple[str, ...]) -> MetricDeclaration:
    return dataclasses.replace(
        get("recall"), key="early_share", header="ES", order=order, tags=tags
    )


@pytest.mark.parametrize("order", [5, 35, 55, 65, 200])
def test_a_declaration_inserted_anywhere_moves_no_column_between_tables_6_and_7(
    order: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = ResamplePlan(resamples=50)
    before6 = [m.key for m in shot_table_named("table6", _frame(), SYSTEMS, 2, plan=plan).metrics]
    before7 = [m.key for m in shot_table_named("table7", _frame(), SYSTEMS, 2, plan=plan).metrics]
    # an untagged metric anywhere in the order: both tables unchanged
    metrics = tuple(sorted((*METRICS, _inserted(order, ())), key=lambda m: m.order))
    monkeypatch.setattr(registry, "METRICS", metrics)
    assert [
        m.key for m in shot_table_named("table6", _frame(), SYSTEMS, 2, plan=plan).metrics
    ] == before6
    assert [
        m.key for m in shot_table_named("table7", _frame(), SYSTEMS, 2, plan=plan).metrics
    ] == before7
    # tagged table7 between two table6 columns (or before all): it joins Table 7 only
    metrics = tuple(sorted((*METRICS, _inserted(order, ("table7",))), key=lambda m: m.order))
    monkeypatch.setattr(registry, "METRICS", metrics)
    six = [m.key for m in shot_table_named("table6", _frame(), SYSTEMS, 2, plan=plan).metrics]
    seven = [m.key for m in shot_table_named("table7", _frame(), SYSTEMS, 2, plan=plan).metrics]
    assert six == before6
    assert sorted(seven) == sorted([*before7, "early_share"])
    assert [k for k in seven if k != "early_share"] == before7


def test_table3_note_follows_its_columns() -> None:
    t = table3(_frame(), SYSTEMS[:1], 2, plan=ResamplePlan(resamples=50))
    assert t.notes[-1] == scale_note(with_tag("table3"))


def test_missing_values_are_worded_by_need_and_declaration() -> None:
    assert get("recall").missing_reason("error") == "failed dialogue: stop reason error"
    assert get("recall").missing_reason("max_turns") == get("recall").missing
    assert "fact matching failed" in get("recall").missing
    assert get("rouge_l").missing_reason("abstain") == "no advice: stop reason abstain"
    assert get("overall").missing_reason("parse_error") == "no advice: stop reason parse_error"
    assert get("overall").missing_reason("advice").startswith("the judge gave no valid verdict")


def test_score_columns_and_types_come_from_the_declarations(tmp_path: Path) -> None:
    assert list(SCORE_SCHEMA)[:5] == ["case_id", "expert", "strategy", "n_facts", "stop_reason"]
    assert list(SCORE_SCHEMA)[5:] == [m.key for m in METRICS]
    assert SCORE_SCHEMA["turns"] == pl.Int64 and SCORE_SCHEMA["bertscore_truncated"] == pl.Int64
    assert SCORE_SCHEMA["recall"] == pl.Float64 and SCORE_SCHEMA["overall"] == pl.Float64
    row = DialogueScores(
        case_id="c", expert="e", strategy="s", n_facts=2, stop_reason="advice", turns=3
    )
    assert row.recall is None  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="turns"):
        DialogueScores(
            case_id="c", expert="e", strategy="s", n_facts=2, stop_reason="advice", turns=2.5
        )
    path = tmp_path / "scores.csv"
    write_scores(path, [row])
    assert read_scores(path)["turns"].to_list() == [3]
    text = path.read_text(encoding="utf-8").replace("recall,", "recall_old,", 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RecordError, match=r"unknown \['recall_old'\], absent \['recall'\]"):
        read_scores(path)


def test_bad_declarations_are_refused_with_the_field_named() -> None:
    recall = get("recall")
    with pytest.raises(ValueError, match="'recall': unknown tags \\['tabel6'\\]"):
        dataclasses.replace(recall, tags=("tabel6",))
    with pytest.raises(ValueError, match="exactly one of compute and compute_batch"):
        dataclasses.replace(recall, compute_batch=lambda ds: [None for _ in ds])
    with pytest.raises(ValueError, match="value_type must be float or int"):
        dataclasses.replace(recall, value_type=str)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="say what a missing value means"):
        dataclasses.replace(recall, missing=" ")
    bad_type = dataclasses.replace(get("turns"), compute=lambda d: 2.5)
    with pytest.raises(ValueError, match="metric 'turns' of case example: expected an int"):
        bad_type.run_example()


def test_duplicate_keys_or_orders_across_modules_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "extra_metrics"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    body = (
        "import dataclasses\nfrom lecode.metrics.registry import get\n"
        "DECLARED = (dataclasses.replace(get('recall'), key={key!r}, order={order}),)\n"
    )
    (pkg / "same_key.py").write_text(body.format(key="recall", order=999), encoding="utf-8")
    (pkg / "same_order.py").write_text(body.format(key="other", order=10), encoding="utf-8")
    (pkg / "no_tuple.py").write_text("DECLARED = []\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    base = registry.declaration_modules()
    with pytest.raises(RegistryError, match="'recall' is declared in .*clarification too"):
        registry.collect([*base, "extra_metrics.same_key"])
    with pytest.raises(RegistryError, match="has order 10, as 'recall' does"):
        registry.collect([*base, "extra_metrics.same_order"])
    with pytest.raises(RegistryError, match="extra_metrics.no_tuple: DECLARED must be a tuple"):
        registry.collect(["extra_metrics.no_tuple"])
    for name in [n for n in sys.modules if n.startswith("extra_metrics")]:
        monkeypatch.delitem(sys.modules, name)


SCORE_CODE = ("lecode.metrics.registry", "lecode.score_records", "lecode.score_io")


@pytest.mark.parametrize("step", ["shard_dataset", "simulate", "match_facts", "judge_advice"])
def test_the_steps_before_scoring_import_no_metric_code(step: str) -> None:
    modules = closure(step_module(step))
    assert not [m for m in modules if m in SCORE_CODE or m.startswith("lecode.metrics.declared")]


def test_every_declaration_module_is_in_the_code_of_the_scoring_and_table_steps() -> None:
    files = (PACKAGE / "metrics" / "declared").glob("*.py")
    declared = {f"lecode.metrics.declared.{f.stem}" for f in files if f.stem != "__init__"}
    assert declared == set(registry.declaration_modules())
    for step in ("score_system", "aggregate_scores", "tables", "figures"):
        assert declared <= set(closure(step_module(step))), step


def test_what_each_need_requires() -> None:
    tools = example_tools()
    full = Example(expected=None, why="", judge=EXAMPLE_SCORES).dialogue(tools)
    assert all(full.meets(n) for n in ("dialogue", "matches", "advice", "judgement"))
    abstained = Example(expected=None, why="", advice=None, per_question=None).dialogue(tools)
    assert abstained.meets("dialogue")
    assert not any(abstained.meets(n) for n in ("matches", "advice", "judgement"))
    no_reference = Example(expected=None, why="", reference="  ").dialogue(tools)
    assert no_reference.meets("matches") and not no_reference.meets("advice")
    failed = dataclasses.replace(
        full, transcript=full.transcript.model_copy(update={"stop_reason": "error"})
    )
    assert not any(failed.meets(n) for n in ("dialogue", "matches", "advice", "judgement"))


def test_what_a_run_without_judge_or_bertscore_does_not_compute() -> None:
    judge = tuple(m.key for m in METRICS if m.need == "judgement")
    model = tuple(m.key for m in METRICS if m.uses_model)
    assert judge and model and not set(judge) & set(model)
    assert registry.not_computed(judge=False, bertscore=True) == judge
    assert registry.not_computed(judge=True, bertscore=False) == model
    assert registry.not_computed(judge=True, bertscore=True) == ()
    both = registry.not_computed(judge=False, bertscore=False)
    assert set(both) == set(judge) | set(model)


def test_a_metric_declares_what_a_missing_value_means() -> None:
    recall = get("recall")
    assert recall.missing_is == "failure" and not recall.not_applicable
    na = dataclasses.replace(
        recall, key="x_na", missing="no fact elicited", missing_is="not_applicable"
    )
    assert na.missing_reason("advice", need_met=True) == "does not apply: no fact elicited"
    assert na.missing_reason("advice", need_met=False).startswith("failure: the dialogue lacks")
    assert na.missing_reason("error") == "failed dialogue: stop reason error"
    with pytest.raises(ValueError, match="missing_is 'maybe' is not one of"):
        dataclasses.replace(recall, missing_is="maybe")  # type: ignore[arg-type]
    # the witness of a need: a failure-kind metric of that need, computed without a model
    for need in ("matches", "advice", "judgement"):
        w = registry.need_witness(need)
        assert w is not None and get(w).need == need and not get(w).not_applicable
        assert not get(w).uses_model
    assert registry.need_witness("dialogue") is None
