"""LLM judge (paper Table 9 protocol, prompt in our own words): the dialogue, the candidate
advice and the case's reference advice (``Case.suggestion``) in; the judge compares the two,
writes its reasoning per dimension, then gives five dimension scores and an overall score
derived from them, integers 1..10 (the tables report them x10), under score bands anchored on
the reference. The reasoning is kept as ``JudgeScores.rationale``.

A reply with missing, non-integer or out-of-range scores, no reasoning, or an overall score
outside the range of the dimension scores is re-asked up to ``max_reasks`` times, then
:class:`RoleError` (the dialogue is missing, never zero). A case without reference advice
cannot be judged under this protocol and is missing too.
"""

from __future__ import annotations

from lecode.agents.base import RoleError, UsageMeter
from lecode.agents.llm_common import ReaskingRole
from lecode.llm.parsing import parse_judge
from lecode.llm.render import format_dialogue, one_line
from lecode.records import Case, JudgeScores, Transcript


class LLMJudge(ReaskingRole):
    role = "judge"

    async def judge(self, case: Case, transcript: Transcript, *, meter: UsageMeter) -> JudgeScores:
        advice = transcript.advice
        if advice is None:
            raise RoleError(
                f"judge {self.name!r}: dialogue {transcript.case_id} has no final advice",
                kind="error",
            )
        reference = case.suggestion.strip()
        if not reference:
            raise RoleError(
                f"judge {self.name!r}: case {case.id} has no reference advice to judge against",
                kind="error",
            )
        template = self.templates["judge"]
        reask = self.templates["reask"]
        messages = template.render(
            dialogue=format_dialogue(transcript.turns[:-1]),
            reference=one_line(reference),
            advice=one_line(advice),
        )
        return await self.ask_parsed(
            "judge",
            template,
            messages,
            lambda reply: parse_judge(reply, strict=True),
            meter,
            reask=reask,
            reask_text=lambda: reask.render_user(),
            max_reasks=self.max_reasks,
            json_mode=True,
        )
