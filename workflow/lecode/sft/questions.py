"""Question writers for Key-fact and Key-fact-e SFT, and the validation of their questions.

A writer turns one case into :class:`TargetQuestion` s, each naming the facts it asks for:

- ``single`` (Key-fact SFT): exactly one question per atomic fact, in fact order;
- ``multi`` (Key-fact-e SFT): questions that each cover 1-3 facts; every fact belongs to exactly
  one question; questions are ordered by their first fact.

Writers: :class:`TemplateWriter` (offline, deterministic: the rules of :mod:`lecode.sft.voice`;
for ``multi`` it groups neighbouring facts that share a content word) and :class:`LLMWriter`
(a model entry, the paper used Qwen-max, with our own prompts ``workflow/prompts/sft/*.txt``;
requests go through the response store, so a rerun or ``LECODE_REPLAY=1`` answers from it).

:func:`validate` checks every question before it enters training data:

- ``form``: one line, at most ``MAX_CHARS`` characters, ends with a question mark, carries no
  提问/建议 marker, and is not a "tell me everything" request (the client refuses those);
- ``leak``: an open question must not already state its fact (lexical coverage of the fact in
  the question below ``max_leak``; 1.0 rejects only questions that restate every content word
  of the fact). A yes/no question on a short fact (at most ``SHORT_FACT`` content words, e.g.
  "有没有前科") is a verification question, not a leak;
- ``elicitation``: the configured fact matcher, shown the question and the client's reply
  (its target facts in the client's voice, as in the training dialogue), must find every target
  fact in that exchange.

A case with any invalid question is left out of the variant's data; the statistics count why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from lecode.agents.base import Matcher, UsageMeter
from lecode.agents.fact_lookup import is_open_request
from lecode.agents.lexical import keywords
from lecode.agents.lexical_matcher import coverage
from lecode.agents.llm_common import LLMRole
from lecode.llm.parsing import ReplyFormatError, _as_int, load_structured
from lecode.llm.render import format_numbered_facts
from lecode.llm.templates import PromptTemplate, load_template
from lecode.records import Case
from lecode.sft.voice import client_answer, client_voice, fact_question, join_questions

Mode = Literal["single", "multi"]
VARIANT_MODE: dict[str, Mode] = {"keyfact": "single", "keyfact-e": "multi"}
MAX_GROUP = 3
MAX_CHARS = 150
SHORT_FACT = 3
#: Prompt templates of the LLM writer, by purpose.
WRITER_TEMPLATES = {
    "single": "sft/keyfact_questions",
    "multi": "sft/keyfact_e_questions",
    "reask": "sft/reask",
}
_MARKER = re.compile(r"^\s*(?:\*\*)?\s*(提问|建议)\s*[:：]")
_POLAR = re.compile(r"有没有|是否|是不是|有无|吗[？?]?$|了没[有]?[？?]?$")
#: Words that name the parties in almost every fact; sharing them does not make two facts one
#: topic.
_GENERIC = frozenset({"用户", "对方", "双方", "当事人", "已经", "已", "有", "被", "共"})


@dataclass(frozen=True)
class TargetQuestion:
    facts: tuple[int, ...]
    text: str


@dataclass(frozen=True)
class Problem:
    kind: Literal["structure", "form", "leak", "elicitation"]
    detail: str


class QuestionWriter(Protocol):
    name: str

    async def write(self, case: Case, mode: Mode, *, meter: UsageMeter) -> list[TargetQuestion]: ...


# ---------------------------------------------------------------------------------------------
# Offline writer.


def group_facts(
    facts: Sequence[str], *, max_size: int = MAX_GROUP, window: int = 3
) -> list[tuple[int, ...]]:
    """Neighbouring facts that share a content word, at most ``max_size`` per group, greedily in
    fact order (a fact joins the first open group within ``window`` positions it shares a word
    with). Every fact is in exactly one group."""
    words = [keywords(client_voice(f)) - _GENERIC for f in facts]
    taken: set[int] = set()
    groups: list[tuple[int, ...]] = []
    for i in range(len(facts)):
        if i in taken:
            continue
        group = [i]
        taken.add(i)
        for j in range(i + 1, min(len(facts), i + 1 + window)):
            if len(group) >= max_size:
                break
            if j not in taken and any(words[j] & words[k] for k in group):
                group.append(j)
                taken.add(j)
        groups.append(tuple(group))
    return groups


class TemplateWriter:
    """The offline writer: rule-based questions (:func:`lecode.sft.voice.fact_question`)."""

    name = "template"

    def __init__(self, max_leak: float = 1.0) -> None:
        self.max_leak = max_leak

    def question(self, case: Case, facts: Sequence[int]) -> str:
        parts = [fact_question(case.facts[i]) for i in facts]
        text = parts[0] if len(parts) == 1 else join_questions(parts)
        if any(leaks(text, case.facts[i], self.max_leak) for i in facts):
            from lecode.sft.voice import topic_question

            topics = list(dict.fromkeys(topic_question(case.facts[i]) for i in facts))
            text = topics[0] if len(topics) == 1 else join_questions(topics)
        return text

    async def write(self, case: Case, mode: Mode, *, meter: UsageMeter) -> list[TargetQuestion]:
        groups: list[tuple[int, ...]]
        if mode == "single":
            groups = [(i,) for i in range(case.n_facts)]
        else:
            groups = group_facts(case.facts)
        return [TargetQuestion(g, self.question(case, g)) for g in groups]


# ---------------------------------------------------------------------------------------------
# LLM writer.


def parse_questions(reply: str, n_facts: int, mode: Mode) -> list[TargetQuestion]:
    """``{"questions": [{"fact": i | "facts": [i, ...], "question": "..."}]}`` -> questions in
    order of their first fact; raises :class:`ReplyFormatError` on any structural problem."""
    data = load_structured(reply)
    items = data.get("questions") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise ReplyFormatError('expected {"questions": [...]} with at least one question')
    out: list[TargetQuestion] = []
    for k, item in enumerate(items):
        if not isinstance(item, dict):
            raise ReplyFormatError(f"questions[{k}] is not an object")
        text = item.get("question")
        if not isinstance(text, str) or not text.strip():
            raise ReplyFormatError(f"questions[{k}] has no question text")
        raw = item.get("facts", item.get("fact"))
        raw_list = raw if isinstance(raw, list) else [raw]
        facts = tuple(sorted({_as_int(x) for x in raw_list}))
        if not facts or any(not 0 <= i < n_facts for i in facts):
            raise ReplyFormatError(f"questions[{k}]: fact numbers must lie in 0..{n_facts - 1}")
        limit = 1 if mode == "single" else MAX_GROUP
        if len(facts) > limit:
            raise ReplyFormatError(f"questions[{k}] covers {len(facts)} facts (at most {limit})")
        out.append(TargetQuestion(facts, " ".join(text.split())))
    problems = structure_problems(out, n_facts, mode)
    if problems:
        raise ReplyFormatError(problems[0].detail)
    return sorted(out, key=lambda q: q.facts[0])


class LLMWriter(LLMRole):
    """A model entry that writes the questions in JSON; a malformed reply is re-asked once with
    the problem named, then the case is rejected (``RoleError``)."""

    role = "writer"

    def __init__(self, name: str, llm: object, templates: dict[str, PromptTemplate]) -> None:
        super().__init__(name, llm, templates, strategy="sft")  # type: ignore[arg-type]

    async def write(self, case: Case, mode: Mode, *, meter: UsageMeter) -> list[TargetQuestion]:
        template = self.templates[mode]
        messages = template.render(
            query=" ".join(case.initial_query.split()),
            facts=format_numbered_facts(case.facts),
            n_facts=case.n_facts,
            max_index=case.n_facts - 1,
        )
        return await self.ask_json(
            mode,
            template,
            messages,
            lambda reply: parse_questions(reply, case.n_facts, mode),
            meter,
        )


def writer_templates() -> dict[str, PromptTemplate]:
    return {purpose: load_template(name) for purpose, name in WRITER_TEMPLATES.items()}


# ---------------------------------------------------------------------------------------------
# Validation.


def is_polar(question: str) -> bool:
    return _POLAR.search(question.strip()) is not None


def leaks(question: str, fact: str, max_leak: float) -> bool:
    """True when ``question`` already states ``fact`` (see the module docstring)."""
    stated = client_voice(fact)
    if coverage(stated, question) < max_leak:
        return False
    return not (is_polar(question) and len(keywords(stated)) <= SHORT_FACT)


def structure_problems(qs: Sequence[TargetQuestion], n_facts: int, mode: Mode) -> list[Problem]:
    seen = [f for q in qs for f in q.facts]
    out = []
    if sorted(seen) != list(range(n_facts)):
        missing = sorted(set(range(n_facts)) - set(seen))
        twice = sorted({f for f in seen if seen.count(f) > 1})
        out.append(
            Problem(
                "structure",
                f"every fact needs exactly one question: missing {missing}, repeated {twice}",
            )
        )
    limit = 1 if mode == "single" else MAX_GROUP
    for k, q in enumerate(qs):
        if not 1 <= len(q.facts) <= limit:
            out.append(Problem("structure", f"question {k} covers {len(q.facts)} facts"))
    return out


def form_problem(text: str) -> str | None:
    t = text.strip()
    if not t:
        return "empty question"
    if "\n" in t:
        return "more than one line"
    if len(t) > MAX_CHARS:
        return f"longer than {MAX_CHARS} characters"
    if _MARKER.match(t):
        return "carries a 提问/建议 marker"
    if not t.endswith(("？", "?")):
        return "does not end with a question mark"
    if is_open_request(t):
        return "asks for everything at once"
    return None


async def validate(
    case: Case,
    questions: Sequence[TargetQuestion],
    mode: Mode,
    *,
    matcher: Matcher,
    max_leak: float,
    meter: UsageMeter,
) -> list[Problem]:
    """Every problem of a case's questions (empty: all valid)."""
    problems = structure_problems(questions, case.n_facts, mode)
    for k, q in enumerate(questions):
        form = form_problem(q.text)
        if form:
            problems.append(Problem("form", f"question {k}: {form}: {q.text}"))
        for i in q.facts:
            if leaks(q.text, case.facts[i], max_leak):
                problems.append(Problem("leak", f"question {k} states fact {i}: {q.text}"))
    if problems:
        return problems
    pairs = [(q.text, answer_of(case, q)) for q in questions]
    found = await matcher.match(case, pairs, meter=meter)
    for k, (q, got) in enumerate(zip(questions, found, strict=True)):
        missed = sorted(set(q.facts) - set(got))
        if missed:
            problems.append(
                Problem("elicitation", f"question {k} does not elicit facts {missed}: {q.text}")
            )
    return problems


def answer_of(case: Case, q: TargetQuestion) -> str:
    """The client's reply in the training dialogue: the question's facts in the first person."""
    return client_answer([case.facts[i] for i in q.facts])
