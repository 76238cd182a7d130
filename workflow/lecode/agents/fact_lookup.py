"""Offline client simulator: answers a question with the case's best-matching atomic facts.

Score of a fact for a question = number of the question's keywords found in the fact's text
plus number of shared character bigrams (both from :mod:`lecode.agents.lexical`, so
punctuation, particles, pronouns and question words do not count). A fact is a candidate when
its score is at least ``MIN_SCORE`` (2: one shared two-character word already gives 1 + 1,
while a single shared bigram inside different words, such as "合同" in "签合同" vs
"劳动合同", does not suffice) and at least ``RELATIVE_MIN`` (half) of the best fact's score, so
that a fact sharing only a topic word ("公司") is not volunteered next to the fact the question
is really about. Candidates already disclosed in an earlier client answer are dropped unless
no other candidate is left (then the client repeats itself rather than inventing); the rest are
ranked by score, then fact order, and at most ``max_facts`` are given, in fact order, joined
with "；" and ending with "。". No candidate gives exactly ``不知道``.

Open requests for everything the client knows ("把所有情况都告诉我", "还有什么要补充的") get
``REFUSAL_ANSWER``, which discloses no fact, as the paper's client simulator refuses them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lecode.agents.base import CaseClient, UsageMeter
from lecode.agents.lexical import bigrams, found_in, keywords
from lecode.records import UNKNOWN_ANSWER, Case, Turn

MIN_SCORE = 2
RELATIVE_MIN = 0.5
FACT_SEPARATOR = "；"
REFUSAL_ANSWER = "您这样问我不知道从哪说起，您想了解哪方面，具体问我吧。"

_TELL = r"(说|讲|告诉|交代|描述|介绍|复述|谈)"
#: Requests for the whole story rather than one point; kept narrow so that ordinary questions
#: mentioning "所有" or "整个" ("你把所有证据都保存了吗") are still answered.
OPEN_REQUEST = re.compile(
    "|".join(
        [
            r"(所有|全部|一切)的?(情况|事情|事实|信息|细节|经过|过程)",
            rf"(全部|统统|一五一十|原原本本|从头到尾|完完整整|完整)地?{_TELL}",
            r"都(告诉我|说给我|讲给我|说出来|讲出来|交代清楚)",
            r"(知道|了解)的(都|全部|所有|一切)",
            rf"{_TELL}{{1,2}}(一下)?(整个|全部|所有)的?(经过|过程|情况|事情|细节)",
            rf"把(整个|全部|所有)的?(经过|过程|情况|事情|细节)[^，,。？?]{{0,6}}{_TELL}",
            r"来龙去脉",
            r"还有(什么|没有|其他|别的|啥)(情况|信息|事情)?(要|需要|想|可以)?(补充|说的|交代|讲的)",
        ]
    )
)
_TRAILING = "。；;，,.！!？? \t\n"


def is_open_request(question: str) -> bool:
    """True for "tell me everything" requests, which the client refuses."""
    return OPEN_REQUEST.search(question) is not None


def fact_score(question: str, fact: str) -> int:
    """Question keywords found in ``fact`` plus character bigrams the two share."""
    return found_in(keywords(question), fact) + len(bigrams(question) & bigrams(fact))


def _plain(fact: str) -> str:
    return fact.strip().rstrip(_TRAILING)


class FactLookupClient(CaseClient):
    """Answers from at most ``max_facts`` atomic facts of the case, or exactly ``不知道``."""

    def __init__(self, name: str, max_facts: int = 3) -> None:
        if max_facts < 1:
            raise ValueError(f"max_facts must be >= 1, not {max_facts}")
        self.name = name
        self.max_facts = max_facts

    def select(self, case: Case, history: Sequence[Turn], question: str) -> list[int]:
        """0-based indices of the facts this client discloses for ``question``, in fact order."""
        earlier = [t.text for t in history if t.speaker == "client" and t.kind == "answer"]
        plain = [_plain(f) for f in case.facts]
        scores = [fact_score(question, text) if text else 0 for text in plain]
        floor = max(MIN_SCORE, RELATIVE_MIN * max(scores, default=0))
        candidates = [i for i, score in enumerate(scores) if score >= floor]
        fresh = [i for i in candidates if not any(plain[i] in answer for answer in earlier)]
        ranked = sorted(fresh or candidates, key=lambda i: (-scores[i], i))
        return sorted(ranked[: self.max_facts])

    async def answer(
        self, case: Case, history: Sequence[Turn], question: str, *, meter: UsageMeter
    ) -> str:
        if is_open_request(question):
            return REFUSAL_ANSWER
        chosen = self.select(case, history, question)
        if not chosen:
            return UNKNOWN_ANSWER
        return FACT_SEPARATOR.join(_plain(case.facts[i]) for i in chosen) + "。"
