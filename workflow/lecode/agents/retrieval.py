"""Retrieval baseline: asks what lawyers asked in the most similar training consultations.

Each move ranks the training cases by BM25 (``bm25s``, jieba tokens without punctuation) of the
test case's initial query plus the client's answers so far (answers exactly ``不知道`` add
nothing) against each training case's client side (initial query plus client utterances).
Ties are broken by case id, so the ranking, and hence the dialogue, is deterministic.

From the top-k cases it asks their clarifying questions (ranked case by case, each case's in
dialogue order), skipping any question whose keyword Jaccard similarity with an already asked
question is >= ``NEAR_REPEAT_JACCARD`` (0.5: the two share at least half of their combined
keywords, i.e. they ask about the same thing in other words); a question without any keyword
("是吗？") is never asked. It stops after the median number of clarifying questions of the
top-k cases (the lower median for even k), or when no question is left, and then advises with
the nearest case's advice summary (``suggestion``; its dialogue's advice if that is empty).

It reads only ``case.initial_query`` and ``history`` of the test case, never its dialogue,
facts or suggestion.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import bm25s  # type: ignore[import-untyped]
import numpy as np

from lecode.agents.base import CaseExpert, ExpertMove, RoleError, UsageMeter
from lecode.agents.dialogue_parts import clarifying_questions, lawyer_advice
from lecode.agents.lexical import jaccard, keywords
from lecode.records import UNKNOWN_ANSWER, Case, Turn
from lecode.text import tokenize

NEAR_REPEAT_JACCARD = 0.5


@dataclass(frozen=True)
class _Entry:
    case_id: str
    questions: tuple[str, ...]
    question_keywords: tuple[frozenset[str], ...]
    advice: str


def _index_text(case: Case) -> str:
    """Initial query plus client utterances (the query itself counted once)."""
    parts = [case.initial_query]
    parts += [
        u.text for u in case.dialogue if u.speaker == "client" and u.text != case.initial_query
    ]
    return "\n".join(parts)


def _bm25_tokens(text: str) -> list[str]:
    return [t.lower() for t in tokenize(text, punctuation=False)]


class RetrievalExpert(CaseExpert):
    """BM25 nearest-neighbour expert over ``train_cases`` (index built once here)."""

    def __init__(self, name: str, train_cases: Sequence[Case], top_k: int = 5) -> None:
        if not train_cases:
            raise ValueError("RetrievalExpert needs at least one training case")
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1, not {top_k}")
        self.name = name
        self.top_k = top_k
        ordered = sorted(train_cases, key=lambda c: c.id)
        self._entries: list[_Entry] = []
        for c in ordered:
            questions = clarifying_questions(c)
            self._entries.append(
                _Entry(
                    case_id=c.id,
                    questions=questions,
                    question_keywords=tuple(keywords(q) for q in questions),
                    advice=c.suggestion.strip() or lawyer_advice(c),
                )
            )
        corpus = [_bm25_tokens(_index_text(c)) for c in ordered]
        self._bm25: bm25s.BM25 | None = None
        if any(corpus):  # bm25s cannot index a corpus without a single token
            self._bm25 = bm25s.BM25(backend="numpy")
            self._bm25.index(corpus, show_progress=False)

    def _scores(self, query: str) -> np.ndarray:
        zeros = np.zeros(len(self._entries), dtype=np.float64)
        if self._bm25 is None:
            return zeros
        ids = self._bm25.get_tokens_ids(_bm25_tokens(query))
        if not ids:
            return zeros
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float64)

    def ranking(self, query: str) -> list[str]:
        """Training case ids, most similar first (ties: smaller id first)."""
        return [self._entries[i].case_id for i in self._rank(query)]

    def _rank(self, query: str) -> list[int]:
        scores = self._scores(query)
        # Entries are sorted by id, so a stable sort on descending score breaks ties by id.
        return [int(i) for i in np.argsort(-scores, kind="stable")]

    async def next_move(
        self, case: Case, history: Sequence[Turn], *, must_advise: bool, meter: UsageMeter
    ) -> ExpertMove:
        answers = [
            t.text
            for t in history
            if t.speaker == "client" and t.kind == "answer" and t.text.strip() != UNKNOWN_ANSWER
        ]
        query = "\n".join([case.initial_query, *answers])
        top = [self._entries[i] for i in self._rank(query)[: self.top_k]]
        asked = [keywords(t.text) for t in history if t.kind == "question"]
        budget = statistics.median_low(len(e.questions) for e in top)
        if not must_advise and len(asked) < budget:
            for entry in top:
                for question, kw in zip(entry.questions, entry.question_keywords, strict=True):
                    if kw and all(jaccard(kw, a) < NEAR_REPEAT_JACCARD for a in asked):
                        return ExpertMove(kind="question", text=question)
        for entry in top:
            if entry.advice:
                return ExpertMove(kind="advice", text=entry.advice)
        raise RoleError(f"case {case.id}: no advice among the nearest training cases", "error")
