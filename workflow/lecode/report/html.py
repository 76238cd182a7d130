"""One self-contained HTML report: tables, figures (base64 PNG), run metadata, transcripts.

No external resource is referenced: CSS and JavaScript are inline, figures are data URIs and
the viewer's data is an inline JSON block. The tables are shown from the documents the tables
job wrote (:mod:`lecode.report.document`): the same numbers, intervals and marks as the
Markdown, and each number's provenance on hover and click; nothing is recomputed here.
:func:`render_html` is pure (inputs -> string); :func:`write_html` reads the documents and
writes the file.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

import polars as pl

from lecode.metrics.registry import with_tag
from lecode.recordio import atomic_write_text
from lecode.records import Case, Judgement, Matches, Transcript
from lecode.report import table_registry
from lecode.report.assets import CSS, JS
from lecode.report.document import TableDocument, load_all
from lecode.report.explain import html_summaries
from lecode.report.figures import FIGURE_CAPTIONS, build_figures, png_bytes
from lecode.report.fonts import cjk_fonts
from lecode.report.model import Cell, Row
from lecode.report.render import (
    DEFAULT_THRESHOLD,
    EMPTY_GROUP,
    cell_state,
    is_signed,
    no_data_text,
    not_applicable_text,
    row_labels,
    shown_interval,
)
from lecode.report.results import display_value
from lecode.report.spec import ReportedSystem, coerce_systems
from lecode.report.viewer import viewer_data

#: Table 2, the declared tables in their order (:mod:`lecode.report.table_registry`), usage;
#: any other table follows.
TABLE_ORDER = ("table2", *table_registry.names(), "usage")

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


def _cell_html(cell: Cell, row: Row, threshold: float, cid: str) -> str:
    cell_attr = f' data-cell="{escape(cid)}"'
    state = cell_state(cell)
    na_text = escape(not_applicable_text(cell).strip())
    na = f' <span class="na">{na_text}</span>' if cell.n_na else ""
    if state == "no_data":
        tip = f"no data (n={cell.n}/{cell.N})"
        return f'<td class="num"{cell_attr} title="{tip}">{no_data_text(cell)}{na}</td>'
    if state == "empty":
        tip = "no dialogue in this group"
        return f'<td class="num"{cell_attr} title="{tip}">{EMPTY_GROUP}</td>'
    if cell.value is None:
        return f'<td class="num"{cell_attr}>—{na}</td>'
    v = display_value(cell.value)
    text = f"{v:+.1f}" if is_signed(row) else f"{v:.1f}"
    if row.kind == "paper":
        return f'<td class="num"{cell_attr}>{text}</td>'
    if cell.rank == 1:
        text = f"<strong>{text}</strong>"
    elif cell.rank == 2:
        text = f'<span class="second">{text}</span>'
    tips = []
    interval = shown_interval(cell)
    if interval is not None:
        tips.append(f"CI [{interval[0]:.2f}, {interval[1]:.2f}]")
        text += f' <span class="ci">± {display_value((interval[1] - interval[0]) / 2):.1f}</span>'
    if cell.n is not None:
        tips.append(f"n/N = {cell.n}/{cell.N}")
    if cell.p_adjusted is not None and cell.p_value is not None:
        tips.append(f"p = {cell.p_value:.4f}, Holm p = {cell.p_adjusted:.4f}")
    if cell.coverage_below(threshold):
        text += f' <span class="cov">({cell.n}/{cell.applicable_n})†</span>'
    text += na
    if is_signed(row) and cell.distinguishable is False:
        text += ' <span class="ns">(n.s.)</span>'
    return f'<td class="num"{cell_attr} title="{escape("; ".join(tips))}">{text}</td>'


def _notes(notes: Sequence[str]) -> str:
    return '<ul class="notes">' + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>"


def table_html(doc: TableDocument) -> str:
    """A metrics table from its document (each number carries its cell id)."""
    threshold = DEFAULT_THRESHOLD if doc.coverage_threshold is None else doc.coverage_threshold
    lead = [doc.row_header] + ([doc.setting_header] if doc.has_setting else [])
    head = "".join(f"<th>{escape(h)}</th>" for h in lead)
    head += "".join(f'<th title="{escape(c.key)}">{escape(c.header)}</th>' for c in doc.columns)
    body = []
    group = None
    ncols = len(lead) + len(doc.columns)
    for r, labels in zip(doc.rows, row_labels(doc), strict=True):
        if doc.has_groups and r.group != group:
            group = r.group
            body.append(f'<tr class="group"><th colspan="{ncols}">{escape(r.group)}</th></tr>')
        cells = "".join(f"<th>{escape(x)}</th>" for x in labels)
        cells += "".join(_cell_html(c, r, threshold, c.id) for c in r.cells)
        body.append(f'<tr data-kind="{r.kind}">{cells}</tr>')
    return _scrolling_table(doc, head, body)


def plain_table_html(doc: TableDocument) -> str:
    """Table 2 or the usage table from its document: each cell as printed in Markdown."""
    lead = [doc.row_header] + ([doc.setting_header] if doc.setting_header else [])
    head = "".join(f"<th>{escape(c)}</th>" for c in (*lead, *(c.header for c in doc.columns)))
    rows = []
    for r in doc.rows:
        cells = "".join(
            f"<th>{escape(x)}</th>"
            for x in ([r.label] + ([r.setting] if doc.setting_header else []))
        )
        cells += "".join(
            f'<td class="num" data-cell="{escape(c.id)}">{escape(c.display)}</td>' for c in r.cells
        )
        rows.append(f"<tr>{cells}</tr>")
    return _scrolling_table(doc, head, rows)


def _scrolling_table(doc: TableDocument, head: str, rows: list[str]) -> str:
    """The table of ``doc`` (header cells ``head``, body ``rows``) and its notes."""
    return (
        f'<div class="scroll"><table class="metrics" id="tbl-{escape(doc.table)}">'
        f"<thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>{_notes(doc.notes)}"
    )


def document_html(doc: TableDocument) -> str:
    return table_html(doc) if doc.layout == "metrics" else plain_table_html(doc)


# --------------------------------------------------------------------------- page


def _json_script(element_id: str, data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    text = text.replace("</", "<\\/").replace("<!--", "<\\u0021--")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def _meta_value(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)


def run_metadata(docs: Mapping[str, TableDocument]) -> dict[str, Any]:
    """The run section of the page, from the tables' documents."""
    doc = next((d for d in docs.values() if d.run is not None), None)
    if doc is None or doc.run is None:
        return {}
    run = doc.run
    git = run.git
    return {
        "tables spec digest": doc.spec_digest,
        "git commit": git.commit or "not built inside a git repository",
        "uncommitted changes": git.dirty,
        "test set": f"{run.dataset.test.path} (sha256 {run.dataset.test.sha256})",
        "train set": f"{run.dataset.train.path} (sha256 {run.dataset.train.sha256})",
        "test cases": run.dataset.n_cases,
        "per-dialogue scores": f"{run.aggregate.path} (sha256 {run.aggregate.sha256})",
        "report settings": run.settings.model_dump(mode="json"),
        "packages": run.packages,
    }


def render_html(
    *,
    title: str = "LeCoDe evaluation report",
    tables: Mapping[str, TableDocument] | None = None,
    figures: Mapping[str, bytes] | None = None,
    viewer: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    provenance: bool = True,
) -> str:
    """The report page. ``tables`` are the tables' documents (as written by the tables job);
    ``figures`` PNG bytes by name; ``viewer`` from :func:`viewer_data`. With ``provenance``,
    each number shows its provenance (:func:`lecode.report.explain.summary_text`) on hover and
    click."""
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
        parts.append(f"<h3>{escape(tables[name].title)}</h3>")
        parts.append(document_html(tables[name]))
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
        headers = [[m.key, m.display_header] for m in with_tag("table3")]
        scripts = (
            _json_script("viewer-data", viewer)
            + _json_script("metric-headers", headers)
            + f"<script>{JS}</script>"
        )
    summaries = html_summaries(tables) if provenance else {}
    if summaries:
        parts.append(PROVENANCE_PANEL)
        scripts += _json_script("provenance-data", summaries)
        scripts += f"<script>{PROVENANCE_JS}</script>"
    meta_rows = "".join(
        f"<tr><td>{escape(str(k))}</td><td>{escape(_meta_value(v))}</td></tr>"
        for k, v in (metadata if metadata is not None else run_metadata(tables)).items()
    )
    parts.append(
        f'<section id="metadata"><h2>Run</h2><table class="meta">{meta_rows}</table></section>'
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="zh-Hans"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}{PROVENANCE_CSS if summaries else ''}"
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
    tables_dir: str | Path,
    scores: pl.DataFrame,
    systems: Sequence[ReportedSystem | Mapping[str, Any]],
    train_cases: Iterable[Case] | None = None,
    test_cases: Iterable[Case] | None = None,
    transcripts: Iterable[Transcript] = (),
    matches: Iterable[Matches] = (),
    judgements: Iterable[Judgement] = (),
    metadata: Mapping[str, Any] | None = None,
    figures_dir: str | Path | None = None,
    max_cases: int | None = None,
    title: str = "LeCoDe evaluation report",
) -> Path:
    """Write the page: the tables as the tables job wrote them (their documents under
    ``tables_dir``, nothing recomputed), the figures (PNGs of ``figures_dir``, else drawn
    here) and the transcript viewer (from the records)."""
    sys_list = coerce_systems(systems)
    train = list(train_cases) if train_cases is not None else None
    test = list(test_cases) if test_cases is not None else None
    match_list = list(matches)
    docs = load_all(tables_dir)
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
    page = render_html(title=title, tables=docs, figures=figures, viewer=viewer, metadata=metadata)
    out = Path(path)
    atomic_write_text(out, page)
    return out
