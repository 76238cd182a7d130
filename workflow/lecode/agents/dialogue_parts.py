"""The lawyer's clarifying questions and legal advice of a recorded consultation.

With intent annotation (any utterance carries an ``intent``) the labels decide:
questions are lawyer utterances labelled 5 (Lawyer Clarifying Question) and the advice is the
lawyer utterances labelled 7 (Lawyer Legal Advice) joined in order.

Without annotation, the last lawyer utterance is taken as the advice (the annotation guideline
has every dialogue end with the lawyer's advice), and the questions are the earlier lawyer
utterances that read as questions: they end in "？"/"?" or contain one of
``QUESTION_MARKERS``. The rule is lexical and errs towards recall; e.g. "几" also fires on
"几乎", which a real clarifying question rarely needs to avoid.
"""

from __future__ import annotations

from lecode.records import CLARIFYING_QUESTION, LEGAL_ADVICE, Case, Utterance

QUESTION_ENDINGS: tuple[str, ...] = ("？", "?")
QUESTION_MARKERS: tuple[str, ...] = (
    "吗",
    "呢",
    "什么",
    "多少",
    "几",
    "有没有",
    "是不是",
    "哪",
    "是否",
    "怎么",
    "为什么",
    "谁",
    "多久",
    "多长",
    "多大",
)
ADVICE_SEPARATOR = "\n"


def is_annotated(case: Case) -> bool:
    """True when at least one utterance of the case carries an intent label."""
    return any(u.intent is not None for u in case.dialogue)


def looks_like_question(text: str) -> bool:
    """The fallback question rule for unannotated dialogues (see the module docstring)."""
    stripped = text.strip()
    if not stripped:
        return False
    return stripped.endswith(QUESTION_ENDINGS) or any(m in stripped for m in QUESTION_MARKERS)


def _lawyer_utterances(case: Case) -> list[Utterance]:
    return [u for u in case.dialogue if u.speaker == "lawyer" and u.text.strip()]


def clarifying_questions(case: Case) -> tuple[str, ...]:
    """The lawyer's clarifying questions of the recorded dialogue, in order."""
    lawyer = _lawyer_utterances(case)
    if is_annotated(case):
        return tuple(u.text.strip() for u in lawyer if u.intent == CLARIFYING_QUESTION)
    return tuple(u.text.strip() for u in lawyer[:-1] if looks_like_question(u.text))


def lawyer_advice(case: Case) -> str:
    """The lawyer's advice in the recorded dialogue, or "" when there is no lawyer utterance.

    An annotated dialogue without any intent-7 utterance falls back to its last lawyer utterance.
    """
    lawyer = _lawyer_utterances(case)
    if is_annotated(case):
        advice = [u.text.strip() for u in lawyer if u.intent == LEGAL_ADVICE]
        if advice:
            return ADVICE_SEPARATOR.join(advice)
    return lawyer[-1].text.strip() if lawyer else ""
