"""Fidelity audit of the simulated client: does each answer keep to the case's fact list?

Deterministic and offline; it reads only the case, the transcript and (when present) the fact
matcher's record, so the offline ``fact_lookup`` client and an LLM client are audited alike.
Four checks per client answer (the answer to clarifying question ``p``):

``over_limit`` (leaks)
    the answer disclosed more than :data:`MAX_FACTS` facts (the client protocol's limit).
    The facts disclosed are the matcher's facts for position ``p`` (what the metrics credit);
    without a usable match record, the facts whose content the answer itself covers
    (:func:`lecode.agents.lexical_matcher.coverage` of the fact by the answer alone, threshold
    :data:`MATCH_THRESHOLD`), not counting a fact of which the answer says no more than the
    facts already counted (:func:`disclosed_lexically`). With the lexical matcher the
    question's words count too, so an answer "是的" to a question that spells out four facts
    is flagged: the metric credited four facts to one answer either way.
``unsupported`` (invents)
    a statement of the answer has no lexical support in the fact list. The answer is cut into
    sentences at 。！？!?；; and line breaks; a sentence that makes no claim is skipped (it
    contains a hedge such as 不知道/不清楚/说不清, or ends in a question mark: the client asks
    back). A claim is unsupported when fewer than :data:`SUPPORT_THRESHOLD` of its content
    words (:func:`lecode.agents.lexical.keywords` without :data:`FILLERS`) occur anywhere in the
    facts *and* fewer than that share of its character bigrams occur in the facts' bigrams.
    A sentence without content words is no claim.
``withheld``
    the answer says only "I do not know" (every sentence a hedge and no fact disclosed), yet a
    fact answers the question. When the question is one the real lawyer asked in the case's
    own dialogue (the ``human_replay`` expert replays them), the facts that answer it are the
    ones the real client's reply disclosed (:func:`answering_facts`: the lexical matcher's
    coverage of the fact by that question and reply). Otherwise, and besides, a fact whose
    content the question covers by at least :data:`MATCH_THRESHOLD` (the lexical matcher's
    coverage, applied to the question alone).
    A refusal of a "tell me everything" request
    (:func:`lecode.agents.fact_lookup.is_open_request`) is the protocol, never withholding.
    Fact matchers never see 不知道 pairs (they are dropped by protocol), so this check is
    always the lexical one.
``contradicted``
    a claim states a fact with the opposite polarity. Both are cut into clauses (at
    punctuation and at 但/却); an answer clause and a fact clause are about the same thing when
    each covers at least :data:`MATCH_THRESHOLD` of the other's content (the lexical
    matcher's coverage, both ways, so a clause that shares only a topic word is about
    something else), and they contradict when exactly one of them is negated
    (an odd number of negation words, :data:`NEGATORS`, as jieba tokens): "我们没有签劳动合同"
    contradicts "双方签订了劳动合同", "社保公司一直没交" agrees with "公司没有为我缴纳社保".
    An answer clause found word for word in a fact restates it and contradicts nothing.
    The detector is deliberately simple: it misses contradictions in other words ("拖欠" vs
    "按时发放", a changed date or amount) and can fire on a paraphrase that uses a negation
    ("拖欠工资" vs "工资一直没发" agree but only one is negated).

A dialogue's client *behaved* when none of its answers is flagged. Rates are per answer,
averaged per dialogue, then over dialogues (the bootstrap unit is the dialogue).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from lecode.agents.fact_lookup import is_open_request
from lecode.agents.lexical import bigrams, found_in, keywords
from lecode.agents.lexical_matcher import coverage
from lecode.records import Case, Matches, Transcript
from lecode.text import tokenize

#: The client protocol's limit on facts per answer (paper appendix C; the prompts say 3).
MAX_FACTS = 3
#: Share of a claim's content words (or bigrams) that must occur in the facts.
SUPPORT_THRESHOLD = 0.5
#: Coverage at which a fact counts as disclosed by an answer / asked about by a question.
MATCH_THRESHOLD = 0.5

SENTENCE_END = re.compile(r"[。！？!?；;\n]+")
CLAUSE_BREAK = re.compile(r"[，,、：:。！？!?；;\n]|但|却")
#: Phrases that make no claim about the case.
HEDGES: tuple[str, ...] = (
    "不知道",
    "不清楚",
    "不记得",
    "记不清",
    "说不清",
    "说不好",
    "不确定",
    "没注意",
    "忘了",
    "不了解",
)
QUESTION_END = ("？", "?", "吗")
#: Conversational words that carry no case content (besides lexical.STOPWORDS).
FILLERS: frozenset[str] = frozenset(
    {"其实", "反正", "大概", "好像", "应该", "可能", "另外", "还有", "是的", "对的", "没错"}
)
#: jieba tokens that negate what follows them in their clause.
NEGATORS: frozenset[str] = frozenset(
    {
        "不",
        "没",
        "没有",
        "未",
        "无",
        "非",
        "别",
        "不是",
        "不太",
        "从未",
        "尚未",
        "未曾",
        "并未",
        "从没",
        "不曾",
        "没能",
        "未能",
        "不会",
        "不能",
        "不再",
    }
)
CHECKS: tuple[str, ...] = ("over_limit", "unsupported", "withheld", "contradicted")


# --------------------------------------------------------------------------- text checks


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (split at 。！？!?；; and line breaks), stripped, non-empty."""
    return [s.strip() for s in SENTENCE_END.split(text) if s.strip(" \t，,")]


def is_hedge(sentence: str) -> bool:
    """True when ``sentence`` makes no claim: it holds a hedge or asks back."""
    s = sentence.strip().rstrip("。.！!～~ ")
    return any(h in s for h in HEDGES) or s.endswith(QUESTION_END)


def claim_words(sentence: str) -> frozenset[str]:
    return frozenset(w for w in keywords(sentence) if w not in FILLERS)


def support(sentence: str, facts: Sequence[str]) -> float | None:
    """How much of ``sentence`` occurs in the facts: the larger of the share of its content
    words found in them and the share of its bigrams among theirs; None without content
    words (no claim)."""
    words = claim_words(sentence)
    if not words:
        return None
    text = "\n".join(facts)
    best = found_in(words, text) / len(words)
    own = bigrams(sentence)
    if own:
        theirs = frozenset().union(*(bigrams(f) for f in facts)) if facts else frozenset()
        best = max(best, len(own & theirs) / len(own))
    return best


def unsupported_sentences(
    answer: str, facts: Sequence[str], threshold: float = SUPPORT_THRESHOLD
) -> list[str]:
    """The claims of ``answer`` without lexical support in ``facts``."""
    out = []
    for s in sentences(answer):
        if is_hedge(s):
            continue
        value = support(s, facts)
        if value is not None and value < threshold:
            out.append(s)
    return out


def says_unknown(answer: str) -> bool:
    """True when the answer only says that the client does not know (every sentence a hedge)."""
    parts = sentences(answer)
    return bool(parts) and all(is_hedge(s) for s in parts)


def relevant_facts(
    question: str, facts: Sequence[str], threshold: float = MATCH_THRESHOLD
) -> list[int]:
    """Facts the question asks about: the question covers at least ``threshold`` of them."""
    return [i for i, f in enumerate(facts) if f.strip() and coverage(f, question) >= threshold]


def _norm(text: str) -> str:
    return "".join(text.split())


def answering_facts(case: Case, threshold: float = MATCH_THRESHOLD) -> dict[str, tuple[int, ...]]:
    """For each question of the case's real dialogue (a lawyer's utterance followed by the
    client's reply, keyed by its text without whitespace): the facts that reply disclosed,
    i.e. the facts that the question plus the reply cover by at least ``threshold``."""
    out: dict[str, tuple[int, ...]] = {}
    turns = case.dialogue
    for i, u in enumerate(turns[:-1]):
        reply = turns[i + 1]
        if u.speaker != "lawyer" or reply.speaker != "client" or says_unknown(reply.text):
            continue
        text = f"{u.text}\n{reply.text}"
        found = tuple(
            j for j, f in enumerate(case.facts) if f.strip() and coverage(f, text) >= threshold
        )
        if found:
            out.setdefault(_norm(u.text), found)
    return out


def known_answer(case: Case, question: str) -> tuple[int, ...]:
    """The facts the real client's reply disclosed when the real lawyer asked ``question`` in
    the case's dialogue (:func:`answering_facts`); () for any other question."""
    return answering_facts(case).get(_norm(question), ())


def disclosed_lexically(
    answer: str, facts: Sequence[str], threshold: float = MATCH_THRESHOLD
) -> list[int]:
    """Facts the answer alone covers (used when no match record is available): taken greedily,
    best covered first (then by index), each only when the answer covers more of it than the
    facts already taken do, so that a fact sharing words with the facts stated is not counted
    on top of them."""
    if says_unknown(answer):
        return []
    scored = [(coverage(f, answer), i) for i, f in enumerate(facts) if f.strip()]
    taken: list[int] = []
    for cov, i in sorted(scored, key=lambda t: (-t[0], t[1])):
        if cov < threshold:
            break
        if taken and coverage(facts[i], "\n".join(facts[j] for j in taken)) >= cov:
            continue
        taken.append(i)
    return sorted(taken)


def clauses(text: str) -> list[str]:
    """The clauses of ``text``: split at punctuation and at 但/却, stripped, non-empty."""
    return [c.strip() for c in CLAUSE_BREAK.split(text) if c.strip()]


def is_negated(clause: str) -> bool:
    """True when ``clause`` holds an odd number of negation words (:data:`NEGATORS`)."""
    n = sum(1 for t in tokenize(clause, punctuation=False) if t in NEGATORS)
    return n % 2 == 1


@dataclass(frozen=True)
class Contradiction:
    fact: int
    fact_clause: str
    clause: str  # the answer's clause


def contradictions(
    answer: str, facts: Sequence[str], threshold: float = MATCH_THRESHOLD
) -> list[Contradiction]:
    """At most one contradiction per fact: the first (fact clause, answer clause) pair, in
    order, that is about the same thing with opposite polarity."""
    out: list[Contradiction] = []
    claims = [
        c
        for s in sentences(answer)
        if not is_hedge(s)
        for c in clauses(s)
        if not any(c in f for f in facts)  # restated word for word
    ]
    for i, fact in enumerate(facts):
        found = next(
            (
                Contradiction(i, fc, ac)
                for fc in clauses(fact)
                for ac in claims
                if is_negated(fc) != is_negated(ac)
                and coverage(fc, ac) >= threshold
                and coverage(ac, fc) >= threshold
            ),
            None,
        )
        if found is not None:
            out.append(found)
    return out


# --------------------------------------------------------------------------- per answer


@dataclass(frozen=True)
class AnswerAudit:
    """The audit of the client's answer to clarifying question ``position`` (1-based)."""

    position: int
    question: str
    answer: str
    disclosed: tuple[int, ...]
    source: str  # "matcher" or "lexical": where ``disclosed`` comes from
    over_limit: bool
    unsupported: tuple[str, ...] = ()
    withheld: tuple[int, ...] = ()  # facts that answer the question, although 不知道
    contradicted: tuple[Contradiction, ...] = ()

    @property
    def flags(self) -> tuple[str, ...]:
        """The checks this answer fails, in :data:`CHECKS` order."""
        return tuple(c for c in CHECKS if getattr(self, c))

    @property
    def flagged(self) -> bool:
        return bool(self.flags)

    def as_json(self) -> dict[str, Any]:
        return {
            "q": self.position,
            "flags": list(self.flags),
            "disclosed": list(self.disclosed),
            "source": self.source,
            "unsupported": list(self.unsupported),
            "withheld": list(self.withheld),
            "contradicted": [
                {"fact": c.fact, "fact_clause": c.fact_clause, "clause": c.clause}
                for c in self.contradicted
            ],
        }


def audit_answer(
    facts: Sequence[str],
    question: str,
    answer: str,
    *,
    position: int = 1,
    disclosed: Sequence[int] | None = None,
    max_facts: int = MAX_FACTS,
    answered_by: Sequence[int] = (),
) -> AnswerAudit:
    """Audit one answer. ``disclosed``: the matcher's facts for this position (None: none
    usable, the lexical fallback decides); ``answered_by``: facts known to answer the question
    (the real client's reply to it, :func:`answering_facts`)."""
    source = "matcher" if disclosed is not None else "lexical"
    got = sorted(set(disclosed)) if disclosed is not None else disclosed_lexically(answer, facts)
    # a refusal of a "tell me everything" request is the protocol, not withholding
    unknown = says_unknown(answer) and not got and not is_open_request(question)
    return AnswerAudit(
        position=position,
        question=question,
        answer=answer,
        disclosed=tuple(got),
        source=source,
        over_limit=len(got) > max_facts,
        unsupported=tuple(unsupported_sentences(answer, facts)),
        withheld=(
            tuple(sorted({*answered_by, *relevant_facts(question, facts)})) if unknown else ()
        ),
        contradicted=tuple(contradictions(answer, facts)),
    )


# --------------------------------------------------------------------------- per dialogue


@dataclass(frozen=True)
class DialogueAudit:
    case_id: str
    expert: str
    strategy: str
    client: str
    stop_reason: str
    answers: tuple[AnswerAudit, ...] = field(default_factory=tuple)

    def count(self, check: str) -> int:
        return sum(1 for a in self.answers if getattr(a, check))

    @property
    def n_flagged(self) -> int:
        return sum(1 for a in self.answers if a.flagged)

    @property
    def behaved(self) -> bool:
        return self.n_flagged == 0

    def by_position(self) -> dict[int, AnswerAudit]:
        return {a.position: a for a in self.answers}


def audit_transcript(
    case: Case,
    transcript: Transcript,
    matches: Matches | None = None,
    *,
    max_facts: int = MAX_FACTS,
) -> DialogueAudit:
    """Audit every answered clarifying question of ``transcript``."""
    per_q = (
        matches.per_question
        if matches is not None
        and matches.status == "ok"
        and len(matches.per_question) == transcript.n_questions
        else None
    )
    answered = answering_facts(case)
    answers = []
    for p, (q, a) in enumerate(transcript.qa_pairs(), start=1):
        if not a.strip():
            continue  # no reply (the dialogue stopped): nothing to audit
        answers.append(
            audit_answer(
                case.facts,
                q,
                a,
                position=p,
                disclosed=per_q[p - 1] if per_q is not None else None,
                max_facts=max_facts,
                answered_by=answered.get(_norm(q), ()),
            )
        )
    return DialogueAudit(
        case_id=transcript.case_id,
        expert=transcript.expert,
        strategy=transcript.strategy,
        client=transcript.client,
        stop_reason=transcript.stop_reason,
        answers=tuple(answers),
    )


def audit_all(
    cases: Iterable[Case] | Mapping[str, Case],
    transcripts: Iterable[Transcript],
    matches: Iterable[Matches] = (),
    *,
    max_facts: int = MAX_FACTS,
) -> list[DialogueAudit]:
    """Audit each transcript whose case is known (matches paired by system and case)."""
    by_id = dict(cases) if isinstance(cases, Mapping) else {c.id: c for c in cases}
    by_key = {(m.expert, m.strategy, m.case_id): m for m in matches}
    out = []
    for t in transcripts:
        case = by_id.get(t.case_id)
        if case is None:
            continue
        out.append(
            audit_transcript(
                case, t, by_key.get((t.expert, t.strategy, t.case_id)), max_facts=max_facts
            )
        )
    return out


# --------------------------------------------------------------------------- frames

#: Per-dialogue audit columns: the share of answers failing each check, the share flagged
#: by any, and whether the client behaved throughout (1/0). Missing (null) for a dialogue
#: that ended in an infrastructure error or has no answered question.
AUDIT_COLUMNS: tuple[str, ...] = (*CHECKS, "flagged", "behaved")
AUDIT_SCHEMA: dict[str, Any] = {
    "case_id": pl.Utf8,
    "expert": pl.Utf8,
    "strategy": pl.Utf8,
    "answers": pl.Int64,
    "n_flagged": pl.Int64,
    **{c: pl.Float64 for c in AUDIT_COLUMNS},
}


def audit_row(d: DialogueAudit) -> dict[str, Any]:
    n = len(d.answers)
    row: dict[str, Any] = {
        "case_id": d.case_id,
        "expert": d.expert,
        "strategy": d.strategy,
        "answers": n,
        "n_flagged": d.n_flagged,
    }
    usable = n > 0 and d.stop_reason != "error"
    for c in CHECKS:
        row[c] = d.count(c) / n if usable else None
    row["flagged"] = d.n_flagged / n if usable else None
    row["behaved"] = float(d.behaved) if usable else None
    return row


def audit_frame(audits: Iterable[DialogueAudit]) -> pl.DataFrame:
    """One row per dialogue (see :data:`AUDIT_SCHEMA`)."""
    return pl.DataFrame([audit_row(d) for d in audits], schema=AUDIT_SCHEMA, orient="row")


def flagged_answers(audits: Iterable[DialogueAudit]) -> list[dict[str, Any]]:
    """Every flagged answer with its dialogue, for the per-answer audit file."""
    out = []
    for d in audits:
        for a in d.answers:
            if a.flagged:
                out.append(
                    {
                        "case_id": d.case_id,
                        "expert": d.expert,
                        "strategy": d.strategy,
                        "client": d.client,
                        "question": a.question,
                        "answer": a.answer,
                        **a.as_json(),
                    }
                )
    return out
