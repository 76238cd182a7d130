"""Per-dialogue scores: clarification, advice and judge metrics of each simulated consultation.

Units: recall, weighted recall, Recall@5, NDCG, NDCG-gold, ROUGE-L and BERTScore F1 are
fractions (0..1; NDCG-gold can exceed 1, see :func:`lecode.metrics.clarification.ndcg_gold`);
the six judge scores are the judge's raw 1..10; ``turns`` is the number of clarifying questions.

Missingness (``None``, shown as n/N downstream, never a zero):

* a transcript that stopped with ``error`` is missing for every metric;
* clarification metrics need a match record with status ``ok`` (and a case with facts);
* advice metrics need a dialogue that ended in advice (never the last utterance instead) and a
  non-empty reference advice;
* judge scores need a dialogue that ended in advice and a judgement with status ``ok``.

Inconsistent inputs (a transcript without its case, match records that disagree with their
case or transcript) are pipeline bugs and raise :class:`ValueError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from lecode.metrics.advice import RougeL
from lecode.metrics.clarification import clarification_scores
from lecode.records import Case, DialogueScores, Judgement, Matches, Transcript

JUDGE_FIELDS = ("professionalism", "fluency", "completeness", "satisfaction", "safety", "overall")


class BatchScorer(Protocol):
    """Scores many (candidate, reference) pairs in one call, e.g. :class:`BertScorer`."""

    def score_detailed(self, candidates: Sequence[str], references: Sequence[str]) -> Any:
        """``.f1`` (one value per pair) and ``.truncated`` (whether a side was cut)."""
        ...


def _check_same_run(kind: str, record: Matches | Judgement, transcript: Transcript) -> None:
    mine = (record.case_id, record.expert, record.strategy)
    theirs = (transcript.case_id, transcript.expert, transcript.strategy)
    if mine != theirs:
        raise ValueError(
            f"{kind} for {'/'.join(mine)} paired with the transcript of {'/'.join(theirs)}"
        )


def _clarification(case: Case, transcript: Transcript, m: Matches | None) -> dict[str, Any]:
    if m is None or m.status != "ok" or case.n_facts == 0:
        return {}
    _check_same_run("matches", m, transcript)
    if m.n_facts != case.n_facts:
        raise ValueError(f"{case.id}: matches count {m.n_facts} facts, the case has {case.n_facts}")
    if len(m.per_question) != transcript.n_questions:
        raise ValueError(
            f"{case.id}: matches cover {len(m.per_question)} questions, the transcript asked "
            f"{transcript.n_questions}"
        )
    s = clarification_scores(case.importance, m.per_question)
    return {
        "recall": s.recall,
        "weighted_recall": s.weighted_recall,
        "recall_at_5": s.recall_at_5,
        "ndcg": s.ndcg,
        "ndcg_gold": s.ndcg_gold,
    }


def _judge(transcript: Transcript, j: Judgement | None) -> dict[str, Any]:
    if j is None or j.status != "ok" or j.scores is None:
        return {}
    _check_same_run("judgement", j, transcript)
    return {name: float(getattr(j.scores, name)) for name in JUDGE_FIELDS}


def score_dialogues(
    cases: Mapping[str, Case],
    transcripts: Iterable[Transcript],
    matches: Mapping[str, Matches],
    judgements: Mapping[str, Judgement],
    rouge: RougeL,
    bert: BatchScorer | None,
) -> list[DialogueScores]:
    """One :class:`DialogueScores` per transcript, in transcript order.

    ``matches`` and ``judgements`` are keyed by case id; an absent entry means missing.
    ``bert=None`` leaves BERTScore missing everywhere; otherwise it is computed in one batched
    call over every dialogue that has advice. The reference is ``case.suggestion``.
    """
    rows: list[dict[str, Any]] = []
    pending: list[tuple[int, str, str]] = []  # (row, advice, reference) for BERTScore
    seen: set[str] = set()
    for t in transcripts:
        if t.case_id in seen:
            raise ValueError(f"{t.case_id}: more than one transcript for this case")
        seen.add(t.case_id)
        case = cases.get(t.case_id)
        if case is None:
            raise ValueError(f"{t.case_id}: transcript of an unknown case")
        row: dict[str, Any] = {
            "case_id": t.case_id,
            "expert": t.expert,
            "strategy": t.strategy,
            "n_facts": case.n_facts,
            "stop_reason": t.stop_reason,
            # An infrastructure failure says nothing about the expert: AT is missing too.
            "turns": None if t.stop_reason == "error" else t.n_questions,
        }
        rows.append(row)
        if t.stop_reason == "error":
            continue
        row.update(_clarification(case, t, matches.get(t.case_id)))
        advice = t.advice
        if advice is None:
            continue
        row.update(_judge(t, judgements.get(t.case_id)))
        if not case.suggestion.strip():
            continue
        row["rouge_l"] = rouge.score(advice, case.suggestion)
        pending.append((len(rows) - 1, advice, case.suggestion))

    if bert is not None and pending:
        result = bert.score_detailed([p[1] for p in pending], [p[2] for p in pending])
        values, cut = list(result.f1), list(result.truncated)
        if len(values) != len(pending) or len(cut) != len(pending):
            raise ValueError(f"BERTScore returned {len(values)} values for {len(pending)} pairs")
        for (i, _, _), value, was_cut in zip(pending, values, cut, strict=True):
            rows[i]["bertscore_f1"] = float(value)
            rows[i]["bertscore_truncated"] = int(bool(was_cut))
    return [DialogueScores(**row) for row in rows]
