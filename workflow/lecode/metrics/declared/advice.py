"""Advice quality, automated: ROUGE-L and BERTScore F1 of the final advice against the
reference advice, and whether BERTScore had to truncate the pair.

The scorers are :class:`lecode.metrics.advice.RougeL` and
:class:`lecode.metrics.advice.BertScorer`, built by the scoring job from the settings and
shared through :class:`lecode.metrics.declaration.Tools`; BERTScore runs once over the batch.
"""

from __future__ import annotations

from collections.abc import Sequence

from lecode.metrics.declaration import Dialogue, Example, MetricDeclaration

ADVICE_TAGS = ("table3", "table7", "radar", "summary")
NO_REFERENCE = "the case has no reference advice"


def _rouge_l(d: Dialogue) -> float:
    return d.tools.rouge.score(d.advice_text, d.reference)


def _bertscore_f1(dialogues: Sequence[Dialogue]) -> list[float | None]:
    if not dialogues:
        return []
    scored = dialogues[0].tools.bertscore(dialogues)
    return [None] * len(dialogues) if scored is None else list(scored[0])


def _bertscore_truncated(dialogues: Sequence[Dialogue]) -> list[int | None]:
    if not dialogues:
        return []
    scored = dialogues[0].tools.bertscore(dialogues)
    return [None] * len(dialogues) if scored is None else [int(c) for c in scored[1]]


DECLARED: tuple[MetricDeclaration, ...] = (
    MetricDeclaration(
        key="rouge_l",
        header="R-L",
        scale=100.0,
        direction="higher",
        section="auto",
        value_type=float,
        need="advice",
        compute=_rouge_l,
        tags=ADVICE_TAGS,
        missing=NO_REFERENCE,
        order=60,
        description="ROUGE-L F1 of the advice against the reference, on jieba tokens",
        example=Example(
            expected=3 / 7,
            why="jieba tokens 建议 先 协商 ； 不行 就 起诉 ！ (8) and 先 协商 ， 再 起诉 。 (6): "
            "LCS 先 协商 起诉 = 3, P 3/8, R 3/6, F1 = 2PR/(P+R) = 3/7",
        ),
    ),
    MetricDeclaration(
        key="bertscore_f1",
        header="BS",
        scale=100.0,
        direction="higher",
        section="auto",
        value_type=float,
        need="advice",
        compute_batch=_bertscore_f1,
        uses_model=True,
        tags=ADVICE_TAGS,
        missing=f"{NO_REFERENCE}, or BERTScore is switched off (metrics.bertscore.enabled)",
        order=70,
        description="BERTScore F1 of the advice against the reference (no idf, no rescaling)",
        example=Example(
            expected=1.0,
            why="the stand-in scorer gives 1.0 to identical texts",
            advice="先协商，再起诉。",
        ),
    ),
    MetricDeclaration(
        key="bertscore_truncated",
        header="BS cut",
        scale=1.0,
        direction=None,
        section="auto",
        value_type=int,
        need="advice",
        compute_batch=_bertscore_truncated,
        uses_model=True,
        tags=(),
        missing=f"{NO_REFERENCE}, or BERTScore is switched off (metrics.bertscore.enabled)",
        order=75,
        description="1 when the advice or the reference was cut to the model's length limit",
        example=Example(expected=0, why="both texts are far below the limit"),
    ),
)
