"""Client-simulator reliability (paper appendix C, Table 4).

The study: ``n_cases`` training consultations, sampled with a seed among those with at least
``questions`` clarifying questions; each with the first ``context_rounds`` rounds of its real
dialogue as context and ``questions`` clarifying questions to answer. Every configured client
model answers every question under each client strategy (each question on its own, after the
same context); an LLM judge (optional) decides per answer whether it is relevant to the
question and factual with respect to the fact list, and the deterministic audit of
:mod:`lecode.audit` checks every answer against the fact list.

Context and questions (:func:`lawyer_item`). A *round* is one lawyer utterance with the client
utterances that follow it; the client's utterances before the first lawyer utterance are the
initial query. The questions are the real lawyer's next ``questions`` clarifying questions
(intent 5 in annotated dialogues, the question heuristic of
:mod:`lecode.agents.dialogue_parts` otherwise) after the first ``context_rounds`` rounds; when
fewer remain there, the last ``questions`` clarifying questions of the dialogue, with the
rounds before the first of them (at most ``context_rounds``) as context. A configured question
writer (an LLM) instead writes ``questions`` questions after the first ``context_rounds``
rounds, seeing the initial query and the context (never the facts). A file of hand-written
questions (``reliability.questions_file``, :mod:`lecode.reliability.hand`) names the
consultations and their questions, asked after the first ``context_rounds`` rounds, as the
paper did.

Per answer, four 0/1 values: ``relevance`` and ``factuality`` (the judge), ``audit_factual``
(no unsupported statement and no contradiction) and ``audit_protocol`` (at most 3 facts and no
withheld 不知道). Per case the mean over its answered questions; a cell is the mean over cases
x100 with a percentile bootstrap interval over cases; n/N counts cases with a value. Answering
and auditing live in :mod:`lecode.reliability.steps.reliability`, so that the sampling step
does not depend on the audit's code.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from lecode.agents.base import RoleError, UsageMeter
from lecode.agents.dialogue_parts import is_annotated, looks_like_question
from lecode.agents.llm_common import ReaskingRole
from lecode.llm.errors import LLMCallError
from lecode.llm.parsing import ReplyFormatError, load_structured
from lecode.llm.render import format_dialogue, format_numbered_facts, one_line
from lecode.recordio import RecordError, atomic_write_text, dumps
from lecode.records import CLARIFYING_QUESTION, Case, RoleUsage, Turn

if TYPE_CHECKING:
    from lecode.config.models import ModelEntry

#: The paper's three client strategies, in its column order (Table 4).
STRATEGIES: tuple[str, ...] = ("instruct_dialogue", "instruct_question", "first_person_dialogue")
STRATEGY_HEADERS: dict[str, str] = {
    "instruct_dialogue": "Instruct Given Dialogue",
    "instruct_question": "Instruct Given Question",
    "first_person_dialogue": "First-Person Given Dialogue",
}
#: The blocks of Table 4: (value key, block title, the paper's Table 4 group or None).
BLOCKS: tuple[tuple[str, str, str | None], ...] = (
    ("relevance", "Relevance (judge)", "Relevance"),
    ("factuality", "Factuality (judge)", "Factuality"),
    ("audit_factual", "Factuality (audit: no unsupported or contradicting statement)", None),
    ("audit_protocol", "Protocol (audit: at most 3 facts, no withheld 不知道)", None),
)
JUDGE_KEYS = ("relevance", "factuality")
#: Where a consultation's questions come from: the real lawyer's next clarifying questions,
#: the LLM question writer, or a file of hand-written questions (the paper's protocol).
QuestionSource = Literal["lawyer", "writer", "hand"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ReliabilityItem(_Record):
    """One sampled consultation: its case, the context shown and the questions to answer."""

    case: Case
    context: tuple[Turn, ...]
    questions: tuple[str, ...]
    source: QuestionSource = "lawyer"
    usage: dict[str, RoleUsage] = Field(default_factory=dict)


class ReliabilityJudgement(_Record):
    relevance: int = Field(ge=0, le=1)
    factuality: int = Field(ge=0, le=1)
    reason: str


class ReliabilityAnswer(_Record):
    """One client answer of the study, its audit and (when judged) its judgement."""

    case_id: str
    client: str
    strategy: str
    q: int  # 1-based question number within the case
    question: str
    answer: str | None = None
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    audit: dict[str, Any] | None = None
    judge: ReliabilityJudgement | None = None
    judge_status: Literal["ok", "error", "none"] = "none"
    judge_error: str | None = None
    usage: dict[str, RoleUsage] = Field(default_factory=dict)

    def value(self, key: str) -> float | None:
        """This answer's 0/1 value of ``key`` (see the module docstring), None if missing."""
        if self.status != "ok":
            return None
        if key in JUDGE_KEYS:
            return None if self.judge is None else float(getattr(self.judge, key))
        flags = set((self.audit or {}).get("flags", ()))
        if key == "audit_factual":
            return float(not flags & {"unsupported", "contradicted"})
        if key == "audit_protocol":
            return float(not flags & {"over_limit", "withheld"})
        raise KeyError(key)


# --------------------------------------------------------------------------- sampling


def clarifying_positions(case: Case) -> list[int]:
    """Indices into ``case.dialogue`` of the lawyer's clarifying questions."""
    lawyer = [i for i, u in enumerate(case.dialogue) if u.speaker == "lawyer" and u.text.strip()]
    if is_annotated(case):
        return [i for i in lawyer if case.dialogue[i].intent == CLARIFYING_QUESTION]
    return [i for i in lawyer[:-1] if looks_like_question(case.dialogue[i].text)]


def _turns(case: Case, start: int, stop: int) -> tuple[Turn, ...]:
    """The initial query, then the dialogue's utterances ``start:stop`` as turns."""
    turns = [Turn(speaker="client", kind="query", text=case.initial_query)]
    for u in case.dialogue[start:stop]:
        if not u.text.strip():
            continue
        kind = "question" if u.speaker == "lawyer" else "answer"
        turns.append(Turn(speaker=u.speaker, kind=kind, text=u.text.strip()))
    return tuple(turns)


def _rounds_start(case: Case, stop: int, rounds: int) -> int:
    """Where the last ``rounds`` rounds before ``stop`` begin (after the initial query)."""
    lawyer = [i for i, u in enumerate(case.dialogue[:stop]) if u.speaker == "lawyer"]
    if not lawyer:
        return stop
    if rounds == 0:
        return stop
    return lawyer[-rounds] if len(lawyer) >= rounds else lawyer[0]


def context_cut(case: Case, rounds: int) -> int:
    """The dialogue index after the first ``rounds`` rounds."""
    lawyer = [i for i, u in enumerate(case.dialogue) if u.speaker == "lawyer"]
    return lawyer[rounds] if len(lawyer) > rounds else len(case.dialogue)


def lawyer_item(case: Case, context_rounds: int, n_questions: int) -> ReliabilityItem | None:
    """The case's context and the real lawyer's next clarifying questions (module docstring);
    None when the dialogue has fewer than ``n_questions`` of them or no facts."""
    qs = clarifying_positions(case)
    if len(qs) < n_questions or not case.facts:
        return None
    cut = context_cut(case, context_rounds)
    after = [i for i in qs if i >= cut]
    chosen = after[:n_questions] if len(after) >= n_questions else qs[-n_questions:]
    stop = min(cut, chosen[0])
    start = _rounds_start(case, stop, context_rounds)
    return ReliabilityItem(
        case=case,
        context=_turns(case, start, stop),
        questions=tuple(case.dialogue[i].text.strip() for i in chosen),
    )


def writer_context(case: Case, context_rounds: int) -> tuple[Turn, ...]:
    cut = context_cut(case, context_rounds)
    return _turns(case, _rounds_start(case, cut, context_rounds), cut)


def sample_cases(cases: Sequence[Case], n: int, seed: int, *, eligible: Any = None) -> list[Case]:
    """``n`` cases (all when fewer), drawn with ``random.Random(seed)`` from the cases for
    which ``eligible(case)`` holds, sorted by id first so that file order does not matter;
    returned in id order."""
    pool = sorted((c for c in cases if eligible is None or eligible(c)), key=lambda c: c.id)
    picked = random.Random(seed).sample(pool, min(n, len(pool)))
    return sorted(picked, key=lambda c: c.id)


def lawyer_items(
    cases: Sequence[Case], *, n: int, seed: int, context_rounds: int, questions: int
) -> list[ReliabilityItem]:
    def ok(c: Case) -> bool:
        return lawyer_item(c, context_rounds, questions) is not None

    out = []
    for c in sample_cases(cases, n, seed, eligible=ok):
        item = lawyer_item(c, context_rounds, questions)
        assert item is not None
        out.append(item)
    return out


def parse_questions(reply: str, n: int) -> list[str]:
    """``{"questions": [...]}`` (or a bare list) with exactly ``n`` distinct non-empty strings."""
    value = load_structured(reply)
    if isinstance(value, dict):
        value = value.get("questions")
    if not isinstance(value, list) or not all(isinstance(q, str) for q in value):
        raise ReplyFormatError("expected a list of question strings under 'questions'")
    qs = [one_line(q).strip() for q in value]
    if len(qs) != n or any(not q for q in qs) or len(set(qs)) != n:
        raise ReplyFormatError(f"expected exactly {n} distinct non-empty questions")
    return qs


class ContextQuestionWriter(ReaskingRole):
    """Writes the clarifying questions of the study (``reliability.question_writer``)."""

    role = "writer"

    async def write(
        self, case: Case, context: Sequence[Turn], n: int, *, meter: UsageMeter
    ) -> list[str]:
        template = self.templates["questions"]
        reask = self.templates["reask"]
        messages = template.render(
            n=n, query=one_line(case.initial_query), dialogue=format_dialogue(context[1:])
        )
        return await self.ask_parsed(
            "reliability_questions",
            template,
            messages,
            lambda reply: parse_questions(reply, n),
            meter,
            reask=reask,
            reask_text=lambda: reask.render_user(n=n),
            max_reasks=self.max_reasks,
            json_mode=True,
        )


async def writer_items(
    cases: Sequence[Case],
    writer: ContextQuestionWriter,
    *,
    n: int,
    seed: int,
    context_rounds: int,
    questions: int,
) -> list[ReliabilityItem]:
    """Items whose questions the writer wrote; a case the writer fails on is left out (the
    table's N counts the items written)."""
    picked = sample_cases(cases, n, seed, eligible=lambda c: bool(c.facts))

    async def one(case: Case) -> ReliabilityItem | None:
        meter = UsageMeter()
        context = writer_context(case, context_rounds)
        try:
            qs = await writer.write(case, context, questions, meter=meter)
        except (RoleError, LLMCallError):
            return None
        return ReliabilityItem(
            case=case,
            context=context,
            questions=tuple(qs),
            source="writer",
            usage=dict(meter.by_role),
        )

    done = await asyncio.gather(*(one(c) for c in picked))
    return [x for x in done if x is not None]


# --------------------------------------------------------------------------- judging


def parse_reliability_judgement(reply: str) -> ReliabilityJudgement:
    value = load_structured(reply)
    if not isinstance(value, dict):
        raise ReplyFormatError("expected a JSON object")
    out: dict[str, Any] = {}
    for key in JUDGE_KEYS:
        v = value.get(key)
        if isinstance(v, bool) or v not in (0, 1) or (isinstance(v, float) and not v.is_integer()):
            raise ReplyFormatError(f"{key} must be 0 or 1, got {v!r}")
        out[key] = int(v)
    reason = value.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise ReplyFormatError("reason must be a non-empty string")
    return ReliabilityJudgement(reason=reason.strip(), **out)


class ReliabilityJudge(ReaskingRole):
    """Relevance and factuality of one client answer (our prompt, equivalent to the paper's
    appendix C.4): the fact list, the context, the question and the answer in; 0/1 each."""

    role = "judge"

    async def judge(
        self,
        case: Case,
        context: Sequence[Turn],
        question: str,
        answer: str,
        *,
        meter: UsageMeter,
    ) -> ReliabilityJudgement:
        template = self.templates["judge"]
        reask = self.templates["reask"]
        messages = template.render(
            facts=format_numbered_facts(case.facts),
            dialogue=format_dialogue(context),
            question=one_line(question),
            answer=one_line(answer),
        )
        return await self.ask_parsed(
            "reliability",
            template,
            messages,
            parse_reliability_judgement,
            meter,
            reask=reask,
            reask_text=lambda: reask.render_user(),
            max_reasks=self.max_reasks,
            json_mode=True,
        )


# --------------------------------------------------------------------------- cells


def case_values(
    answers: Sequence[ReliabilityAnswer], case_ids: Sequence[str], key: str
) -> np.ndarray:
    """Per case (in ``case_ids`` order) the mean of ``key`` over its answers that have it;
    NaN where none has."""
    sums: dict[str, list[float]] = {}
    for a in answers:
        v = a.value(key)
        if v is not None:
            sums.setdefault(a.case_id, []).append(v)
    return np.array(
        [float(np.mean(sums[c])) if c in sums else np.nan for c in case_ids], dtype=np.float64
    )


# --------------------------------------------------------------------------- roles and files


def build_role(
    cls: type[ReaskingRole],
    name: str,
    entry: ModelEntry,
    ctx: Any,
    purposes: Mapping[str, str],
) -> Any:
    """The study's writer or judge on model entry ``name`` (templates by purpose)."""
    from lecode.agents.context import endpoint
    from lecode.llm.templates import load_template

    return cls(name, endpoint(ctx, name, entry), {k: load_template(v) for k, v in purposes.items()})


WRITER_TEMPLATES = {"questions": "reliability/questions", "reask": "reliability/questions_reask"}
JUDGE_TEMPLATES = {"judge": "reliability/judge", "reask": "reliability/reask"}


def write_items(path: str | Path, items: Sequence[ReliabilityItem]) -> None:
    atomic_write_text(path, "".join(dumps(i) + "\n" for i in items))


def read_items(path: str | Path) -> list[ReliabilityItem]:
    return _read(path, ReliabilityItem)


def write_answers(path: str | Path, answers: Sequence[ReliabilityAnswer]) -> None:
    atomic_write_text(path, "".join(dumps(a) + "\n" for a in answers))


def read_answers(path: str | Path) -> list[ReliabilityAnswer]:
    return _read(path, ReliabilityAnswer)


def _read(path: str | Path, model: Any) -> list[Any]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    out.append(model.model_validate_json(line))
                except ValueError as exc:
                    raise RecordError(f"{path}:{lineno}: not a {model.__name__}: {exc}") from None
    return out
