"""Tables 2, 3, 6, 7, the paired table and the comparison with the paper's numbers."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
import yaml

from lecode.metrics.registry import get, with_tag
from lecode.records import Case, RoleUsage, Transcript, Turn, Utterance
from lecode.report import document
from lecode.report.model import Cell, Row, StatsTable, Table
from lecode.report.outputs import (
    TableOptions,
    build_documents,
    build_tables,
    metrics_json,
    write_tables,
)
from lecode.report.paper import load_paper_numbers
from lecode.report.render import (
    latex_cell,
    latex_text,
    markdown_cell,
    render_csv,
    render_latex,
    render_markdown,
)
from lecode.report.spec import ReportedSystem, coerce_systems
from lecode.report.tables import (
    shot_table_named,
    table2,
    table3,
    table3_systems,
)
from lecode.report.usage import usage_frame, usage_summary
from lecode.score_io import SCORE_SCHEMA
from lecode.stats import ResamplePlan

ROOT = Path(__file__).resolve().parents[1]
PAPER_CSV = ROOT / "data" / "paper_numbers.csv"
JUDGE = ("professionalism", "fluency", "completeness", "satisfaction", "safety", "overall")


def _rows(expert: str, strategy: str, **columns: Sequence[float | int | None]) -> list[dict]:
    n = len(next(iter(columns.values())))
    rows = []
    for i in range(n):
        row: dict = {k: None for k in SCORE_SCHEMA}
        row.update(
            case_id=f"c{i}", expert=expert, strategy=strategy, n_facts=5, stop_reason="advice"
        )
        row.update({k: v[i] for k, v in columns.items()})
        rows.append(row)
    return rows


def _frame(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=SCORE_SCHEMA, orient="row")


SYSTEMS = coerce_systems(
    [
        {
            "expert": "gpt-4",
            "strategy": "zero_shot",
            "label": "GPT-4",
            "group": "Closed-source LLMs",
        },
        {
            "expert": "qwen",
            "strategy": "zero_shot",
            "label": "Qwen2.5-7B",
            "group": "Open-source LLMs",
        },
        {
            "expert": "retrieval",
            "strategy": "baseline",
            "label": "Retrieval",
            "group": "Baselines (ours)",
        },
    ]
)


@pytest.fixture
def small() -> pl.DataFrame:
    return _frame(
        _rows(
            "gpt-4",
            "zero_shot",
            recall=[0.5, 0.6, 0.7, 0.8],
            turns=[2, 4, 6, 8],
            overall=[6, 7, 8, 9],
        )
        + _rows(
            "qwen",
            "zero_shot",
            recall=[0.2, 0.4, 0.6, 0.8],
            turns=[1, 1, 1, 1],
            overall=[5, 5, 5, 5],
        )
        + _rows(
            "retrieval",
            "baseline",
            recall=[0.9, 0.9, 0.6],
            turns=[3, 3, 3],
            overall=[None, None, None],
        )
    )


SMALL_METRICS = [get(k) for k in ("recall", "turns", "overall")]

EXPECTED_MD = """\
### Main results (per-dialogue means over the test cases)

| Models | R | AT↓ | OA |
| :-- | --: | --: | --: |
| **Closed-source LLMs** |  |  |  |
| GPT-4 | *65.0* ± 10.0 | 5.0 ± 2.0 | **75.0** ± 10.0 |
| **Open-source LLMs** |  |  |  |
| Qwen2.5-7B | 50.0 ± 20.0 | **1.0** ± 0.0 | *50.0* ± 0.0 |
| **Baselines (ours)** |  |  |  |
| Retrieval | **80.0** ± 15.0 (3/4)† | *3.0* ± 0.0 (3/4)† | 0/4 |

- ± half-width of the 95% percentile bootstrap interval over cases (1000 resamples, seed 0)
- † coverage n/N below 90% (n/N in Markdown and CSV); 0/N: no case has the metric (e.g. every dialogue failed); — not applicable (e.g. no judge configured); no ± with fewer than 2 cases
- per column: best in bold, second in italics (Markdown) or underlined (LaTeX) (AT: lower is better)
- R ×100; OA (1-10) ×10; AT raw
"""


def _t3(frame: pl.DataFrame) -> Table:
    plan = ResamplePlan(resamples=1000, seed=0)
    return table3(frame, SYSTEMS, 4, plan=plan, metrics=SMALL_METRICS)


def test_table3_markdown_exact(small: pl.DataFrame) -> None:
    assert render_markdown(_t3(small)) == EXPECTED_MD


def test_table3_input_order_does_not_matter(small: pl.DataFrame) -> None:
    shuffled = small.sample(fraction=1.0, shuffle=True, seed=3)
    assert render_markdown(_t3(shuffled)) == EXPECTED_MD


def test_table3_latex_bold_underline_direction(small: pl.DataFrame) -> None:
    tex = render_latex(_t3(small))
    lines = {line.split(" & ")[0]: line for line in tex.splitlines() if " & " in line}
    assert lines["GPT-4"] == r"GPT-4 & \underline{65.0} & 5.0 & \textbf{75.0} \\"
    assert lines["Qwen2.5-7B"] == r"Qwen2.5-7B & 50.0 & \textbf{1.0} & \underline{50.0} \\"
    assert lines["Retrieval"] == (
        r"Retrieval & \textbf{80.0}$^\dagger$ & \underline{3.0}$^\dagger$ & 0/4 \\"
    )
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex
    assert r"AT$\downarrow$" in tex
    assert r"\multicolumn{4}{l}{\textit{Closed-source LLMs}}" in tex


def test_latex_ties_share_rank_and_escape() -> None:
    frame = _frame(
        _rows("a", "s", recall=[0.5, 0.5])
        + _rows("b", "s", recall=[0.5, 0.5])
        + _rows("c", "s", recall=[0.3, 0.3])
    )
    systems = coerce_systems(
        [{"expert": e, "strategy": "s", "label": f"M_{e} & co"} for e in "abc"]
    )
    t = table3(frame, systems, 2, plan=ResamplePlan(resamples=100), metrics=SMALL_METRICS[:1])
    tex = render_latex(t)
    assert r"M\_a \& co & \textbf{50.0} \\" in tex
    assert r"M\_b \& co & \textbf{50.0} \\" in tex
    assert r"M\_c \& co & \underline{30.0} \\" in tex
    assert latex_text("50% of #1 ~ x_y") == r"50\% of \#1 \textasciitilde{} x\_y"


def test_coverage_marking_threshold() -> None:
    row = Row(label="x", cells=())
    assert markdown_cell(Cell(35.9, 33.8, 38.0, 38, 40), row) == "35.9 ± 2.1"
    assert markdown_cell(Cell(35.9, 33.8, 38.0, 35, 40), row) == "35.9 ± 2.1 (35/40)†"
    assert markdown_cell(Cell(35.9, 33.8, 38.0, 38, 40), row, 0.96) == "35.9 ± 2.1 (38/40)†"
    assert markdown_cell(Cell(35.9, 33.8, 38.0, 35, 40, rank=1), row) == "**35.9** ± 2.1 (35/40)†"
    assert latex_cell(Cell(35.9, 33.8, 38.0, 35, 40, rank=2), row) == r"\underline{35.9}$^\dagger$"
    assert markdown_cell(Cell(None, n=0, N=40), row) == "0/40"  # expected, none present
    assert latex_cell(Cell(None, n=0, N=40), row) == "0/40"
    assert markdown_cell(Cell(None), row) == "—"  # does not apply
    assert latex_cell(Cell(None), row) == "---"


def test_missing_metric_shows_its_coverage_everywhere(small: pl.DataFrame) -> None:
    t = table3(small, SYSTEMS, 4, plan=ResamplePlan(resamples=200))
    md = render_markdown(t)
    gpt = next(line for line in md.splitlines() if line.startswith("| GPT-4"))
    cells = [c.strip() for c in gpt.strip("|").split("|")]
    headers = [m.header for m in with_tag("table3")]
    # no rouge/bertscore/weighted recall in the fixture: 0 of the 4 expected cases
    for key in ("weighted_recall", "rouge_l", "bertscore_f1", "professionalism", "safety"):
        assert cells[1 + headers.index(get(key).header)] == "0/4"
    retrieval = next(line for line in md.splitlines() if line.startswith("| Retrieval"))
    assert retrieval.count("| 0/4 ") == 11  # everything but R and AT
    out = list(csv.DictReader(io.StringIO(render_csv(t))))
    oa = next(r for r in out if r["label"] == "Retrieval" and r["metric"] == "overall")
    assert (oa["value"], oa["n"], oa["N"], oa["display"]) == ("", "0", "4", "0/4")
    assert oa["status"] == "no_data"
    rec = next(r for r in out if r["label"] == "Retrieval" and r["metric"] == "recall")
    assert (float(rec["value"]), rec["n"], rec["N"], rec["rank"]) == (80.0, "3", "4", "1")
    assert float(rec["ci_low"]) <= 80.0 <= float(rec["ci_high"])


def test_scale_of_fractions_and_judge_scores(small: pl.DataFrame) -> None:
    t = table3(small, SYSTEMS, 4, plan=ResamplePlan(resamples=100))
    cells = dict(zip([m.key for m in with_tag("table3")], t.rows[0].cells, strict=True))
    assert cells["recall"].value == pytest.approx(65.0)
    assert cells["turns"].value == pytest.approx(5.0)
    assert cells["overall"].value == pytest.approx(75.0)


def test_duplicates_and_overfull_rejected(small: pl.DataFrame) -> None:
    with pytest.raises(ValueError, match="more than once"):
        table3(pl.concat([small, small.head(1)]), SYSTEMS, 4)
    with pytest.raises(ValueError, match="expected"):
        table3(small, SYSTEMS, 3)


def test_system_without_rows_is_all_dash(small: pl.DataFrame) -> None:
    systems = [*SYSTEMS, ReportedSystem("ghost", "zero_shot", "Ghost", "Other")]
    t = table3(small, systems, 4, plan=ResamplePlan(resamples=100))
    assert all(c.value is None and c.n == 0 for c in t.rows[-1].cells)


# ------------------------------------------------------------------ paired / Tables 6, 7


def _shots() -> tuple[pl.DataFrame, list[ReportedSystem]]:
    n = 30
    good = [0.6 + 0.01 * (i % 5) for i in range(n)]
    worse = [g - 0.2 for g in good]
    same = [g + (0.01 if i % 2 else -0.01) for i, g in enumerate(good)]
    frame = _frame(
        _rows("m1", "zero_shot", recall=good, turns=[5] * n, overall=[7] * n)
        + _rows("m1", "few_shot", recall=worse, turns=[4] * n, overall=[7] * n)
        + _rows("m2", "zero_shot", recall=good, turns=[3] * n, overall=[6] * n)
        + _rows("m2", "few_shot", recall=same, turns=[3] * n, overall=[8] * n)
        + _rows("m3", "mediq", recall=good, turns=[2] * n, overall=[6] * n)
    )
    systems = coerce_systems(
        [
            {
                "expert": "m1",
                "strategy": "zero_shot",
                "label": "GPT-4",
                "group": "Closed-source LLMs",
            },
            {
                "expert": "m1",
                "strategy": "few_shot",
                "label": "GPT-4 FS",
                "group": "Closed-source LLMs",
            },
            {
                "expert": "m2",
                "strategy": "zero_shot",
                "label": "Qwen2.5-7B",
                "group": "Open-source LLMs",
            },
            {
                "expert": "m2",
                "strategy": "few_shot",
                "label": "Qwen FS",
                "group": "Open-source LLMs",
            },
            {"expert": "m3", "strategy": "mediq", "label": "MediQ", "group": "Strategies"},
        ]
    )
    return frame, systems


def test_table3_hides_paired_few_shot_rows() -> None:
    _, systems = _shots()
    assert [s.label for s in table3_systems(systems)] == ["GPT-4", "Qwen2.5-7B", "MediQ"]
    lone = [*systems[:1], ReportedSystem("m9", "few_shot", "Lone FS")]
    assert [s.label for s in table3_systems(lone)] == ["GPT-4", "Lone FS"]


def test_table6_and_7_rows_and_holm() -> None:
    frame, systems = _shots()
    plan = ResamplePlan(resamples=2000, seed=0)
    t6 = shot_table_named("table6", frame, systems, 30, plan=plan)
    assert [(r.label, r.setting, r.kind) for r in t6.rows] == [
        ("GPT-4", "ZS", "system"),
        ("GPT-4", "FS", "system"),
        ("GPT-4", "Δ FS−ZS", "delta"),
        ("Qwen2.5-7B", "ZS", "system"),
        ("Qwen2.5-7B", "FS", "system"),
        ("Qwen2.5-7B", "Δ FS−ZS", "delta"),
    ]
    assert [m.header for m in t6.metrics] == ["R", "WR", "R@5", "NDCG", "AT"]
    d1 = t6.rows[2].cells[0]
    assert d1.value == pytest.approx(-20.0) and d1.distinguishable is True
    assert d1.p_adjusted is not None and d1.p_value is not None
    assert d1.p_adjusted >= d1.p_value
    d2 = t6.rows[5].cells[0]
    assert d2.distinguishable is False
    md = render_markdown(t6)
    assert "| Qwen2.5-7B | ZS |" in md and "|  | Δ FS−ZS | +0.0 ± " in md
    assert "(n.s.)" in md
    t7 = shot_table_named("table7", frame, systems, 30, plan=plan)
    assert [m.header for m in t7.metrics] == ["R-L", "BS", "Pro", "Flu", "Com", "Sat", "Safe", "OA"]
    oa = t7.rows[5].cells[-1]
    assert oa.value == pytest.approx(20.0) and oa.distinguishable is True


def test_paired_table_reference_and_markers() -> None:
    frame, systems = _shots()
    tables = build_tables(
        frame, systems, 30, settings=TableOptions(resamples=2000, reference="MediQ")
    )
    paired = tables["paired"]
    assert [r.label for r in paired.rows] == ["GPT-4 − MediQ", "Qwen2.5-7B − MediQ"]
    recall = paired.rows[0].cells[0]
    assert recall.value == pytest.approx(0.0) and recall.distinguishable is False
    turns = paired.rows[0].cells[4]
    assert turns.value == pytest.approx(3.0) and turns.distinguishable is True
    md = render_markdown(paired)
    assert "+0.0 ± 0.0 (n.s.)" in md and "+3.0 ± 0.0 |" in md
    default = build_tables(frame, systems, 30, settings=TableOptions(resamples=200))
    assert default["paired"].rows[0].label == "Qwen2.5-7B − GPT-4"
    with pytest.raises(ValueError):
        build_tables(frame, systems, 30, settings=TableOptions(reference="nope"))


# ------------------------------------------------------------------ paper numbers


def test_paper_numbers_file() -> None:
    first = PAPER_CSV.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# source:") and "Tables 2, 3, 6 and 7" in first
    paper = load_paper_numbers(PAPER_CSV)
    gpt4 = paper.lookup("GPT-4", "ZS")
    assert gpt4 is not None
    assert [gpt4[k] for k in ("recall", "weighted_recall", "recall_at_5", "ndcg", "turns")] == [
        35.9,
        37.2,
        34.4,
        74.7,
        4.9,
    ]
    assert [gpt4[k] for k in ("rouge_l", "bertscore_f1", "overall")] == [17.5, 65.9, 58.1]
    qwen = paper.lookup("qwen2.5-7b", "ZS")
    assert qwen is not None and (qwen["recall"], qwen["turns"], qwen["overall"]) == (
        31.1,
        10.0,
        45.7,
    )
    kfe = paper.lookup("Key-fact-e SFT", "ZS")
    assert kfe is not None and (kfe["recall"], kfe["ndcg"], kfe["overall"]) == (51.0, 84.8, 59.5)
    fs = paper.lookup("Qwen2.5-72B", "FS")
    assert fs is not None and (fs["recall"], fs["overall"]) == (17.2, 34.7)
    assert paper.lookup("GPT-3.5", "FS") is None
    assert paper.table2()["LeCoDe"] == {
        "dialogues": 3696,
        "turns": 110008,
        "avg_turns": 29.76,
        "avg_facts": 9.19,
    }
    # Table 3 and the zero-shot rows of Tables 6/7 agree wherever both print a value
    for (t, label, setting), vals in paper.values.items():
        if t in ("6", "7") and setting == "ZS":
            t3 = paper.values[("3", label, "ZS")]
            assert all(t3[k] == v for k, v in vals.items()), label
    rows = [
        line
        for line in PAPER_CSV.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    # Table 4: 4 client models x 3 strategies x (relevance, factuality)
    assert len(rows) == 1 + 12 + 19 * 13 + 29 * 5 + 29 * 8 + 4 * 3 * 2
    t4 = paper.values[("4", "qwen-max", "first_person_dialogue")]
    assert (t4["relevance"], t4["factuality"]) == (97.0, 99.3)


def test_comparison_table() -> None:
    frame, systems = _shots()
    paper = load_paper_numbers(PAPER_CSV)
    systems[1] = ReportedSystem(
        "m1", "few_shot", "GPT-4 FS", "Closed-source LLMs", paper_label="GPT-4"
    )
    t = build_tables(frame, systems, 30, settings=TableOptions(resamples=500), paper=paper)[
        "comparison"
    ]
    assert [(r.label, r.setting) for r in t.rows] == [
        ("GPT-4", "ours"),
        ("GPT-4", "paper (ZS)"),
        ("GPT-4", "ours − paper"),
        ("GPT-4 FS", "ours"),
        ("GPT-4 FS", "paper (FS)"),
        ("GPT-4 FS", "ours − paper"),
        ("Qwen2.5-7B", "ours"),
        ("Qwen2.5-7B", "paper (ZS)"),
        ("Qwen2.5-7B", "ours − paper"),
        ("MediQ", "ours"),
        ("MediQ", "paper (ZS)"),
        ("MediQ", "ours − paper"),
    ]
    ours, pub, off = t.rows[0:3]
    assert pub.cells[0].value == 35.9
    assert off.cells[0].value == pytest.approx(ours.cells[0].value - 35.9)
    assert off.cells[0].distinguishable is True
    fs_pub = t.rows[4]
    assert fs_pub.cells[0].value == 32.5 and fs_pub.cells[5].value == 17.4
    md = render_markdown(t)
    assert "| GPT-4 | ours |" in md and "|  | paper (ZS) | 35.9 | 37.2 |" in md


# ------------------------------------------------------------------ Table 2


def _case(cid: str, n_utt: int, n_facts: int) -> Case:
    dialogue = tuple(
        Utterance(speaker="client" if i % 2 == 0 else "lawyer", text=f"句子{i}")
        for i in range(n_utt)
    )
    return Case(
        id=cid,
        initial_query="问题",
        dialogue=dialogue,
        facts=tuple(f"事实{i}" for i in range(n_facts)),
        importance=(1,) * n_facts,
        suggestion="建议",
    )


def _stats_files(table: StatsTable) -> dict[str, str]:
    """A statistics table's files, rendered (as the tables job does) from its document."""
    return document.stats_document(table, document.Provenance()).render()


def test_table2() -> None:
    train = [_case("a", 30, 9), _case("b", 20, 10), _case("c", 1000, 8)]
    test = [_case("d", 10, 5)]
    t = table2(train, test)
    md = _stats_files(t)["md"]
    assert md.splitlines()[2:8] == [
        "| Dataset | LeCoDe | Train Set | Test Set |",
        "| :-- | --: | --: | --: |",
        "| # Dialogue Samples | 4 | 3 | 1 |",
        "| # Total turns | 1,060 | 1,050 | 10 |",
        "| avg turns per dialogue | 265.00 | 350.00 | 10.00 |",
        "| avg key facts per dialogue | 8.00 | 9.00 | 5.00 |",
    ]
    tex = _stats_files(t)["tex"]
    assert r"\# Total turns & 1,060 & 1,050 & 10 \\" in tex
    empty = _stats_files(table2([], test))["md"]
    assert "| avg turns per dialogue | 10.00 | — | 10.00 |" in empty


# ------------------------------------------------------------------ files


def test_write_tables_files(tmp_path: Path) -> None:
    frame, systems = _shots()
    transcripts = [
        Transcript(
            case_id="c0",
            expert="m1",
            strategy="zero_shot",
            client="fact_lookup",
            turns=(Turn(speaker="client", kind="query", text="q"),),
            stop_reason="advice",
            usage={
                "expert": RoleUsage(calls=2, prompt_tokens=100, completion_tokens=20, cost=0.01),
                "client": RoleUsage(calls=1, cached=1),
            },
        )
    ]
    written = write_tables(
        frame,
        systems,
        30,
        tmp_path,
        train_cases=[_case("a", 4, 2)],
        test_cases=[_case("b", 6, 3)],
        paper_numbers=PAPER_CSV,
        usage=usage_frame(transcripts),
        settings=TableOptions(resamples=300),
    )
    assert set(written) == {
        "table2",
        "table3",
        "paired",
        "table6",
        "table7",
        "comparison",
        "metrics",
        "usage",
    }
    for name in ("table2", "table3", "paired", "table6", "table7", "comparison"):
        for ext in ("md", "csv", "tex", "provenance.json"):
            assert (tmp_path / f"{name}.{ext}").is_file()
    assert (tmp_path / "usage.provenance.json").is_file()
    metrics = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))
    assert list(metrics) == [s.label for s in systems]
    assert metrics["GPT-4"]["recall"] == pytest.approx(62.0)
    assert metrics["GPT-4"]["recall_n"] == 30 and metrics["GPT-4"]["N"] == 30
    assert metrics["GPT-4"]["rouge_l"] is None and metrics["GPT-4"]["rouge_l_n"] == 0
    assert "ndcg_gold" in metrics["GPT-4"]
    usage_md = (tmp_path / "usage.md").read_text(encoding="utf-8")
    # calls, cached, retries, prompt, cached prompt, completion, reasoning, cost, then the
    # protocol counters (three unmarked, three readings, confidence failures)
    assert (
        "| GPT-4 | expert | 1 | 2 | 0 | 0 | 100 | 0 | 20 | 0 | 0.0100 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |"
        in usage_md
    )
    assert "| all systems | client | 1 | 1 | 1 |" in usage_md
    again = tmp_path / "again"
    write_tables(frame, systems, 30, again, settings=TableOptions(resamples=300))
    assert (again / "table3.md").read_bytes() == (tmp_path / "table3.md").read_bytes()


def test_usage_summary_sums_per_role() -> None:
    frame = pl.DataFrame(
        {
            "expert": ["m1", "m1", "m1", "m3"],
            "strategy": ["zero_shot"] * 3 + ["mediq"],
            "case_id": ["c0", "c1", "c1", "c0"],
            "role": ["judge", "judge", "expert", "judge"],
            "calls": [1, 2, 3, 4],
            "cached": [0, 1, 0, 0],
            "retries": [0, 0, 1, 0],
            "prompt_tokens": [10, 20, 30, 40],
            "completion_tokens": [1, 2, 3, 4],
            "cost": [0.1, 0.2, 0.3, 0.4],
        }
    )
    _, systems = _shots()
    s = usage_summary(frame, systems)
    judge = s.filter((pl.col("label") == "all systems") & (pl.col("role") == "judge")).row(
        0, named=True
    )
    assert judge["calls"] == 7 and judge["cost"] == pytest.approx(0.7)
    gpt = s.filter((pl.col("label") == "GPT-4") & (pl.col("role") == "judge")).row(0, named=True)
    assert gpt["dialogues"] == 2 and gpt["prompt_tokens"] == 30


def test_settings_from_params_yaml() -> None:
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    s = TableOptions.from_params(params["report"])
    assert (s.coverage_threshold, s.resamples, s.seed, s.confidence) == (0.9, 10_000, 0, 0.95)
    with pytest.raises(ValueError):
        TableOptions.from_params({"nonsense": 1})


def test_metrics_json_without_judge(small: pl.DataFrame) -> None:
    data = metrics_json(small, SYSTEMS, 4, plan=ResamplePlan(resamples=100))
    assert data["Retrieval"]["overall"] is None
    assert data["Retrieval"]["recall"] == pytest.approx(80.0)
    assert data["Retrieval"]["recall_n"] == 3


def _low_coverage_cells(table: Table, threshold: float) -> list[tuple[str, str, int, int]]:
    return [
        (r.label, m.header, c.n or 0, c.N or 0)
        for r in table.rows
        for m, c in zip(table.metrics, r.cells, strict=True)
        if c.coverage_below(threshold)
    ]


def test_low_coverage_cells(small: pl.DataFrame) -> None:
    t = table3(small, SYSTEMS, 4, plan=ResamplePlan(resamples=100), metrics=SMALL_METRICS)
    # OA of Retrieval: the column is computed but no case has it (0/4), listed too
    assert _low_coverage_cells(t, 0.9) == [
        ("Retrieval", "R", 3, 4),
        ("Retrieval", "AT", 3, 4),
        ("Retrieval", "OA", 0, 4),
    ]
    assert _low_coverage_cells(t, 0.75) == [("Retrieval", "OA", 0, 4)]


def test_a_document_renders_exactly_as_its_table() -> None:
    """The files are rendered from the documents; they lose nothing of the tables."""
    frame, systems = _shots()
    paper = load_paper_numbers(PAPER_CSV)
    settings = TableOptions(resamples=300)
    tables = build_tables(frame, systems, 30, settings=settings, paper=paper)
    docs = build_documents(
        frame,
        systems,
        30,
        train_cases=[_case("a", 4, 2)],
        test_cases=[_case("b", 6, 3)],
        paper_numbers=paper,
        settings=settings,
    )
    assert set(tables) | {"table2"} == set(docs)
    for name, table in tables.items():
        doc = document.parse(docs[name].dumps())  # through JSON and back
        assert doc.render()["md"] == render_markdown(table)
        assert doc.render()["csv"] == render_csv(table)
        assert doc.render()["tex"] == render_latex(table)
        # the same rows and cells: only what the document adds (ids, text, state) differs
        assert [replace(r, cells=()) for r in doc.rows] == [
            replace(r, cells=()) for r in table.rows
        ]
        as_built = [
            replace(c, column="", id="", display="", status="value", description="")
            for _, c in doc.cells()
        ]
        assert as_built == [c for r in table.rows for c in r.cells]
        assert all(c.id and c.display and c.description for _, c in doc.cells())
    stats = table2([_case("a", 4, 2)], [_case("b", 6, 3)], paper)
    assert document.parse(docs["table2"].dumps()).render() == _stats_files(stats)
    kinds = {(r.key, c.column.endswith("_paper"), c.aggregation) for r, c in docs["table2"].cells()}
    assert {(k, paper) for k, paper, how in kinds if how == "published"} == {
        (k, True) for k in ("dialogues", "turns", "avg_turns", "avg_facts")
    }
    assert {(k, how) for k, paper, how in kinds if not paper} == {
        ("dialogues", "count"),
        ("turns", "count"),
        ("avg_turns", "average"),
        ("avg_facts", "average"),
    }
    offsets = [r for r in docs["comparison"].rows if r.kind == "offset"]
    assert offsets and all(r.delta_of == (r.systems[0], "paper") for r in offsets)
    by_kind = {(r.kind, c.aggregation) for r in docs["comparison"].rows for c in r.cells}
    assert by_kind == {("system", "mean"), ("paper", "published"), ("offset", "offset")}


def test_cell_ids_are_made_in_one_place() -> None:
    frame, systems = _shots()
    docs = build_documents(frame, systems, 30, settings=TableOptions(resamples=100))
    for name, doc in docs.items():
        for row, cell in doc.cells():
            assert cell.id == document.cell_id(name, row.label, row.setting, cell.column)


def test_a_metric_the_run_does_not_compute_is_not_applicable(small: pl.DataFrame) -> None:
    """No judge configured: the judge columns are absent and show —, never 0/N."""
    without = small.drop([m.key for m in SMALL_METRICS if m.key == "overall"], strict=False)
    t = table3(without, SYSTEMS, 4, plan=ResamplePlan(resamples=100), metrics=SMALL_METRICS)
    oa = [m.key for m in SMALL_METRICS].index("overall")
    assert all(r.cells[oa].value is None and r.cells[oa].N is None for r in t.rows)
    assert "—" in render_markdown(t) and "0/4" not in render_markdown(t)


def test_top_k_values_of_each_column_are_marked_blue_in_latex(small: pl.DataFrame) -> None:
    t = table3(small, SYSTEMS, 4, plan=ResamplePlan(resamples=100), metrics=SMALL_METRICS)
    ranks = [c.rank for r in t.rows if r.kind == "system" for c in r.cells]
    assert max(r for r in ranks if r is not None) > 2  # every value ranked, not only 1 and 2
    plain = render_latex(t)
    marked = render_latex(t, top=1)
    assert r"\textcolor{blue}" not in plain
    n_best = sum(1 for r in t.rows if r.kind == "system" for c in r.cells if c.rank == 1)
    assert marked.count(r"\textcolor{blue}") == n_best
    assert r"\usepackage{xcolor}" in marked


def test_usage_counts_how_each_system_handled_unmarked_replies() -> None:
    def t(case_id: str, **usage: int) -> Transcript:
        return Transcript(
            case_id=case_id,
            expert="m1",
            strategy="zero_shot",
            client="fact_lookup",
            turns=(Turn(speaker="client", kind="query", text="q"),),
            stop_reason="advice",
            usage={"expert": RoleUsage(calls=2, **usage)},
        )

    frame = usage_frame(
        [
            t("c0", unmarked_reasks=1, unmarked_advice=1),
            t("c1", unmarked_questions=2),
            t("c2", reasoning_tokens=40, confidence_failures=1),
        ]
    )
    summary = usage_summary(frame, [ReportedSystem("m1", "zero_shot", "M1", "LLMs")])
    row = summary.filter((pl.col("label") == "M1") & (pl.col("role") == "expert")).row(
        0, named=True
    )
    assert (row["unmarked_reasks"], row["unmarked_advice"], row["unmarked_questions"]) == (1, 1, 2)
    assert (row["reasoning_tokens"], row["confidence_failures"], row["dialogues"]) == (40, 1, 3)


def test_table2_sets_the_papers_columns_beside_ours() -> None:
    paper = load_paper_numbers(PAPER_CSV)
    t = table2([_case("a", 4, 2)], [_case("b", 6, 3)], paper)
    assert t.columns[3:] == ("LeCoDe (paper)", "Train Set (paper)", "Test Set (paper)")
    col = {k: i for i, k in enumerate(t.column_keys)}
    row = {k: i for i, k in enumerate(t.keys)}
    assert t.values[row["dialogues"]][col["total_paper"]] == 3696
    assert t.values[row["avg_facts"]][col["test_paper"]] == pytest.approx(9.01)
    assert t.values[row["dialogues"]][col["total"]] == 2  # ours beside it
    md = _stats_files(t)["md"]
    assert "3,696" in md and "LeCoDe (paper)" in md
