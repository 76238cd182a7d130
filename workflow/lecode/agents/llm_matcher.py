"""LLM fact matcher (paper Table 8 semantics): question/answer pairs in, fact indices per pair
out. Pairs answered exactly 不知道 (or not answered) are not sent but keep their position.
The reply must be a JSON object ``{"QA<p>": [indices] | index}``; invalid keys or indices are
re-asked up to ``max_reasks`` times, then :class:`RoleError` (the dialogue is missing, n/N)."""

from __future__ import annotations

from collections.abc import Sequence

from lecode.agents.base import UsageMeter
from lecode.agents.llm_common import ReaskingRole
from lecode.llm.parsing import parse_matches
from lecode.llm.render import format_numbered_facts, format_qa_pairs
from lecode.records import UNKNOWN_ANSWER, Case


class LLMMatcher(ReaskingRole):
    role = "matcher"

    async def match(
        self, case: Case, pairs: Sequence[tuple[str, str]], *, meter: UsageMeter
    ) -> list[list[int]]:
        result: list[list[int]] = [[] for _ in pairs]
        sent = [
            (p, q, a) for p, (q, a) in enumerate(pairs) if a.strip() and a.strip() != UNKNOWN_ANSWER
        ]
        if not sent or not case.facts:
            return result
        positions = [p for p, _, _ in sent]
        template = self.templates["match"]
        reask = self.templates["reask"]
        messages = template.render(
            qa_pairs=format_qa_pairs(sent), facts=format_numbered_facts(case.facts)
        )
        matched = await self.ask_parsed(
            "match",
            template,
            messages,
            lambda reply: parse_matches(reply, positions, case.n_facts),
            meter,
            reask=reask,
            reask_text=lambda: reask.render_user(max_index=case.n_facts - 1),
            max_reasks=self.max_reasks,
            json_mode=True,
        )
        for position, indices in matched.items():
            result[position] = indices
        return result
