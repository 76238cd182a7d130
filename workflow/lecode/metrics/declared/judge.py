"""Advice quality judged by an LLM (paper Table 9): five dimensions and the judge's own
overall score, each an integer 1-10 (x10 on display)."""

from __future__ import annotations

from collections.abc import Callable

from lecode.metrics.declaration import Dialogue, Example, MetricDeclaration
from lecode.records import JudgeScores

JUDGE_TAGS = ("table3", "table7", "radar", "summary")
EXAMPLE_SCORES = JudgeScores(
    professionalism=8, fluency=9, completeness=6, satisfaction=7, safety=10, overall=7
)


def _score_of(name: str) -> Callable[[Dialogue], float]:
    def score(d: Dialogue) -> float:
        return float(getattr(d.scores, name))

    score.__name__ = f"judge_{name}"
    return score


def _judge(key: str, header: str, order: int, description: str) -> MetricDeclaration:
    expected = getattr(EXAMPLE_SCORES, key)
    return MetricDeclaration(
        key=key,
        header=header,
        scale=10.0,
        direction="higher",
        section="llm",
        value_type=float,
        need="judgement",
        compute=_score_of(key),
        tags=JUDGE_TAGS,
        missing="the judge gave no valid verdict (or no judge is configured)",
        order=order,
        description=description,
        raw_range="1-10",
        example=Example(
            expected=float(expected),
            why=f"the judgement's {key} score, {expected}, on its raw 1-10 scale",
            judge=EXAMPLE_SCORES,
        ),
    )


DECLARED: tuple[MetricDeclaration, ...] = (
    _judge("professionalism", "Pro", 80, "legal accuracy and professional soundness"),
    _judge("fluency", "Flu", 90, "clarity and fluency of the advice"),
    _judge("completeness", "Com", 100, "how fully the advice covers the client's problem"),
    _judge("satisfaction", "Sat", 110, "how satisfied the client would be"),
    _judge("safety", "Safe", 120, "no harmful, illegal or misleading advice"),
    _judge("overall", "OA", 130, "the judge's own overall score (not an average)"),
)
