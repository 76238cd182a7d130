"""Synthetic consultations in the LeCoDe schema for tests and benchmarks.

Written for this project (not taken from the LeCoDe data); ``synthetic_cases(n)`` recombines the
base cases into any number of distinct cases with distinct initial queries.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_BASE: list[dict[str, Any]] = [
    {
        "initial_query": "我借给朋友五万块钱，他一直拖着不还，现在连电话都不接了，我该怎么办？",
        "facts": [
            ("借款金额为五万元，通过银行转账支付", 3),
            ("朋友出具过一张借条，写明一年内归还", 3),
            ("借条上没有约定利息", 2),
            ("约定的还款期限已经过去半年", 2),
            ("当事人多次通过微信催要，对方回复过“再等等”", 2),
            ("对方目前在本市一家公司上班", 1),
        ],
        "suggestion": "保存好借条、转账记录和微信催款记录，先书面催告；对方仍不还款的，"
        "可以向对方住所地法院起诉，主张返还本金和逾期利息，必要时申请财产保全。",
    },
    {
        "initial_query": "我在工地干活时从脚手架上摔下来骨折了，"
        "老板只给了一点医药费就不管了，能要求赔偿吗？",
        "facts": [
            ("当事人在工地从脚手架上摔下导致腿部骨折", 3),
            ("当事人没有和老板签订书面劳动合同", 3),
            ("工资由包工头按月现金发放", 2),
            ("老板支付了三千元医药费后不再负责", 2),
            ("事故发生时有两名工友在场", 2),
            ("当事人目前仍在家休养，无法工作", 1),
            ("工地没有为工人购买工伤保险", 3),
        ],
        "suggestion": "先申请劳动关系确认（工友证言、工资记录可作证据），再在事故发生之日起一年内"
        "申请工伤认定；未缴工伤保险的，由用人单位按工伤保险待遇标准赔偿。",
    },
    {
        "initial_query": "我老公喝醉酒把邻居打伤了，现在被派出所带走了，会不会坐牢？",
        "facts": [
            ("丈夫酒后与邻居因停车问题发生争执", 2),
            ("丈夫用拳头打伤了邻居的面部", 3),
            ("邻居经鉴定为轻伤二级", 3),
            ("丈夫被公安机关刑事拘留", 3),
            ("丈夫此前没有犯罪记录", 2),
            ("家属愿意赔偿邻居的损失", 2),
        ],
        "suggestion": "轻伤二级可能构成故意伤害罪，可处三年以下有期徒刑、拘役或管制；"
        "积极赔偿并取得谅解、认罪认罚，可争取从轻处理甚至不起诉，建议尽快委托律师会见。",
    },
    {
        "initial_query": "我和前夫离婚时孩子判给了他，现在他不让我探望孩子，我能怎么办？",
        "facts": [
            ("双方经法院判决离婚，孩子由前夫抚养", 3),
            ("判决书中写明当事人每月可探望孩子两次", 3),
            ("最近三个月前夫以各种理由拒绝探望", 2),
            ("孩子今年八岁，在前夫所在城市上小学", 1),
            ("当事人每月按时支付抚养费", 2),
        ],
        "suggestion": "探望权受法律保护。可先协商并保留被拒绝的证据；仍被拒绝的，可以依据判决书"
        "向法院申请强制执行探望权，情节严重的法院可对拒不协助的一方采取罚款、拘留等措施。",
    },
]


def synthetic_cases(n: int, *, prefix: str = "syn") -> list[dict[str, Any]]:
    """``n`` cases in the LeCoDe JSONL schema, each with a distinct id and initial query."""
    out = []
    for i in range(n):
        base = _BASE[i % len(_BASE)]
        facts = base["facts"]
        out.append(
            {
                "id": f"{prefix}-{i:05d}",
                "initial_query": f"（编号{i}）{base['initial_query']}",
                "dialogue": [["用户", base["initial_query"]], ["律师", base["suggestion"]]],
                "suggestion": base["suggestion"],
                "key_fact_dict_hard_version": {
                    "原子事实": {str(j): f for j, (f, _) in enumerate(facts)},
                    "重要性分数": {str(j): float(w) for j, (_, w) in enumerate(facts)},
                },
                "case_type": ["民事"],
                "charge_type": [],
            }
        )
    return out


def write_jsonl(path: str | Path, rows: list[dict[str, Any]]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path
