"""Plain-text renderings of dialogue, facts and question/answer pairs used inside prompts.

The mock server reads the same renderings back, so the formats live here, in one place.
"""

from __future__ import annotations

from collections.abc import Sequence

from lecode.records import Turn

SPEAKER_LABEL = {"client": "用户", "lawyer": "律师"}
LAWYER_PREFIX = "律师："
CLIENT_PREFIX = "用户："


def one_line(text: str) -> str:
    """Collapse line breaks so that every utterance stays on one rendered line."""
    return " ".join(text.split())


def format_dialogue(history: Sequence[Turn]) -> str:
    """``用户：...`` / ``律师：...`` lines, one per turn, in order."""
    return "\n".join(f"{SPEAKER_LABEL[t.speaker]}：{one_line(t.text)}" for t in history)


def format_fact_bullets(facts: Sequence[str]) -> str:
    return "\n".join(f"- {one_line(f)}" for f in facts)


def format_numbered_facts(facts: Sequence[str]) -> str:
    """``index: fact`` lines, indices from 0 (the matcher's fact list)."""
    return "\n".join(f"{i}: {one_line(f)}" for i, f in enumerate(facts))


def qa_id(position: int) -> str:
    """Identifier of the question at 0-based ``position`` (``QA0``, ``QA1``, ...)."""
    return f"QA{position}"


def format_qa_pairs(pairs: Sequence[tuple[int, str, str]]) -> str:
    """``QA<p>：`` blocks with the question and the answer; ``p`` is the original position."""
    return "\n".join(f"{qa_id(p)}：\n问：{one_line(q)}\n答：{one_line(a)}" for p, q, a in pairs)


def count_questions(history: Sequence[Turn]) -> int:
    return sum(1 for t in history if t.kind == "question")


def turn_values(history: Sequence[Turn], max_turns: int) -> dict[str, object]:
    """The template values of an expert's turn: the dialogue so far, and the clarifying
    questions asked and remaining of ``max_turns``."""
    asked = count_questions(history)
    return {
        "dialogue": format_dialogue(history),
        "asked": asked,
        "remaining": max(0, max_turns - asked),
        "max_turns": max_turns,
    }


def answer_values(
    facts: Sequence[str], history: Sequence[Turn], question: str
) -> dict[str, object]:
    """The template values of a client's answer: the case's ``facts`` (``- fact`` lines), the
    ``dialogue`` before the question (a last turn that is the question itself is left out: the
    question is shown on its own) and the ``question``."""
    shown = list(history)
    if shown and shown[-1].kind == "question" and shown[-1].text == question:
        shown = shown[:-1]
    return {
        "facts": format_fact_bullets(facts),
        "dialogue": format_dialogue(shown),
        "question": one_line(question),
    }
