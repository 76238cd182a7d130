"""The client audit in the report: per-system rates (``audit`` table) and the clarification
metrics recomputed on the dialogues whose client behaved (``robustness`` table).

Inputs are the per-dialogue audit frame (:func:`lecode.audit.audit_frame`) and the
per-dialogue scores; both are split by system like every other table.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from lecode.metrics.registry import with_tag
from lecode.report.model import Aggregation, Row, Table
from lecode.report.results import split_scores, system_cells
from lecode.report.spec import Metric, ReportedSystem
from lecode.stats import ResamplePlan

#: Columns of the audit table: per-dialogue shares of answers, then the dialogue flag.
AUDIT_METRICS: tuple[Metric, ...] = (
    Metric("over_limit", "Leak", 100.0, None, "audit"),  # type: ignore[arg-type]
    Metric("unsupported", "Invent", 100.0, None, "audit"),  # type: ignore[arg-type]
    Metric("withheld", "Withhold", 100.0, None, "audit"),  # type: ignore[arg-type]
    Metric("contradicted", "Contra", 100.0, None, "audit"),  # type: ignore[arg-type]
    Metric("flagged", "Flagged", 100.0, None, "audit"),  # type: ignore[arg-type]
    Metric("behaved", "Behaved", 100.0, None, "audit"),  # type: ignore[arg-type]
)
AUDIT_AGGREGATION: dict[str, str] = {
    "over_limit": "answers disclosing more than 3 facts (the matcher's facts of the position)",
    "unsupported": "answers with a statement no fact supports lexically",
    "withheld": (
        "不知道 answers to a question a fact answers (the real client's reply to it disclosed "
        "the fact, or the question covers it lexically)"
    ),
    "contradicted": "answers with a clause that states a fact clause with opposite negation",
    "flagged": "answers failing any check",
}
BEHAVED = "client behaved"
ALL = "all dialogues"


def _interval_note(plan: ResamplePlan) -> str:
    return (
        f"± half-width of the {plan.confidence:.0%} percentile bootstrap interval over dialogues "
        f"({plan.resamples} resamples, seed {plan.seed})"
    )


def audit_table(
    audit: pl.DataFrame,
    systems: Sequence[ReportedSystem],
    n_expected: int,
    *,
    plan: ResamplePlan,
) -> Table:
    """Per system: the share of client answers failing each check (averaged per dialogue,
    then over dialogues) and the share of dialogues whose client behaved throughout."""
    frames = split_scores(audit, systems)
    rows = [
        Row(
            label=s.label,
            group=s.group,
            cells=system_cells(
                frames[s.key], AUDIT_METRICS, plan, n_expected, label=s.label, aggregation="share"
            ),
            expert=s.expert,
            strategy=s.strategy,
            systems=(s.id,),
        )
        for s in systems
    ]
    return Table(
        name="audit",
        title="Client fidelity audit (per answer, % of the client's answers)",
        metrics=AUDIT_METRICS,
        rows=tuple(rows),
        notes=(
            "Leak: more than 3 facts disclosed; Invent: a statement without lexical support "
            "in the facts; Withhold: 不知道 although a fact answers the question; Contra: a "
            "fact stated with opposite negation; Flagged: any of them (docs/reading-results.md)",
            "per dialogue the share of its answers, then the mean over dialogues; Behaved: "
            "% of dialogues without any flagged answer",
            _interval_note(plan),
            "n/N: dialogues with at least one answered question (failed dialogues missing)",
        ),
    )


def behaved_ids(audit: pl.DataFrame) -> pl.DataFrame:
    """(case_id, expert, strategy) of the dialogues whose client behaved throughout."""
    return audit.filter(pl.col("behaved") == 1.0).select("case_id", "expert", "strategy")


def robustness_table(
    scores: pl.DataFrame,
    audit: pl.DataFrame,
    systems: Sequence[ReportedSystem],
    n_expected: int,
    *,
    plan: ResamplePlan,
    metrics: Sequence[Metric] = with_tag("table6"),
) -> Table:
    """Per system: the clarification metrics on all dialogues and on those whose client
    behaved (no answer flagged by the audit); n/N shows how many remain."""
    kept = scores.join(behaved_ids(audit), on=["case_id", "expert", "strategy"], how="semi")
    every = split_scores(scores, systems)
    clean = split_scores(kept, systems)
    rows: list[Row] = []
    for s in systems:
        parts: tuple[tuple[pl.DataFrame, str, Aggregation], ...] = (
            (every[s.key], ALL, "mean"),
            (clean[s.key], BEHAVED, "subset_mean"),
        )
        for frame, setting, aggregation in parts:
            rows.append(
                Row(
                    label=s.label,
                    group=s.group,
                    setting=setting,
                    cells=system_cells(
                        frame, metrics, plan, n_expected, label=s.label, aggregation=aggregation
                    ),
                    expert=s.expert,
                    strategy=s.strategy,
                    systems=(s.id,),
                )
            )
    return Table(
        name="robustness",
        title="Clarification metrics on all dialogues and on those whose client behaved",
        metrics=tuple(metrics),
        rows=tuple(rows),
        notes=(
            f"{BEHAVED}: dialogues none of whose client answers the audit flags (the audit "
            "table); n/N counts them against all test cases",
            _interval_note(plan),
            "a large gap between the two rows means the client simulator, not the expert, "
            "moves the number",
        ),
        setting_header="dialogues",
    )
