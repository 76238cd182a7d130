"""A small, deterministic, made-up result set in the shapes the report takes, for the report's
tests (:func:`write_demo_report` writes it through the tables, figures and HTML steps' library
functions). The consultations are invented for this purpose; they are not LeCoDe data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from lecode.records import (
    Case,
    Judgement,
    JudgeScores,
    Matches,
    RoleUsage,
    Transcript,
    Turn,
    Utterance,
)
from lecode.report.spec import ReportedSystem
from lecode.score_io import scores_frame
from lecode.score_records import DialogueScores

_TEMPLATES: tuple[tuple[str, str, str, tuple[tuple[str, int], ...]], ...] = (
    (
        "刑事",
        "故意伤害",
        "我朋友跟人打架把对方打伤了，现在被派出所带走了，会判刑吗？",
        (
            ("对方经鉴定为轻伤二级", 3),
            ("打架起因是对方先动手推搡", 3),
            ("事发后朋友主动报警并在现场等候", 3),
            ("朋友此前没有任何违法犯罪记录", 2),
            ("双方是同一工地的工友", 1),
            ("对方目前医药费花了约两万元", 2),
        ),
    ),
    (
        "刑事",
        "诈骗",
        "我在网上帮人转账赚佣金，现在警察找我了，我是不是犯罪了？",
        (
            ("一共帮对方转账十二次", 3),
            ("每次获得百分之二的佣金", 2),
            ("转账用的是本人的银行卡", 3),
            ("对方自称是跑分平台的客服", 2),
            ("已经退还了全部佣金", 2),
            ("本人是在校大学生", 1),
            ("警方已经冻结了银行卡", 1),
        ),
    ),
    (
        "民事",
        "婚姻家庭",
        "我想离婚，但是老公不同意，孩子归谁？房子怎么分？",
        (
            ("结婚八年，有一个六岁的女儿", 3),
            ("房子是婚后两人共同出资购买", 3),
            ("丈夫长期酗酒并有家暴行为", 3),
            ("孩子一直由本人照顾", 2),
            ("已经分居一年多", 2),
        ),
    ),
    (
        "民事",
        "合同纠纷",
        "我装修房子付了定金，装修公司一直拖着不开工，能退钱吗？",
        (
            ("签了书面装修合同", 3),
            ("合同约定三月一日开工", 3),
            ("已经支付定金三万元", 3),
            ("多次催告对方均未开工", 2),
            ("装修公司负责人电话已经打不通", 1),
            ("合同里有违约金条款", 2),
        ),
    ),
    (
        "民事",
        "劳动争议",
        "公司突然把我辞退了，也不给补偿，我该怎么办？",
        (
            ("在公司工作了三年", 3),
            ("签订了无固定期限劳动合同", 2),
            ("公司口头通知辞退，没有书面理由", 3),
            ("月工资八千元", 2),
            ("公司没有给缴纳社保", 2),
        ),
    ),
    (
        "行政",
        "行政处罚",
        "我开的小饭店被市场监管局罚款五万，我觉得罚太重了，能不能申诉？",
        (
            ("处罚理由是使用过期食材", 3),
            ("处罚决定书是十天前收到的", 3),
            ("过期食材只有一包调料", 2),
            ("饭店营业执照齐全", 1),
        ),
    ),
)

_QUESTIONS = ("能具体说说{}吗？", "关于{}，还有什么情况？", "请问{}是怎么回事？")
_ADVICE = (
    "根据您描述的情况，建议先收集并保存相关证据，包括书面材料、聊天记录和证人信息；"
    "必要时委托专业律师，依法维护自己的合法权益。"
)


@dataclass(frozen=True)
class Demo:
    """Everything the report takes: cases, systems, scores and the per-dialogue records."""

    train: list[Case]
    test: list[Case]
    systems: list[ReportedSystem]
    scores: pl.DataFrame
    transcripts: list[Transcript]
    matches: list[Matches]
    judgements: list[Judgement]
    n_expected: int


def _case(i: int, split: str) -> Case:
    ctype, charge, query, facts = _TEMPLATES[i % len(_TEMPLATES)]
    dialogue = [Utterance(speaker="client", text=query, intent=1)]
    for k, (fact, _) in enumerate(facts):
        dialogue.append(
            Utterance(speaker="lawyer", text=_QUESTIONS[k % 3].format(fact[:4]), intent=5)
        )
        dialogue.append(Utterance(speaker="client", text=fact + "。", intent=2))
    dialogue.append(Utterance(speaker="lawyer", text=_ADVICE, intent=7))
    return Case(
        id=f"{split}-{i:03d}",
        initial_query=query,
        dialogue=tuple(dialogue),
        facts=tuple(f for f, _ in facts),
        importance=tuple(w for _, w in facts),
        suggestion=_ADVICE,
        case_type=(ctype,),
        charge_type=(charge,),
    )


def _ndcg(gains: list[float], gold: list[int] | None = None) -> float | None:
    dcg = sum(g / math.log2(p + 2) for p, g in enumerate(gains))
    ideal_gains = sorted(gold if gold is not None else [g for g in gains if g > 0], reverse=True)
    idcg = sum(g / math.log2(p + 2) for p, g in enumerate(ideal_gains))
    return dcg / idcg if idcg else None


def _dialogue(
    case: Case, system: ReportedSystem, skill: float, rng: np.random.Generator
) -> tuple[Transcript, Matches, Judgement, DialogueScores]:
    n_q = int(rng.integers(2, 7))
    order = list(rng.permutation(case.n_facts))
    turns = [Turn(speaker="client", kind="query", text=case.initial_query)]
    per_question: list[tuple[int, ...]] = []
    seen: set[int] = set()
    for _ in range(n_q):
        hit = rng.random() < skill and order
        if hit:
            idx = order.pop(0)
            extra = [order.pop(0)] if order and rng.random() < 0.3 else []
            found = (idx, *extra)
            answer = "；".join(case.facts[j] for j in found) + "。"
            question = _QUESTIONS[idx % 3].format(case.facts[idx][:4])
        else:
            found = ()
            answer = "不知道"
            question = "还有其他需要补充的吗？"
        turns.append(Turn(speaker="lawyer", kind="question", text=question))
        turns.append(Turn(speaker="client", kind="answer", text=answer))
        per_question.append(tuple(sorted(found)))
        seen.update(found)
    turns.append(Turn(speaker="lawyer", kind="advice", text=_ADVICE[: 40 + int(40 * skill)]))
    usage = {
        "expert": RoleUsage(calls=n_q + 1, prompt_tokens=300 * (n_q + 1), completion_tokens=60),
        "client": RoleUsage(calls=n_q, prompt_tokens=200 * n_q, completion_tokens=20 * n_q),
    }
    transcript = Transcript(
        case_id=case.id,
        expert=system.expert,
        strategy=system.strategy,
        client="demo",
        turns=tuple(turns),
        stop_reason="advice",
        usage=usage,
    )
    matches = Matches(
        case_id=case.id,
        expert=system.expert,
        strategy=system.strategy,
        matcher="demo",
        n_facts=case.n_facts,
        per_question=tuple(per_question),
        usage={"matcher": RoleUsage(calls=1, prompt_tokens=500, completion_tokens=30)},
    )
    judged = rng.random() > 0.1
    base = 4 + 5 * skill
    marks = [int(np.clip(round(base + rng.normal(0, 1)), 1, 10)) for _ in range(6)]
    judge = (
        JudgeScores(
            professionalism=marks[0],
            fluency=marks[1],
            completeness=marks[2],
            satisfaction=marks[3],
            safety=marks[4],
            overall=marks[5],
            rationale="建议基本准确，但缺少对关键事实的分析。"
            if marks[5] < 7
            else "建议具体可行。",
        )
        if judged
        else None
    )
    judgement = Judgement(
        case_id=case.id,
        expert=system.expert,
        strategy=system.strategy,
        judge="demo",
        scores=judge,
        status="ok" if judged else "error",
        error=None if judged else "judge reply did not parse after re-asking",
        usage={"judge": RoleUsage(calls=1, prompt_tokens=900, completion_tokens=200, cost=0.001)},
    )
    w = case.importance
    first: dict[int, int] = {}
    for p, found in enumerate(per_question):
        for j in found:
            first.setdefault(j, p)
    gains = [0.0] * len(per_question)
    for j, p in first.items():
        gains[p] += w[j]
    scores = DialogueScores(
        case_id=case.id,
        expert=system.expert,
        strategy=system.strategy,
        n_facts=case.n_facts,
        stop_reason="advice",
        turns=n_q,
        recall=len(seen) / case.n_facts,
        weighted_recall=sum(w[j] for j in seen) / sum(w),
        recall_at_5=len({j for p, f in enumerate(per_question[:5]) for j in f}) / case.n_facts,
        ndcg=_ndcg(gains) if seen else 0.0,
        ndcg_gold=_ndcg(gains, list(w)),
        rouge_l=float(np.clip(0.1 + 0.3 * skill + rng.normal(0, 0.05), 0, 1)),
        bertscore_f1=float(np.clip(0.55 + 0.15 * skill + rng.normal(0, 0.03), 0, 1)),
        **(
            {
                "professionalism": float(marks[0]),
                "fluency": float(marks[1]),
                "completeness": float(marks[2]),
                "satisfaction": float(marks[3]),
                "safety": float(marks[4]),
                "overall": float(marks[5]),
            }
            if judged
            else {}
        ),
    )
    return transcript, matches, judgement, scores


def make_demo(n_train: int = 12, n_test: int = 12, seed: int = 0) -> Demo:
    """The demo result set: four systems (two strategies of one model) on ``n_test`` cases."""
    rng = np.random.default_rng(seed)
    train = [_case(i, "train") for i in range(n_train)]
    test = [_case(i, "test") for i in range(n_test)]
    systems = [
        ReportedSystem("gpt-4", "zero_shot", "GPT-4", "Closed-source LLMs"),
        ReportedSystem("gpt-4", "few_shot", "GPT-4 FS", "Closed-source LLMs", paper_label="GPT-4"),
        ReportedSystem("qwen2.5-7b", "zero_shot", "Qwen2.5-7B", "Open-source LLMs"),
        ReportedSystem("retrieval", "baseline", "检索基线", "Baselines (ours)"),
    ]
    skill = {"GPT-4": 0.7, "GPT-4 FS": 0.6, "Qwen2.5-7B": 0.5, "检索基线": 0.35}
    transcripts, matches, judgements, scores = [], [], [], []
    for s in systems:
        for case in test:
            t, m, j, d = _dialogue(case, s, skill[s.label], rng)
            transcripts.append(t)
            matches.append(m)
            judgements.append(j)
            scores.append(d)
    return Demo(
        train=train,
        test=test,
        systems=systems,
        scores=scores_frame(scores),
        transcripts=transcripts,
        matches=matches,
        judgements=judgements,
        n_expected=n_test,
    )


def write_demo_report(
    out_dir: Path,
    demo: Demo,
    *,
    paper_numbers: Path | None = None,
    metadata: dict[str, Any] | None = None,
    max_cases: int | None = None,
) -> Path:
    """The report of ``demo`` under ``out_dir`` as the workflow writes it, one step after the
    other: the tables (``tables/``, with the usage table), the figures (``figures/``, data in
    ``plots/``), then ``index.html`` showing the written tables and figures."""
    from lecode.report.figures import write_figures
    from lecode.report.html import write_html
    from lecode.report.outputs import write_tables
    from lecode.report.usage import usage_frame

    write_tables(
        demo.scores,
        demo.systems,
        demo.n_expected,
        out_dir / "tables",
        train_cases=demo.train,
        test_cases=demo.test,
        paper_numbers=paper_numbers,
        usage=usage_frame(demo.transcripts, demo.matches, demo.judgements),
        metrics_path=out_dir / "metrics.json",
    )
    write_figures(
        out_dir,
        scores=demo.scores,
        systems=demo.systems,
        train_cases=demo.train,
        test_cases=demo.test,
        matches=demo.matches,
    )
    return write_html(
        out_dir / "index.html",
        tables_dir=out_dir / "tables",
        scores=demo.scores,
        systems=demo.systems,
        train_cases=demo.train,
        test_cases=demo.test,
        transcripts=demo.transcripts,
        matches=demo.matches,
        judgements=demo.judgements,
        figures_dir=out_dir / "figures",
        max_cases=max_cases,
        metadata=metadata if metadata is not None else {"run": "demo (made-up data)"},
    )
