"""Data behind the figures (pure functions returning polars frames).

* :func:`recall_by_turn` cumulative share of facts elicited after question k, per system;
* :func:`complexity_curve` metrics by number of key facts (paper Figure 5), per system;
* :func:`system_means` plain means per system and metric on the display scale;
* :func:`dataset_frame` one row per case with what Figure 3 draws.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from lecode.records import Case, Matches
from lecode.report.results import split_scores
from lecode.report.spec import METRIC_BY_KEY, Metric, System

#: Default bins of the number of key facts: [lo, next lo), the last open-ended.
FACT_BINS: tuple[int, ...] = (1, 6, 8, 10, 12, 15)
COMPLEXITY_METRICS: tuple[str, ...] = ("weighted_recall", "turns", "bertscore_f1", "overall")


def _bin_label(lo: int, hi: int | None) -> str:
    if hi is None:
        return f"≥{lo}"
    return str(lo) if hi - lo == 1 else f"{lo}–{hi - 1}"


def fact_bins(edges: Sequence[int] | None, values: Iterable[int]) -> list[tuple[int, int | None]]:
    """``[(lo, hi), ...]`` from edges (the last bin open), or one bin per distinct value."""
    if edges is None:
        return [(v, v + 1) for v in sorted(set(values))]
    if list(edges) != sorted(set(edges)):
        raise ValueError("bin edges must be strictly increasing")
    return [(lo, edges[i + 1] if i + 1 < len(edges) else None) for i, lo in enumerate(edges)]


def system_means(
    scores: pl.DataFrame, systems: Sequence[System], metrics: Sequence[Metric]
) -> pl.DataFrame:
    """Columns ``system``, ``metric``, ``value`` (display scale, null if no data), ``n``."""
    frames = split_scores(scores, systems)
    rows = []
    for s in systems:
        f = frames[s.key]
        for m in metrics:
            col = (
                f[m.key].cast(pl.Float64).fill_nan(None)
                if m.key in f.columns
                else pl.Series([], dtype=pl.Float64)
            )
            n = int(col.drop_nulls().len())
            mean = col.mean() if n else None
            value = None if mean is None else float(mean) * m.scale  # type: ignore[arg-type]
            rows.append({"system": s.label, "metric": m.key, "value": value, "n": n})
    return pl.DataFrame(
        rows,
        schema={"system": pl.Utf8, "metric": pl.Utf8, "value": pl.Float64, "n": pl.Int64},
        orient="row",
    )


def complexity_curve(
    scores: pl.DataFrame,
    systems: Sequence[System],
    *,
    metrics: Sequence[str] = COMPLEXITY_METRICS,
    bins: Sequence[int] | None = FACT_BINS,
    min_n: int = 1,
) -> pl.DataFrame:
    """Mean of each metric per bin of ``n_facts``, per system (display scale).

    Columns ``system``, ``metric``, ``bin``, ``bin_lo``, ``bin_hi`` (null when open), ``value``,
    ``n``; points with fewer than ``min_n`` dialogues are left out.
    """
    frames = split_scores(scores, systems)
    spans = fact_bins(bins, scores["n_facts"].drop_nulls().to_list() if scores.height else [])
    rows = []
    for s in systems:
        f = frames[s.key]
        for key in metrics:
            m = METRIC_BY_KEY[key]
            if key not in f.columns:
                continue
            for lo, hi in spans:
                cond = pl.col("n_facts") >= lo
                if hi is not None:
                    cond = cond & (pl.col("n_facts") < hi)
                col = f.filter(cond)[key].cast(pl.Float64).fill_nan(None).drop_nulls()
                if col.len() < max(min_n, 1):
                    continue
                rows.append(
                    {
                        "system": s.label,
                        "metric": key,
                        "bin": _bin_label(lo, hi),
                        "bin_lo": lo,
                        "bin_hi": hi,
                        "value": float(col.mean()) * m.scale,  # type: ignore[arg-type]
                        "n": int(col.len()),
                    }
                )
    schema = pl.Schema(
        {
            "system": pl.Utf8,
            "metric": pl.Utf8,
            "bin": pl.Utf8,
            "bin_lo": pl.Int64,
            "bin_hi": pl.Int64,
            "value": pl.Float64,
            "n": pl.Int64,
        }
    )
    return pl.DataFrame(rows, schema=schema, orient="row")


def recall_by_turn(
    matches: Iterable[Matches],
    systems: Sequence[System],
    *,
    cases: Iterable[Case] | None = None,
    max_turns: int | None = None,
) -> pl.DataFrame:
    """Cumulative facts elicited after question ``k`` (k = 0..K), averaged over dialogues.

    Columns ``system``, ``k``, ``recall`` (x100), ``weighted_recall`` (x100; null without
    ``cases``), ``n`` (dialogues). Dialogues whose matching failed are left out; a dialogue that
    stopped asking before ``k`` keeps its final value. ``K`` = ``max_turns`` or the longest.
    """
    importance = {c.id: c.importance for c in cases} if cases is not None else None
    by_system: dict[tuple[str, str], list[Matches]] = {}
    for m in matches:
        if m.status == "ok" and m.n_facts > 0:
            by_system.setdefault((m.expert, m.strategy), []).append(m)
    longest = max((len(m.per_question) for ms in by_system.values() for m in ms), default=0)
    k_max = max_turns if max_turns is not None else max(longest, 1)
    rows = []
    for s in systems:
        ms = sorted(by_system.get(s.key, []), key=lambda m: m.case_id)
        if not ms:
            continue
        sums = [0.0] * (k_max + 1)
        wsums = [0.0] * (k_max + 1)
        weighted_ok = importance is not None and all(m.case_id in importance for m in ms)
        for m in ms:
            seen: set[int] = set()
            weights = importance.get(m.case_id) if importance is not None else None
            total = float(sum(weights)) if weights else 0.0
            for k in range(k_max + 1):
                if 1 <= k <= len(m.per_question):
                    seen.update(m.per_question[k - 1])
                sums[k] += len(seen) / m.n_facts
                if weights and total:
                    wsums[k] += sum(weights[i] for i in seen) / total
        n = len(ms)
        for k in range(k_max + 1):
            rows.append(
                {
                    "system": s.label,
                    "k": k,
                    "recall": 100.0 * sums[k] / n,
                    "weighted_recall": 100.0 * wsums[k] / n if weighted_ok else None,
                    "n": n,
                }
            )
    schema = pl.Schema(
        {
            "system": pl.Utf8,
            "k": pl.Int64,
            "recall": pl.Float64,
            "weighted_recall": pl.Float64,
            "n": pl.Int64,
        }
    )
    return pl.DataFrame(rows, schema=schema, orient="row")


UNKNOWN_TYPE = "未标注"


def dataset_frame(cases: Iterable[Case], split: str = "") -> pl.DataFrame:
    """One row per case: primary case type, charges, facts, utterances, characters by speaker."""
    rows = []
    for c in cases:
        client = sum(len(u.text) for u in c.dialogue if u.speaker == "client")
        lawyer = sum(len(u.text) for u in c.dialogue if u.speaker == "lawyer")
        rows.append(
            {
                "case_id": c.id,
                "split": split,
                "case_type": c.case_type[0] if c.case_type else UNKNOWN_TYPE,
                "charges": list(c.charge_type),
                "n_facts": c.n_facts,
                "utterances": len(c.dialogue),
                "client_chars": client,
                "lawyer_chars": lawyer,
            }
        )
    schema = pl.Schema(
        {
            "case_id": pl.String(),
            "split": pl.String(),
            "case_type": pl.String(),
            "charges": pl.List(pl.String()),
            "n_facts": pl.Int64(),
            "utterances": pl.Int64(),
            "client_chars": pl.Int64(),
            "lawyer_chars": pl.Int64(),
        }
    )
    return pl.DataFrame(rows, schema=schema, orient="row")


def wide(frame: pl.DataFrame, index: str, value: str, order: Sequence[str]) -> pl.DataFrame:
    """Long ``system``/``index``/``value`` to one column per system (for ``dvc plots``)."""
    if frame.height == 0:
        return pl.DataFrame(schema={index: frame.schema.get(index, pl.Int64)})
    out = frame.pivot(on="system", index=index, values=value)
    cols = [c for c in order if c in out.columns]
    return out.select(index, *cols)
