"""Honest small-sample output: no interval from one case, ``0/N`` vs ``—``, literal labels.

Expected strings are worked out by hand from the fixtures below.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import replace

import matplotlib as mpl
import polars as pl
import pytest
from matplotlib import cbook
from matplotlib.figure import Figure
from matplotlib.text import Text

from lecode.metrics.registry import get
from lecode.report.figures import (
    figure3,
    figure5,
    figure6,
    figure7,
    figure_recall_by_turn,
    mpl_text,
    placeholder_figure,
)
from lecode.report.model import Cell, Row, Table
from lecode.report.render import (
    cell_state,
    latex_cell,
    markdown_cell,
    render_csv,
    render_latex,
    render_markdown,
    shown_interval,
)
from lecode.report.spec import ReportedSystem
from lecode.report.tables import paired_table, table3
from lecode.score_io import SCORE_SCHEMA
from lecode.stats import ResamplePlan

PLAN = ResamplePlan(resamples=1000, seed=0)
METRICS = [get("recall"), get("overall")]
ROW = Row(label="x", cells=())


def _rows(
    expert: str, cases: Sequence[str], stop_reason: str = "advice", **columns: Sequence[float]
) -> list[dict]:
    rows = []
    for i, case_id in enumerate(cases):
        row: dict = {k: None for k in SCORE_SCHEMA}
        row.update(case_id=case_id, expert=expert, strategy="s", n_facts=5, stop_reason=stop_reason)
        row.update({k: v[i] for k, v in columns.items()})
        rows.append(row)
    return rows


def _frame(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=SCORE_SCHEMA, orient="row")


def _lines(text: str) -> dict[str, str]:
    """Table body lines by their first column (Markdown ``| label |`` or LaTeX ``label &``)."""
    out = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| :--"):
            out[line.split(" | ")[0][2:]] = line
        elif " & " in line:
            out[line.split(" & ")[0]] = line
    return out


def _csv(table: Table) -> dict[tuple[str, str], dict[str, str]]:
    return {(r["label"], r["metric"]): r for r in csv.DictReader(io.StringIO(render_csv(table)))}


# --------------------------------------------------------------------------- n < 2


ONE_CASE = _frame(
    _rows("solo", ["c0"], recall=[0.7]) + _rows("pair", ["c0", "c1"], recall=[0.4, 0.6])
)
ONE_CASE_SYSTEMS = [ReportedSystem("solo", "s", "Solo"), ReportedSystem("pair", "s", "Pair")]


def test_one_case_has_no_interval_in_markdown_csv_and_latex() -> None:
    t = table3(ONE_CASE, ONE_CASE_SYSTEMS, 2, plan=PLAN, metrics=METRICS[:1])
    md = _lines(render_markdown(t))
    # one case: the mean alone (old code: "**70.0** ± 0.0 (1/2)†")
    assert md["Solo"] == "| Solo | **70.0** (1/2)† |"
    # two cases 0.4, 0.6: resampled means 0.4/0.5/0.6, the 2.5% and 97.5% quantiles 0.4, 0.6
    assert md["Pair"] == "| Pair | *50.0* ± 10.0 |"
    rows = _csv(t)
    solo = rows[("Solo", "recall")]
    assert (solo["value"], solo["ci_low"], solo["ci_high"], solo["n"], solo["N"]) == (
        "70.0",
        "",
        "",
        "1",
        "2",
    )
    assert solo["display"] == "**70.0** (1/2)†"
    pair = rows[("Pair", "recall")]
    assert (pair["ci_low"], pair["ci_high"]) == ("40.0", "60.0")
    tex = _lines(render_latex(t, ci=True))
    assert tex["Solo"] == r"Solo & \textbf{70.0}$^\dagger$ \\"
    assert tex["Pair"] == r"Pair & \underline{50.0}\,{\scriptsize$\pm$10.0} \\"


def test_one_case_cell_never_shows_an_interval() -> None:
    zero_width = Cell(35.9, 35.9, 35.9, n=1, N=1)
    assert markdown_cell(zero_width, ROW) == "35.9"
    assert latex_cell(zero_width, ROW, ci=True) == "35.9"
    assert shown_interval(zero_width) is None
    # even an interval carried over from elsewhere (an offset cell) is dropped for n = 1
    assert markdown_cell(Cell(5.0, 1.0, 9.0, n=1, N=1), ROW) == "5.0"
    assert markdown_cell(Cell(5.0, 1.0, 9.0, n=2, N=2), ROW) == "5.0 ± 4.0"


def test_paired_difference_over_one_common_case_has_no_interval() -> None:
    frame = _frame(_rows("a", ["c0", "c1"], recall=[0.7, 0.9]) + _rows("b", ["c0"], recall=[0.5]))
    systems = [ReportedSystem("a", "s", "A"), ReportedSystem("b", "s", "B")]
    t = paired_table(frame, systems, 2, reference="B", plan=PLAN, metrics=METRICS[:1])
    # one common case: 0.7 - 0.5 = +20.0, p = 1 (old code: "+20.0 ± 0.0 (1/2)† (n.s.)")
    assert _lines(render_markdown(t))["A − B"] == "| A − B | +20.0 (1/2)† (n.s.) |"
    row = _csv(t)[("A − B", "recall")]
    assert (row["ci_low"], row["ci_high"], row["n"]) == ("", "", "1")


# --------------------------------------------------------------------------- 0/N vs —


FAILED = _frame(
    _rows("ok", ["c0", "c1"], recall=[0.4, 0.6], overall=[6.0, 8.0])
    + _rows("failed", ["c0", "c1"], stop_reason="error")
    + _rows("nojudge", ["c0", "c1"], recall=[0.2, 0.4])
)
FAILED_SYSTEMS = [
    ReportedSystem("ok", "s", "OK"),
    ReportedSystem("failed", "s", "Failed"),
    ReportedSystem("nojudge", "s", "No judge"),
]


def _judge_not_applicable(table: Table, label: str) -> Table:
    """What the table builder does for a system without a judge: judge cells do not apply."""
    rows = []
    for r in table.rows:
        if r.label == label:
            cells = tuple(
                Cell() if m.section == "llm" else c
                for m, c in zip(table.metrics, r.cells, strict=True)
            )
            r = r.with_cells(cells)
        rows.append(r)
    return replace(table, rows=tuple(rows))


def test_all_failed_shows_coverage_while_no_judge_shows_dash() -> None:
    built = table3(FAILED, FAILED_SYSTEMS, 2, plan=PLAN, metrics=METRICS)
    t = _judge_not_applicable(built, "No judge")
    md = _lines(render_markdown(t))
    assert md["OK"] == "| OK | **50.0** ± 10.0 | **70.0** ± 10.0 |"
    # every dialogue failed: n = 0 of N = 2, not "—" (old code: "| Failed | — | — |")
    assert md["Failed"] == "| Failed | 0/2 | 0/2 |"
    assert md["No judge"] == "| No judge | *30.0* ± 10.0 | — |"

    rows = _csv(t)
    failed = rows[("Failed", "overall")]
    assert (failed["value"], failed["n"], failed["N"], failed["display"]) == ("", "0", "2", "0/2")
    assert failed["status"] == "no_data"
    nojudge = rows[("No judge", "overall")]
    assert (nojudge["value"], nojudge["n"], nojudge["N"], nojudge["display"]) == ("", "", "", "—")
    assert nojudge["status"] == "not_applicable"
    assert rows[("OK", "overall")]["status"] == "value"

    tex = _lines(render_latex(t))
    assert tex["Failed"] == r"Failed & 0/2 & 0/2 \\"
    assert tex["No judge"] == r"No judge & \underline{30.0} & --- \\"


def test_cell_states() -> None:
    assert cell_state(Cell(None, n=0, N=40)) == "no_data"
    assert markdown_cell(Cell(None, n=0, N=40), ROW) == "0/40"
    assert latex_cell(Cell(None, n=0, N=40), ROW) == "0/40"
    # not applicable: nothing expected (no judge), or a paper number that does not exist
    for cell in (Cell(), Cell(None, n=0, N=0), Cell(None, n=38, N=40)):
        assert cell_state(cell) == "not_applicable"
        assert markdown_cell(cell, ROW) == "—"
        assert latex_cell(cell, ROW) == "---"
    assert cell_state(Cell(1.0, n=1, N=1)) == "value"


# --------------------------------------------------------------------------- labels


LABEL = "GPT-4o ($0.01/$0.03) $x$ a_b"  # four "$": mathtext unless escaped
BAD = "bad $x_$"  # an unbalanced mathtext expression: drawing it raises without escaping
HIDDEN = "_private"  # a legend drops artists whose label starts with "_"
LABELS = [LABEL, BAD, HIDDEN]


def _shown(text: Text) -> str:
    """The string matplotlib draws for ``text`` when it is not mathtext."""
    raw = text.get_text()
    assert not cbook.is_math_text(raw), raw
    return raw.replace(r"\$", "$")


def _texts(fig: Figure) -> list[str]:
    return [_shown(t) for t in fig.findobj(Text) if t.get_text()]


def _draw(fig: Figure) -> str:
    """Save ``fig`` as PNG and PDF (raises on a mathtext error); return it as SVG with text."""
    fig.savefig(io.BytesIO(), format="png")
    fig.savefig(io.BytesIO(), format="pdf")
    buf = io.StringIO()
    with mpl.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format="svg")
    return buf.getvalue()


def _check(fig: Figure | None, expected: Sequence[str]) -> None:
    assert fig is not None
    shown = _texts(fig)
    for label in expected:
        assert label in shown, (label, shown)
    assert LABEL in _draw(fig)  # drawn as this very string, not as math


def test_mpl_text_escapes_dollars_only() -> None:
    assert mpl_text(LABEL) == r"GPT-4o (\$0.01/\$0.03) \$x\$ a_b"
    assert mpl_text("a_b ^c \\d") == "a_b ^c \\d"


def test_system_labels_are_literal_in_every_figure() -> None:
    means = pl.DataFrame(
        {
            "system": [s for s in LABELS for _ in range(4)],
            "metric": ["recall", "weighted_recall", "bertscore_f1", "overall"] * 3,
            "value": [50.0, 40.0, 80.0, 70.0] * 3,
            "n": [2] * 12,
        }
    )
    fig7 = figure7(means, LABELS, title="Strategies on $m$_1")
    _check(fig7, [*LABELS, "Strategies on $m$_1"])
    _check(figure6(means, LABELS), LABELS)

    curve = pl.DataFrame(
        {
            "system": LABELS,
            "metric": ["weighted_recall"] * 3,
            "bin": ["1–5"] * 3,
            "bin_lo": [1] * 3,
            "bin_hi": [6] * 3,
            "value": [40.0, 50.0, 60.0],
            "n": [2] * 3,
        }
    )
    _check(figure5(curve, LABELS), LABELS)

    rbt = pl.DataFrame(
        {
            "system": [s for s in LABELS for _ in range(2)],
            "k": [0, 1] * 3,
            "recall": [0.0, 50.0] * 3,
            "weighted_recall": [None, None] * 3,
            "n": [2] * 6,
        },
        schema_overrides={"weighted_recall": pl.Float64},
    )
    _check(figure_recall_by_turn(rbt, LABELS), LABELS)


def test_dataset_labels_and_placeholder_are_literal() -> None:
    cases = pl.DataFrame(
        {
            "case_id": ["a", "b"],
            "split": ["test", "test"],
            "case_type": [LABEL, "a_b $y$"],
            "charges": [["$5 fine_x"], ["$5 fine_x"]],
            "n_facts": [3, 4],
            "utterances": [6, 8],
            "client_chars": [100, 120],
            "lawyer_chars": [80, 90],
        }
    )
    _check(figure3(cases), [LABEL, "a_b $y$", "$5 fine_x"])
    shown = _texts(placeholder_figure("x", reason="cost $1 per $x$"))
    assert "x\ncost $1 per $x$" in shown


@pytest.mark.parametrize("label", [LABEL, BAD])
def test_unescaped_label_would_be_mathtext(label: str) -> None:
    # negative control: the checks above would notice an unescaped label
    assert cbook.is_math_text(label)
