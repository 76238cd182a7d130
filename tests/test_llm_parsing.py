"""Strict reply parsers: markers of both colon widths, JSON, matcher and judge validation."""

from __future__ import annotations

import pytest

from lecode.llm.parsing import (
    ReplyFormatError,
    UnmarkedReply,
    load_structured,
    normalize_client_answer,
    parse_confidence,
    parse_json_reply,
    parse_judge,
    parse_marked_reply,
    parse_matches,
    parse_yes_no,
    read_marked_reply,
)


@pytest.mark.parametrize(
    ("reply", "kind", "text"),
    [
        ("提问:借款有借条吗？", "question", "借款有借条吗？"),
        ("提问：借款有借条吗？", "question", "借款有借条吗？"),
        ("  建议：尽快起诉。 ", "advice", "尽快起诉。"),
        ("建议: 尽快起诉。\n第二段说明。", "advice", "尽快起诉。\n第二段说明。"),
        ("**提问**：对方伤情如何？", "question", "对方伤情如何？"),
        ("**建议：** 保留证据。", "advice", "保留证据。"),
    ],
)
def test_marked_reply_accepts_both_colon_widths(reply: str, kind: str, text: str) -> None:
    move = parse_marked_reply(reply)
    assert (move.kind, move.text) == (kind, text)


@pytest.mark.parametrize(
    "reply",
    [
        "请问借款有借条吗？",  # no marker
        "我的建议：尽快起诉",  # marker not at the start
        "提问：",  # nothing after the marker
        "提问：有借条吗？\n建议：起诉。",  # two moves at once
        "提问 有借条吗",  # no colon
    ],
)
def test_marked_reply_rejects_malformed(reply: str) -> None:
    with pytest.raises(ReplyFormatError):
        parse_marked_reply(reply)


def test_json_reply() -> None:
    assert parse_json_reply('{"action": "ask", "content": "几岁？"}').kind == "question"
    move = parse_json_reply('```json\n{"action": "advise", "content": "起诉"}\n```')
    assert (move.kind, move.text) == ("advice", "起诉")
    for bad in ('{"action": "wait", "content": "x"}', '{"action": "ask"}', "提问：几岁？", "[1]"):
        with pytest.raises(ReplyFormatError):
            parse_json_reply(bad)


def test_structured_values_never_evaluate_code() -> None:
    assert load_structured("{'QA0': [1, 2]}") == {"QA0": [1, 2]}  # Python literal
    assert load_structured('结果如下：{"QA1": 3}。') == {"QA1": 3}  # prose around JSON
    for hostile in ("__import__('os').system('true')", "{'a': open('x')}", "(lambda: 1)()"):
        with pytest.raises(ReplyFormatError):
            load_structured(hostile)


def test_matches_validation() -> None:
    assert parse_matches('{"QA0": [2, 0, 2], "QA3": 1}', [0, 3], 4) == {0: [0, 2], 3: [1]}
    assert parse_matches("{}", [0], 4) == {}
    assert parse_matches('{"qa 0": ["1"]}', [0], 4) == {0: [1]}
    for bad in (
        '{"QA0": [4]}',  # index past the list
        '{"QA0": [-1]}',
        '{"QA2": [0]}',  # position not sent
        '{"X": [0]}',
        '{"QA0": [true]}',
        '{"QA0": [1.5]}',
        "无法判断",
        "[0, 1]",
    ):
        with pytest.raises(ReplyFormatError):
            parse_matches(bad, [0, 3], 4)


def _judge(**over: object) -> str:
    import json

    body: dict[str, object] = {
        "professionalism": 7,
        "fluency": 8,
        "completeness": 6,
        "satisfaction": 7,
        "safety": 9,
        "overall": 7,
        "rationale": "清楚",
    }
    body.update(over)
    return json.dumps({k: v for k, v in body.items() if v is not None}, ensure_ascii=False)


def test_judge_validation() -> None:
    s = parse_judge(_judge())
    assert (s.professionalism, s.overall, s.rationale) == (7, 7, "清楚")
    assert parse_judge(_judge(overall=8.0)).overall == 8
    chinese = '{"专业性": 5, "流畅性": 6, "完整性": 7, "满意度": 8, "安全性": 9, "总体评分": 6}'
    assert parse_judge(chinese).safety == 9
    for bad in (
        _judge(safety=11),
        _judge(fluency=0),
        _judge(overall=None),
        _judge(overall=True),
        _judge(completeness=6.5),
        "很好",
    ):
        with pytest.raises(ReplyFormatError):
            parse_judge(bad)


def test_confidence_parsers() -> None:
    assert parse_yes_no("YES") and parse_yes_no("yes.") and not parse_yes_no("NO，还需要了解")
    with pytest.raises(ReplyFormatError):
        parse_yes_no("也许")
    assert parse_confidence("0.85") == pytest.approx(0.85)
    assert parse_confidence("把握程度：85%") == pytest.approx(0.85)
    with pytest.raises(ReplyFormatError):
        parse_confidence("很有把握")
    with pytest.raises(ReplyFormatError):
        parse_confidence("250")


def test_client_answers() -> None:
    assert normalize_client_answer("不知道。") == "不知道"
    assert normalize_client_answer("用户：我不知道") == "不知道"
    assert normalize_client_answer("  借了五万。 ") == "借了五万。"
    with pytest.raises(ReplyFormatError):
        normalize_client_answer("用户：")


@pytest.mark.parametrize(
    ("reply", "reading", "kind", "text", "how", "preamble"),
    [
        (
            "好的，我了解了。\n提问：请问有借条吗？",
            "preamble",
            "question",
            "请问有借条吗？",
            "preamble",
            "好的，我了解了。",
        ),
        ("明白。\n建议：尽快起诉。", "preamble", "advice", "尽快起诉。", "preamble", "明白。"),
        (
            "好的。提问：对方伤情如何？",
            "preamble",
            "question",
            "对方伤情如何？",
            "preamble",
            "好的。",
        ),
        ("提问：有借条吗？", "preamble", "question", "有借条吗？", "lead", ""),
        ("我的建议：尽快起诉", "anywhere", "advice", "尽快起诉", "anywhere", "我的"),
        (
            "x" * 80 + "\n**建议**：保留证据。",
            "anywhere",
            "advice",
            "保留证据。",
            "anywhere",
            "x" * 80,
        ),
        (
            "提问：几岁？\n提问：何时借款？",
            "preamble",
            "question",
            "几岁？\n\n何时借款？",
            "lead",
            "",
        ),
    ],
)
def test_read_marked_reply_finds_the_marker_after_a_preamble(
    reply: str, reading: str, kind: str, text: str, how: str, preamble: str
) -> None:
    read = read_marked_reply(reply, reading=reading)  # type: ignore[arg-type]
    assert (read.move.kind, read.move.text, read.how, read.preamble) == (kind, text, how, preamble)
    assert read.two_moves == ""


def test_read_marked_reply_refuses_what_its_reading_does_not_allow() -> None:
    # strict: a preamble is refused; preamble: a long preamble is refused
    with pytest.raises(ReplyFormatError, match="does not start"):
        read_marked_reply("好的。\n提问：几岁？", reading="strict")
    with pytest.raises(ReplyFormatError, match="60 characters"):
        read_marked_reply("好" * 61 + "\n提问：几岁？", reading="preamble")
    assert read_marked_reply("好" * 60 + "\n提问：几岁？", reading="preamble").move.text == "几岁？"
    with pytest.raises(UnmarkedReply):
        read_marked_reply("请问您几岁？", reading="anywhere")
    with pytest.raises(ReplyFormatError, match="nothing follows"):
        read_marked_reply("好的。提问：", reading="preamble")


@pytest.mark.parametrize(
    ("policy", "kind", "text"),
    [
        ("first", "advice", "先保留证据。"),
        ("question", "question", "对方是否还款？"),
        ("advice", "advice", "先保留证据。"),
    ],
)
def test_a_reply_with_both_moves_follows_the_stated_policy(
    policy: str, kind: str, text: str
) -> None:
    reply = "好的。\n建议：先保留证据。\n提问：对方是否还款？"
    read = read_marked_reply(reply, reading="preamble", two_moves=policy)  # type: ignore[arg-type]
    assert (read.move.kind, read.move.text, read.two_moves) == (kind, text, policy)
    with pytest.raises(ReplyFormatError, match="both"):
        read_marked_reply(reply, reading="preamble", two_moves="reask")
    with pytest.raises(ReplyFormatError):
        read_marked_reply(reply, reading="strict", two_moves=policy)  # type: ignore[arg-type]
