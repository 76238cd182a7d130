"""``lecode explain`` and the HTML report: a cell's provenance and one consultation, read from
the documents the tables were written from."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from lecode.cli import main
from lecode.recordio import atomic_write_text
from lecode.report.document import load, load_all
from lecode.report.explain import (
    ExplainError,
    explain_case,
    explain_cell,
    find_cell,
    html_summaries,
    row_of,
)
from lecode.report.html import render_html
from tests.test_provenance import TABLES, build_project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    monkeypatch.chdir(tmp_path)
    return build_project(tmp_path)


def test_find_cell_by_label_system_key_header_or_metric(project: SimpleNamespace) -> None:
    doc = load(TABLES, "table3")
    by_key = find_cell(doc, "llmx/zero_shot", "WR")
    assert by_key.column == "weighted_recall"
    assert find_cell(doc, "llmx", "weighted_recall") == by_key
    assert find_cell(doc, "LLMX/ZERO_SHOT", "wr") == by_key
    assert find_cell(doc, "LLM − X", "WR") == by_key
    assert find_cell(doc, "alpha/baseline", "AT").column == "turns"
    assert find_cell(doc, "alpha/baseline", "AT↓").column == "turns"
    with pytest.raises(ExplainError, match="rows: 'Human − replay', 'LLM − X'"):
        find_cell(doc, "gpt-4o/zero_shot", "WR")
    with pytest.raises(ExplainError, match="columns: .*'R@5'"):
        find_cell(doc, "alpha", "XYZ")
    paired = load(TABLES, "paired")
    cell = find_cell(paired, "llmx/zero_shot − alpha/baseline", "R")
    assert row_of(paired, cell).delta_of == ("llmx/zero_shot", "alpha/baseline")
    assert find_cell(paired, "llmx/zero_shot - alpha/baseline", "R") == cell
    assert find_cell(paired, "LLM − X − Human − replay", "R") == cell
    stats = load(TABLES, "table2")
    assert find_cell(stats, "dialogues", "test").value == 4


def test_tables_6_and_7_rows_by_setting(project: SimpleNamespace) -> None:
    doc = load(TABLES, "table6")
    with pytest.raises(ExplainError, match="several rows"):
        find_cell(doc, "LLM − X", "R")
    fs = find_cell(doc, "LLM − X", "R", setting="FS")
    assert row_of(doc, fs).systems == ("llmx/few_shot",)
    delta = find_cell(doc, "llmx/few_shot − llmx/zero_shot", "R")
    assert delta == find_cell(doc, "LLM − X", "R", setting="Δ FS−ZS")
    text = explain_cell(doc, delta)
    assert "paired difference llmx/few_shot − llmx/zero_shot of recall" in text
    assert "(matches the table)" in text
    assert "System llmx/few_shot" in text and "System llmx/zero_shot" in text


def test_explain_cell_names_value_jobs_inputs_hashes_models_code(
    project: SimpleNamespace,
) -> None:
    doc = load(TABLES, "table3")
    cell = find_cell(doc, "llmx/zero_shot", "WR")
    text = explain_cell(doc, cell)
    assert f"n/N = {cell.n}/{cell.N}" in text
    assert "mean over the n test dialogues where weighted_recall is present" in text
    assert "recomputed from the per-dialogue scores" in text and "(matches the table)" in text
    assert "missing for 1: st-4 (failed dialogue: stop reason error)" in text
    system = doc.systems["llmx/zero_shot"]
    assert doc.run is not None and system.files is not None and system.jobs is not None
    for ref in (
        doc.run.aggregate,
        system.files.transcripts[0],
        system.files.matches[0],
        system.files.score,
        doc.run.dataset.test,
    ):
        assert ref.path in text and f"sha256 {ref.sha256}  [ok]" in text
    assert f"simulate {system.jobs.simulate}, match {system.jobs.match}" in text
    assert f"spec digest {doc.spec_digest}" in text
    assert "expert: 8 of 20 responses" in text
    assert "expert.reported_model: mock-2024-01" in text
    # which model answered, counted over the system's replies
    assert "expert: model mock-2024-01 ×20; fingerprint fp-a ×15, fp-b ×5" in text
    assert '"temperature": 0.5' in text and "api_key_env" not in text
    assert "shards: ok" in text and '"resamples": 200' in text
    assert "uncommitted changes" in text or "not built inside a git repository" in text
    assert "jieba 0.42.1" in text and "jieba_dict_sha256" in text


def test_explain_notices_changed_inputs_and_values(project: SimpleNamespace) -> None:
    doc = load(TABLES, "table3")
    cell = find_cell(doc, "alpha/baseline", "R")
    files = doc.systems["alpha/baseline"].files
    assert files is not None and doc.run is not None
    t_path = Path(files.transcripts[0].path)
    t_path.write_text(t_path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    agg = Path(doc.run.aggregate.path)
    lines = agg.read_text(encoding="utf-8").splitlines()
    # halve one recall value of alpha/baseline in the per-dialogue scores
    header = lines[0].split(",")
    col = header.index("recall")
    for i, line in enumerate(lines[1:], start=1):
        parts = line.split(",")
        if parts[header.index("expert")] == "alpha" and parts[col]:
            parts[col] = str(float(parts[col]) / 2)
            lines[i] = ",".join(parts)
            break
    agg.write_text("\n".join(lines) + "\n", encoding="utf-8")
    text = explain_cell(doc, cell)
    assert f"{t_path}" in text and "[CHANGED since the table]" in text
    assert "DOES NOT match the table" in text
    assert "[missing]" not in text
    plain = explain_cell(doc, cell, verify=False)
    assert "[ok]" not in plain and "recomputed" not in plain


def test_explain_and_html_show_what_the_document_says(project: SimpleNamespace) -> None:
    """Both read the written document: a value changed there is what they show."""
    path = Path(TABLES) / "table3.provenance.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    cell = next(c for r in data["rows"] for c in r["cells"] if c["column"] == "weighted_recall")
    cell["value"], cell["display"] = 12.3456, "12.3 (tampered)"
    cell["description"] = "a tampered aggregation"
    atomic_write_text(path, json.dumps(data, ensure_ascii=False))
    doc = load(TABLES, "table3")
    found = find_cell(doc, cell["id"].split("|")[1], "WR")
    assert found.value == 12.3456
    text = explain_cell(doc, found)
    assert "12.3 (tampered) (12.3456)" in text and "a tampered aggregation" in text
    assert "DOES NOT match the table" in text  # the scores say otherwise
    html = render_html(tables=load_all(TABLES))
    td = re.search(f'data-cell="{re.escape(cell["id"])}"[^>]*>(.*?)</td>', html)
    assert td is not None  # the tampered value, not a recomputed one:
    assert re.sub("<[^>]+>", "", td.group(1)).split(" ")[0] == "12.3"
    summaries = json.loads(html.split('id="provenance-data">', 1)[1].split("</script>", 1)[0])
    assert "a tampered aggregation" in summaries[cell["id"]]


def test_explain_case_shows_transcript_facts_per_question_and_scores(
    project: SimpleNamespace,
) -> None:
    doc = load(TABLES, "table3")
    text = explain_case(doc, "st-1")
    assert "Case st-1 · 4 facts" in text
    assert "[1] (w1) 冲突发生在小区门口的便利店" in text
    assert "== llmx/zero_shot" in text and "== alpha/baseline" in text
    assert "lawyer  Q1: 事情是在什么地方发生的？" in text
    assert "client  A1: 在我们小区门口的便利店。" in text
    assert "→ facts [1]" in text and "→ facts none" in text and "→ facts [0], [2]" in text
    assert "elicited 3 of 4 facts: 0, 1, 2; missed: 3" in text
    assert "scores: R 75.0  WR 75.0  R@5 75.0  NDCG 62.2  AT↓ 3.0" in text
    one = explain_case(doc, "st-2", system="alpha/baseline")
    assert "== llmx/zero_shot" not in one and "[0] (again)" in one
    with pytest.raises(ExplainError, match="not in the evaluated test shards"):
        explain_case(doc, "nope")
    with pytest.raises(ExplainError, match="no system"):
        explain_case(doc, "st-1", system="x/y")


def test_command_line(project: SimpleNamespace, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["explain", "--tables", TABLES]
    assert main([*base, "table3", "llmx/zero_shot", "WR"]) == 0
    assert "weighted_recall" in capsys.readouterr().out
    assert main([*base, "table3", "llmx", "WR", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["check"]["agrees"] is True
    assert record["cell"]["id"] == "table3|LLM − X||weighted_recall"
    assert record["cell"]["aggregation"] == "mean"
    assert record["cell"]["systems"] == ["llmx/zero_shot"] and record["cell"]["delta_of"] is None
    assert set(record["systems"]) == {"llmx/zero_shot"}
    assert main([*base, "paired", "llmx/zero_shot − alpha/baseline", "NDCG"]) == 0
    assert "difference llmx/zero_shot − alpha/baseline" in capsys.readouterr().out
    assert main([*base, "--case", "st-3"]) == 0
    assert "stop reason: abstain" in capsys.readouterr().out
    assert main([*base, "table9", "x", "R"]) == 2
    assert "no provenance for table 'table9'" in capsys.readouterr().err
    assert main([*base, "table3"]) == 2


def test_html_cells_carry_the_provenance_ids(project: SimpleNamespace) -> None:
    docs = load_all(TABLES)
    summaries = html_summaries(docs)
    assert set(summaries) == {c.id for d in docs.values() for _, c in d.cells()}
    doc = docs["table3"]
    cell = find_cell(doc, "llmx/zero_shot", "WR")
    assert "reported expert.reported_model mock-2024-01" in summaries[cell.id]
    assert 'lecode explain table3 "LLM − X" WR' in summaries[cell.id]
    html = render_html(tables=docs)
    ids = {i.replace("&amp;", "&") for i in re.findall(r'data-cell="([^"]+)"', html)}
    assert ids == set(summaries)
    assert 'id="provenance-data"' in html and 'id="prov-panel"' in html
    assert "provenance-data" not in render_html(tables=docs, provenance=False)
    assert f"<td>{doc.spec_digest}</td>" in html  # the run section, from the documents


def test_a_click_on_a_cell_shows_its_provenance(project: SimpleNamespace, tmp_path: Path) -> None:
    import time

    from tests.test_report_html import Browser, _chromium

    binary = _chromium()
    if binary is None:
        pytest.skip("headless Chromium not installed: apt-get install -y chromium")
    page = tmp_path / "index.html"
    page.write_text(render_html(tables=load_all(TABLES)), encoding="utf-8")
    browser = Browser(binary, tmp_path / "profile")
    try:
        browser.call("Page.enable", page=True)
        browser.call("Page.navigate", {"url": page.as_uri()}, page=True)
        browser.wait_event("Page.loadEventFired")
        sel = 'td[data-cell="table3|LLM − X||weighted_recall"]'
        assert browser.js("document.getElementById('prov-panel').hidden") is True
        assert "click: full provenance" in browser.js(f"document.querySelector('{sel}').title")
        browser.click(sel)
        time.sleep(0.2)
        assert browser.js("document.getElementById('prov-panel').hidden") is False
        shown = browser.js("document.querySelector('#prov-panel pre').textContent")
        assert shown.startswith("LLM − X · WR:") and "mock-2024-01" in shown
        browser.click("#prov-panel button")
        assert browser.js("document.getElementById('prov-panel').hidden") is True
    finally:
        browser.close()


# --------------------------------------------------------------------------- by aggregation


def _hand_run(root: Path) -> Any:
    """Scores of systems a/x and b/x on three cases, hand-picked, and a run naming them."""
    from lecode.config.sections import ReportSettings
    from lecode.report.document import DatasetInfo, GitState, RunInfo
    from lecode.score_io import write_scores
    from lecode.score_records import DialogueScores
    from lecode.specs import FileRef

    recall = {"a": (0.5, 1.0, None), "b": (0.25, 0.5, 0.75)}
    write_scores(
        root / "scores.csv",
        [
            DialogueScores(
                case_id=f"c{i + 1}",
                expert=e,
                strategy="x",
                n_facts=4,
                stop_reason="error" if v is None else "advice",
                recall=v,
            )
            for e, values in recall.items()
            for i, v in enumerate(values)
        ],
    )
    ref = FileRef(path="absent.jsonl", sha256="0" * 64)
    return RunInfo(
        git=GitState(commit=None, dirty=None, scope=()),
        packages={},
        dataset=DatasetInfo(train=ref, test=ref, index=ref, shards=(), n_cases=3),
        paper=FileRef(path="paper.csv", sha256="1" * 64),
        aggregate=FileRef.of(root / "scores.csv").model_copy(update={"path": "scores.csv"}),
        settings=ReportSettings(),
    )


def test_explain_dispatches_on_the_cells_aggregation(tmp_path: Path) -> None:
    """Named "audit" (a table whose shares are not score means): what is recomputed, and how,
    follows each cell's aggregation, not the table's name."""
    from lecode.report.document import Provenance, metrics_document
    from lecode.report.explain import recompute
    from lecode.report.model import Cell, Row, Table
    from lecode.report.spec import Metric

    run = _hand_run(tmp_path)
    ab = ("a/x", "b/x")

    def row(setting: str, cell: Cell, kind: str = "system", **more: Any) -> Row:
        return Row(label="A", setting=setting, kind=kind, cells=(cell,), **more)  # type: ignore[arg-type]

    rows = (
        row("mean", Cell(75.0, n=2, N=3, aggregation="mean"), systems=("a/x",)),
        row("paired", Cell(37.5, n=2, N=3, aggregation="paired_difference"), "delta", delta_of=ab),
        row("cells", Cell(25.0, n=2, N=3, aggregation="cell_difference"), "delta", delta_of=ab),
        row("behaved", Cell(50.0, n=1, N=3, aggregation="subset_mean"), systems=("a/x",)),
        row("audit", Cell(20.0, n=2, N=3, aggregation="share"), systems=("a/x",)),
        row("paper", Cell(60.0, aggregation="published"), "paper", systems=("a/x",)),
        row(
            "offset",
            Cell(15.0, n=2, N=3, aggregation="offset"),
            "offset",
            delta_of=("a/x", "paper"),
        ),
    )
    recall = Metric("recall", "R", 100.0, "higher", "effectiveness")
    table = Table(name="audit", title="t", metrics=(recall,), rows=rows)
    boot = {"resamples": 10, "seed": 0, "confidence": 0.95}
    doc = metrics_document(table, Provenance(run=run), threshold=0.5, bootstrap=boot)
    cells = {r.setting: r.cells[0] for r in doc.rows}
    # a: 0.5, 1.0 and c3 missing -> 75.0 over 2; a − b on c1, c2: 0.25, 0.5 -> 37.5;
    # mean a − mean b: 0.75 − 0.5 -> 25.0 (n: the smaller count, 2)
    expected = {"mean": (75.0, 2), "paired": (37.5, 2), "cells": (25.0, 2)}
    for setting, (mean, n) in expected.items():
        check = recompute(doc, cells[setting], tmp_path)
        assert check is not None, setting
        assert check["mean"] == pytest.approx(mean) and check["n"] == n and check["agrees"]
        assert [c for c, _ in check["missing"]] == ["c3"]
    for setting in ("behaved", "audit", "paper", "offset"):
        assert recompute(doc, cells[setting], tmp_path) is None, setting
    for setting, cell in cells.items():
        text = explain_cell(doc, cell, root=tmp_path, verify=False)
        assert ("Published numbers" in text) == (setting in ("paper", "offset")), setting
    assert "paired difference a/x − b/x of recall" in cells["paired"].description
    assert cells["offset"].description.startswith("ours minus the published value of recall")
    wrong = replace(cells["mean"], value=70.0)
    check = recompute(doc, wrong, tmp_path)
    assert check is not None and check["agrees"] is False


def test_statistics_are_not_recomputed_and_name_the_paper_where_published(
    tmp_path: Path,
) -> None:
    from lecode.report.document import Provenance, stats_document
    from lecode.report.explain import recompute
    from lecode.report.model import StatsTable

    stats = StatsTable(
        name="table2",
        title="t",
        columns=("Test Set", "Test Set (paper)"),
        column_keys=("test", "test_paper"),
        rows=("# Dialogue Samples", "avg turns per dialogue", "SD"),
        keys=("dialogues", "avg_turns", "sd"),
        values=((3.0, 300.0), (7.5, 8.25), (0.5, float("nan"))),
        formats=("{:.0f}", "{:.2f}", "{:.2f}"),
        aggregations=(
            ("count", "published"),
            ("average", "published"),
            ("statistic", "statistic"),
        ),
    )
    doc = stats_document(stats, Provenance(run=_hand_run(tmp_path)))
    got = {(r.key, c.column): c for r, c in doc.cells()}
    assert got[("dialogues", "test")].aggregation == "count"
    assert got[("avg_turns", "test")].aggregation == "average"
    assert got[("sd", "test")].aggregation == "statistic"
    assert got[("avg_turns", "test_paper")].description.startswith("the published value")
    assert got[("avg_turns", "test")].description == (
        "avg turns per dialogue over the test split of the dataset files (run.dataset)"
    )
    published = {k for k, c in got.items() if c.aggregation == "published"}
    assert published == {("dialogues", "test_paper"), ("avg_turns", "test_paper")}
    for key, cell in got.items():
        assert recompute(doc, cell, tmp_path) is None
        text = explain_cell(doc, cell, root=tmp_path, verify=False)
        assert ("Published numbers" in text) == (key in published)
