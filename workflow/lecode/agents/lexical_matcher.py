"""Offline fact matcher: a fact is elicited by a question/answer pair when most of it appears there.

Coverage of a fact = the larger of (a) the fraction of its keywords that occur in the question
plus the answer (as substrings) and (b) the fraction of its character bigrams shared with them
(features from :mod:`lecode.agents.lexical`). Keywords reward the same words; bigrams also
credit the same content in other word forms ("签劳动合同" vs "签订了劳动合同"), hence the max.
The question is included because the annotators built facts from a lawyer question together
with the client's reply ("签劳动合同了吗" / "签了" -> "双方签订了劳动合同").

A fact matches at coverage >= ``threshold``. The default 0.5 demands that at least half of the
fact's content appear in one exchange: lower values fire on shared topic words alone (in a
labour dispute most facts mention "公司" or "工资"), higher ones miss facts that the client
confirmed in other words. A pair answered exactly ``不知道`` (or with nothing) matches no fact
but keeps its position.
"""

from __future__ import annotations

from collections.abc import Sequence

from lecode.agents.base import UsageMeter
from lecode.agents.lexical import bigrams, found_in, keywords
from lecode.records import UNKNOWN_ANSWER, Case


def coverage(fact: str, text: str) -> float:
    """How much of ``fact`` appears in ``text``: max of keyword and bigram fractions."""
    best = 0.0
    words = keywords(fact)
    if words:
        best = found_in(words, text) / len(words)
    pairs = bigrams(fact)
    if pairs:
        best = max(best, len(pairs & bigrams(text)) / len(pairs))
    return best


class LexicalMatcher:
    """Per (question, answer) pair, the 0-based indices of the facts it covers."""

    def __init__(self, name: str, threshold: float = 0.5) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], not {threshold}")
        self.name = name
        self.threshold = threshold

    def match_pair(self, case: Case, question: str, answer: str) -> list[int]:
        reply = answer.strip()
        if not reply or reply == UNKNOWN_ANSWER:
            return []
        text = f"{question}\n{reply}"
        return [i for i, fact in enumerate(case.facts) if coverage(fact, text) >= self.threshold]

    async def match(
        self, case: Case, pairs: Sequence[tuple[str, str]], *, meter: UsageMeter
    ) -> list[list[int]]:
        return [self.match_pair(case, q, a) for q, a in pairs]
