"""Hand-written questions for the reliability study (Table 4), as the paper wrote them: a JSONL
file, one consultation a line, ``{"id": <training case id>, "questions": [...]}`` with exactly
``reliability.questions`` distinct, non-empty questions. The study's consultations are the
file's, in file order; each is shown its first ``context_rounds`` rounds (as for the LLM
question writer) and asked the file's questions."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from lecode.records import Case
from lecode.reliability import ReliabilityItem, writer_context


class HandQuestionsError(ValueError):
    """The questions file is invalid; the message names the file, line and field."""


def read_hand_questions(path: str | Path, n: int) -> dict[str, tuple[str, ...]]:
    """Case id -> its ``n`` questions, in file order."""
    out: dict[str, tuple[str, ...]] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise HandQuestionsError(f"{path}: cannot read: {exc.strerror or exc}") from None
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise HandQuestionsError(f"{where}: not JSON: {exc}") from None
        if not isinstance(record, dict) or set(record) != {"id", "questions"}:
            raise HandQuestionsError(f'{where}: expected {{"id": ..., "questions": [...]}}')
        case_id, questions = record["id"], record["questions"]
        if not isinstance(case_id, str) or not case_id:
            raise HandQuestionsError(f"{where}: id: expected a non-empty string")
        if case_id in out:
            raise HandQuestionsError(f"{where}: id: {case_id!r} appears twice")
        if not isinstance(questions, list) or not all(isinstance(q, str) for q in questions):
            raise HandQuestionsError(f"{where}: questions: expected a list of strings")
        qs = tuple(q.strip() for q in questions)
        if len(qs) != n or any(not q for q in qs) or len(set(qs)) != n:
            raise HandQuestionsError(
                f"{where}: questions: expected exactly {n} distinct non-empty questions "
                f"(reliability.questions), got {len(qs)}"
            )
        out[case_id] = qs
    if not out:
        raise HandQuestionsError(f"{path}: holds no consultation")
    return out


def hand_items(
    cases: Sequence[Case],
    questions: Mapping[str, tuple[str, ...]],
    *,
    context_rounds: int,
    source: str,
) -> list[ReliabilityItem]:
    """One item per consultation of ``questions`` (file order), its context cut as for the
    question writer; every id must be a training consultation with facts."""
    by_id = {c.id: c for c in cases}
    missing = [i for i in questions if i not in by_id]
    if missing:
        raise HandQuestionsError(
            f"{source}: {len(missing)} id(s) are no consultation of the training set, e.g. "
            f"{missing[0]!r}"
        )
    no_facts = [i for i in questions if not by_id[i].facts]
    if no_facts:
        raise HandQuestionsError(
            f"{source}: consultation {no_facts[0]!r} has no key facts to answer from"
        )
    return [
        ReliabilityItem(
            case=by_id[i],
            context=writer_context(by_id[i], context_rounds),
            questions=qs,
            source="hand",
        )
        for i, qs in questions.items()
    ]
