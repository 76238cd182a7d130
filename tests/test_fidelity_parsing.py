"""Paper fidelity of the reply parsers and the ledger: judge replies with reasoning, reasoning
models' inline thoughts, replies without a marker, MediQ confidence, reasoning tokens."""

from __future__ import annotations

import json

import pytest

from lecode.llm.ledger import (
    CallRecord,
    UsageLedger,
    estimate_tokens,
    reasoning_tokens,
    reported_reasoning_tokens,
)
from lecode.llm.parsing import (
    ReplyFormatError,
    UnmarkedReply,
    parse_confidence,
    parse_judge,
    parse_marked_reply,
    split_reasoning,
)
from lecode.records import RoleUsage

SCORES = {
    "professionalism": 6,
    "fluency": 8,
    "completeness": 5,
    "satisfaction": 6,
    "safety": 7,
    "overall": 6,
}


def test_judge_reply_with_reasoning_then_scores() -> None:
    reply = json.dumps(
        {
            "analysis": {"comparison": "少了诉讼时效的提醒", "safety": "没有有害内容"},
            "scores": SCORES,
        },
        ensure_ascii=False,
    )
    s = parse_judge(reply, strict=True)
    assert (s.fluency, s.safety, s.overall) == (8, 7, 6)
    assert s.rationale == "与参考建议对照：少了诉讼时效的提醒\n安全性：没有有害内容"
    chinese = json.dumps(
        {
            "分析": "整体可以",
            "评分": {"专业性": 5, "流畅性": 6, "完整性": 7, "满意度": 8, "安全性": 9, "综合分": 7},
        },
        ensure_ascii=False,
    )
    assert parse_judge(chinese, strict=True).overall == 7
    prose = "对照参考建议，缺少证据清单。\n```json\n" + json.dumps(SCORES) + "\n```"
    assert parse_judge(prose, strict=True).rationale == "对照参考建议，缺少证据清单。"


@pytest.mark.parametrize(
    "scores",
    [
        SCORES | {"overall": 9},  # above every dimension: not derived from them
        SCORES | {"overall": 4},
        SCORES | {"safety": 11},
        SCORES | {"fluency": 0},
        SCORES | {"completeness": 6.5},
        {k: v for k, v in SCORES.items() if k != "overall"},
    ],
)
def test_judge_strict_validation(scores: dict[str, object]) -> None:
    with pytest.raises(ReplyFormatError):
        parse_judge(json.dumps({"analysis": {"comparison": "x"}, "scores": scores}), strict=True)


def test_judge_strict_needs_reasoning() -> None:
    assert parse_judge(json.dumps(SCORES)).rationale == ""  # lenient reading of old records
    with pytest.raises(ReplyFormatError):
        parse_judge(json.dumps(SCORES), strict=True)


@pytest.mark.parametrize(
    ("reply", "answer", "reasoning"),
    [
        ("<think>先想想</think>\n提问：有借条吗？", "提问：有借条吗？", "先想想"),
        ("<THINK>\n推理\n</THINK>建议：起诉。", "建议：起诉。", "推理"),
        ("模板打开的推理\n</think>\n\n建议：起诉。", "建议：起诉。", "模板打开的推理"),
        ("<think>被截断的推理，没有结束", "", "被截断的推理，没有结束"),
        ("<thinking>a</thinking>x<think>b</think>y", "xy", "a\nb"),
    ],
)
def test_split_reasoning(reply: str, answer: str, reasoning: str) -> None:
    assert split_reasoning(reply) == (answer, reasoning)


def test_split_reasoning_leaves_plain_replies_byte_for_byte() -> None:
    for reply in ("  提问：有借条吗？ \n", "建议：比较 a<b 的情况", "{}"):
        assert split_reasoning(reply) == (reply, "")


def test_unmarked_reply_is_told_apart_from_other_malformations() -> None:
    with pytest.raises(UnmarkedReply):
        parse_marked_reply("请问您有借条吗？")
    with pytest.raises(UnmarkedReply):
        parse_marked_reply("我的建议：尽快起诉")  # a marker only inside a sentence
    for reply in ("", "   ", "您好！\n建议：起诉", "提问：有借条吗？\n建议：起诉。", "提问："):
        with pytest.raises(ReplyFormatError) as info:
            parse_marked_reply(reply)
        assert not isinstance(info.value, UnmarkedReply)


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("8/10", 0.8),
        ("8 / 10", 0.8),
        ("8 out of 10", 0.8),
        ("80%", 0.8),
        ("８０％", 0.8),
        ("百分之80", 0.8),
        ("0.8", 0.8),
        (".8", 0.8),
        ("1", 1.0),
        ("0", 0.0),
        ("My confidence is 0.9.", 0.9),
        ("**0.75**", 0.75),
        ("0.8（即80%）", 0.8),
        ("8分（满分10分）", 0.8),
        ("按0-10分打分，我给7分", 0.7),
        ("在0到100之间，我的把握是85", 0.85),
        ("十分制：6", 0.6),
        ("1. 关键事实已基本清楚，把握程度：0.9", 0.9),
        ("1. …0.9", 0.9),
        ("1. 金额不清楚\n2. 证据不清楚\n0.3", 0.3),
        ("我问了3个问题，目前把握是0.4", 0.4),
        ("把握：0.7\n还有2个事实不清楚", 0.7),
    ],
)
def test_confidence_values(reply: str, value: float) -> None:
    assert parse_confidence(reply) == pytest.approx(value)


@pytest.mark.parametrize(
    "reply",
    [
        "8",  # 0-10 or 0-100? no scale stated
        "85",
        "250",
        "120%",
        "3/2",
        "大概0.6，也可能0.7",
        "0.6或0.7",
        "很有把握",
    ],
)
def test_confidence_reasks_when_unclear(reply: str) -> None:
    with pytest.raises(ReplyFormatError):
        parse_confidence(reply)


def test_reasoning_tokens_reported_else_estimated() -> None:
    assert estimate_tokens("借款五万") == 4
    assert estimate_tokens("think about it") == 3  # 12 non-space characters / 4
    assert reasoning_tokens("很长的推理", reported=99) == 99
    assert reasoning_tokens("很长的推理") == 5
    assert reasoning_tokens("很长的推理", completion_tokens=3) == 3
    assert reasoning_tokens("  ") == 0
    usage = {"completion_tokens": 50, "completion_tokens_details": {"reasoning_tokens": 40}}
    assert reported_reasoning_tokens(usage) == 40
    assert reported_reasoning_tokens({"completion_tokens": 50}) is None


def test_ledger_counts_reasoning_tokens_separately() -> None:
    ledger = UsageLedger()
    record = CallRecord(
        model="r1",
        role="expert",
        purpose="turn",
        key="k",
        cached=False,
        retries=0,
        prompt_tokens=10,
        completion_tokens=50,
        cost=0.0,
        latency_s=0.1,
        reasoning_tokens=40,
    )
    ledger.record(record)
    ledger.record(record)
    assert ledger.totals()[("expert", "r1")].reasoning_tokens == 80
    assert "reasoning_tokens=80" in ledger.summary_lines()[0]
    total = RoleUsage(reasoning_tokens=1, unmarked_reasks=1) + RoleUsage(
        reasoning_tokens=2, unmarked_advice=1, unmarked_questions=2, confidence_failures=3
    )
    assert (total.reasoning_tokens, total.unmarked_reasks, total.unmarked_advice) == (3, 1, 1)
    assert (total.unmarked_questions, total.confidence_failures) == (2, 3)
