"""Per-dialogue scores: every declared metric (:mod:`lecode.metrics.registry`) of each simulated
consultation.

Units and meaning are in each metric's declaration. Missingness (``None``, shown as n/N
downstream, never a zero) follows each declaration's ``need``
(:data:`lecode.metrics.declaration.NEEDS`):

* a transcript that stopped with ``error`` is missing for every metric;
* ``matches`` metrics need a match record with status ``ok`` (and a case with facts);
* ``advice`` metrics need a dialogue that ended in advice (never the last utterance instead)
  and a non-empty reference advice;
* ``judgement`` metrics need a dialogue that ended in advice and a judgement with status ``ok``;

and a compute function may return ``None`` where its metric does not apply (its ``missing``).

Inconsistent inputs (a transcript without its case, match records that disagree with their
case or transcript) are pipeline bugs and raise :class:`ValueError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lecode.metrics.declaration import BatchScorer, Dialogue, MetricDeclaration, PairScorer, Tools
from lecode.metrics.registry import METRICS
from lecode.records import Case, Judgement, JudgeScores, Matches, Transcript
from lecode.score_records import DialogueScores, ScoreRecord


def _check_same_run(kind: str, record: Matches | Judgement, transcript: Transcript) -> None:
    mine = (record.case_id, record.expert, record.strategy)
    theirs = (transcript.case_id, transcript.expert, transcript.strategy)
    if mine != theirs:
        raise ValueError(
            f"{kind} for {'/'.join(mine)} paired with the transcript of {'/'.join(theirs)}"
        )


def _matched(
    case: Case, transcript: Transcript, m: Matches | None
) -> tuple[tuple[int, ...], ...] | None:
    if m is None or m.status != "ok" or case.n_facts == 0:
        return None
    _check_same_run("matches", m, transcript)
    if m.n_facts != case.n_facts:
        raise ValueError(f"{case.id}: matches count {m.n_facts} facts, the case has {case.n_facts}")
    if len(m.per_question) != transcript.n_questions:
        raise ValueError(
            f"{case.id}: matches cover {len(m.per_question)} questions, the transcript asked "
            f"{transcript.n_questions}"
        )
    return m.per_question


def _judged(transcript: Transcript, j: Judgement | None) -> JudgeScores | None:
    if transcript.advice is None or j is None or j.status != "ok" or j.scores is None:
        return None
    _check_same_run("judgement", j, transcript)
    return j.scores


def score_dialogues(
    cases: Mapping[str, Case],
    transcripts: Iterable[Transcript],
    matches: Mapping[str, Matches],
    judgements: Mapping[str, Judgement],
    rouge: PairScorer,
    bert: BatchScorer | None,
    metrics: Sequence[MetricDeclaration] = METRICS,
) -> list[ScoreRecord]:
    """One :class:`DialogueScores` per transcript, in transcript order.

    ``matches`` and ``judgements`` are keyed by case id; an absent entry means missing.
    ``bert=None`` leaves BERTScore missing everywhere; otherwise it is computed in one batched
    call over every dialogue that has advice. The reference is ``case.suggestion``.
    """
    tools = Tools(rouge, bert)
    rows: list[dict[str, Any]] = []
    dialogues: list[Dialogue] = []
    seen: set[str] = set()
    for t in transcripts:
        if t.case_id in seen:
            raise ValueError(f"{t.case_id}: more than one transcript for this case")
        seen.add(t.case_id)
        case = cases.get(t.case_id)
        if case is None:
            raise ValueError(f"{t.case_id}: transcript of an unknown case")
        rows.append(
            {
                "case_id": t.case_id,
                "expert": t.expert,
                "strategy": t.strategy,
                "n_facts": case.n_facts,
                "stop_reason": t.stop_reason,
            }
        )
        failed = t.stop_reason == "error"
        dialogues.append(
            Dialogue(
                case,
                t,
                tools,
                per_question=None if failed else _matched(case, t, matches.get(t.case_id)),
                judge=None if failed else _judged(t, judgements.get(t.case_id)),
            )
        )
    for metric in metrics:
        chosen = [i for i, d in enumerate(dialogues) if d.meets(metric.need)]
        values = metric.values([dialogues[i] for i in chosen])
        for row in rows:
            row[metric.key] = None
        for i, value in zip(chosen, values, strict=True):
            rows[i][metric.key] = value
    return [DialogueScores(**row) for row in rows]
