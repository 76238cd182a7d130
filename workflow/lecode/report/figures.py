"""The paper's figures with matplotlib (Agg, no pyplot state): PNG and PDF.

* :func:`figure3` dataset distribution: (a) key facts per dialogue by charge type, fact length
  in jieba words, (b) words per dialogue by speaker, (c) turns by domain, (d) domains, charges;
* :func:`figure5` number of key facts vs WR, AT, BS, OA, one line per system;
* :func:`figure6` radar over the main metrics;
* :func:`figure7` strategies of one base model (zero-shot, few-shot, SFT variants): grouped bars
  per metric with the relative change over the base zero-shot row;
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
import logging
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

from lecode.metrics.registry import get, with_tag
from lecode.recordio import atomic_write_text
from lecode.records import Case, Matches
from lecode.report.curves import (
    COMPLEXITY_METRICS,
    FACT_BINS,
    FACTS_BY_CHARGE_SCHEMA,
    STRATEGY_SCHEMA,
    WORDS_BY_SPEAKER_SCHEMA,
    complexity_curve,
    dataset_frame,
    facts_by_charge,
    recall_by_turn,
    strategy_changes,
    system_means,
    wide,
    words_by_speaker,
)
from lecode.report.fonts import cjk_fonts
from lecode.report.spec import (
    FEW_SHOT,
    ZERO_SHOT,
    ReportedSystem,
    coerce_systems,
)
from lecode.score_io import score_schema

log = logging.getLogger(__name__)

FIGURE_NAMES: tuple[str, ...] = ("figure3", "figure5", "figure6", "figure7", "recall_by_turn")
FIGURE_CAPTIONS: dict[str, str] = {
    "figure3": "Dataset distribution (paper Figure 3)",
    "figure5": "Case complexity: metrics by number of key facts (paper Figure 5)",
    "figure6": "Main metrics per system (paper Figure 6)",
    "figure7": "Strategies of one base model, change over its zero-shot row (paper Figure 7)",
    "recall_by_turn": "Cumulative facts elicited after k clarifying questions",
}
RADAR_METRICS: tuple[str, ...] = tuple(m.key for m in with_tag("radar"))
STRATEGY_METRICS: tuple[str, ...] = ("weighted_recall", "turns", "bertscore_f1", "overall")
#: A system whose label ends with this is an SFT variant (a LoRA adapter) of the Figure 7 base.
SFT_SUFFIX = "SFT"
#: Data files of :func:`write_figures` under the plots folder, besides the curve data.
FIGURE3A_DATA = "figure3a_facts_by_charge.csv"
FIGURE3B_DATA = "figure3b_words_by_speaker.csv"
FIGURE7_DATA = "figure7_strategies.csv"
STRATEGY_7_SCHEMA = pl.Schema(
    [("system", pl.String()), ("expert", pl.String()), ("strategy", pl.String())]
    + [(k, v) for k, v in STRATEGY_SCHEMA.items() if k != "system"]
)
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
    return mpl_text(get(key).display_header)


def _empty(ax: Axes, text: str = "no data") -> None:
    ax.text(
        0.5, 0.5, mpl_text(text), ha="center", va="center", transform=ax.transAxes, color="grey"
    )
    ax.set_xticks([])
    ax.set_yticks([])


# --------------------------------------------------------------------------- Figure 3


def figure3(cases: pl.DataFrame, *, top_charges: int = 10) -> Figure | None:
    """Dataset distribution (paper Figure 3) from :func:`lecode.report.curves.dataset_frame` rows.

    * (a) mean number of atomic key facts per dialogue for the ``top_charges`` most consulted
      charge types (the paper's "average number of key facts per dialogue across common
      consultation scenarios"), bars coloured by domain (case type) and labelled with the mean
      and the number of dialogues; numbers from :func:`lecode.report.curves.facts_by_charge`
      (a dialogue naming two charges counts for both);
    * (a') mean length of one key fact for the same charge types, in jieba words;
    * (b) words per dialogue spoken by the client and by the lawyer (box plot, means marked);
    * (c) turns (utterances) per dialogue by domain;
    * (d) dialogues by domain and (d') the ``top_charges`` most consulted charge types.

    Words are counted as the paper counts them, in jieba words: :func:`lecode.text.tokenize`
    tokens with punctuation and whitespace left out (:func:`lecode.report.curves.word_count`),
    not characters. Rows that carry only ``client_chars``/``lawyer_chars`` (no ``*_words``) are
    drawn in characters, and the axis says so.
    """
    if cases.height == 0:
        return None
    fig = Figure(figsize=(16, 9.5), layout="constrained")
    axes = fig.subplots(2, 3)
    types = cases.group_by("case_type").len().sort(["len", "case_type"], descending=[True, False])
    type_order = types["case_type"].to_list()
    color = dict(zip(type_order, _colors(len(type_order)), strict=True))
    charges = facts_by_charge(cases).head(top_charges)
    names = charges["charge"].to_list()[::-1]  # most consulted on top
    bar_colors = [color.get(t, "grey") for t in charges["case_type"].to_list()[::-1]]

    def domain_legend(ax: Axes, shown: Sequence[str]) -> None:
        patches = [(mpl.patches.Patch(color=color[t]), t) for t in type_order if t in set(shown)]
        _legend(ax, patches, fontsize=8, title=mpl_text("domain"), loc="best")

    ax = axes[0][0]
    if charges.height:
        means = charges["mean_facts"].to_list()[::-1]
        counts = charges["dialogues"].to_list()[::-1]
        bars = ax.barh(range(len(names)), means, color=bar_colors)
        ax.bar_label(
            bars,
            labels=[f"{m:.2f} (n={n})" for m, n in zip(means, counts, strict=True)],
            fontsize=8,
            padding=2,
        )
        ax.set_yticks(range(len(names)), mpl_texts(names))
        ax.set_xlim(0, max(means) * 1.6 if max(means) > 0 else 1)
        domain_legend(ax, charges["case_type"].to_list())
    else:
        _empty(ax, "no charge types annotated")
    ax.set_xlabel(mpl_text("mean atomic key facts per dialogue"))
    ax.set_title(mpl_text("(a) Key facts per dialogue by charge type"))

    ax = axes[0][1]
    lengths = charges["mean_fact_words"].to_list()[::-1] if charges.height else []
    if lengths and all(v is not None for v in lengths):
        bars = ax.barh(range(len(names)), lengths, color=bar_colors)
        ax.bar_label(bars, fmt="%.1f", fontsize=8, padding=2)
        ax.set_yticks(range(len(names)), mpl_texts(names))
        ax.set_xlim(0, max(lengths) * 1.2 if max(lengths) > 0 else 1)
    else:
        _empty(ax, "no key-fact word counts")
    ax.set_xlabel(mpl_text("mean jieba words per key fact"))
    ax.set_title(mpl_text("(a') Key-fact length by charge type"))

    ax = axes[0][2]
    in_words = "client_words" in cases.columns
    unit = "jieba words" if in_words else "characters"
    suffix = "words" if in_words else "chars"
    client = cases[f"client_{suffix}"].to_list()
    lawyer = cases[f"lawyer_{suffix}"].to_list()
    ax.boxplot([client, lawyer], tick_labels=mpl_texts(["client", "lawyer"]), showmeans=True)
    for i, d in enumerate([client, lawyer], start=1):
        m = float(np.mean(d))
        ax.annotate(f"{m:.0f}", (i, m), textcoords="offset points", xytext=(8, 0), fontsize=8)
    ax.set_ylabel(mpl_text(f"{unit} per dialogue"))
    ax.set_title(mpl_text(f"(b) {unit.capitalize()} spoken per dialogue"))

    ax = axes[1][0]
    data = [cases.filter(pl.col("case_type") == t)["utterances"].to_list() for t in type_order]
    ax.boxplot(data, tick_labels=mpl_texts(type_order), showmeans=True)
    for i, d in enumerate(data, start=1):
        m = float(np.mean(d))
        ax.annotate(f"{m:.1f}", (i, m), textcoords="offset points", xytext=(8, 0), fontsize=8)
    ax.set_ylabel(mpl_text("turns (utterances) per dialogue"))
    ax.set_title(mpl_text("(c) Turns per dialogue by domain"))

    ax = axes[1][1]
    bars = ax.bar(
        range(len(type_order)), types["len"].to_list(), color=[color[t] for t in type_order]
    )
    ax.bar_label(bars, fontsize=8)
    ax.set_xticks(range(len(type_order)), mpl_texts(type_order))
    ax.set_ylabel(mpl_text("dialogues"))
    ax.set_title(mpl_text("(d) Dialogues by domain"))

    ax = axes[1][2]
    if charges.height:
        bars = ax.barh(range(len(names)), charges["dialogues"].to_list()[::-1], color=bar_colors)
        ax.bar_label(bars, fontsize=8, padding=2)
        ax.set_yticks(range(len(names)), mpl_texts(names))
    else:
        _empty(ax, "no charge types annotated")
    ax.set_xlabel(mpl_text("dialogues"))
    ax.set_title(mpl_text(f"(d') Top {charges.height} charge types"))
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


def is_sft(system: ReportedSystem) -> bool:
    """True for an SFT variant: a system whose label ends with :data:`SFT_SUFFIX`."""
    return system.label.rstrip().endswith(SFT_SUFFIX)


def default_strategy_base(systems: Sequence[ReportedSystem]) -> str | None:
    """The expert with the most strategies among ``systems`` (the first such one), or None."""
    counts: dict[str, set[str]] = {}
    for s in systems:
        counts.setdefault(s.expert, set()).add(s.strategy)
    if not counts:
        return None
    best = max(len(v) for v in counts.values())
    return next(s.expert for s in systems if len(counts[s.expert]) == best)


def strategy_systems(
    systems: Sequence[ReportedSystem], base: str | None = None
) -> list[ReportedSystem]:
    """Figure 7's rows: the base model's zero-shot row, its few-shot row, then its SFT variants.

    ``base`` names the base model's expert (default :func:`default_strategy_base`). The systems
    carry no link from an SFT adapter to its base model, so every system whose label ends with
    ``SFT`` (:func:`is_sft`) counts as an SFT variant of the base, in the given order. Other
    strategies of the base (e.g. MediQ) are not part of the comparison. Raises ``ValueError``
    when ``base`` names no expert of ``systems``.
    """
    if base is None:
        base = default_strategy_base(systems)
        if base is None:
            return []
    elif not any(s.expert == base for s in systems):
        known = sorted({s.expert for s in systems})
        raise ValueError(f"strategy_base {base!r} is none of the experts {known}")
    rows = [
        s
        for strategy in (ZERO_SHOT, FEW_SHOT)
        for s in systems
        if s.expert == base and s.strategy == strategy
    ]
    rows += [s for s in systems if is_sft(s) and s not in rows]
    return rows


def figure7(
    means: pl.DataFrame, order: Sequence[str], title: str = "", *, base: str | None = None
) -> Figure | None:
    """Grouped bars per metric (WR, AT, BS, OA, as in the paper) for the systems of ``order``.

    One group of bars per metric, one bar per system (the legend names them); each bar is
    annotated with its value and its relative change in % over the ``base`` row (default: the
    first of ``order``, the base model's zero-shot row), the base bar with its value. Numbers from
    :func:`lecode.report.curves.strategy_changes`; values on the display scale (WR, BS in %, OA
    x10, AT in turns). The change is signed as measured: a negative AT change means fewer turns.
    """
    data = strategy_changes(means, order, STRATEGY_METRICS, base)
    if data.height == 0 or len(order) < 2:
        return None
    ref = data["base"][0]
    keys = list(dict.fromkeys(data["metric"].to_list()))
    width_in = max(7.0, 0.45 * len(keys) * len(order) + 3.0)
    fig = Figure(figsize=(width_in, 4.8), layout="constrained")
    ax = fig.subplots()
    colors = _colors(len(order))
    width = 0.8 / len(order)
    entries: list[tuple[Artist, str]] = []
    top = 0.0
    for i, system in enumerate(order):
        part = data.filter(pl.col("system") == system)
        vals = {k: (v, c) for k, v, c in part.select("metric", "value", "change_pct").iter_rows()}
        xs = [j + (i - (len(order) - 1) / 2) * width for j in range(len(keys))]
        ys = [vals[k][0] if vals[k][0] is not None else float("nan") for k in keys]
        bars = ax.bar(xs, ys, width=width, color=colors[i])
        labels = []
        for k in keys:
            value, change = vals[k]
            if value is None:
                labels.append("")
            elif system == ref or change is None:
                labels.append(f"{value:.1f}")
            else:
                labels.append(f"{value:.1f} ({change:+.1f}%)")
        ax.bar_label(bars, labels=labels, fontsize=7, rotation=90, padding=2)
        top = max([top, *[y for y in ys if not math.isnan(y)]])
        entries.append((bars.patches[0], system))
    ax.set_xticks(range(len(keys)), [_header(k) for k in keys])
    ax.set_ylim(0, top * 1.3 if top > 0 else 1)
    ax.set_ylabel(mpl_text("score (display scale); AT in turns"))
    ax.grid(axis="y", alpha=0.3)
    _legend(ax, entries, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    caption = f"bar labels: value (change over {ref} in %)"
    ax.set_title(mpl_text(caption), fontsize=9)
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
    systems: Sequence[ReportedSystem | Mapping[str, Any]] = (),
    train_cases: Iterable[Case] | None = None,
    test_cases: Iterable[Case] | None = None,
    matches: Iterable[Matches] | None = None,
    strategy_labels: Sequence[str] | None = None,
    strategy_base: str | None = None,
    fact_bins: Sequence[int] | None = FACT_BINS,
    max_turns: int | None = None,
    require_cjk_font: bool = False,
) -> tuple[dict[str, Figure], dict[str, pl.DataFrame]]:
    """All figures that the inputs allow, and the frames behind them (by name).

    Figure 7 compares the rows of :func:`strategy_systems` for ``strategy_base`` (the base
    model's expert name; default: the expert with the most strategies), relative to the base's
    zero-shot row; ``strategy_labels`` instead names the rows by label, the first being the
    reference unless the base's zero-shot row is among them.
    """
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
            data["facts_by_charge"] = facts_by_charge(ds)
            data["words_by_speaker"] = words_by_speaker(ds)
            figs["figure3"] = figure3(ds)
        if scores is not None and sys_list:
            curve = complexity_curve(scores, sys_list, bins=fact_bins)
            data["complexity"] = curve
            figs["figure5"] = figure5(curve, order)
            means = system_means(scores, sys_list, [*with_tag("table3")])
            data["means"] = means
            figs["figure6"] = figure6(means, order)
            chosen, ref = _strategy_rows(sys_list, strategy_labels, strategy_base)
            labels = [s.label for s in chosen]
            by_label = {s.label: s for s in chosen}
            changes = strategy_changes(
                means, labels, STRATEGY_METRICS, ref.label if ref is not None else None
            )
            data["strategies"] = changes.select(
                "system",
                pl.col("system")
                .replace_strict({k: v.expert for k, v in by_label.items()}, default=None)
                .alias("expert"),
                pl.col("system")
                .replace_strict({k: v.strategy for k, v in by_label.items()}, default=None)
                .alias("strategy"),
                pl.exclude("system"),
            )
            title = f"Strategies of {ref.label}" if ref is not None else ""
            figs["figure7"] = figure7(
                means, labels, title=title, base=ref.label if ref is not None else None
            )
        if matches is not None and sys_list:
            rbt = recall_by_turn(matches, sys_list, cases=test_list, max_turns=max_turns)
            data["recall_by_turn"] = rbt
            figs["recall_by_turn"] = figure_recall_by_turn(rbt, order)
    return {k: v for k, v in figs.items() if v is not None}, data


def _strategy_rows(
    systems: Sequence[ReportedSystem], labels: Sequence[str] | None, base: str | None
) -> tuple[list[ReportedSystem], ReportedSystem | None]:
    """Figure 7's rows and its reference row (see :func:`build_figures`)."""
    if labels is not None:
        rank = {label: i for i, label in enumerate(labels)}
        chosen = sorted((s for s in systems if s.label in rank), key=lambda s: rank[s.label])
    else:
        if base is None:
            base = default_strategy_base(systems)
            others = sorted({s.expert for s in systems if is_sft(s) and s.expert != base})
            if others:
                log.warning(
                    "figure 7: base model %r chosen by default (most strategies); the SFT rows "
                    "of %s are drawn as its variants - name the base with strategy_base",
                    base,
                    others,
                )
        chosen = strategy_systems(systems, base)
    zero = [s for s in chosen if s.expert == base and s.strategy == ZERO_SHOT]
    ref = zero[0] if zero else (chosen[0] if chosen else None)
    if ref is not None and chosen[0] != ref:
        chosen = [ref, *[s for s in chosen if s != ref]]
    return chosen, ref


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
    strategy_base: str | None = None,
    **inputs: Any,
) -> dict[str, list[Path]]:
    """Figures to ``<out>/figures/<name>.{png,pdf}``; curve data to ``<out>/plots/``.

    ``figures_dir`` and ``plots_dir`` override those two folders. With ``placeholders`` (the
    default) every name of :data:`FIGURE_NAMES` and every data file is written, a figure that
    lacks its inputs as a "no data" placeholder and a data file as its header only, so that a
    workflow can declare a fixed set of outputs. ``inputs`` are those of :func:`build_figures`.

    ``strategy_base`` names Figure 7's base model by its expert name (e.g. ``qwen2.5-7b``, whose
    zero-shot row is ``Qwen2.5-7B``); default: the expert with the most strategies. Its
    zero-shot and few-shot rows and every row whose label ends with ``SFT`` are compared.

    Curve data: ``recall_by_turn.csv`` (k and one column per system) and ``.json`` (long, with
    n); ``complexity_<metric>.csv`` (bin, bin_lo and one column per system) and
    ``complexity.json`` (long, with n). Figure data: ``figure3a_facts_by_charge.csv`` (key
    facts per dialogue and key-fact length in jieba words, by charge type),
    ``figure3b_words_by_speaker.csv`` (jieba words per dialogue by speaker),
    ``figure7_strategies.csv`` (one row per system and metric: value, base value, change in %).
    """
    out = Path(out_dir)
    figs, data = build_figures(strategy_base=strategy_base, **inputs)
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
        cc = complexity_curve(pl.DataFrame(schema=score_schema()), [])
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
    for name, key, schema, file in (
        ("figure3_data", "facts_by_charge", FACTS_BY_CHARGE_SCHEMA, FIGURE3A_DATA),
        ("figure3_data", "words_by_speaker", WORDS_BY_SPEAKER_SCHEMA, FIGURE3B_DATA),
        ("figure7_data", "strategies", STRATEGY_7_SCHEMA, FIGURE7_DATA),
    ):
        frame = data.get(key)
        if frame is None and placeholders:
            frame = pl.DataFrame(schema=schema)
        if frame is not None:
            written.setdefault(name, []).append(_write_data(frame, plots / file))
    return written
