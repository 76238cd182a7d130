"""Figures 3a/3b and 7 as the paper describes them; expected numbers worked out by hand.

Figure 3a: "the average number of key facts per dialogue across common consultation scenarios"
(charge types), with key-fact length in jieba words; Figure 3b: words per participant, counted
in jieba words (not characters). Figure 7: zero-shot, few-shot and SFT variants of one base
model (Qwen2.5-7B in the paper), each annotated with its relative change over the zero-shot row.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib as mpl
import polars as pl
import pytest
from matplotlib import cbook
from matplotlib.figure import Figure
from matplotlib.text import Text

from lecode.records import Case, Utterance
from lecode.report.curves import dataset_frame, facts_by_charge, word_count
from lecode.report.figures import (
    build_figures,
    figure3,
    strategy_systems,
    write_figures,
)
from lecode.report.spec import ReportedSystem, coerce_systems
from lecode.score_io import SCORE_SCHEMA
from lecode.text import tokenize

# jieba words (punctuation left out) vs characters, checked in test_word_count
CLIENT_1 = "我被打了，很疼。"  # 我/被/打/了/很/疼: 6 words, 8 characters
CLIENT_2 = "他用刀捅伤了我的手臂"  # 他用/刀/捅/伤/了/我/的/手臂: 8 words, 10 characters
LAWYER = "请问您受伤了吗？"  # 请问/您/受伤/了/吗: 5 words, 8 characters
FACT_4 = "我被打了"  # 4 words
FACT_8 = "对方在2023年借了我五万元"  # 8 words, 14 characters

DIALOGUE = (
    Utterance(speaker="client", text=CLIENT_1),
    Utterance(speaker="lawyer", text=LAWYER),
    Utterance(speaker="client", text=CLIENT_2),
)


def _case(cid: str, ctype: str, charges: tuple[str, ...], facts: tuple[str, ...]) -> Case:
    return Case(
        id=cid,
        initial_query=CLIENT_1,
        dialogue=DIALOGUE,
        facts=facts,
        importance=tuple(1 for _ in facts),
        suggestion="s",
        case_type=(ctype,),
        charge_type=charges,
    )


TRAIN = [
    _case("c1", "刑事", ("故意伤害",), (CLIENT_2, CLIENT_1)),  # 2 facts, 8 + 6 words
    _case("c2", "刑事", ("故意伤害", "诈骗"), (FACT_4,) * 4),  # 4 facts, 16 words, 2 charges
]
TEST = [
    _case("c3", "民事", ("婚姻家庭",), (FACT_8,)),  # 1 fact, 8 words
    _case("c4", "民事", (), (FACT_4,) * 3),  # no charge: not in 3a
]
# charge: (rank, domain, dialogues, facts, mean facts, fact words, mean words per fact)
FACTS_BY_CHARGE = {
    "故意伤害": (1, "刑事", 2, 6, 3.0, 30, 5.0),
    "婚姻家庭": (2, "民事", 1, 1, 1.0, 8, 8.0),
    "诈骗": (3, "刑事", 1, 4, 4.0, 16, 4.0),
}


def test_word_count_is_jieba_words_not_characters() -> None:
    assert word_count(CLIENT_1) == 6 == len(tokenize(CLIENT_1, punctuation=False))
    assert word_count(CLIENT_2) == 8 and word_count(LAWYER) == 5
    assert word_count(FACT_4) == 4 and word_count(FACT_8) == 8
    assert len(FACT_8) == 14  # characters would be counted differently


def test_dataset_frame_counts_jieba_words() -> None:
    frame = dataset_frame(TRAIN, "train")
    row = frame.row(0, named=True)
    assert row["client_words"] == 14 and row["lawyer_words"] == 5
    assert row["client_chars"] == 18 and row["lawyer_chars"] == 8
    assert row["fact_words"] == [8, 6]


def test_facts_by_charge_hand_example() -> None:
    frame = pl.concat([dataset_frame(TRAIN, "train"), dataset_frame(TEST, "test")])
    got = facts_by_charge(frame)
    assert got.columns == [
        "rank",
        "charge",
        "case_type",
        "dialogues",
        "facts",
        "mean_facts",
        "fact_words",
        "mean_fact_words",
    ]
    assert {r[1]: r[:1] + r[2:] for r in got.iter_rows()} == FACTS_BY_CHARGE


def _bars(ax) -> dict[str, float]:  # noqa: ANN001
    names = [t.get_text() for t in ax.get_yticklabels()]
    widths = [p.get_width() for p in ax.containers[0]]
    return dict(zip(names, widths, strict=True))


def test_figure3a_plots_key_facts_per_dialogue_by_charge_and_writes_csv(tmp_path: Path) -> None:
    assert "jieba" in (figure3.__doc__ or "")
    figs, _ = build_figures(train_cases=TRAIN, test_cases=TEST)
    axes = figs["figure3"].axes
    assert _bars(axes[0]) == {k: v[4] for k, v in FACTS_BY_CHARGE.items()}
    assert "key facts per dialogue" in axes[0].get_xlabel()
    assert _bars(axes[1]) == {k: v[6] for k, v in FACTS_BY_CHARGE.items()}
    assert "jieba words" in axes[1].get_xlabel()
    assert "jieba words" in axes[2].get_ylabel()

    write_figures(tmp_path, train_cases=TRAIN, test_cases=TEST)
    csv = pl.read_csv(tmp_path / "plots" / "figure3a_facts_by_charge.csv")
    assert {r[1]: r[:1] + r[2:] for r in csv.iter_rows()} == FACTS_BY_CHARGE
    words = pl.read_csv(tmp_path / "plots" / "figure3b_words_by_speaker.csv")
    assert words.select("speaker", "unit", "dialogues", "mean").rows() == [
        ("client", "jieba words", 4, 14.0),
        ("lawyer", "jieba words", 4, 5.0),
    ]


# --------------------------------------------------------------------------- Figure 7

GROUP = "g"
SYSTEMS = [
    {"expert": "gpt-4", "strategy": "zero_shot", "label": "GPT-4", "group": GROUP},
    {"expert": "gpt-4", "strategy": "few_shot", "label": "GPT-4 (few-shot)", "group": GROUP},
    {"expert": "qwen-max", "strategy": "zero_shot", "label": "Qwen-max", "group": GROUP},
    {"expert": "qwen-max", "strategy": "few_shot", "label": "Qwen-max (few-shot)", "group": GROUP},
    {"expert": "qwen-max", "strategy": "mediq", "label": "MediQ", "group": GROUP},
    {"expert": "qwen2.5-7b", "strategy": "zero_shot", "label": "Qwen2.5-7B", "group": GROUP},
    {
        "expert": "qwen2.5-7b",
        "strategy": "few_shot",
        "label": "Qwen2.5-7B (few-shot)",
        "group": GROUP,
        "paper_label": "Qwen2.5-7B",
    },
    {"expert": "direct-sft", "strategy": "zero_shot", "label": "Direct SFT", "group": GROUP},
    {"expert": "keyfact-sft", "strategy": "zero_shot", "label": "Key-fact SFT", "group": GROUP},
    {"expert": "keyfact-e-sft", "strategy": "zero_shot", "label": "Key-fact-e SFT", "group": GROUP},
]
# per system and case: weighted_recall, turns, bertscore_f1, overall (judge 1..10)
VALUES = {
    "GPT-4": [(0.5, 6, 0.7, 7.0)],
    "GPT-4 (few-shot)": [(0.4, 7, 0.6, 6.0)],
    "Qwen-max": [(0.5, 5, 0.7, 7.0)],
    "Qwen-max (few-shot)": [(0.45, 6, 0.68, 6.5)],
    "MediQ": [(0.3, 3, 0.6, 6.0)],
    "Qwen2.5-7B": [(0.30, 9, 0.50, 4.0), (0.50, 11, 0.70, 6.0)],  # means 40, 10, 60, 50
    "Qwen2.5-7B (few-shot)": [(0.36, 12, 0.57, 4.5)],  # -10 %, +20 %, -5 %, -10 %
    "Direct SFT": [(0.44, 8, 0.63, 5.5)],  # +10 %, -20 %, +5 %, +10 %
    "Key-fact SFT": [(0.50, 6, 0.66, 6.0)],  # +25 %, -40 %, +10 %, +20 %
    # the paper's WR +59.2 %, BS +12.7 %, OA +30.1 %; AT -50 % (turns are whole numbers)
    "Key-fact-e SFT": [(0.6368, 4, 0.6762, 6.505), (0.6368, 6, 0.6762, 6.505)],
}
PAPER_ROWS = [
    "Qwen2.5-7B",
    "Qwen2.5-7B (few-shot)",
    "Direct SFT",
    "Key-fact SFT",
    "Key-fact-e SFT",
]
CHANGES = {  # system: (WR, AT, BS, OA) change over Qwen2.5-7B in %
    "Qwen2.5-7B (few-shot)": (-10.0, 20.0, -5.0, -10.0),
    "Direct SFT": (10.0, -20.0, 5.0, 10.0),
    "Key-fact SFT": (25.0, -40.0, 10.0, 20.0),
    "Key-fact-e SFT": (59.2, -50.0, 12.7, 30.1),
}
STRATEGY_METRICS = ["weighted_recall", "turns", "bertscore_f1", "overall"]


def _scores(systems: list[dict] = SYSTEMS, values: dict | None = None) -> pl.DataFrame:  # noqa: B006
    values = VALUES if values is None else values
    rows = []
    for s in systems:
        for i, (wr, turns, bs, oa) in enumerate(values[s["label"]]):
            row: dict = {k: None for k in SCORE_SCHEMA}
            row.update(
                case_id=f"c{i}",
                expert=s["expert"],
                strategy=s["strategy"],
                stop_reason="advice",
                n_facts=5,
                turns=turns,
                weighted_recall=wr,
                bertscore_f1=bs,
                overall=oa,
            )
            rows.append(row)
    return pl.DataFrame(rows, schema=SCORE_SCHEMA, orient="row")


def _texts(fig: Figure) -> list[str]:
    out = []
    for t in fig.findobj(Text):
        raw = t.get_text()
        if raw:
            assert not cbook.is_math_text(raw), raw
            out.append(raw.replace(r"\$", "$"))
    return out


def test_strategy_rows_of_the_named_base_model() -> None:
    systems = coerce_systems(SYSTEMS)
    assert [s.label for s in strategy_systems(systems, "qwen2.5-7b")] == PAPER_ROWS
    # default: the expert with the most strategies (qwen-max: three); MediQ is no variant
    assert [s.label for s in strategy_systems(systems)] == [
        "Qwen-max",
        "Qwen-max (few-shot)",
        *PAPER_ROWS[2:],
    ]
    with pytest.raises(ValueError, match="nope"):
        strategy_systems(systems, "nope")
    # SFT variants only when the label ends with SFT; base rows come zero-shot first
    few_first = [ReportedSystem("m", "few_shot", "M FS"), ReportedSystem("m", "zero_shot", "M")]
    assert [s.label for s in strategy_systems(few_first)] == ["M", "M FS"]


def test_figure7_relative_changes_in_plot_and_csv(tmp_path: Path) -> None:
    written = write_figures(tmp_path, scores=_scores(), systems=SYSTEMS, strategy_base="qwen2.5-7b")
    assert (tmp_path / "figures" / "figure7.png").is_file()
    csv_path = tmp_path / "plots" / "figure7_strategies.csv"
    assert csv_path in written["figure7_data"]
    data = pl.read_csv(csv_path)
    assert data["metric"].unique(maintain_order=True).to_list() == STRATEGY_METRICS
    for key in STRATEGY_METRICS:
        part = data.filter(pl.col("metric") == key)
        assert part["system"].to_list() == PAPER_ROWS
        assert set(part["base"].to_list()) == {"Qwen2.5-7B"}
        assert part["change_pct"][0] is None  # the base row itself
    base = data.filter(pl.col("system") == "Qwen2.5-7B")
    assert base["value"].to_list() == pytest.approx([40.0, 10.0, 60.0, 50.0])
    assert base["expert"].to_list() == ["qwen2.5-7b"] * 4
    for system, changes in CHANGES.items():
        got = data.filter(pl.col("system") == system)["change_pct"].to_list()
        assert got == pytest.approx(changes, abs=0.05), system

    figs, _ = build_figures(scores=_scores(), systems=SYSTEMS, strategy_base="qwen2.5-7b")
    fig = figs["figure7"]
    texts = _texts(fig)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["WR", "AT↓", "BS", "OA"]
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == PAPER_ROWS
    for needle in ("(+59.2%)", "(-50.0%)", "(+12.7%)", "(+30.1%)", "(-10.0%)", "(+20.0%)"):
        assert any(needle in t for t in texts), needle
    assert "40.0" in texts  # the base bar carries its value


def test_figure7_default_base_and_placeholder_csv(tmp_path: Path) -> None:
    write_figures(tmp_path / "a", scores=_scores(), systems=SYSTEMS)
    data = pl.read_csv(tmp_path / "a" / "plots" / "figure7_strategies.csv")
    rows = data.filter(pl.col("metric") == "weighted_recall")["system"].to_list()
    assert rows == ["Qwen-max", "Qwen-max (few-shot)", *PAPER_ROWS[2:]]
    write_figures(tmp_path / "b")
    empty = (tmp_path / "b" / "plots" / "figure7_strategies.csv").read_text()
    assert empty.startswith("system,expert,strategy,metric,")
    assert (
        (tmp_path / "b" / "plots" / "figure3a_facts_by_charge.csv")
        .read_text()
        .startswith("rank,charge,case_type,dialogues,facts,mean_facts")
    )


def test_dollar_labels_stay_literal_in_figures_3_and_7() -> None:
    base = "Qwen $7B$ a_b"
    sft = "cheap $x_$ SFT"
    systems = [
        {"expert": "q", "strategy": "zero_shot", "label": base},
        {"expert": "q", "strategy": "few_shot", "label": "_few"},
        {"expert": "s", "strategy": "zero_shot", "label": sft},
    ]
    values = {base: VALUES["Qwen2.5-7B"], "_few": VALUES["Direct SFT"], sft: VALUES["Key-fact SFT"]}
    figs, _ = build_figures(scores=_scores(systems, values), systems=systems, strategy_base="q")
    fig7 = figs["figure7"]
    assert {base, "_few", sft} <= set(_texts(fig7))
    cases = [_case("d", "a_b $y$", ("$5 fine_x",), (FACT_4,))]
    fig3 = build_figures(test_cases=cases)[0]["figure3"]
    assert {"a_b $y$", "$5 fine_x"} <= set(_texts(fig3))
    for fig, label in ((fig7, base), (fig3, "$5 fine_x")):
        fig.savefig(io.BytesIO(), format="png")  # raises on a mathtext error
        buf = io.StringIO()
        with mpl.rc_context({"svg.fonttype": "none"}):
            fig.savefig(buf, format="svg")
        assert label in buf.getvalue()  # drawn as this very string, not as math
