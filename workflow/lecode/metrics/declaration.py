"""How a per-dialogue metric is declared, and what its compute function is given.

A declaration (:class:`MetricDeclaration`) is a report column (key, header, display scale,
ranking direction, section) plus everything the pipeline derives from it: the value type of its
score column, what a dialogue must have for the metric to exist (:data:`NEEDS`), the function
that computes it, the tables and figures it appears in (:data:`TAGS`), what a missing value
means, and a self-test example with a hand-computed value. Declarations live in the modules of
:mod:`lecode.metrics.declared`; :mod:`lecode.metrics.registry` collects them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from lecode.columns import Metric
from lecode.records import Case, JudgeScores, Transcript, Turn

Value = float | int
Need = Literal["dialogue", "matches", "advice", "judgement"]
#: What a missing value of a dialogue that meets the metric's need means: ``failure`` (the
#: metric should exist and does not; counted against coverage, †) or ``not_applicable`` (the
#: metric is undefined for this dialogue, e.g. no fact was elicited; counted apart, ‡).
MissingIs = Literal["failure", "not_applicable"]
MISSING_IS: dict[str, str] = {
    "failure": "a failure: counted against the metric's coverage (†)",
    "not_applicable": "not applicable: left out of the mean and counted apart (‡)",
}

#: What a dialogue must have before a metric of each need is computed; without it the value
#: is missing (``None``). Every need also excludes dialogues that failed (stop reason error).
NEEDS: dict[str, str] = {
    "dialogue": "a dialogue that did not fail",
    "matches": "fact matches with status ok for a case with facts",
    "advice": "a dialogue that ended in advice, and a non-empty reference advice",
    "judgement": "a dialogue that ended in advice, and a judgement with status ok",
}

#: The tables and figures a declaration can name, and what each one is.
TAGS: dict[str, str] = {
    "table3": "Table 3 (main results), the paired differences, the comparison with the paper, "
    "Figure 7 and the HTML report's score columns",
    "table6": "Table 6 (clarification capability, zero-shot vs few-shot) and the audit's "
    "robustness rows",
    "table7": "Table 7 (advice quality, zero-shot vs few-shot)",
    "radar": "Figure 6 (radar over the main metrics)",
    "summary": "reports/metrics.json (DVC metrics) and the transcript viewer's scores",
}


class PairScorer(Protocol):
    """Scores one (candidate, reference) pair, e.g. :class:`lecode.metrics.advice.RougeL`."""

    def score(self, candidate: str, reference: str) -> float: ...


class BatchScorer(Protocol):
    """Scores many pairs in one call, e.g. :class:`lecode.metrics.advice.BertScorer`."""

    def score_detailed(self, candidates: Sequence[str], references: Sequence[str]) -> Any:
        """``.f1`` (one value per pair) and ``.truncated`` (whether a side was cut)."""
        ...


class Tools:
    """The scorers the metrics of one scoring run share.

    ``bert=None`` leaves the BERTScore metrics missing everywhere. :meth:`bertscore` scores a
    batch once: every metric that asks for the same pairs gets the same result.
    """

    def __init__(self, rouge: PairScorer, bert: BatchScorer | None) -> None:
        self.rouge = rouge
        self.bert = bert
        self._bert_done: dict[tuple[tuple[str, str], ...], tuple[list[float], list[bool]]] = {}

    def bertscore(self, dialogues: Sequence[Dialogue]) -> tuple[list[float], list[bool]] | None:
        """(F1, truncated) per dialogue's (advice, reference) pair; None without a scorer."""
        if self.bert is None:
            return None
        pairs = tuple((d.advice_text, d.reference) for d in dialogues)
        if not pairs:
            return [], []
        if pairs not in self._bert_done:
            result = self.bert.score_detailed([p[0] for p in pairs], [p[1] for p in pairs])
            f1, cut = [float(v) for v in result.f1], [bool(c) for c in result.truncated]
            if len(f1) != len(pairs) or len(cut) != len(pairs):
                raise ValueError(f"BERTScore returned {len(f1)} values for {len(pairs)} pairs")
            self._bert_done[pairs] = (f1, cut)
        return self._bert_done[pairs]


@dataclass(frozen=True)
class Dialogue:
    """What one dialogue's metrics are computed from.

    ``per_question`` is set only with fact matches of status ok (``need="matches"``);
    ``judge`` only with a judgement of status ok on advice (``need="judgement"``).
    """

    case: Case
    transcript: Transcript
    tools: Tools
    per_question: tuple[tuple[int, ...], ...] | None = None
    judge: JudgeScores | None = None

    @property
    def importance(self) -> tuple[int, ...]:
        return self.case.importance

    @property
    def matched(self) -> tuple[tuple[int, ...], ...]:
        """The facts each question elicited (only for metrics with ``need="matches"``)."""
        if self.per_question is None:
            raise ValueError(f"{self.case.id}: no fact matches (the metric must need 'matches')")
        return self.per_question

    @property
    def advice(self) -> str | None:
        """The final advice, only if the dialogue ended in advice."""
        return self.transcript.advice

    @property
    def advice_text(self) -> str:
        """The final advice (only for metrics with ``need="advice"`` or ``"judgement"``)."""
        advice = self.transcript.advice
        if advice is None:
            raise ValueError(f"{self.case.id}: the dialogue did not end in advice")
        return advice

    @property
    def reference(self) -> str:
        """The case's reference advice."""
        return self.case.suggestion

    @property
    def scores(self) -> JudgeScores:
        """The judge's scores (only for metrics with ``need="judgement"``)."""
        if self.judge is None:
            raise ValueError(f"{self.case.id}: no judgement (the metric must need 'judgement')")
        return self.judge

    def meets(self, need: Need) -> bool:
        """Whether this dialogue has what a metric of ``need`` requires."""
        if self.transcript.stop_reason == "error":
            return False
        if need == "dialogue":
            return True
        if need == "matches":
            return self.per_question is not None
        if self.advice is None:
            return False
        if need == "advice":
            return bool(self.reference.strip())
        return self.judge is not None


class ExactMatchScorer:
    """The stand-in BERTScore scorer of the self-test examples: F1 1.0 for identical texts,
    else 0.0; a pair counts as truncated when either text exceeds 510 characters."""

    def score_detailed(self, candidates: Sequence[str], references: Sequence[str]) -> Any:
        from lecode.metrics.advice import BertScores

        return BertScores(
            f1=[1.0 if c == r else 0.0 for c, r in zip(candidates, references, strict=True)],
            truncated=[
                len(c) > 510 or len(r) > 510 for c, r in zip(candidates, references, strict=True)
            ],
        )


def example_tools() -> Tools:
    """The scorers the self-test examples run with: ROUGE-L on jieba tokens, punctuation kept
    (as the paper's numbers), and :class:`ExactMatchScorer` for BERTScore."""
    from lecode.metrics.advice import RougeL

    return Tools(RougeL(punctuation=True), ExactMatchScorer())


@dataclass(frozen=True)
class Example:
    """A metric's self-test case: a small consultation and the value the metric must give,
    computed by hand (``why``).

    The consultation asks one clarifying question per entry of ``per_question`` (each answered),
    then gives ``advice`` (``None``: it abstains). ``per_question=None`` means matching failed.
    """

    expected: Value | None
    why: str
    importance: tuple[int, ...] = (3, 1, 2, 2)
    per_question: tuple[tuple[int, ...], ...] | None = ((1,), (), (0, 2))
    advice: str | None = "建议先协商；不行就起诉！"
    reference: str = "先协商，再起诉。"
    judge: JudgeScores | None = None

    def dialogue(self, tools: Tools) -> Dialogue:
        n = len(self.importance)
        case = Case(
            id="example",
            initial_query="公司拖欠工资怎么办？",
            dialogue=(),
            facts=tuple(f"事实{i}" for i in range(n)),
            importance=self.importance,
            suggestion=self.reference,
        )
        questions = len(self.per_question) if self.per_question is not None else 1
        turns = [Turn(speaker="client", kind="query", text=case.initial_query)]
        for q in range(questions):
            turns.append(Turn(speaker="lawyer", kind="question", text=f"问题{q + 1}？"))
            turns.append(Turn(speaker="client", kind="answer", text=f"回答{q + 1}。"))
        if self.advice is not None:
            turns.append(Turn(speaker="lawyer", kind="advice", text=self.advice))
        transcript = Transcript(
            case_id=case.id,
            expert="example",
            strategy="example",
            client="example",
            turns=tuple(turns),
            stop_reason="advice" if self.advice is not None else "abstain",
        )
        return Dialogue(case, transcript, tools, self.per_question, self.judge)


def _identifier(key: str) -> bool:
    return key.isidentifier() and key == key.lower()


@dataclass(frozen=True, kw_only=True)
class MetricDeclaration(Metric):
    """One per-dialogue metric, declared once.

    Give exactly one of ``compute`` (one dialogue in, its value or ``None`` out) and
    ``compute_batch`` (all dialogues that meet ``need`` in, one value each out; for scorers that
    run once per batch, such as BERTScore). The function is only called for dialogues that meet
    ``need``; returning ``None`` means the value is missing, worded by ``missing``, and
    ``missing_is`` says whether that is a failure (the default: coverage, †) or "not
    applicable" (the metric is undefined for that dialogue: left out of the mean and counted
    apart, ‡).

    ``order`` places the metric in the registry (score columns, and the column order of every
    table that shows it); ``tags`` name the tables and figures that show it (:data:`TAGS`);
    ``raw_range`` is the raw scale shown in table notes (``"1-10"`` for judge scores, ``""``
    for fractions and counts); ``digits`` the decimals of a value on the display scale;
    ``uses_model`` marks values computed by the BERTScore model (the self-test records their
    fixture numbers per model).
    """

    value_type: type[float] | type[int]
    need: Need
    tags: tuple[str, ...]
    missing: str
    order: int
    example: Example
    description: str
    compute: Callable[[Dialogue], Value | None] | None = None
    compute_batch: Callable[[Sequence[Dialogue]], Sequence[Value | None]] | None = None
    raw_range: str = ""
    digits: int = 1
    uses_model: bool = False
    missing_is: MissingIs = "failure"

    def __post_init__(self) -> None:
        where = f"metric {self.key!r}"
        if not _identifier(self.key):
            raise ValueError(f"{where}: the key must be a lower-case Python identifier")
        if (self.compute is None) == (self.compute_batch is None):
            raise ValueError(f"{where}: give exactly one of compute and compute_batch")
        if self.value_type not in (float, int):
            raise ValueError(f"{where}: value_type must be float or int, got {self.value_type!r}")
        if self.need not in NEEDS:
            raise ValueError(f"{where}: need {self.need!r} is not one of {sorted(NEEDS)}")
        unknown = [t for t in self.tags if t not in TAGS]
        if unknown:
            raise ValueError(f"{where}: unknown tags {unknown}; known: {sorted(TAGS)}")
        if self.direction not in ("higher", "lower", None):
            raise ValueError(f"{where}: direction must be 'higher', 'lower' or None")
        if not self.missing.strip():
            raise ValueError(f"{where}: say what a missing value means (missing=...)")
        if self.missing_is not in MISSING_IS:
            raise ValueError(
                f"{where}: missing_is {self.missing_is!r} is not one of {sorted(MISSING_IS)}"
            )
        if self.scale <= 0 or self.digits < 0:
            raise ValueError(f"{where}: scale must be positive and digits not negative")

    @property
    def not_applicable(self) -> bool:
        """Whether a missing value of a dialogue that meets :attr:`need` means "does not
        apply" rather than a failure."""
        return self.missing_is == "not_applicable"

    def values(self, dialogues: Sequence[Dialogue]) -> list[Value | None]:
        """This metric of each dialogue (all must meet :attr:`need`), checked against
        :attr:`value_type`."""
        if self.compute_batch is not None:
            got = list(self.compute_batch(dialogues))
            if len(got) != len(dialogues):
                raise ValueError(
                    f"metric {self.key!r}: {len(got)} values for {len(dialogues)} dialogues"
                )
        else:
            assert self.compute is not None
            got = [self.compute(d) for d in dialogues]
        return [self._checked(d, v) for d, v in zip(dialogues, got, strict=True)]

    def _checked(self, dialogue: Dialogue, value: Any) -> Value | None:
        if value is None:
            return None
        where = f"metric {self.key!r} of case {dialogue.case.id}"
        if self.value_type is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{where}: expected an int, got {value!r}")
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            raise ValueError(f"{where}: expected a number, got {value!r}")
        return float(value)

    def missing_reason(self, stop_reason: str, *, need_met: bool | None = None) -> str:
        """Why this metric is missing for a dialogue that stopped with ``stop_reason``;
        ``need_met``: whether the dialogue is known to meet :attr:`need` (None: not known)."""
        if stop_reason == "error":
            return "failed dialogue: stop reason error"
        if self.need in ("advice", "judgement") and stop_reason != "advice":
            return f"no advice: stop reason {stop_reason}"
        if not self.not_applicable:
            return self.missing
        if need_met is False:
            return f"failure: the dialogue lacks {NEEDS[self.need]}"
        return f"does not apply: {self.missing}"

    def run_example(self, tools: Tools | None = None) -> Value | None:
        """This metric of its self-test example (with :func:`example_tools` by default)."""
        dialogue = self.example.dialogue(tools if tools is not None else example_tools())
        if not dialogue.meets(self.need):
            return None
        return self.values([dialogue])[0]
