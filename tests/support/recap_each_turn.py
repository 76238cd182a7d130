"""A strategy that exists only in tests: "recap each turn", an expert that never shows a call
the dialogue itself. Every turn a private call folds the latest exchange into a running recap
(the first turn: the initial query), and the move call sees only that recap and the question
budget. The files add it to a copy of the project: its templates and one module, nothing else.

It is what the call vocabulary of the declarative strategies does not foresee: a private call
on every turn whose reply feeds the next call, template values of its own (``${recap}``,
``${latest}``), and no ``${dialogue}`` anywhere, so the mock endpoint cannot tell the case or
the turn from its prompts.
"""

from __future__ import annotations

from pathlib import Path

NAME = "recap_each_turn"

RECAP_TEMPLATE = """\
[system]
你是一名执业多年的中国律师，正在通过文字为一位当事人提供法律咨询。你不保留完整的对话记录，只保留一份自己看的案情摘要，每一轮对话后更新它。摘要只给你自己看，当事人看不到。

[user]
【目前的案情摘要】
${recap}

【最新一轮对话】
${latest}

请把最新一轮对话中的新事实并入摘要，写出更新后的完整摘要，每条事实一行，不要写其他内容。
"""

TURN_TEMPLATE = """\
[system]
你是一名执业多年的中国律师，正在通过文字为一位当事人提供一对一的法律咨询。你手里只有一份自己整理的案情摘要。你先通过有针对性的追问把与案件有关的事实弄清楚，再给出专业、具体、可操作的法律建议。

回复规则：
1. 每条回复只做一件事：要么提出一个问题，要么给出最终建议。
2. 需要了解更多事实时，以“提问：”开头，后面只写一个具体的问题；摘要里已有的事实不要再问。
3. 认为已经掌握足够信息时，以“建议：”开头给出最终法律建议。
4. 整个咨询中最多提问 ${max_turns} 次。

[user]
【案情摘要】
${recap}

你已经提问 ${asked} 次，最多还可以提问 ${remaining} 次。请写出你的下一条回复。
"""

ADVISE_TEMPLATE = """\
[system]
你是一名执业多年的中国律师，正在通过文字为一位当事人提供一对一的法律咨询。提问环节已经结束，你要根据自己整理的案情摘要给出最终的法律建议：说明相关的法律规定和可能的后果，给出具体可行的下一步行动。

[user]
【案情摘要】
${recap}

请以“建议：”开头，给出你的最终法律建议，不要再提问。
"""

MODULE = '''\
"""Recap each turn: a private call folds the latest exchange into a running recap; the move
sees only the recap."""

from dataclasses import dataclass

from lecode.llm.render import format_dialogue
from lecode.strategies.calls import Call
from lecode.strategies.program import Ask, DialogueSoFar, ExpertProgram, Move

RECAP = Call("recap", "recap", "text")
TURN = Call("turn", "turn", "move")
ADVISE = Call("advise", "advise", "advice")


@dataclass
class Recap:
    text: str = "（尚无）"


class RecapEachTurn(ExpertProgram):
    name = "recap_each_turn"
    templates = {
        "recap": "expert/recap_each_turn_recap",
        "turn": "expert/recap_each_turn",
        "advise": "expert/recap_each_turn_advise",
        "reask": "expert/reask",
    }

    def start(self, case):
        return Recap()

    async def play(self, state: Recap, dialogue: DialogueSoFar, ask: Ask) -> Move:
        latest = format_dialogue(dialogue.history[-1:] if dialogue.first else dialogue.history[-2:])
        state.text = await ask.text(RECAP, {"recap": state.text, "latest": latest})
        values = {k: v for k, v in dialogue.values().items() if k != "dialogue"}
        values["recap"] = state.text
        return await ask.move(ADVISE if dialogue.must_advise else TURN, values)


STRATEGY = RecapEachTurn()
'''

#: path relative to the project root -> text
FILES: dict[str, str] = {
    "workflow/prompts/expert/recap_each_turn_recap.txt": RECAP_TEMPLATE,
    "workflow/prompts/expert/recap_each_turn.txt": TURN_TEMPLATE,
    "workflow/prompts/expert/recap_each_turn_advise.txt": ADVISE_TEMPLATE,
    f"workflow/lecode/strategies/expert/{NAME}.py": MODULE,
}


def add_to(project: Path) -> list[str]:
    """Write the strategy's files into ``project`` (a copy); returns their relative paths."""
    for rel, text in FILES.items():
        path = project / rel
        if path.exists():
            raise FileExistsError(f"{path} exists: the strategy must be new to the copy")
        path.write_text(text, encoding="utf-8")
    return sorted(FILES)
