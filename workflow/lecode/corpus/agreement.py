"""Agreement between two annotations of the same dialogues (annotator vs annotator, or the
pre-annotation vs a reviewed version).

- Stage 1: the two dialogues' utterances are aligned by a sequence alignment of their texts
  (:mod:`lecode.corpus.alignment`: a corrected typo, a merge or a split keeps the utterance);
  on aligned utterances: percent agreement, Cohen's kappa and Krippendorff's alpha of the
  intents, percent agreement and alpha of the speakers. Pooled over dialogues.
- Stage 2: key facts are matched one to one with the project's fact matcher
  (:func:`lecode.agents.lexical_matcher.coverage`, taken both ways, at least ``threshold``;
  best pairs first); precision = matched / facts of the second annotation, recall = matched /
  facts of the first, F1, pooled over dialogues; importance agreement and ordinal alpha on
  matched facts; ROUGE-L (jieba tokens, :class:`lecode.metrics.advice.RougeL`) of the advice
  summaries, the second against the first, averaged over dialogues.
- Among many (:func:`group_agreement`): Krippendorff's alpha over every reviewer at once, with
  missing ratings: the units are the pre-annotation's utterances (each reviewer's aligned
  utterance rates it) and facts (each reviewer's matched fact rates it; facts that reviewers
  added become units of their own, matched across reviewers the same way).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from lecode.agents.lexical_matcher import coverage
from lecode.corpus.alignment import align_texts
from lecode.corpus.alpha import alpha, pairable
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
    """Index pairs of aligned utterances (similar text, merges and splits tolerated), in
    dialogue order."""
    return align_texts([u.text for u in x.dialogue], [u.text for u in y.dialogue])


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
    intent_alpha: float
    speaker_agreement: float
    speaker_alpha: float
    dialogues2: int
    facts_first: int
    facts_second: int
    facts_matched: int
    importance_agreement: float
    importance_alpha: float
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
        intent_alpha=alpha(list(zip(ia, ib, strict=True))),
        speaker_agreement=percent_agreement(sa, sb),
        speaker_alpha=alpha(list(zip(sa, sb, strict=True))),
        dialogues2=len(common2),
        facts_first=nf,
        facts_second=ns,
        facts_matched=nm,
        importance_agreement=percent_agreement(imp_a, imp_b),
        importance_alpha=alpha(list(zip(imp_a, imp_b, strict=True)), "ordinal"),
        advice_rouge_l=sum(rouges) / len(rouges) if rouges else math.nan,
    )


@dataclass(frozen=True)
class GroupAgreement:
    """Krippendorff's alpha over every reviewer at once (missing ratings allowed)."""

    raters: tuple[str, ...]
    utterance_units: int  # pre-annotated utterances rated by at least two reviewers
    intent_alpha: float
    speaker_alpha: float
    fact_units: int  # facts rated by at least two reviewers
    importance_alpha: float


def utterance_units(
    pre: dict[str, Stage1Annotation], reviews: Sequence[dict[str, Stage1Annotation]]
) -> tuple[list[list[int]], list[list[str]]]:
    """(intents, speakers) per pre-annotated utterance: one rating per reviewer whose version
    of the dialogue aligns an utterance with it."""
    intents: list[list[int]] = []
    speakers: list[list[str]] = []
    for did in sorted(pre):
        base = pre[did]
        ui: list[list[int]] = [[] for _ in base.dialogue]
        us: list[list[str]] = [[] for _ in base.dialogue]
        for rv in reviews:
            if did not in rv:
                continue
            for i, j in align_utterances(base, rv[did]):
                ui[i].append(rv[did].dialogue[j].intent)
                us[i].append(rv[did].dialogue[j].speaker)
        intents += ui
        speakers += us
    return intents, speakers


def fact_units(
    pre: dict[str, Stage2Annotation],
    reviews: Sequence[dict[str, Stage2Annotation]],
    threshold: float = 0.5,
) -> list[list[int]]:
    """Importance ratings per fact unit: the pre-annotation's facts, then each fact a reviewer
    added (matched to the units so far, one to one per reviewer)."""
    out: list[list[int]] = []
    for did in sorted(pre):
        units: list[KeyFact] = list(pre[did].facts)
        ratings: list[list[int]] = [[] for _ in units]
        for rv in reviews:
            if did not in rv:
                continue
            facts = rv[did].facts
            pairs = match_facts(units, facts, threshold)
            for i, j in pairs:
                ratings[i].append(facts[j].importance)
            matched = {j for _, j in pairs}
            for j, f in enumerate(facts):
                if j not in matched:
                    units.append(f)
                    ratings.append([f.importance])
        out += ratings
    return out


def group_agreement(
    names: Sequence[str],
    pre1: dict[str, Stage1Annotation],
    pre2: dict[str, Stage2Annotation],
    reviews1: Sequence[dict[str, Stage1Annotation]],
    reviews2: Sequence[dict[str, Stage2Annotation]],
    threshold: float = 0.5,
) -> GroupAgreement:
    intents, speakers = utterance_units(pre1, reviews1)
    facts = fact_units(pre2, reviews2, threshold)
    return GroupAgreement(
        raters=tuple(names),
        utterance_units=pairable(intents),
        intent_alpha=alpha(intents),
        speaker_alpha=alpha(speakers),
        fact_units=pairable(facts),
        importance_alpha=alpha(facts, "ordinal"),
    )
