"""The paper's figures with matplotlib (Agg, no pyplot state): PNG and PDF.

* :func:`figure3` dataset distribution (case types, top charges, facts, utterances, characters);
* :func:`figure5` number of key facts vs WR, AT, BS, OA, one line per system;
* :func:`figure6` radar over the main metrics;
* :func:`figure7` several strategies on one base model;
* :func:`figure_recall_by_turn` cumulative facts elicited after question k.

Each builder takes frames (see :mod:`lecode.report.curves`) and returns a ``Figure``, or
``None`` when there is nothing to draw. :func:`write_figures` writes them all plus the curve data
for ``dvc plots``. Figures are ``matplotlib.figure.Figure`` objects (Agg canvas when saved as
PNG); pyplot's global state is never touched.

Every string that enters matplotlib (titles, axis and tick labels, legend entries, annotations)
goes through :func:`mpl_text`, so that a system label such as ``GPT-4o ($0.01)`` is drawn
literally instead of being parsed as mathtext; legends are given their handles and labels
explicitly, so that a label starting with ``_`` is not silently dropped.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib as mpl
import numpy as np
import polars as pl
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from lecode.recordio import SCORE_SCHEMA, atomic_write_text
from lecode.records import Case, Matches
from lecode.report.curves import (
    COMPLEXITY_METRICS,
    FACT_BINS,
    complexity_curve,
    dataset_frame,
    recall_by_turn,
    system_means,
    wide,
)
from lecode.report.fonts import cjk_fonts
from lecode.report.spec import (
    METRIC_BY_KEY,
    METRICS,
    System,
    coerce_systems,
)

FIGURE_NAMES: tuple[str, ...] = ("figure3", "figure5", "figure6", "figure7", "recall_by_turn")
FIGURE_CAPTIONS: dict[str, str] = {
    "figure3": "Dataset distribution (paper Figure 3)",
    "figure5": "Case complexity: metrics by number of key facts (paper Figure 5)",
    "figure6": "Main metrics per system (paper Figure 6)",
    "figure7": "Strategies on one base model (paper Figure 7)",
    "recall_by_turn": "Cumulative facts elicited after k clarifying questions",
}
RADAR_METRICS: tuple[str, ...] = tuple(m.key for m in METRICS if m.key != "turns")
STRATEGY_METRICS: tuple[str, ...] = ("weighted_recall", "turns", "bertscore_f1", "overall")
SAVE_META = {
    "png": {"Software": None},
    "pdf": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None},
}


def mpl_text(text: str) -> str:
    """``text`` escaped for matplotlib so that it is drawn literally.

    Outside ``usetex`` the only mathtext trigger is a pair of unescaped ``$``; escaping every
    ``$`` as ``\\$`` turns mathtext off for the whole string (matplotlib then draws ``\\$`` as
    ``$``), so ``_``, ``^``, ``\\`` and the rest stay literal too.
    """
    return text.replace("$", r"\$")


def mpl_texts(texts: Iterable[str]) -> list[str]:
    """:func:`mpl_text` of each string (tick labels, categories)."""
    return [mpl_text(t) for t in texts]


def _legend(ax: Axes, entries: Sequence[tuple[Artist, str]], **kwargs: Any) -> None:
    """A legend of ``(artist, raw label)`` entries, labels escaped; none when empty."""
    if not entries:
        return
    ax.legend([a for a, _ in entries], [mpl_text(label) for _, label in entries], **kwargs)


def _colors(n: int) -> list[Any]:
    cmap = mpl.colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def _header(key: str) -> str:
    """The metric's column header, escaped for matplotlib."""
    return mpl_text(METRIC_BY_KEY[key].display_header)


def _empty(ax: Axes, text: str = "no data") -> None:
    ax.text(
        0.5, 0.5, mpl_text(text), ha="center", va="center", transform=ax.transAxes, color="grey"
    )
    ax.set_xticks([])
    ax.set_yticks([])


# --------------------------------------------------------------------------- Figure 3


def figure3(cases: pl.DataFrame, *, top_charges: int = 10) -> Figure | None:
    """Dataset distribution from :func:`lecode.report.curves.dataset_frame` rows."""
    if cases.height == 0:
        return None
    fig = Figure(figsize=(15, 9), layout="constrained")
    axes = fig.subplots(2, 3)
    types = cases.group_by("case_type").len().sort(["len", "case_type"], descending=[True, False])
    type_order = types["case_type"].to_list()
    color = dict(zip(type_order, _colors(len(type_order)), strict=True))

    ax = axes[0][0]
    ax.bar(range(len(type_order)), types["len"].to_list(), color=[color[t] for t in type_order])
    ax.set_xticks(range(len(type_order)), mpl_texts(type_order))
    ax.set_title(mpl_text("(a) Consultations by case type"))
    ax.set_ylabel(mpl_text("consultations"))

    ax = axes[0][1]
    charges = (
        cases.select("case_type", "charges")
        .explode("charges")
        .drop_nulls("charges")
        .group_by("charges")
        .agg(pl.len(), pl.col("case_type").mode().sort().first())
        .sort(["len", "charges"], descending=[True, False])
        .head(top_charges)
    )
    if charges.height:
        names = charges["charges"].to_list()[::-1]
        ax.barh(
            range(len(names)),
            charges["len"].to_list()[::-1],
            color=[color[t] for t in charges["case_type"].to_list()[::-1]],
        )
        ax.set_yticks(range(len(names)), mpl_texts(names))
        ax.set_xlabel(mpl_text("consultations"))
    else:
        _empty(ax)
    ax.set_title(mpl_text(f"(b) Top {charges.height} charges / disputes"))

    def by_type_box(ax: Axes, column: str, title: str, ylabel: str) -> None:
        data = [cases.filter(pl.col("case_type") == t)[column].to_list() for t in type_order]
        ax.boxplot(data, tick_labels=mpl_texts(type_order), showmeans=True)
        means = [float(np.mean(d)) for d in data]
        for i, m in enumerate(means, start=1):
            ax.annotate(f"{m:.1f}", (i, m), textcoords="offset points", xytext=(8, 0), fontsize=8)
        ax.set_title(mpl_text(title))
        ax.set_ylabel(mpl_text(ylabel))

    by_type_box(axes[0][2], "n_facts", "(c) Key facts per consultation", "key facts")
    by_type_box(axes[1][0], "utterances", "(d) Utterances per consultation", "utterances")

    ax = axes[1][1]
    client = cases["client_chars"].to_list()
    lawyer = cases["lawyer_chars"].to_list()
    ax.boxplot(
        [client, lawyer], tick_labels=mpl_texts(["client 用户", "lawyer 律师"]), showmeans=True
    )
    ax.set_title(mpl_text("(e) Characters spoken per consultation"))
    ax.set_ylabel(mpl_text("characters"))

    ax = axes[1][2]
    entries: list[tuple[Artist, str]] = []
    for t in type_order:
        part = cases.filter(pl.col("case_type") == t)
        dots = ax.scatter(
            part["client_chars"],
            part["lawyer_chars"],
            s=10,
            alpha=0.6,
            color=color[t],
            label=mpl_text(t),
        )
        entries.append((dots, t))
    top = max([*client, *lawyer, 1])
    ax.plot([0, top], [0, top], color="grey", linewidth=0.8, linestyle="--")
    ax.set_xlabel(mpl_text("client characters"))
    ax.set_ylabel(mpl_text("lawyer characters"))
    ax.set_title(mpl_text("(f) Client vs lawyer characters"))
    _legend(ax, entries, fontsize=8)
    return fig


# --------------------------------------------------------------------------- Figure 5


def figure5(curve: pl.DataFrame, order: Sequence[str]) -> Figure | None:
    """Metrics by number of key facts, from :func:`complexity_curve`."""
    if curve.height == 0:
        return None
    metrics = [m for m in COMPLEXITY_METRICS if m in set(curve["metric"].to_list())]
    fig = Figure(figsize=(4.2 * len(metrics), 3.8), layout="constrained")
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    bins = curve.select("bin", "bin_lo").unique().sort("bin_lo")["bin"].to_list()
    pos = {b: i for i, b in enumerate(bins)}
    colors = dict(zip(order, _colors(len(order)), strict=True))
    handles: dict[str, Artist] = {}
    for ax, key in zip(axes, metrics, strict=True):
        part = curve.filter(pl.col("metric") == key)
        for system in order:
            line = part.filter(pl.col("system") == system).sort("bin_lo")
            if line.height == 0:
                continue
            xs = [pos[b] for b in line["bin"].to_list()]
            (drawn,) = ax.plot(
                xs,
                line["value"].to_list(),
                marker="o",
                label=mpl_text(system),
                color=colors[system],
            )
            handles.setdefault(system, drawn)
        ax.set_xticks(range(len(bins)), mpl_texts(bins))
        ax.set_xlabel(mpl_text("number of key facts"))
        ax.set_title(_header(key))
        ax.grid(alpha=0.3)
    _legend(axes[0], [(handles[s], s) for s in order if s in handles], fontsize=8)
    return fig


# --------------------------------------------------------------------------- Figure 6


def figure6(means: pl.DataFrame, order: Sequence[str]) -> Figure | None:
    """Radar over the main metrics (display scale), from :func:`system_means`."""
    present = means.drop_nulls("value")
    keys = [k for k in RADAR_METRICS if k in set(present["metric"].to_list())]
    if len(keys) < 3:
        return None
    angles = [2 * math.pi * i / len(keys) for i in range(len(keys))]
    fig = Figure(figsize=(7, 7), layout="constrained")
    ax = fig.add_subplot(projection="polar")
    colors = dict(zip(order, _colors(len(order)), strict=True))
    entries: list[tuple[Artist, str]] = []
    for system in order:
        vals = dict(
            present.filter(pl.col("system") == system).select("metric", "value").iter_rows()
        )
        if not any(k in vals for k in keys):
            continue
        ys = [float(vals.get(k, 0.0)) for k in keys]
        (drawn,) = ax.plot(
            [*angles, angles[0]], [*ys, ys[0]], label=mpl_text(system), color=colors[system]
        )
        ax.fill([*angles, angles[0]], [*ys, ys[0]], alpha=0.08, color=colors[system])
        entries.append((drawn, system))
    ax.set_xticks(angles, [_header(k) for k in keys])
    ax.set_ylim(0, 100)
    _legend(ax, entries, loc="upper right", bbox_to_anchor=(1.3, 1.1), fontsize=8)
    return fig


# --------------------------------------------------------------------------- Figure 7


def default_strategy_systems(systems: Sequence[System]) -> list[System]:
    """Systems of the expert with the most strategies (first such expert), in order."""
    counts: dict[str, int] = {}
    for s in systems:
        counts[s.expert] = counts.get(s.expert, 0) + 1
    if not counts:
        return []
    best = max(counts.values())
    expert = next(s.expert for s in systems if counts[s.expert] == best)
    return [s for s in systems if s.expert == expert]


def figure7(means: pl.DataFrame, order: Sequence[str], title: str = "") -> Figure | None:
    """Bars per metric (WR, AT, BS, OA) for the systems in ``order``."""
    present = means.drop_nulls("value").filter(pl.col("system").is_in(list(order)))
    keys = [k for k in STRATEGY_METRICS if k in set(present["metric"].to_list())]
    if not keys or len(order) < 2:
        return None
    fig = Figure(figsize=(3.6 * len(keys), 4.0), layout="constrained")
    axes = fig.subplots(1, len(keys), squeeze=False)[0]
    colors = _colors(len(order))
    for ax, key in zip(axes, keys, strict=True):
        vals = dict(present.filter(pl.col("metric") == key).select("system", "value").iter_rows())
        ys = [float(vals.get(s, float("nan"))) for s in order]
        bars = ax.bar(range(len(order)), ys, color=colors)
        ax.bar_label(bars, fmt="%.1f", fontsize=8)
        ax.set_xticks(range(len(order)), mpl_texts(order), rotation=30, ha="right")
        ax.set_title(_header(key))
    if title:
        fig.suptitle(mpl_text(title))
    return fig


# --------------------------------------------------------------------------- recall by turn


def figure_recall_by_turn(curve: pl.DataFrame, order: Sequence[str]) -> Figure | None:
    """Cumulative recall (and weighted recall when known) after question k, per system."""
    if curve.height == 0:
        return None
    has_w = curve["weighted_recall"].drop_nulls().len() > 0
    cols = ["recall", "weighted_recall"] if has_w else ["recall"]
    fig = Figure(figsize=(5.5 * len(cols), 4.2), layout="constrained")
    axes = fig.subplots(1, len(cols), squeeze=False)[0]
    colors = dict(zip(order, _colors(len(order)), strict=True))
    handles: dict[str, Artist] = {}
    for ax, col in zip(axes, cols, strict=True):
        for system in order:
            line = curve.filter(pl.col("system") == system).sort("k")
            if line.height == 0 or line[col].drop_nulls().len() == 0:
                continue
            (drawn,) = ax.plot(
                line["k"],
                line[col],
                marker="o",
                markersize=3,
                label=mpl_text(system),
                color=colors[system],
            )
            handles.setdefault(system, drawn)
        ax.set_xlabel(mpl_text("clarifying questions asked (k)"))
        ax.set_ylabel(mpl_text(f"{'R' if col == 'recall' else 'WR'} after k questions (%)"))
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
    _legend(axes[0], [(handles[s], s) for s in order if s in handles], fontsize=8)
    return fig


# --------------------------------------------------------------------------- writing


def save_figure(
    fig: Figure, path_stem: Path, formats: Sequence[str] = ("png", "pdf"), *, dpi: int = 150
) -> list[Path]:
    """Save ``fig`` as ``<stem>.<fmt>`` for each format (deterministic metadata)."""
    path_stem.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for fmt in formats:
        path = path_stem.with_suffix(f".{fmt}")
        tmp = path.with_name(f".{path.name}.tmp")
        fig.savefig(tmp, format=fmt, dpi=dpi, metadata=SAVE_META.get(fmt))
        tmp.replace(path)
        out.append(path)
    return out


def png_bytes(fig: Figure, *, dpi: int = 110) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata=SAVE_META["png"])
    return buf.getvalue()


def _write_data(frame: pl.DataFrame, path: Path) -> Path:
    if path.suffix == ".json":
        atomic_write_text(path, json.dumps(frame.to_dicts(), ensure_ascii=False, indent=1) + "\n")
    else:
        atomic_write_text(path, frame.write_csv(float_precision=4))
    return path


def build_figures(
    *,
    scores: pl.DataFrame | None = None,
    systems: Sequence[System | Mapping[str, Any]] = (),
    train_cases: Iterable[Case] | None = None,
    test_cases: Iterable[Case] | None = None,
    matches: Iterable[Matches] | None = None,
    strategy_labels: Sequence[str] | None = None,
    fact_bins: Sequence[int] | None = FACT_BINS,
    max_turns: int | None = None,
    require_cjk_font: bool = False,
) -> tuple[dict[str, Figure], dict[str, pl.DataFrame]]:
    """All figures that the inputs allow, and the frames behind them (by name)."""
    sys_list = coerce_systems(systems)
    order = [s.label for s in sys_list]
    figs: dict[str, Figure | None] = {}
    data: dict[str, pl.DataFrame] = {}
    test_list = list(test_cases) if test_cases is not None else None
    with cjk_fonts(required=require_cjk_font):
        if train_cases is not None or test_list is not None:
            ds = pl.concat(
                [
                    dataset_frame(train_cases or [], "train"),
                    dataset_frame(test_list or [], "test"),
                ]
            )
            figs["figure3"] = figure3(ds)
        if scores is not None and sys_list:
            curve = complexity_curve(scores, sys_list, bins=fact_bins)
            data["complexity"] = curve
            figs["figure5"] = figure5(curve, order)
            means = system_means(scores, sys_list, [*METRICS])
            data["means"] = means
            figs["figure6"] = figure6(means, order)
            if strategy_labels is not None:
                chosen = [s for s in sys_list if s.label in set(strategy_labels)]
                chosen.sort(key=lambda s: list(strategy_labels).index(s.label))
            else:
                chosen = default_strategy_systems(sys_list)
            base = chosen[0].expert if chosen else ""
            figs["figure7"] = figure7(
                means, [s.label for s in chosen], title=f"Strategies on {base}" if base else ""
            )
        if matches is not None and sys_list:
            rbt = recall_by_turn(matches, sys_list, cases=test_list, max_turns=max_turns)
            data["recall_by_turn"] = rbt
            figs["recall_by_turn"] = figure_recall_by_turn(rbt, order)
    return {k: v for k, v in figs.items() if v is not None}, data


def placeholder_figure(name: str, reason: str = "no data") -> Figure:
    """A small figure saying why ``name`` could not be drawn (keeps the output set fixed)."""
    fig = Figure(figsize=(5, 2.5))
    ax = fig.subplots()
    ax.axis("off")
    ax.text(
        0.5,
        0.5,
        mpl_text(f"{FIGURE_CAPTIONS.get(name, name)}\n{reason}"),
        ha="center",
        va="center",
        color="grey",
        transform=ax.transAxes,
    )
    return fig


def write_figures(
    out_dir: str | Path,
    *,
    formats: Sequence[str] = ("png", "pdf"),
    plots_dir: str | Path | None = None,
    figures_dir: str | Path | None = None,
    placeholders: bool = True,
    **inputs: Any,
) -> dict[str, list[Path]]:
    """Figures to ``<out>/figures/<name>.{png,pdf}``; curve data to ``<out>/plots/``.

    ``figures_dir`` and ``plots_dir`` override those two folders. With ``placeholders`` (the
    default) every name of :data:`FIGURE_NAMES` and every data file is written, a figure that
    lacks its inputs as a "no data" placeholder and a data file as its header only, so that a
    workflow can declare a fixed set of outputs. ``inputs`` are those of :func:`build_figures`.

    Curve data: ``recall_by_turn.csv`` (k and one column per system) and ``.json`` (long, with
    n); ``complexity_<metric>.csv`` (bin, bin_lo and one column per system) and
    ``complexity.json`` (long, with n).
    """
    out = Path(out_dir)
    figs, data = build_figures(**inputs)
    order = [s.label for s in coerce_systems(inputs.get("systems", ()))]
    written: dict[str, list[Path]] = {}
    fig_dir = Path(figures_dir) if figures_dir is not None else out / "figures"
    with cjk_fonts(required=bool(inputs.get("require_cjk_font", False))):
        for name in FIGURE_NAMES:
            fig = figs.get(name)
            if fig is None and placeholders:
                fig = placeholder_figure(name)
            if fig is not None:
                written[name] = save_figure(fig, fig_dir / name, formats)
    plots = Path(plots_dir) if plots_dir is not None else out / "plots"
    rbt = data.get("recall_by_turn")
    if rbt is None and placeholders:
        rbt = recall_by_turn([], [])
    if rbt is not None:
        written["recall_by_turn_data"] = [
            _write_data(wide(rbt, "k", "recall", order), plots / "recall_by_turn.csv"),
            _write_data(rbt, plots / "recall_by_turn.json"),
        ]
    cc = data.get("complexity")
    if cc is None and placeholders:
        cc = complexity_curve(pl.DataFrame(schema=SCORE_SCHEMA), [])
    if cc is not None:
        paths = [_write_data(cc, plots / "complexity.json")]
        for key in COMPLEXITY_METRICS:
            part = cc.filter(pl.col("metric") == key)
            bins = part.select("bin_lo", "bin").unique()
            w = wide(part, "bin_lo", "value", order)
            w = (
                w.join(bins, on="bin_lo", how="left")
                .sort("bin_lo")
                .select("bin", pl.exclude("bin"))
            )
            paths.append(_write_data(w, plots / f"complexity_{key}.csv"))
        written["complexity_data"] = paths
    return written
