"""LLM judge (paper Table 9 semantics): five dimensions and an overall score, integers 1..10
(the tables report them x10). Out-of-range, missing or non-integer scores are re-asked up to
``max_reasks`` times, then :class:`RoleError` (the dialogue is missing, never zero)."""

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
        template = self.templates["judge"]
        reask = self.templates["reask"]
        messages = template.render(
            dialogue=format_dialogue(transcript.turns[:-1]), advice=one_line(advice)
        )
        return await self.ask_parsed(
            "judge",
            template,
            messages,
            parse_judge,
            meter,
            reask=reask,
            reask_text=lambda: reask.render_user(),
            max_reasks=self.max_reasks,
            json_mode=True,
        )
