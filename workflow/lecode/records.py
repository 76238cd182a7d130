"""Typed records that flow through the pipeline.

dataset -> Case; simulation -> Transcript; matching -> Matches; judging -> Judgement. Each is
read and written in exactly one place, :mod:`lecode.recordio`. The per-dialogue scores are in
:mod:`lecode.score_records` (generated from the metric registry; read and written by
:mod:`lecode.score_io`), so that a new metric does not change the code of the steps before
scoring.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Speaker = Literal["client", "lawyer"]
TurnKind = Literal["query", "question", "answer", "advice"]
StopReason = Literal["advice", "max_turns", "abstain", "parse_error", "error"]
Status = Literal["ok", "error"]

#: The ten utterance-intent labels of the LeCoDe annotation guideline, by number.
INTENT_LABELS: dict[int, str] = {
    1: "Client Initial Query",
    2: "Client Response",
    3: "Client Information Addition",
    4: "Client Need Extension",
    5: "Lawyer Clarifying Question",
    6: "Lawyer Information Verification",
    7: "Lawyer Legal Advice",
    8: "Lawyer Emotional Support",
    9: "Invalid Exchange",
    10: "Other",
}
CLARIFYING_QUESTION = 5
LEGAL_ADVICE = 7

#: The exact reply a simulated client gives when its facts do not answer a question.
UNKNOWN_ANSWER = "不知道"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Utterance(_Record):
    """One utterance of a real (dataset) consultation, with its intent number if annotated."""

    speaker: Speaker
    text: str
    intent: int | None = None


class Case(_Record):
    """One consultation of the dataset, normalised from the LeCoDe JSONL schema."""

    id: str
    initial_query: str
    dialogue: tuple[Utterance, ...]
    facts: tuple[str, ...]
    importance: tuple[int, ...]
    suggestion: str
    case_type: tuple[str, ...] = ()
    charge_type: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _facts_align(self) -> Case:
        if len(self.facts) != len(self.importance):
            raise ValueError("facts and importance differ in length")
        return self

    @property
    def n_facts(self) -> int:
        return len(self.facts)


class Turn(_Record):
    """One turn of a simulated consultation."""

    speaker: Speaker
    kind: TurnKind
    text: str


class RoleUsage(_Record):
    """Token, cost and request accounting of one role in one dialogue.

    ``reasoning_tokens`` is the part of ``completion_tokens`` a reasoning model spent on its
    hidden reasoning (reported by the API, else estimated; see :mod:`lecode.llm.ledger`).
    ``cached_prompt_tokens`` is the part of ``prompt_tokens`` the provider reported reading from
    its prompt cache (billed at the entry's ``price.cached_prompt``); ``cached`` counts calls
    answered from lecode's own response store.
    The protocol counters record how replies were handled: ``unmarked_reasks`` (an expert
    reply without 提问/建议 marker was re-asked), ``unmarked_advice`` / ``unmarked_questions``
    (an unmarked reply was taken as advice / as a question), ``read_after_preamble`` /
    ``read_anywhere`` (a reply's marker was found after a short preamble / further into the
    reply, as the entry's ``markers.reading`` allows), ``read_two_moves`` (a reply held both a
    question and advice and the entry's ``markers.two_moves`` policy chose one),
    ``confidence_failures`` (a MediQ
    confidence reply could not be read, re-asked or fatal).
    """

    calls: int = 0
    cached: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    reasoning_tokens: int = 0
    cached_prompt_tokens: int = 0
    unmarked_reasks: int = 0
    unmarked_advice: int = 0
    unmarked_questions: int = 0
    read_after_preamble: int = 0
    read_anywhere: int = 0
    read_two_moves: int = 0
    confidence_failures: int = 0

    def __add__(self, other: RoleUsage) -> RoleUsage:
        return RoleUsage(
            **{name: getattr(self, name) + getattr(other, name) for name in RoleUsage.model_fields}
        )


class Served(_Record):
    """The model ids and ``system_fingerprint`` values that an endpoint's replies named, with
    how many replies named each (``""``: the reply named none). Replies from the response store
    count with the values stored with them, so a replay reports what the first run was served."""

    models: dict[str, int] = Field(default_factory=dict)
    fingerprints: dict[str, int] = Field(default_factory=dict)

    def counted(self, model: str, fingerprint: str) -> Served:
        return Served(
            models={**self.models, model: self.models.get(model, 0) + 1},
            fingerprints={
                **self.fingerprints,
                fingerprint: self.fingerprints.get(fingerprint, 0) + 1,
            },
        )

    def __add__(self, other: Served) -> Served:
        def total(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
            return {k: a.get(k, 0) + b.get(k, 0) for k in sorted({*a, *b})}

        return Served(
            models=total(self.models, other.models),
            fingerprints=total(self.fingerprints, other.fingerprints),
        )


class Transcript(_Record):
    """A simulated consultation between an expert (model x strategy) and a client simulator."""

    case_id: str
    expert: str
    strategy: str
    client: str
    turns: tuple[Turn, ...]
    stop_reason: StopReason
    error: str | None = None
    usage: dict[str, RoleUsage] = Field(default_factory=dict)
    provenance: dict[str, str] = Field(default_factory=dict)
    served: dict[str, Served] = Field(default_factory=dict)

    @property
    def questions(self) -> list[str]:
        return [t.text for t in self.turns if t.kind == "question"]

    @property
    def n_questions(self) -> int:
        return sum(1 for t in self.turns if t.kind == "question")

    @property
    def advice(self) -> str | None:
        """The final advice, only if the dialogue really ended in advice."""
        if self.turns and self.turns[-1].kind == "advice":
            return self.turns[-1].text
        return None

    def qa_pairs(self) -> list[tuple[str, str]]:
        """(question, answer) per question position; a question without reply gets ''."""
        pairs: list[tuple[str, str]] = []
        for i, t in enumerate(self.turns):
            if t.kind != "question":
                continue
            nxt = self.turns[i + 1] if i + 1 < len(self.turns) else None
            answer = nxt.text if nxt is not None and nxt.kind == "answer" else ""
            pairs.append((t.text, answer))
        return pairs


class Matches(_Record):
    """Which facts each clarifying question elicited.

    ``per_question[p]`` lists the 0-based fact indices matched to question position ``p + 1``.
    Questions answered exactly ``不知道`` keep their position with an empty list.
    """

    case_id: str
    expert: str
    strategy: str
    matcher: str
    n_facts: int
    per_question: tuple[tuple[int, ...], ...]
    status: Status = "ok"
    error: str | None = None
    usage: dict[str, RoleUsage] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _indices_valid(self) -> Matches:
        for p, idx in enumerate(self.per_question):
            for i in idx:
                if not 0 <= i < self.n_facts:
                    raise ValueError(
                        f"question {p + 1}: fact index {i} outside 0..{self.n_facts - 1}"
                    )
        return self


class JudgeScores(_Record):
    """The LLM judge's six 1-10 scores (paper Table 9) and its rationale."""

    professionalism: int = Field(ge=1, le=10)
    fluency: int = Field(ge=1, le=10)
    completeness: int = Field(ge=1, le=10)
    satisfaction: int = Field(ge=1, le=10)
    safety: int = Field(ge=1, le=10)
    overall: int = Field(ge=1, le=10)
    rationale: str = ""


#: The judge's six score fields, in the paper's order (the columns of the per-dialogue scores).
JUDGE_FIELDS: tuple[str, ...] = tuple(f for f in JudgeScores.model_fields if f != "rationale")


class Judgement(_Record):
    """The judge's verdict on one dialogue's advice, or why there is none."""

    case_id: str
    expert: str
    strategy: str
    judge: str
    scores: JudgeScores | None = None
    status: Status = "ok"
    error: str | None = None
    usage: dict[str, RoleUsage] = Field(default_factory=dict)
