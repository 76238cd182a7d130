"""Table 4 (client-simulator reliability, paper appendix C) as a table document.

Layout as in the paper: rows are client models, columns the three client strategies, in
blocks: relevance and factuality as judged (with the paper's rows beside ours), then the two
deterministic audit blocks (see :mod:`lecode.reliability`). Each of our cells is the mean over
the sampled consultations of the per-consultation share of answers with the property, x100,
with a percentile bootstrap interval over consultations; n/N counts consultations with a value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from lecode.config.base import IDENTITY
from lecode.config.roles import System
from lecode.reliability import (
    BLOCKS,
    JUDGE_KEYS,
    STRATEGIES,
    STRATEGY_HEADERS,
    ReliabilityAnswer,
    case_values,
)
from lecode.report.document import (
    SCHEMA_VERSION,
    Provenance,
    RoleInfo,
    SystemInfo,
    TableDocument,
    metrics_document,
)
from lecode.report.model import Cell, Row, Table
from lecode.report.paper import PaperNumbers, normalise_label
from lecode.report.spec import Metric
from lecode.stats import ResamplePlan

SECTION = "Client prompt strategy"
COLUMNS: tuple[Metric, ...] = tuple(
    Metric(st, STRATEGY_HEADERS[st], 100.0, None, SECTION)  # type: ignore[arg-type]
    for st in STRATEGIES
)
OURS = "ours"
#: What Table 4's note says of each question source.
QUESTION_NOTES: dict[str, str] = {
    "hand": "questions: hand-written per consultation (reliability.questions_file), the "
    "paper's protocol",
    "lawyer": "questions: the real lawyer's next clarifying questions of each consultation "
    "(the paper wrote its questions by hand; docs/paper-experiment.md)",
    "writer": "questions: written by the LLM question writer (reliability.question_writer; "
    "the paper wrote its questions by hand)",
}
PAPER_SETTING = "paper"
AGGREGATION: dict[str, str] = {
    "relevance": "answers the judge found relevant to the lawyer's question",
    "factuality": "answers the judge found consistent with the fact list",
    "audit_factual": "answers with no unsupported and no contradicting statement (lecode.audit)",
    "audit_protocol": "answers with at most 3 facts and no withheld 不知道 (lecode.audit)",
}


def paper_rows(paper: PaperNumbers | None) -> list[tuple[str, dict[str, dict[str, float]]]]:
    """The paper's Table 4 models in file order: ``(label, {strategy: {metric: value}})``."""
    if paper is None:
        return []
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (table, norm, setting), values in paper.values.items():
        if table == "4":
            out.setdefault(paper.labels.get(norm, norm), {})[setting] = values
    return list(out.items())


def table4(
    runs: Sequence[Mapping[str, Any]],
    answers: Mapping[tuple[str, str], Sequence[ReliabilityAnswer]],
    case_ids: Sequence[str],
    *,
    plan: ResamplePlan,
    judged: bool,
    paper: PaperNumbers | None = None,
    offline: Sequence[str] = (),
    sources: Sequence[str] = (),
) -> Table:
    """``runs``: ``{client, label, strategy}`` per answer job (table order); ``answers`` by
    ``(client, strategy)``; ``case_ids`` the sampled consultations (N); ``sources`` where the
    questions came from (:data:`lecode.reliability.QuestionSource`), said in a note."""
    clients: dict[str, str] = {}
    for r in runs:
        clients.setdefault(r["client"], r["label"])
    n = len(case_ids)
    published = paper_rows(paper)
    rows: list[Row] = []
    for key, title, paper_group in BLOCKS:
        for client, label in clients.items():
            cells = []
            for m in COLUMNS:
                got = answers.get((client, m.key))
                if got is None or (key in JUDGE_KEYS and not judged):
                    cells.append(Cell(aggregation="share"))  # not run / no judge: "—"
                    continue
                est = plan.mean(case_values(got, case_ids, key)).scaled(100.0)
                cells.append(
                    Cell(
                        value=est.mean,
                        ci_low=est.ci_low,
                        ci_high=est.ci_high,
                        n=est.n,
                        N=n,
                        aggregation="share",
                    )
                )
            rows.append(
                Row(
                    label=label,
                    cells=tuple(cells),
                    group=title,
                    setting=OURS,
                    expert=client,
                    systems=tuple(
                        f"{client}/{m.key}" for m in COLUMNS if (client, m.key) in answers
                    ),
                )
            )
        if paper_group is None:
            continue
        for plabel, by_strategy in published:
            rows.append(
                Row(
                    label=plabel,
                    cells=tuple(
                        Cell(value=by_strategy.get(m.key, {}).get(key), aggregation="published")
                        for m in COLUMNS
                    ),
                    group=title,
                    kind="paper",
                    setting=PAPER_SETTING,
                )
            )
    notes = [
        "ours: mean over the sampled consultations of the share of their answers with the "
        f"property, ×100, ± half-width of the {plan.confidence:.0%} percentile bootstrap "
        f"interval over consultations ({plan.resamples} resamples, seed {plan.seed}); n/N: "
        "consultations with a value / sampled",
        "Relevance and Factuality (judge): the configured reliability judge with our prompt "
        "(workflow/prompts/reliability/judge.txt); — without a judge",
        "audit blocks: the deterministic checks of lecode.audit against the fact list "
        "(docs/reading-results.md)",
    ]
    notes.extend(QUESTION_NOTES[s] for s in sources if s in QUESTION_NOTES)
    if published:
        notes.append(
            "paper: the published Table 4 (Qwen models, 100 training consultations with 5 "
            "rounds of context, three hand-written questions each, judged by GPT-4o-mini)"
        )
    if offline:
        notes.append(
            f"{', '.join(offline)}: an offline client reads no prompt, so the three strategies "
            "give the same answers"
        )
    return Table(
        name="table4",
        title="Client simulator reliability (% of answers)",
        metrics=COLUMNS,
        rows=tuple(rows),
        notes=tuple(notes),
        row_header="Models",
        setting_header="",
    )


def table4_document(
    table: Table,
    *,
    spec_digest: str,
    systems: Mapping[str, SystemInfo],
    threshold: float,
    bootstrap: Mapping[str, Any],
) -> TableDocument:
    """The document of :func:`table4`, each cell's aggregation saying what it counts."""
    doc = metrics_document(
        table, Provenance(spec_digest=spec_digest), threshold=threshold, bootstrap=bootstrap
    )
    titles = {title: key for key, title, _ in BLOCKS}
    rows = []
    for r in doc.rows:
        key = titles.get(r.group, "")
        cells = []
        for c in r.cells:
            if r.kind == "paper":
                text = f"the published Table 4 value ({r.group.split(' (')[0]}, run.paper)"
            else:
                text = (
                    f"share of a consultation's {AGGREGATION.get(key, key)}, mean over the n "
                    f"consultations, ×100; percentile bootstrap over consultations "
                    f"({bootstrap['resamples']} resamples, seed {bootstrap['seed']}, "
                    f"{bootstrap['confidence']} interval)"
                )
            cells.append(replace(c, description=text))
        rows.append(r.with_cells(tuple(cells)))
    return doc.model_copy(
        update={"rows": tuple(rows), "systems": dict(systems), "schema_version": SCHEMA_VERSION}
    )


def run_info(
    run: Mapping[str, Any], roles: Mapping[str, Any], reported: Mapping[str, str]
) -> SystemInfo:
    """A Table 4 column entry's provenance: the client (and judge) entries as in the digests,
    its answer file and spec digest."""
    return SystemInfo(
        system=System(
            expert=run["client"], strategy=run["strategy"], label=run["label"], group="Table 4"
        ),
        roles={
            name: RoleInfo(
                model=role.name,
                strategy=run["strategy"] if name == "client" else None,
                entry=role.entry.model_dump(mode="json", context=IDENTITY),
            )
            for name, role in roles.items()
        },
        reported=dict(reported),
    )


__all__ = ["COLUMNS", "normalise_label", "paper_rows", "run_info", "table4", "table4_document"]
