"""Figures (CJK glyphs, files, determinism) and the curve data behind them."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import matplotlib as mpl
import polars as pl
import pytest
from matplotlib.figure import Figure

from lecode.records import Case, Matches, Utterance
from lecode.report.curves import complexity_curve, fact_bins, recall_by_turn, wide
from lecode.report.figures import (
    FIGURE_NAMES,
    build_figures,
    figure3,
    figure5,
    figure6,
    figure7,
    figure_recall_by_turn,
    save_figure,
    strategy_systems,
    write_figures,
)
from lecode.report.fonts import INSTALL_HINT, cjk_fonts, find_cjk_font
from lecode.report.spec import ReportedSystem
from lecode.score_io import SCORE_SCHEMA
from tests.support.report_demo import make_demo

CHINESE = "刑事 民事 行政 故意伤害 婚姻家庭 用户 律师 检索基线"


def _draw_chinese(path: Path) -> list[str]:
    fig = Figure(figsize=(4, 3))
    ax = fig.subplots()
    ax.set_title(CHINESE)
    ax.bar(["刑事", "民事", "行政"], [3, 2, 1])
    ax.set_xlabel("案件类型")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(path.with_suffix(".png"))
        fig.savefig(path.with_suffix(".pdf"))
    return [str(w.message) for w in caught]


def test_chinese_labels_render_without_missing_glyphs(tmp_path: Path) -> None:
    if find_cjk_font() is None:
        pytest.fail(f"no CJK font on this machine; install one: {INSTALL_HINT}")
    with cjk_fonts(required=True) as family:
        assert family
        messages = _draw_chinese(tmp_path / "zh")
    assert not [m for m in messages if "missing from font" in m], messages
    assert (tmp_path / "zh.png").stat().st_size > 0 and (tmp_path / "zh.pdf").stat().st_size > 0


def test_missing_glyph_warning_is_detected_without_the_font(tmp_path: Path) -> None:
    # negative control: the check above would see the warning if the font were not used
    with mpl.rc_context({"font.family": ["DejaVu Sans"]}):
        messages = _draw_chinese(tmp_path / "plain")
    assert any("missing from font" in m for m in messages)


def test_cjk_font_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LECODE_CJK_FONT", str(tmp_path / "nope.ttf"))
    with pytest.raises(FileNotFoundError):
        find_cjk_font()
    monkeypatch.delenv("LECODE_CJK_FONT")
    found = find_cjk_font()
    if found is not None:
        monkeypatch.setenv("LECODE_CJK_FONT", str(found))
        assert find_cjk_font() == found


# --------------------------------------------------------------------------- curve data


def _m(case_id: str, n: int, per_q: tuple[tuple[int, ...], ...], status: str = "ok") -> Matches:
    return Matches(
        case_id=case_id,
        expert="e",
        strategy="s",
        matcher="x",
        n_facts=n,
        per_question=per_q,
        status=status,
    )  # type: ignore[arg-type]


def _case(cid: str, importance: tuple[int, ...]) -> Case:
    return Case(
        id=cid,
        initial_query="q",
        dialogue=(Utterance(speaker="client", text="q"),),
        facts=tuple(str(i) for i in importance),
        importance=importance,
        suggestion="s",
    )


def test_recall_by_turn_hand_example() -> None:
    matches = [
        _m("a", 4, ((0,), (), (1, 0))),  # 1/4, 1/4, 2/4 then flat
        _m("b", 2, ((1,),)),  # 1/2 then flat
        _m("c", 3, (), status="error"),  # left out
    ]
    cases = [_case("a", (3, 1, 1, 1)), _case("b", (1, 3))]
    curve = recall_by_turn(matches, [ReportedSystem("e", "s", "E")], cases=cases, max_turns=4)
    assert curve["k"].to_list() == [0, 1, 2, 3, 4]
    assert curve["recall"].to_list() == pytest.approx([0.0, 37.5, 37.5, 50.0, 50.0])
    # weighted: a -> 3/6, 3/6, 4/6; b -> 3/4
    assert curve["weighted_recall"].to_list() == pytest.approx(
        [
            0.0,
            100 * (0.5 + 0.75) / 2,
            100 * (0.5 + 0.75) / 2,
            100 * (4 / 6 + 0.75) / 2,
            100 * (4 / 6 + 0.75) / 2,
        ]
    )
    assert set(curve["n"].to_list()) == {2}
    unweighted = recall_by_turn(matches, [ReportedSystem("e", "s", "E")])
    assert unweighted["weighted_recall"].null_count() == unweighted.height
    assert unweighted["k"].max() == 3


def _scores(rows: list[dict]) -> pl.DataFrame:
    full = []
    for r in rows:
        d: dict = {k: None for k in SCORE_SCHEMA}
        d.update(expert="e", strategy="s", stop_reason="advice", turns=1)
        d.update(r)
        full.append(d)
    return pl.DataFrame(full, schema=SCORE_SCHEMA, orient="row")


def test_complexity_curve_bins_and_scale() -> None:
    scores = _scores(
        [
            {"case_id": "a", "n_facts": 4, "weighted_recall": 0.5, "turns": 2, "overall": 6.0},
            {"case_id": "b", "n_facts": 5, "weighted_recall": 0.7, "turns": 4, "overall": None},
            {"case_id": "c", "n_facts": 9, "weighted_recall": 0.2, "turns": 8, "overall": 4.0},
            {"case_id": "d", "n_facts": 20, "weighted_recall": 0.1, "turns": 10, "overall": 3.0},
        ]
    )
    curve = complexity_curve(scores, [ReportedSystem("e", "s", "E")])
    wr = curve.filter(pl.col("metric") == "weighted_recall").sort("bin_lo")
    assert wr["bin"].to_list() == ["1–5", "8–9", "≥15"]
    assert wr["value"].to_list() == pytest.approx([60.0, 20.0, 10.0])
    assert wr["n"].to_list() == [2, 1, 1]
    oa = curve.filter(pl.col("metric") == "overall").sort("bin_lo")
    assert oa["value"].to_list() == pytest.approx([60.0, 40.0, 30.0])
    assert oa["n"].to_list() == [1, 1, 1]
    at = curve.filter(pl.col("metric") == "turns").sort("bin_lo")
    assert at["value"].to_list() == pytest.approx([3.0, 8.0, 10.0])
    per_value = complexity_curve(scores, [ReportedSystem("e", "s", "E")], bins=None)
    assert per_value.filter(pl.col("metric") == "turns")["bin"].to_list() == ["4", "5", "9", "20"]
    assert fact_bins((1, 3), []) == [(1, 3), (3, None)]
    with pytest.raises(ValueError):
        fact_bins((3, 1), [])
    w = wide(wr, "bin_lo", "value", ["E"])
    assert w.columns == ["bin_lo", "E"]


# --------------------------------------------------------------------------- figures


def test_builders_return_none_without_data() -> None:
    empty_curve = pl.DataFrame(
        schema={
            "system": pl.Utf8,
            "metric": pl.Utf8,
            "bin": pl.Utf8,
            "bin_lo": pl.Int64,
            "value": pl.Float64,
        }
    )
    assert figure5(empty_curve, []) is None
    means = pl.DataFrame({"system": ["A"], "metric": ["recall"], "value": [50.0], "n": [3]})
    assert figure6(means, ["A"]) is None  # fewer than three axes
    assert figure7(means, ["A"]) is None  # one system only
    assert figure_recall_by_turn(pl.DataFrame(), []) is None
    assert figure3(pl.DataFrame()) is None


def test_strategy_systems_of_the_default_base_model() -> None:
    systems = [
        ReportedSystem("a", "zero_shot", "A"),
        ReportedSystem("b", "zero_shot", "B"),
        ReportedSystem("b", "few_shot", "B FS"),
        ReportedSystem("a", "mediq", "A MediQ"),
        ReportedSystem("b", "sft", "B SFT"),
    ]
    assert [s.label for s in strategy_systems(systems)] == ["B", "B FS", "B SFT"]


def test_write_figures_files_and_data(tmp_path: Path) -> None:
    demo = make_demo(n_train=6, n_test=6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = write_figures(
            tmp_path,
            scores=demo.scores,
            systems=demo.systems,
            train_cases=demo.train,
            test_cases=demo.test,
            matches=demo.matches,
        )
    assert not [w for w in caught if "missing from font" in str(w.message)]
    for name in ("figure3", "figure5", "figure6", "figure7", "recall_by_turn"):
        assert [p.name for p in written[name]] == [f"{name}.png", f"{name}.pdf"]
        assert (tmp_path / "figures" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
        assert (tmp_path / "figures" / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"
    rbt = pl.read_csv(tmp_path / "plots" / "recall_by_turn.csv")
    assert rbt.columns == ["k", *[s.label for s in demo.systems]]
    assert rbt["k"].to_list()[0] == 0 and rbt.row(0)[1:] == (0.0,) * len(demo.systems)
    records = json.loads((tmp_path / "plots" / "recall_by_turn.json").read_text("utf-8"))
    assert {"system", "k", "recall", "weighted_recall", "n"} <= set(records[0])
    final = {r["system"]: r["recall"] for r in records if r["k"] == rbt["k"].max()}
    for s in demo.systems:
        mean_recall = demo.scores.filter(
            (pl.col("expert") == s.expert) & (pl.col("strategy") == s.strategy)
        )["recall"].mean()
        assert final[s.label] == pytest.approx(100 * mean_recall)
    wr = pl.read_csv(tmp_path / "plots" / "complexity_weighted_recall.csv")
    assert wr.columns[:2] == ["bin", "bin_lo"]
    assert (tmp_path / "plots" / "complexity.json").is_file()
    by_charge = pl.read_csv(tmp_path / "plots" / "figure3a_facts_by_charge.csv")
    assert by_charge["rank"].to_list() == list(range(1, by_charge.height + 1))
    assert by_charge["mean_facts"].min() > 0 and by_charge["mean_fact_words"].min() > 0
    assert [p.name for p in written["figure3_data"]] == [
        "figure3a_facts_by_charge.csv",
        "figure3b_words_by_speaker.csv",
    ]
    # demo: the expert with most strategies is gpt-4 (zero- and few-shot), no SFT rows
    strategies = pl.read_csv(tmp_path / "plots" / "figure7_strategies.csv")
    assert strategies["system"].unique(maintain_order=True).to_list() == ["GPT-4", "GPT-4 FS"]


def test_figures_are_byte_identical(tmp_path: Path) -> None:
    demo = make_demo(n_train=4, n_test=4)
    figs, _ = build_figures(train_cases=demo.train, test_cases=demo.test)
    with cjk_fonts():
        a = save_figure(figs["figure3"], tmp_path / "a" / "figure3")
        b = save_figure(figs["figure3"], tmp_path / "b" / "figure3")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


def test_build_figures_strategy_labels() -> None:
    demo = make_demo(n_train=2, n_test=4)
    figs, data = build_figures(
        scores=demo.scores, systems=demo.systems, strategy_labels=["Qwen2.5-7B", "GPT-4"]
    )
    assert set(figs) == {"figure5", "figure6", "figure7"}
    assert "figure3" not in figs and "recall_by_turn" not in figs
    assert {"complexity", "means", "strategies"} == set(data)
    axes = figs["figure7"].axes
    legend = axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["Qwen2.5-7B", "GPT-4"]
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["WR", "AT↓", "BS", "OA"]
    strategies = data["strategies"]
    assert set(strategies["base"].to_list()) == {"Qwen2.5-7B"}  # the first label is the base
    assert strategies.filter(pl.col("system") == "Qwen2.5-7B")["change_pct"].null_count() == 4


def test_placeholders_keep_the_output_set_fixed(tmp_path: Path) -> None:
    demo = make_demo(n_train=2, n_test=2)
    written = write_figures(
        tmp_path / "out",
        figures_dir=tmp_path / "figs",
        plots_dir=tmp_path / "plots",
        scores=demo.scores,
        systems=demo.systems,
    )
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == sorted(
        f"{n}.{ext}" for n in FIGURE_NAMES for ext in ("png", "pdf")
    )
    assert (tmp_path / "plots" / "recall_by_turn.csv").read_text() == "k\n"
    assert json.loads((tmp_path / "plots" / "recall_by_turn.json").read_text()) == []
    assert (tmp_path / "plots" / "complexity_overall.csv").read_text().startswith("bin,bin_lo,")
    assert "recall_by_turn" in written and "figure3" in written
    assert (tmp_path / "plots" / "figure3a_facts_by_charge.csv").read_text().startswith("rank,")
    assert "figure7_data" in written
    bare = write_figures(
        tmp_path / "bare", placeholders=False, scores=demo.scores, systems=demo.systems
    )
    assert "figure3" not in bare and "recall_by_turn_data" not in bare
    assert "figure3_data" not in bare and "figure7_data" in bare
