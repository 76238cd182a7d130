"""Agreement between two annotations of the same dialogues (annotator vs annotator, or the
pre-annotation vs a reviewed version).

- Stage 1: the two dialogues' utterances are aligned by identical text (longest matching
  blocks, :class:`difflib.SequenceMatcher`); on aligned utterances: percent agreement and
  Cohen's kappa of the intents, and percent agreement of the speakers. Pooled over dialogues.
- Stage 2: key facts are matched one to one with the project's fact matcher
  (:func:`lecode.agents.lexical_matcher.coverage`, taken both ways, at least ``threshold``;
  best pairs first); precision = matched / facts of the second annotation, recall = matched /
  facts of the first, F1, pooled over dialogues; importance agreement on matched facts; ROUGE-L
  (jieba tokens, :class:`lecode.metrics.advice.RougeL`) of the advice summaries, the second
  against the first, averaged over dialogues.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from lecode.agents.lexical_matcher import coverage
from lecode.corpus.annotations import KeyFact, Stage1Annotation, Stage2Annotation


def percent_agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    if len(a) != len(b):
        raise ValueError(f"label sequences differ in length: {len(a)} vs {len(b)}")
    if not a:
        return math.nan
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """(p_o - p_e) / (1 - p_e), p_e from each annotator's label shares; NaN when p_e is 1
    (both used one and the same label throughout: chance agreement is certain)."""
    p_o = percent_agreement(a, b)
    if math.isnan(p_o):
        return math.nan
    n = len(a)
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if p_e >= 1.0:
        return math.nan
    return (p_o - p_e) / (1.0 - p_e)


def align_utterances(x: Stage1Annotation, y: Stage1Annotation) -> list[tuple[int, int]]:
    """Index pairs of utterances with identical text, in dialogue order."""
    a = [u.text for u in x.dialogue]
    b = [u.text for u in y.dialogue]
    blocks = SequenceMatcher(a=a, b=b, autojunk=False).get_matching_blocks()
    return [(blk.a + k, blk.b + k) for blk in blocks for k in range(blk.size)]


def match_facts(
    first: Sequence[KeyFact], second: Sequence[KeyFact], threshold: float = 0.5
) -> list[tuple[int, int]]:
    """One-to-one fact pairs (index in first, index in second), best coverage first."""
    scored = []
    for i, f in enumerate(first):
        for j, g in enumerate(second):
            s = max(coverage(f.text, g.text), coverage(g.text, f.text))
            if s >= threshold:
                scored.append((-s, i, j))
    used_i: set[int] = set()
    used_j: set[int] = set()
    pairs = []
    for _, i, j in sorted(scored):
        if i not in used_i and j not in used_j:
            used_i.add(i)
            used_j.add(j)
            pairs.append((i, j))
    return sorted(pairs)


@dataclass(frozen=True)
class Agreement:
    """One comparison (``first`` vs ``second``) over the dialogues both annotated."""

    first: str
    second: str
    dialogues1: int
    utterances_first: int
    utterances_aligned: int
    intent_agreement: float
    intent_kappa: float
    speaker_agreement: float
    dialogues2: int
    facts_first: int
    facts_second: int
    facts_matched: int
    importance_agreement: float
    advice_rouge_l: float

    @property
    def fact_precision(self) -> float:
        return self.facts_matched / self.facts_second if self.facts_second else math.nan

    @property
    def fact_recall(self) -> float:
        return self.facts_matched / self.facts_first if self.facts_first else math.nan

    @property
    def fact_f1(self) -> float:
        p, r = self.fact_precision, self.fact_recall
        if math.isnan(p) or math.isnan(r) or p + r == 0:
            return math.nan if math.isnan(p) or math.isnan(r) else 0.0
        return 2 * p * r / (p + r)


def compare(
    first: str,
    second: str,
    s1_first: dict[str, Stage1Annotation],
    s1_second: dict[str, Stage1Annotation],
    s2_first: dict[str, Stage2Annotation],
    s2_second: dict[str, Stage2Annotation],
    *,
    rouge: object,
    threshold: float = 0.5,
) -> Agreement:
    """``rouge``: an object with ``score(candidate, reference) -> float`` (ROUGE-L F1)."""
    ia: list[int] = []
    ib: list[int] = []
    sa: list[str] = []
    sb: list[str] = []
    n_first_utts = 0
    common1 = sorted(set(s1_first) & set(s1_second))
    for did in common1:
        x, y = s1_first[did], s1_second[did]
        n_first_utts += len(x.dialogue)
        for i, j in align_utterances(x, y):
            ia.append(x.dialogue[i].intent)
            ib.append(y.dialogue[j].intent)
            sa.append(x.dialogue[i].speaker)
            sb.append(y.dialogue[j].speaker)
    common2 = sorted(set(s2_first) & set(s2_second))
    nf = ns = nm = 0
    imp_a: list[int] = []
    imp_b: list[int] = []
    rouges: list[float] = []
    for did in common2:
        x2, y2 = s2_first[did], s2_second[did]
        pairs = match_facts(x2.facts, y2.facts, threshold)
        nf += len(x2.facts)
        ns += len(y2.facts)
        nm += len(pairs)
        imp_a += [x2.facts[i].importance for i, _ in pairs]
        imp_b += [y2.facts[j].importance for _, j in pairs]
        rouges.append(float(rouge.score(y2.suggestion, x2.suggestion)))  # type: ignore[attr-defined]
    return Agreement(
        first=first,
        second=second,
        dialogues1=len(common1),
        utterances_first=n_first_utts,
        utterances_aligned=len(ia),
        intent_agreement=percent_agreement(ia, ib),
        intent_kappa=cohen_kappa(ia, ib),
        speaker_agreement=percent_agreement(sa, sb),
        dialogues2=len(common2),
        facts_first=nf,
        facts_second=ns,
        facts_matched=nm,
        importance_agreement=percent_agreement(imp_a, imp_b),
        advice_rouge_l=sum(rouges) / len(rouges) if rouges else math.nan,
    )
