"""One self-contained HTML report: tables, figures (base64 PNG), run metadata, transcripts.

No external resource is referenced: CSS and JavaScript are inline, figures are data URIs and
the viewer's data is an inline JSON block. :func:`render_html` is pure (inputs -> string);
:func:`write_html` computes what it needs and writes the file; :func:`write_report` writes
tables, figures and ``index.html`` in one go.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

import polars as pl

from lecode.recordio import atomic_write_text
from lecode.records import Case, Judgement, Matches, Transcript
from lecode.report.assets import CSS, JS
from lecode.report.figures import FIGURE_CAPTIONS, build_figures, png_bytes, write_figures
from lecode.report.fonts import cjk_fonts
from lecode.report.model import Cell, Row, StatsTable, Table
from lecode.report.outputs import ReportSettings, build_tables, write_tables
from lecode.report.paper import PaperNumbers, load_paper_numbers
from lecode.report.render import DEFAULT_THRESHOLD, fmt_stat, is_signed, row_labels
from lecode.report.results import display_value
from lecode.report.spec import METRICS, System, coerce_systems
from lecode.report.tables import table2
from lecode.report.usage import usage_frame, usage_summary
from lecode.report.viewer import viewer_data

TABLE_ORDER = ("table2", "table3", "paired", "table6", "table7", "comparison")

# Cell provenance: hover shows its first lines, a click pins all of it in a panel.
PROVENANCE_CSS = (
    "td.prov{cursor:help}td.prov:hover{outline:1px dotted #777}"
    "#prov-panel{position:fixed;right:1em;bottom:1em;max-width:min(70em,90vw);max-height:60vh;"
    "overflow:auto;background:#fff;border:1px solid #888;padding:.4em .6em;z-index:20;"
    "box-shadow:0 2px 10px rgba(0,0,0,.25)}#prov-panel pre{white-space:pre-wrap;margin:0;"
    "font-size:12px}#prov-panel button{float:right}"
)
PROVENANCE_PANEL = (
    '<div id="prov-panel" hidden><button type="button" aria-label="close">×</button>'
    "<pre></pre></div>"
)
PROVENANCE_JS = r"""
(function () {
  var data = JSON.parse(document.getElementById("provenance-data").textContent);
  var panel = document.getElementById("prov-panel");
  var pre = panel.querySelector("pre");
  document.querySelectorAll("td[data-cell]").forEach(function (td) {
    var text = data[td.getAttribute("data-cell")];
    if (!text) { return; }
    td.classList.add("prov");
    var head = text.split("\n").slice(0, 3).join("\n");
    td.title = (td.title ? td.title + "\n" : "") + head + "\n(click: full provenance)";
    td.addEventListener("click", function () { pre.textContent = text; panel.hidden = false; });
  });
  panel.querySelector("button").addEventListener("click", function () { panel.hidden = true; });
})();
"""


# --------------------------------------------------------------------------- tables


def cell_id(table: str, label: str, setting: str, key: str) -> str:
    """The ``data-cell`` id of a table cell (as in the tables' provenance JSON)."""
    return f"{table}|{label}|{setting}|{key}"


def _cell_html(cell: Cell, row: Row, threshold: float, cid: str = "") -> str:
    cell_attr = f' data-cell="{escape(cid)}"' if cid else ""
    if cell.value is None:
        n = "" if cell.n is None else f' title="no data (n={cell.n}/{cell.N})"'
        return f'<td class="num"{cell_attr}{n}>—</td>'
    v = display_value(cell.value)
    text = f"{v:+.1f}" if is_signed(row) else f"{v:.1f}"
    if row.kind == "paper":
        return f'<td class="num"{cell_attr}>{text}</td>'
    if cell.rank == 1:
        text = f"<strong>{text}</strong>"
    elif cell.rank == 2:
        text = f'<span class="second">{text}</span>'
    tips = []
    if cell.ci_low is not None and cell.ci_high is not None:
        tips.append(f"CI [{cell.ci_low:.2f}, {cell.ci_high:.2f}]")
        text += f' <span class="ci">± {display_value((cell.ci_high - cell.ci_low) / 2):.1f}</span>'
    if cell.n is not None:
        tips.append(f"n/N = {cell.n}/{cell.N}")
    if cell.p_adjusted is not None:
        tips.append(f"p = {cell.p_value:.4f}, Holm p = {cell.p_adjusted:.4f}")
    if cell.coverage_below(threshold):
        text += f' <span class="cov">({cell.n}/{cell.N})†</span>'
    if is_signed(row) and cell.distinguishable is False:
        text += ' <span class="ns">(n.s.)</span>'
    return f'<td class="num"{cell_attr} title="{escape("; ".join(tips))}">{text}</td>'


def table_html(table: Table, *, threshold: float = DEFAULT_THRESHOLD) -> str:
    lead = [table.row_header] + ([table.setting_header] if table.has_setting else [])
    head = "".join(f"<th>{escape(h)}</th>" for h in lead)
    head += "".join(
        f'<th title="{escape(m.key)}">{escape(m.display_header)}</th>' for m in table.metrics
    )
    body = []
    group = None
    ncols = len(lead) + len(table.metrics)
    for r, labels in zip(table.rows, row_labels(table), strict=True):
        if table.has_groups and r.group != group:
            group = r.group
            body.append(f'<tr class="group"><th colspan="{ncols}">{escape(r.group)}</th></tr>')
        cells = "".join(f"<th>{escape(x)}</th>" for x in labels)
        cells += "".join(
            _cell_html(c, r, threshold, cell_id(table.name, r.label, r.setting, m.key))
            for c, m in zip(r.cells, table.metrics, strict=True)
        )
        body.append(f'<tr data-kind="{r.kind}">{cells}</tr>')
    notes = "".join(f"<li>{escape(n)}</li>" for n in table.notes)
    return (
        f'<div class="scroll"><table class="metrics" id="tbl-{escape(table.name)}">'
        f"<thead><tr>{head}</tr></thead>"
        f'<tbody>{"".join(body)}</tbody></table></div><ul class="notes">{notes}</ul>'
    )


def stats_table_html(table: StatsTable) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in ("Dataset", *table.columns))
    rows = []
    keys = table.keys or table.rows
    cols = table.column_keys or table.columns
    for name, key, values, fmt in zip(table.rows, keys, table.values, table.formats, strict=True):
        cells = "".join(
            f'<td class="num" data-cell="{escape(cell_id(table.name, name, "", f"{key}:{c}"))}">'
            f"{escape(fmt_stat(fmt, v))}</td>"
            for v, c in zip(values, cols, strict=True)
        )
        rows.append(f"<tr><th>{escape(name)}</th>{cells}</tr>")
    notes = "".join(f"<li>{escape(n)}</li>" for n in table.notes)
    return (
        f'<div class="scroll"><table class="metrics" id="tbl-{escape(table.name)}">'
        f"<thead><tr>{head}</tr></thead>"
        f'<tbody>{"".join(rows)}</tbody></table></div><ul class="notes">{notes}</ul>'
    )


def usage_html(summary: pl.DataFrame) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in summary.columns)
    rows = []
    for row in summary.iter_rows():
        cells = []
        for v in row:
            if isinstance(v, float):
                cells.append(f'<td class="num">{v:.4f}</td>')
            elif isinstance(v, int):
                cells.append(f'<td class="num">{v:,}</td>')
            else:
                cells.append(f"<td>{escape(str(v))}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f'<div class="scroll"><table class="metrics" id="tbl-usage"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


# --------------------------------------------------------------------------- page


def _json_script(element_id: str, data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    text = text.replace("</", "<\\/").replace("<!--", "<\\u0021--")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def _meta_value(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)


def render_html(
    *,
    title: str = "LeCoDe evaluation report",
    tables: Mapping[str, Table | StatsTable] | None = None,
    figures: Mapping[str, bytes] | None = None,
    viewer: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    usage: pl.DataFrame | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    provenance: Mapping[str, str] | None = None,
) -> str:
    """The report page. ``figures`` are PNG bytes by name; ``viewer`` from :func:`viewer_data`;
    ``provenance``: ``{cell id: text}`` shown on hover and click (see ``lecode.explain``)."""
    tables = tables or {}
    figures = figures or {}
    parts: list[str] = []
    nav = ['<a href="#tables">Tables</a>', '<a href="#figures">Figures</a>']
    if viewer is not None:
        nav.append('<a href="#transcripts">Transcripts</a>')
    nav.append('<a href="#metadata">Run</a>')
    parts.append('<section id="tables"><h2>Tables</h2>')
    ordered = [n for n in TABLE_ORDER if n in tables] + [n for n in tables if n not in TABLE_ORDER]
    for name in ordered:
        t = tables[name]
        parts.append(f"<h3>{escape(t.title)}</h3>")
        parts.append(
            stats_table_html(t) if isinstance(t, StatsTable) else table_html(t, threshold=threshold)
        )
    if usage is not None and usage.height:
        parts.append("<h3>Usage and cost per role</h3>")
        parts.append(usage_html(usage))
    parts.append("</section>")
    parts.append('<section id="figures"><h2>Figures</h2>')
    for name, png in figures.items():
        caption = FIGURE_CAPTIONS.get(name, name)
        b64 = base64.b64encode(png).decode("ascii")
        parts.append(
            f'<figure id="fig-{escape(name)}"><img alt="{escape(caption)}" '
            f'src="data:image/png;base64,{b64}"><figcaption>{escape(caption)}</figcaption></figure>'
        )
    if not figures:
        parts.append('<p class="muted">no figures</p>')
    parts.append("</section>")
    scripts = ""
    if viewer is not None:
        parts.append(
            '<section id="transcripts"><h2>Transcripts</h2>'
            '<p>Systems side by side: <span id="system-picker"></span></p>'
            '<div id="viewer"><div><input id="case-filter" type="search" '
            'placeholder="filter cases"><ul id="case-list"></ul></div>'
            '<div id="case-view"></div></div></section>'
        )
        headers = [[m.key, m.display_header] for m in METRICS]
        scripts = (
            _json_script("viewer-data", viewer)
            + _json_script("metric-headers", headers)
            + f"<script>{JS}</script>"
        )
    if provenance:
        parts.append(PROVENANCE_PANEL)
        scripts += _json_script("provenance-data", dict(provenance))
        scripts += f"<script>{PROVENANCE_JS}</script>"
    meta_rows = "".join(
        f"<tr><td>{escape(str(k))}</td><td>{escape(_meta_value(v))}</td></tr>"
        for k, v in (metadata or {}).items()
    )
    parts.append(
        f'<section id="metadata"><h2>Run</h2><table class="meta">{meta_rows}</table></section>'
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="zh-Hans"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}{PROVENANCE_CSS if provenance else ''}"
        "</style></head><body>"
        f'<header class="top"><h1>{escape(title)}</h1><nav>{"".join(nav)}</nav></header>'
        f"<main>{''.join(parts)}</main>{scripts}</body></html>\n"
    )


def _figure_pngs(figures_dir: Path | None, **inputs: Any) -> dict[str, bytes]:
    if figures_dir is not None and figures_dir.is_dir():
        return {p.stem: p.read_bytes() for p in sorted(figures_dir.glob("*.png"))}
    figs, _ = build_figures(**inputs)
    with cjk_fonts():
        return {name: png_bytes(fig) for name, fig in figs.items()}


def write_html(
    path: str | Path,
    *,
    scores: pl.DataFrame,
    systems: Sequence[System | Mapping[str, Any]],
    n_expected: int,
    train_cases: Iterable[Case] | None = None,
    test_cases: Iterable[Case] | None = None,
    transcripts: Iterable[Transcript] = (),
    matches: Iterable[Matches] = (),
    judgements: Iterable[Judgement] = (),
    paper_numbers: str | Path | PaperNumbers | None = None,
    usage: pl.DataFrame | None = None,
    settings: ReportSettings | None = None,
    metadata: Mapping[str, Any] | None = None,
    figures_dir: str | Path | None = None,
    max_cases: int | None = None,
    title: str = "LeCoDe evaluation report",
    provenance: Mapping[str, str] | None = None,
) -> Path:
    """Compute tables (and figures, unless ``figures_dir`` has PNGs) and write the page."""
    settings = settings or ReportSettings()
    sys_list = coerce_systems(systems)
    train = list(train_cases) if train_cases is not None else None
    test = list(test_cases) if test_cases is not None else None
    match_list = list(matches)
    paper = (
        paper_numbers
        if paper_numbers is None or isinstance(paper_numbers, PaperNumbers)
        else load_paper_numbers(paper_numbers)
    )
    tables: dict[str, Table | StatsTable] = {}
    if train is not None and test is not None:
        tables["table2"] = table2(train, test)
    tables.update(build_tables(scores, sys_list, n_expected, settings=settings, paper=paper))
    figures = _figure_pngs(
        Path(figures_dir) if figures_dir is not None else None,
        scores=scores,
        systems=sys_list,
        train_cases=train,
        test_cases=test,
        matches=match_list or None,
    )
    viewer = (
        viewer_data(
            test,
            sys_list,
            transcripts=transcripts,
            matches=match_list,
            judgements=judgements,
            scores=scores,
            max_cases=max_cases,
        )
        if test is not None
        else None
    )
    page = render_html(
        title=title,
        tables=tables,
        figures=figures,
        viewer=viewer,
        metadata=metadata,
        usage=usage_summary(usage, sys_list) if usage is not None else None,
        threshold=settings.coverage_threshold,
        provenance=provenance,
    )
    out = Path(path)
    atomic_write_text(out, page)
    return out


def write_report(
    out_dir: str | Path,
    *,
    scores: pl.DataFrame,
    systems: Sequence[System | Mapping[str, Any]],
    n_expected: int,
    train_cases: Iterable[Case] | None = None,
    test_cases: Iterable[Case] | None = None,
    transcripts: Iterable[Transcript] = (),
    matches: Iterable[Matches] = (),
    judgements: Iterable[Judgement] = (),
    paper_numbers: str | Path | PaperNumbers | None = None,
    usage: pl.DataFrame | None = None,
    settings: ReportSettings | None = None,
    metadata: Mapping[str, Any] | None = None,
    max_cases: int | None = None,
) -> Path:
    """Tables under ``<out>/tables``, figures under ``<out>/figures`` (data in ``<out>/plots``)
    and ``<out>/index.html``; returns the page's path."""
    out = Path(out_dir)
    sys_list = coerce_systems(systems)
    train = list(train_cases) if train_cases is not None else None
    test = list(test_cases) if test_cases is not None else None
    ts, ms, js = list(transcripts), list(matches), list(judgements)
    if usage is None and ts:
        usage = usage_frame(ts, ms, js)
    write_tables(
        scores,
        sys_list,
        n_expected,
        out / "tables",
        train_cases=train,
        test_cases=test,
        paper_numbers=paper_numbers,
        usage=usage,
        settings=settings,
        metrics_path=out / "metrics.json",
    )
    write_figures(
        out,
        scores=scores,
        systems=sys_list,
        train_cases=train,
        test_cases=test,
        matches=ms or None,
    )
    return write_html(
        out / "index.html",
        scores=scores,
        systems=sys_list,
        n_expected=n_expected,
        train_cases=train,
        test_cases=test,
        transcripts=ts,
        matches=ms,
        judgements=js,
        paper_numbers=paper_numbers,
        usage=usage,
        settings=settings,
        metadata=metadata,
        figures_dir=out / "figures",
        max_cases=max_cases,
    )
