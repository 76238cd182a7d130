"""A strategy that exists only in tests: the files that add the "plan first" expert strategy
(a private planning call before the first question, then zero-shot with the plan in the system
prompt) to a copy of the project. They are exactly what ``docs/extending-strategies.md`` says a
new strategy needs: its template files and one declaration module."""

from __future__ import annotations

from pathlib import Path

NAME = "plan_first"

PLAN_TEMPLATE = """\
[system]
你是一名执业多年的中国律师，即将通过文字为一位当事人提供一对一的法律咨询。正式提问之前，你要先为这次咨询拟一份计划。这份计划只给你自己看，当事人看不到。

[user]
下面是当事人的初始咨询。

【对话记录】
${dialogue}

请列出你打算向当事人了解的关键事实，按对案件定性和处理结果的影响从大到小排列，每条一句。
最多提问 ${max_turns} 次，只写计划，不要写其他内容。
"""

TURN_TEMPLATE = """\
[system]
你是一名执业多年的中国律师，正在通过文字为一位当事人提供一对一的法律咨询。当事人通常不熟悉法律，最初的描述往往比较笼统，也可能遗漏关键细节。你先通过有针对性的追问把与案件有关的事实弄清楚，再给出专业、具体、可操作的法律建议。

咨询开始前你拟定了下面的计划（当事人看不到），提问时参考它，已经弄清楚的事实不要再问：
${plan}

回复规则：
1. 每条回复只做一件事：要么提出一个问题，要么给出最终建议。
2. 需要了解更多事实时，以“提问：”开头，后面只写一个具体的问题。
3. 认为已经掌握足够信息时，以“建议：”开头给出最终法律建议。
4. 整个咨询中最多提问 ${max_turns} 次。

[user]
下面是你和当事人到目前为止的对话，第一句是当事人的初始咨询。

【对话记录】
${dialogue}

你已经提问 ${asked} 次，最多还可以提问 ${remaining} 次。请写出你的下一条回复。
"""

DECLARATION = '''\
"""Plan first: one private planning call before the first question, then zero-shot turns with
the plan in the system prompt."""

from lecode.strategies.calls import Call
from lecode.strategies.declarations import ExpertStrategy

STRATEGY = ExpertStrategy(
    name="plan_first",
    templates={
        "plan": "expert/plan_first_plan",
        "turn": "expert/plan_first",
        "advise": "expert/advise_only",
        "reask": "expert/reask",
    },
    opening=Call("plan", "plan", "text"),
    turn=Call("turn", "turn", "move"),
    forced=Call("advise", "advise", "advice"),
)
'''

#: path relative to the project root -> text
FILES: dict[str, str] = {
    "workflow/prompts/expert/plan_first_plan.txt": PLAN_TEMPLATE,
    "workflow/prompts/expert/plan_first.txt": TURN_TEMPLATE,
    f"workflow/lecode/strategies/expert/{NAME}.py": DECLARATION,
}


def add_to(project: Path) -> list[str]:
    """Write the strategy's files into ``project`` (a copy); returns their relative paths."""
    for rel, text in FILES.items():
        path = project / rel
        if path.exists():
            raise FileExistsError(f"{path} exists: the strategy must be new to the copy")
        path.write_text(text, encoding="utf-8")
    return sorted(FILES)
