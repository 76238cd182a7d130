"""Human-lawyer reference: replays the real lawyer's questions and advice of the case.

Unlike every other expert it reads the recorded dialogue, on purpose: its row shows what the
questions a human lawyer actually asked elicit under the same client simulator and metrics.
"""

from __future__ import annotations

from collections.abc import Sequence

from lecode.agents.base import CaseExpert, ExpertMove, RoleError, UsageMeter
from lecode.agents.dialogue_parts import clarifying_questions, lawyer_advice
from lecode.records import Case, Turn


class HumanReplayExpert(CaseExpert):
    """The k-th move asks the lawyer's k-th clarifying question (k = questions in ``history``).

    Once the questions run out, or ``must_advise`` is set, it gives the lawyer's own advice
    (see :mod:`lecode.agents.dialogue_parts`), falling back to the case's advice summary
    ``suggestion`` when the dialogue has no lawyer utterance at all.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    async def next_move(
        self, case: Case, history: Sequence[Turn], *, must_advise: bool, meter: UsageMeter
    ) -> ExpertMove:
        asked = sum(1 for t in history if t.kind == "question")
        questions = clarifying_questions(case)
        if not must_advise and asked < len(questions):
            return ExpertMove(kind="question", text=questions[asked])
        advice = lawyer_advice(case) or case.suggestion.strip()
        if not advice:
            raise RoleError(f"case {case.id}: no lawyer advice to replay", kind="error")
        return ExpertMove(kind="advice", text=advice)
