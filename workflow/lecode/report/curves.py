"""Data behind the figures (pure functions returning polars frames).

* :func:`recall_by_turn` cumulative share of facts elicited after question k, per system;
* :func:`complexity_curve` metrics by number of key facts (paper Figure 5), per system;
* :func:`system_means` plain means per system and metric on the display scale;
* :func:`dataset_frame` one row per case with what Figure 3 draws;
* :func:`facts_by_charge` Figure 3a: key facts per dialogue and key-fact length by charge type;
* :func:`words_by_speaker` Figure 3b: words per dialogue spoken by client and lawyer;
* :func:`strategy_changes` Figure 7: metrics of strategies and their change over a base row.

Words are jieba words (:func:`lecode.text.tokenize` without punctuation tokens), the unit the
paper counts in (Figure 3b's word counts; ROUGE-L "after Chinese word segmentation using jieba"),
not characters.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from lecode.metrics.registry import get
from lecode.records import Case, Matches
from lecode.report.results import split_scores
from lecode.report.spec import Metric, ReportedSystem
from lecode.text import tokenize

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
    scores: pl.DataFrame, systems: Sequence[ReportedSystem], metrics: Sequence[Metric]
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
    systems: Sequence[ReportedSystem],
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
            m = get(key)
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
    systems: Sequence[ReportedSystem],
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


def word_count(text: str) -> int:
    """Number of jieba words in ``text``: :func:`lecode.text.tokenize` tokens, punctuation and
    whitespace left out (``"我被打了，很疼。"``: 我/被/打/了/很/疼, 6 words, 8 characters)."""
    return len(tokenize(text, punctuation=False))


def dataset_frame(cases: Iterable[Case], split: str = "") -> pl.DataFrame:
    """One row per case: primary case type (the domain), charges, facts, utterances, and the
    words (jieba, :func:`word_count`) and characters spoken by each speaker.

    ``fact_words`` holds the jieba word count of each key fact, in the case's order.
    """
    rows = []
    for c in cases:
        by_speaker: dict[str, list[str]] = {"client": [], "lawyer": []}
        for u in c.dialogue:
            by_speaker.setdefault(u.speaker, []).append(u.text)
        rows.append(
            {
                "case_id": c.id,
                "split": split,
                "case_type": c.case_type[0] if c.case_type else UNKNOWN_TYPE,
                "charges": list(c.charge_type),
                "n_facts": c.n_facts,
                "fact_words": [word_count(f) for f in c.facts],
                "utterances": len(c.dialogue),
                "client_words": sum(word_count(t) for t in by_speaker["client"]),
                "lawyer_words": sum(word_count(t) for t in by_speaker["lawyer"]),
                "client_chars": sum(len(t) for t in by_speaker["client"]),
                "lawyer_chars": sum(len(t) for t in by_speaker["lawyer"]),
            }
        )
    schema = pl.Schema(
        {
            "case_id": pl.String(),
            "split": pl.String(),
            "case_type": pl.String(),
            "charges": pl.List(pl.String()),
            "n_facts": pl.Int64(),
            "fact_words": pl.List(pl.Int64()),
            "utterances": pl.Int64(),
            "client_words": pl.Int64(),
            "lawyer_words": pl.Int64(),
            "client_chars": pl.Int64(),
            "lawyer_chars": pl.Int64(),
        }
    )
    return pl.DataFrame(rows, schema=schema, orient="row")


FACTS_BY_CHARGE_SCHEMA = pl.Schema(
    {
        "rank": pl.Int64(),
        "charge": pl.String(),
        "case_type": pl.String(),
        "dialogues": pl.Int64(),
        "facts": pl.Int64(),
        "mean_facts": pl.Float64(),
        "fact_words": pl.Int64(),
        "mean_fact_words": pl.Float64(),
    }
)


def facts_by_charge(cases: pl.DataFrame) -> pl.DataFrame:
    """Figure 3a's numbers: atomic key facts per dialogue, by charge type (paper Section 3.3,
    "the average number of key facts per dialogue across common consultation scenarios").

    One row per charge type of :func:`dataset_frame` rows, most consulted first (ties by name),
    with ``rank`` (1 = most dialogues); ``case_type`` is the domain most of its dialogues have.
    ``dialogues`` counts the dialogues naming the charge (one naming two charges counts for
    both; one naming none is left out), ``facts`` their key facts, ``mean_facts`` =
    ``facts / dialogues``. ``fact_words`` is the jieba words of those facts together and
    ``mean_fact_words`` the mean length of one key fact in jieba words (null when the rows have
    no ``fact_words`` column).
    """
    if cases.height == 0 or "charges" not in cases.columns:
        return pl.DataFrame(schema=FACTS_BY_CHARGE_SCHEMA)
    has_words = "fact_words" in cases.columns
    words = (
        pl.col("fact_words").list.sum().fill_null(0).cast(pl.Int64)
        if has_words
        else pl.lit(None, dtype=pl.Int64)
    )
    per_case = cases.select("case_type", "charges", "n_facts", words.alias("words")).explode(
        "charges"
    )
    per_case = per_case.drop_nulls("charges").filter(pl.col("charges") != "")
    out = (
        per_case.group_by("charges")
        .agg(
            pl.col("case_type").mode().sort().first(),
            pl.len().cast(pl.Int64).alias("dialogues"),
            pl.col("n_facts").sum().cast(pl.Int64).alias("facts"),
            (pl.col("words").sum() if has_words else pl.lit(None, dtype=pl.Int64))
            .cast(pl.Int64)
            .alias("fact_words"),
        )
        .rename({"charges": "charge"})
        .with_columns(
            (pl.col("facts") / pl.col("dialogues")).alias("mean_facts"),
            pl.when(pl.col("facts") > 0)
            .then(pl.col("fact_words") / pl.col("facts"))
            .otherwise(None)
            .cast(pl.Float64)
            .alias("mean_fact_words"),
        )
        .sort(["dialogues", "charge"], descending=[True, False])
        .with_row_index("rank", offset=1)
        .with_columns(pl.col("rank").cast(pl.Int64))
    )
    return out.select(list(FACTS_BY_CHARGE_SCHEMA)).cast(FACTS_BY_CHARGE_SCHEMA)


WORDS_BY_SPEAKER_SCHEMA = pl.Schema(
    {
        "speaker": pl.String(),
        "unit": pl.String(),
        "dialogues": pl.Int64(),
        "mean": pl.Float64(),
        "median": pl.Float64(),
        "total": pl.Int64(),
    }
)


def words_by_speaker(cases: pl.DataFrame) -> pl.DataFrame:
    """Figure 3b's numbers: words per dialogue spoken by the client and by the lawyer.

    ``unit`` is ``jieba words`` from the ``*_words`` columns of :func:`dataset_frame`, or
    ``characters`` for rows that carry only ``*_chars`` columns.
    """
    unit = "jieba words" if "client_words" in cases.columns else "characters"
    suffix = "words" if unit == "jieba words" else "chars"
    rows = []
    if cases.height:
        for speaker in ("client", "lawyer"):
            col = cases[f"{speaker}_{suffix}"].cast(pl.Int64)
            rows.append(
                {
                    "speaker": speaker,
                    "unit": unit,
                    "dialogues": col.len(),
                    "mean": float(col.mean()),  # type: ignore[arg-type]
                    "median": float(col.median()),  # type: ignore[arg-type]
                    "total": int(col.sum()),
                }
            )
    return pl.DataFrame(rows, schema=WORDS_BY_SPEAKER_SCHEMA, orient="row")


STRATEGY_SCHEMA = pl.Schema(
    {
        "system": pl.String(),
        "metric": pl.String(),
        "header": pl.String(),
        "value": pl.Float64(),
        "n": pl.Int64(),
        "base": pl.String(),
        "base_value": pl.Float64(),
        "change_pct": pl.Float64(),
    }
)


def strategy_changes(
    means: pl.DataFrame,
    order: Sequence[str],
    metrics: Sequence[str],
    base: str | None = None,
) -> pl.DataFrame:
    """Figure 7's numbers: each system's mean (display scale) and its change over ``base``.

    ``means`` as from :func:`system_means`; rows for the systems of ``order`` (in that order)
    and the ``metrics`` that have a value for at least one of them. ``base`` is the reference
    row's label (default: the first of ``order``). ``change_pct`` = ``100 * (value -
    base_value) / |base_value|``, signed as measured (a negative AT change means fewer turns,
    the paper's "reducing dialogue turns by 51.5%"); null for the base row itself, where either
    value is missing, or where ``base_value`` is 0.
    """
    ref = base if base is not None else (order[0] if order else None)
    present = means.drop_nulls("value").filter(pl.col("system").is_in(list(order)))
    keys = [k for k in metrics if k in set(present["metric"].to_list())]
    values = {
        (s, k): (v, n)
        for s, k, v, n in present.select("system", "metric", "value", "n").iter_rows()
    }
    rows = []
    for key in keys:
        base_value = values.get((ref, key), (None, 0))[0] if ref is not None else None
        for system in order:
            value, n = values.get((system, key), (None, 0))
            change = None
            if system != ref and value is not None and base_value:
                change = 100.0 * (value - base_value) / abs(base_value)
            rows.append(
                {
                    "system": system,
                    "metric": key,
                    "header": get(key).display_header,
                    "value": value,
                    "n": n,
                    "base": ref,
                    "base_value": base_value,
                    "change_pct": change,
                }
            )
    return pl.DataFrame(rows, schema=STRATEGY_SCHEMA, orient="row")


def wide(frame: pl.DataFrame, index: str, value: str, order: Sequence[str]) -> pl.DataFrame:
    """Long ``system``/``index``/``value`` to one column per system (for ``dvc plots``)."""
    if frame.height == 0:
        return pl.DataFrame(schema={index: frame.schema.get(index, pl.Int64)})
    out = frame.pivot(on="system", index=index, values=value)
    cols = [c for c in order if c in out.columns]
    return out.select(index, *cols)
