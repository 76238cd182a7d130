"""Render tables as Markdown, CSV (long format) and LaTeX (booktabs).

Markdown cell: ``value ± half-width``, best per column in bold and second in italics, and
`` (n/N)†`` when coverage is below the threshold, e.g. ``35.9 ± 2.1 (38/40)†``. Differences are
signed and marked `` (n.s.)`` when not distinguishable from zero. LaTeX: ``\\textbf`` best,
``\\underline`` second, ``$^\\dagger$`` low coverage; intervals are left to the Markdown and
CSV unless ``ci=True``.

Small samples are shown as they are (see :func:`cell_state` and :func:`shown_interval`):

* a value from fewer than two cases has no interval at all (no ``±``, empty ``ci_low`` and
  ``ci_high`` in the CSV): a zero-width interval from one case would read as certainty;
* a cell that expected ``N > 0`` cases but has none (``n = 0``, e.g. every dialogue failed)
  shows its coverage ``0/N``;
* ``—`` (LaTeX ``---``) is kept for cells where the metric does not apply: no cases expected
  (``N`` is ``None`` or 0: no judge configured, a number the paper does not report, ...);
* a group of a grouped table that no dialogue falls into shows ``n = 0``.

A metric whose missing value means "not applicable" (its declaration's ``missing_is``) marks
the dialogues it does not apply to apart from failures: `` (k n/a)‡`` after the value (LaTeX
``$^\\ddagger$``); † then compares n with the dialogues where it applies, ``N − k``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Literal, Protocol

from lecode.report.model import Cell, Row
from lecode.report.results import display_value
from lecode.report.spec import SECTION_TITLES

MISSING_MD = "—"
MISSING_TEX = "---"
DEFAULT_THRESHOLD = 0.9

SECTION_GROUPS: dict[str, str] = {
    "effectiveness": "Clarification Capability",
    "efficiency": "Clarification Capability",
    "auto": "Advice Quality",
    "llm": "Advice Quality",
}


CellState = Literal["value", "no_data", "not_applicable", "empty"]
MIN_CASES_FOR_INTERVAL = 2


class ColumnLike(Protocol):
    """A metrics column as the renderers read it (a metric, or a document's column)."""

    @property
    def key(self) -> str: ...
    @property
    def display_header(self) -> str: ...
    @property
    def section(self) -> str | None: ...


class PlainTable(Protocol):
    """A table document of statistics or usage as the renderers read it
    (:class:`lecode.report.document.TableDocument`): each cell's ``display`` as printed."""

    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def columns(self) -> Sequence[ColumnLike]: ...
    @property
    def rows(self) -> Sequence[Row]: ...
    @property
    def notes(self) -> Sequence[str]: ...
    @property
    def row_header(self) -> str: ...
    @property
    def setting_header(self) -> str: ...


class MetricsTable(PlainTable, Protocol):
    """A metrics table as the renderers read it: a built :class:`lecode.report.model.Table`
    or its :class:`lecode.report.document.TableDocument`, whose rows and cells are the same."""

    @property
    def has_setting(self) -> bool: ...
    @property
    def has_groups(self) -> bool: ...


def cell_state(cell: Cell) -> CellState:
    """Whether ``cell`` has a value, expected cases but none present, or does not apply.

    ``no_data``: no value, ``n == 0`` of ``N > 0`` expected cases (e.g. every dialogue failed),
    shown as ``0/N``. ``not_applicable``: no value and nothing expected (``N`` is ``None`` or
    0), or no value for another reason (an offset to a number the paper does not report),
    shown as ``—``.
    """
    if cell.value is not None:
        return "value"
    if cell.n == 0 and cell.N == 0 and cell.aggregation == "group_mean":
        return "empty"
    if cell.n_na and cell.n_na == cell.N:
        return "not_applicable"
    if cell.n == 0 and cell.N:
        return "no_data"
    return "not_applicable"


def shown_interval(cell: Cell) -> tuple[float, float] | None:
    """The cell's interval as printed: ``None`` without bounds or with fewer than two cases."""
    if cell.value is None or cell.ci_low is None or cell.ci_high is None:
        return None
    if cell.n is not None and cell.n < MIN_CASES_FOR_INTERVAL:
        return None
    return cell.ci_low, cell.ci_high


def shown_half_width(cell: Cell) -> float | None:
    """Half-width of :func:`shown_interval`, or ``None`` when no interval is shown."""
    interval = shown_interval(cell)
    return None if interval is None else (interval[1] - interval[0]) / 2.0


def no_data_text(cell: Cell) -> str:
    """Coverage text of a ``no_data`` cell, e.g. ``0/40``."""
    return f"{cell.n or 0}/{cell.N}"


#: How an empty group of a grouped table is shown.
EMPTY_GROUP = "n = 0"


def not_applicable_text(cell: Cell) -> str:
    """`` (k n/a)‡`` for a cell whose metric does not apply to k > 0 of its dialogues."""
    return f" ({cell.n_na} n/a)‡" if cell.n_na else ""


def _number(value: float, signed: bool) -> str:
    v = display_value(value)
    return f"{v:+.1f}" if signed else f"{v:.1f}"


def is_signed(row: Row) -> bool:
    return row.kind in ("delta", "offset")


# --------------------------------------------------------------------------- Markdown


def markdown_cell(cell: Cell, row: Row, threshold: float = DEFAULT_THRESHOLD) -> str:
    """One Markdown cell (see the module docstring); ``0/N`` or ``—`` without a value."""
    state = cell_state(cell)
    if state == "no_data":
        return no_data_text(cell) + not_applicable_text(cell)
    if state == "empty":
        return EMPTY_GROUP
    if cell.value is None:
        return MISSING_MD + not_applicable_text(cell)
    text = _number(cell.value, is_signed(row))
    if row.kind == "paper":
        return text
    if cell.rank == 1:
        text = f"**{text}**"
    elif cell.rank == 2:
        text = f"*{text}*"
    hw = shown_half_width(cell)
    if hw is not None:
        text += f" ± {display_value(hw):.1f}"
    if cell.coverage_below(threshold):
        text += f" ({cell.n}/{cell.applicable_n})†"
    text += not_applicable_text(cell)
    if is_signed(row) and cell.distinguishable is False:
        text += " (n.s.)"
    return text


def _md_line(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


_MD_SPECIAL = {"|": "\\|", "&": "&amp;", "<": "&lt;", ">": "&gt;"}


def md_text(text: str) -> str:
    """Text in a Markdown table as text: a ``|`` does not end the cell, and HTML in a label
    (``<script>``, ``<img onerror=...>``) is shown, never interpreted."""
    return "".join(_MD_SPECIAL.get(ch, ch) for ch in text)


def _leading(table: MetricsTable) -> list[str]:
    return [table.row_header] + ([table.setting_header] if table.has_setting else [])


def row_labels(table: MetricsTable) -> list[list[str]]:
    """First columns per row; a label repeated on consecutive rows is shown once."""
    out: list[list[str]] = []
    previous = None
    for r in table.rows:
        key = (r.group, r.label)
        label = r.label if key != previous or not table.has_setting else ""
        previous = key
        out.append([label] + ([r.setting] if table.has_setting else []))
    return out


def render_markdown(table: MetricsTable, *, threshold: float = DEFAULT_THRESHOLD) -> str:
    lead = _leading(table)
    header = [md_text(h) for h in lead + [m.display_header for m in table.columns]]
    lines = [f"### {md_text(table.title)}", "", _md_line(header)]
    lines.append(_md_line([":--"] * len(lead) + ["--:"] * len(table.columns)))
    group = None
    for r, labels in zip(table.rows, row_labels(table), strict=True):
        if table.has_groups and r.group != group:
            group = r.group
            lines.append(_md_line([f"**{md_text(r.group)}**"] + [""] * (len(header) - 1)))
        cells = [markdown_cell(c, r, threshold) for c in r.cells]
        lines.append(_md_line([md_text(x) for x in labels] + cells))
    if table.notes:
        lines.append("")
        lines.extend(f"- {md_text(note)}" for note in table.notes)
    return "\n".join(lines) + "\n"


def render_plain_markdown(table: PlainTable) -> str:
    """A statistics table (Table 2, noise, sentinel) as Markdown: each cell as its document
    prints it."""
    lead = [table.row_header] + ([table.setting_header] if table.setting_header else [])
    lines = [f"### {md_text(table.title)}", ""]
    lines.append(
        _md_line([md_text(h) for h in (*lead, *(c.display_header for c in table.columns))])
    )
    lines.append(_md_line([":--"] * len(lead) + ["--:"] * len(table.columns)))
    for r in table.rows:
        labels = [r.label] + ([r.setting] if table.setting_header else [])
        lines.append(_md_line([*(md_text(x) for x in labels), *(c.display for c in r.cells)]))
    if table.notes:
        lines.append("")
        lines.extend(f"- {md_text(note)}" for note in table.notes)
    return "\n".join(lines) + "\n"


def fmt_stat(fmt: str, value: float) -> str:
    return MISSING_MD if value != value else fmt.format(value)


# --------------------------------------------------------------------------- CSV

CSV_COLUMNS = (
    "table",
    "group",
    "label",
    "setting",
    "kind",
    "expert",
    "strategy",
    "metric",
    "header",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "N",
    "rank",
    "p_value",
    "p_adjusted",
    "display",
    "status",
)


def _csv_num(x: float | int | bool | None) -> str:
    if x is None:
        return ""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    return f"{round(x, 6) + 0.0!r}"


def render_csv(table: MetricsTable, *, threshold: float = DEFAULT_THRESHOLD) -> str:
    """Long format: one line per (row, metric); values on the display scale, unrounded.

    ``ci_low``/``ci_high`` are empty where no interval is shown (fewer than two cases);
    ``status`` is :func:`cell_state` (``value``, ``no_data`` or ``not_applicable``).
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in table.rows:
        for m, c in zip(table.columns, r.cells, strict=True):
            interval = shown_interval(c)
            lo, hi = interval if interval is not None else (None, None)
            w.writerow(
                [
                    table.name,
                    r.group,
                    r.label,
                    r.setting,
                    r.kind,
                    r.expert,
                    r.strategy,
                    m.key,
                    m.display_header,
                    _csv_num(c.value),
                    _csv_num(lo),
                    _csv_num(hi),
                    _csv_num(c.n),
                    _csv_num(c.N),
                    _csv_num(c.rank),
                    _csv_num(c.p_value),
                    _csv_num(c.p_adjusted),
                    markdown_cell(c, r, threshold),
                    cell_state(c),
                ]
            )
    return buf.getvalue()


def render_stats_csv(table: PlainTable) -> str:
    """A statistics table as CSV: one line per statistic, unrounded, empty where missing."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["statistic", "name", *(c.key for c in table.columns)])
    for r in table.rows:
        w.writerow([r.key, r.label, *(_csv_num(c.value) for c in r.cells)])
    return buf.getvalue()


# --------------------------------------------------------------------------- LaTeX

_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "|": r"\textbar{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}
_TEX_UNICODE = {
    "±": r"$\pm$",
    "†": r"$^\dagger$",
    "‡": r"$^\ddagger$",
    "—": "---",
    "–": "--",
    "−": "$-$",
    "Δ": r"$\Delta$",
    "↓": r"$\downarrow$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "×": r"$\times$",
}


def latex_text(text: str) -> str:
    """Escape LaTeX specials and map the few symbols the tables use to LaTeX."""
    out = []
    for ch in text:
        out.append(_TEX_SPECIAL.get(ch) or _TEX_UNICODE.get(ch) or ch)
    return "".join(out)


def latex_cell(
    cell: Cell, row: Row, threshold: float = DEFAULT_THRESHOLD, ci: bool = False, top: int = 0
) -> str:
    """One LaTeX cell; ``0/N`` or ``---`` without a value, ``\\pm`` only with ``ci``."""
    state = cell_state(cell)
    na = r"$^\ddagger$" if cell.n_na else ""
    if state == "no_data":
        return no_data_text(cell) + na
    if state == "empty":
        return f"${EMPTY_GROUP}$"
    if cell.value is None:
        return MISSING_TEX + na
    number = _number(cell.value, is_signed(row))
    text = f"${number}$" if is_signed(row) else number
    if row.kind == "paper":
        return text
    if cell.rank == 1:
        text = rf"\textbf{{{text}}}"
    elif cell.rank == 2:
        text = rf"\underline{{{text}}}"
    if top and cell.rank is not None and cell.rank <= top:
        text = rf"\textcolor{{blue}}{{{text}}}"
    hw = shown_half_width(cell)
    if ci and hw is not None:
        text += rf"\,{{\scriptsize$\pm${display_value(hw):.1f}}}"
    if cell.coverage_below(threshold):
        text += r"$^\dagger$"
    text += na
    if is_signed(row) and cell.distinguishable is False:
        text += r"\textsuperscript{n.s.}"
    return text


def _runs(values: Sequence[str]) -> list[tuple[str, int, int]]:
    """(value, first index, last index) of runs of equal consecutive values."""
    runs: list[tuple[str, int, int]] = []
    for i, v in enumerate(values):
        if runs and runs[-1][0] == v:
            runs[-1] = (v, runs[-1][1], i)
        else:
            runs.append((v, i, i))
    return runs


def _header_level(values: Sequence[str], offset: int) -> list[str]:
    cells: list[str] = []
    rules: list[str] = []
    for v, a, b in _runs(values):
        width = b - a + 1
        cells.append(
            rf"\multicolumn{{{width}}}{{c}}{{{latex_text(v)}}}" if width > 1 else latex_text(v)
        )
        rules.append(rf"\cmidrule(lr){{{a + offset + 1}-{b + offset + 1}}}")
    return [" & ".join([""] * offset + cells) + r" \\", " ".join(rules)]


def _metric_header(m: ColumnLike) -> str:
    return latex_text(m.display_header)


def render_latex(
    table: MetricsTable, *, threshold: float = DEFAULT_THRESHOLD, ci: bool = False, top: int = 0
) -> str:
    """The table in LaTeX (booktabs). ``top``: also colour each column's ``top`` best values
    blue, as the paper's Table 3 marks its top 6 (needs ``xcolor``); 0: off."""
    lead = _leading(table)
    n_lead = len(lead)
    ncols = n_lead + len(table.columns)
    spec = "l" * n_lead + "r" * len(table.columns)
    lines = [
        r"% requires \usepackage{booktabs}" + (r" and \usepackage{xcolor}" if top else ""),
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        rf"\caption{{{latex_text(table.title)}}}",
        rf"\label{{tab:{table.name}}}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
    ]
    sections = [m.section for m in table.columns]
    groups = [SECTION_GROUPS.get(s or "", "") for s in sections]
    if len(set(groups)) > 1:
        lines.extend(_header_level(groups, n_lead))
    lines.extend(_header_level([SECTION_TITLES.get(s or "", s or "") for s in sections], n_lead))
    lines.append(
        " & ".join([latex_text(x) for x in lead] + [_metric_header(m) for m in table.columns])
        + r" \\"
    )
    lines.append(r"\midrule")
    group = None
    for r, labels in zip(table.rows, row_labels(table), strict=True):
        if table.has_groups and r.group != group:
            if group is not None:
                lines.append(r"\midrule")
            group = r.group
            lines.append(rf"\multicolumn{{{ncols}}}{{l}}{{\textit{{{latex_text(r.group)}}}}} \\")
        cells = [latex_cell(c, r, threshold, ci, top) for c in r.cells]
        lines.append(" & ".join([latex_text(x) for x in labels] + cells) + r" \\")
    lines.append(r"\bottomrule")
    lines.append(r"\end{tabular}")
    notes = [n for n in table.notes if ci or not n.startswith("±")]
    if top:
        notes.append(f"top {top} per column in blue")
    if notes:
        lines.append(r"\par\smallskip")
        lines.append(r"{\footnotesize " + "; ".join(latex_text(n) for n in notes) + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def render_stats_latex(table: PlainTable) -> str:
    lines = [
        r"% requires \usepackage{booktabs}",
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{latex_text(table.title)}}}",
        rf"\label{{tab:{table.name}}}",
        r"\begin{tabular}{l" + "r" * len(table.columns) + "}",
        r"\toprule",
        " & ".join(
            [latex_text(table.row_header), *(latex_text(c.display_header) for c in table.columns)]
        )
        + r" \\",
        r"\midrule",
    ]
    for r in table.rows:
        fmt = r.format or "{}"
        cells = [MISSING_TEX if c.value is None else fmt.format(float(c.value)) for c in r.cells]
        lines.append(" & ".join([latex_text(r.label), *cells]) + r" \\")
    lines.extend([r"\bottomrule", r"\end{tabular}", r"\end{table}"])
    return "\n".join(lines) + "\n"
