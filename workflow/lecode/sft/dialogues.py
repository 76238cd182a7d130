"""Training dialogues of the three SFT strategies, and their chat samples.

A training dialogue is a list of :class:`~lecode.records.Turn` s in the shape the evaluation
produces (client query, lawyer questions each answered by the client, lawyer advice) plus the
positions of the lawyer turns the model learns to produce (*targets*). Each target yields one
sample: the prompt the zero-shot expert gets at that point of a consultation (rendered with
``workflow/prompts/expert/zero_shot.txt``: its system message and the dialogue so far, or the
advice-only prompt once ``max_turns`` questions were asked, exactly as
:class:`lecode.agents.llm_expert.LLMExpert` renders them), and the reply ``提问：<question>`` or
``建议：<advice>``. History turns carry no marker, as in the evaluation.

**Direct SFT** (from the real dialogue, intent labels of :data:`lecode.records.INTENT_LABELS`):

======================================  ================================================
lawyer utterance                        in the training dialogue
======================================  ================================================
5 clarifying question                   target, ``提问：``
6 information verification              target, ``提问：`` (it asks the client to confirm)
7 legal advice after the last question  the final advice: all such utterances joined, one
                                        ``建议：`` target (the evaluation ends at one advice)
7 legal advice before a later question  history only (a ``建议`` here would end the
                                        consultation, so it is never a target)
8 emotional support, 10 other           history only before the advice; 8 after the last
                                        question joins the advice
9 invalid exchange                      dropped (client lines labelled 9 too)
no label                                a question (ends with ？/?) is a target, anything
                                        else counts as advice (7)
======================================  ================================================

Client utterances after the advice started (need extensions, label 4) are dropped: the
evaluation ends at the advice. A dialogue without lawyer advice after its last question ends
with the case's reference advice (``suggestion``), counted in the statistics. Client utterances
never become targets.

**Key-fact / Key-fact-e SFT**: the case's initial query, then per writer question (in order of
its first fact) the question and the client's reply stating its facts in the first person, then
the reference advice ``suggestion``.

All variants: at most ``max_turns`` lawyer questions; the turns after the ``max_turns``-th
answer are cut and the advice follows with the advice-only prompt.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from lecode.llm.render import count_questions, one_line, turn_values
from lecode.llm.templates import PromptTemplate, load_template
from lecode.records import CLARIFYING_QUESTION, LEGAL_ADVICE, Case, Turn, Utterance
from lecode.sft.questions import TargetQuestion, answer_of

QUESTION_MARKER = "提问："
ADVICE_MARKER = "建议："
#: The evaluation's templates of the zero-shot expert (lecode.strategies.expert.zero_shot).
EXPERT_TEMPLATES = {"turn": "expert/zero_shot", "advise": "expert/advise_only"}

VERIFICATION = 6
EMOTIONAL_SUPPORT = 8
INVALID = 9
OTHER = 10
QUESTION_INTENTS = frozenset({CLARIFYING_QUESTION, VERIFICATION})
_QUESTION_MARK = re.compile(r"[？?]")

Message = dict[str, str]


@dataclass
class SFTDialogue:
    case_id: str
    turns: list[Turn]
    targets: list[int]
    #: Direct SFT: how each lawyer utterance was used (question/context/advice/dropped).
    labels: Counter[str] = field(default_factory=Counter)
    advice_from_suggestion: bool = False
    #: Key-fact variants: the facts each question position asks for.
    question_facts: list[tuple[int, ...]] = field(default_factory=list)

    @property
    def n_questions(self) -> int:
        return sum(1 for i in self.targets if self.turns[i].kind == "question")


def expert_templates() -> dict[str, PromptTemplate]:
    return {purpose: load_template(name) for purpose, name in EXPERT_TEMPLATES.items()}


# ---------------------------------------------------------------------------------------------
# Direct SFT.


def _lawyer_role(u: Utterance) -> str:
    """question / advice / context / dropped (see the module docstring)."""
    if u.intent in QUESTION_INTENTS:
        return "question"
    if u.intent == LEGAL_ADVICE:
        return "advice"
    if u.intent == EMOTIONAL_SUPPORT:
        return "support"
    if u.intent == INVALID:
        return "dropped"
    if u.intent is not None:  # 10 other (client labels on a lawyer line do not occur)
        return "context"
    return "question" if _QUESTION_MARK.search(u.text) else "advice"


def direct_dialogue(case: Case) -> SFTDialogue | None:
    """The Direct SFT dialogue of ``case``; None when it has no client query or no lawyer
    utterance at all."""
    utts = [u for u in case.dialogue if u.text.strip()]
    while utts and utts[0].speaker != "client":
        utts = utts[1:]
    if len(utts) < 2:
        return None
    roles = [_lawyer_role(u) if u.speaker == "lawyer" else "client" for u in utts]
    keep = [u.intent != INVALID for u in utts]  # invalid exchanges, either speaker
    labels: Counter[str] = Counter()
    labels["dropped"] = sum(1 for i, u in enumerate(utts) if u.speaker == "lawyer" and not keep[i])
    questions = [i for i, r in enumerate(roles) if r == "question" and keep[i]]
    last_q = questions[-1] if questions else 0
    advice_start = next(
        (i for i, r in enumerate(roles) if i > last_q and keep[i] and r == "advice"), None
    )
    turns: list[Turn] = []
    targets: list[int] = []
    end = advice_start if advice_start is not None else len(utts)
    for i in range(end):
        if not keep[i]:
            continue
        u = utts[i]
        text = one_line(u.text)
        if u.speaker == "client":
            kind = "query" if not turns else "answer"
            turns.append(Turn(speaker="client", kind=kind, text=text))
        elif roles[i] == "question":
            targets.append(len(turns))
            turns.append(Turn(speaker="lawyer", kind="question", text=text))
            labels["question"] += 1
        else:  # advice before a later question, support, other: history only
            turns.append(Turn(speaker="lawyer", kind="question", text=text))
            labels["context"] += 1
    if not turns or turns[0].kind != "query":
        return None
    advice_parts = []
    if advice_start is not None:
        for i in range(advice_start, len(utts)):
            if keep[i] and utts[i].speaker == "lawyer":
                if roles[i] in ("advice", "support"):
                    advice_parts.append(utts[i].text.strip())
                    labels["advice"] += 1
                else:
                    labels["after_advice"] += 1
    from_suggestion = not advice_parts
    advice = "\n".join(advice_parts) if advice_parts else case.suggestion.strip()
    if not advice:
        return None
    targets.append(len(turns))
    turns.append(Turn(speaker="lawyer", kind="advice", text=advice))
    return SFTDialogue(
        case.id, turns, targets, labels=labels, advice_from_suggestion=from_suggestion
    )


# ---------------------------------------------------------------------------------------------
# Key-fact SFT.


def keyfact_dialogue(case: Case, questions: Sequence[TargetQuestion]) -> SFTDialogue:
    turns = [Turn(speaker="client", kind="query", text=one_line(case.initial_query))]
    targets: list[int] = []
    for q in sorted(questions, key=lambda q: q.facts[0]):
        targets.append(len(turns))
        turns.append(Turn(speaker="lawyer", kind="question", text=one_line(q.text)))
        turns.append(Turn(speaker="client", kind="answer", text=answer_of(case, q)))
    targets.append(len(turns))
    turns.append(Turn(speaker="lawyer", kind="advice", text=case.suggestion.strip()))
    facts = [q.facts for q in sorted(questions, key=lambda q: q.facts[0])]
    return SFTDialogue(case.id, turns, targets, question_facts=facts)


# ---------------------------------------------------------------------------------------------
# The turn cap and the samples.


def cap(d: SFTDialogue, max_turns: int) -> SFTDialogue:
    """At most ``max_turns`` lawyer questions (history-only lawyer lines count, as the
    evaluation counts every lawyer line of the history); then the advice."""
    advice = d.turns[-1]
    assert advice.kind == "advice"
    body = d.turns[:-1]
    asked = 0
    cut = len(body)
    for i, t in enumerate(body):
        if t.speaker == "lawyer":
            if asked == max_turns:
                cut = i
                break
            asked += 1
    if cut == len(body):
        return d
    turns = [*body[:cut], advice]
    targets = [i for i in d.targets if i < cut] + [len(turns) - 1]
    n_q = sum(1 for i in targets[:-1] if turns[i].kind == "question")
    return SFTDialogue(
        d.case_id,
        turns,
        targets,
        labels=d.labels,
        advice_from_suggestion=d.advice_from_suggestion,
        question_facts=d.question_facts[:n_q],
    )


def sample(
    d: SFTDialogue, target: int, templates: dict[str, PromptTemplate], max_turns: int
) -> tuple[list[Message], bool]:
    """The chat messages of one target and whether the advice-only prompt was used."""
    history = d.turns[:target]
    turn = d.turns[target]
    forced = turn.kind == "advice" and count_questions(history) >= max_turns
    template = templates["advise" if forced else "turn"]
    messages = template.render(**turn_values(history, max_turns))
    marker = ADVICE_MARKER if turn.kind == "advice" else QUESTION_MARKER
    messages.append({"role": "assistant", "content": marker + turn.text})
    return messages, forced


def samples(
    d: SFTDialogue, templates: dict[str, PromptTemplate], max_turns: int
) -> list[tuple[list[Message], bool]]:
    return [sample(d, t, templates, max_turns) for t in d.targets]
