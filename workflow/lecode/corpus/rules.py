"""The offline annotator: deterministic rules for every pre-annotation step.

- Roles (:func:`identify_roles`): each speaker gets a lawyer score from lexical cues (questions
  asked of the other party, advice and legal vocabulary, 您) minus a client score (first-person
  narration, 律师 addressed, a first turn that asks for help); the highest scorer is the lawyer,
  every other speaker a client.
- Stage 1 (:func:`standardise`, :func:`label_intents`): jargon and euphemisms converted by a
  list, greetings and farewells removed, consecutive turns of one speaker merged, the dialogue cut
  to start at the client's first query and end at the lawyer's last advice; intents by cue rules.
- Stage 2 (:func:`extract_stage2`): the first client utterance is the initial query; the
  client's statements are split into clauses, a short answer is joined with the lawyer's
  question it answers, first person becomes 用户, near-duplicates are merged; importance from
  cue words; the advice summary selects the lawyer's advice sentences in order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lecode.agents.lexical_matcher import coverage
from lecode.corpus.annotations import (
    AnnotatedUtterance,
    KeyFact,
    RoleAnnotation,
    Stage1Annotation,
    Stage2Annotation,
)
from lecode.corpus.transcripts import RawTranscript
from lecode.records import Speaker

ANNOTATOR = "rules"

#: Substitute words used to get past platform filters -> standard text (appendix E.1, step 2).
JARGON: dict[str, str] = {
    "帽子叔叔": "警察",
    "蜀黍": "警察",
    "警叔叔": "警察",
    "米": "钱",
    "小黑屋": "看守所",
    "进去了": "被羁押了",
    "V我": "转账给我",
    "薇信": "微信",
    "某音": "抖音",
    "嘎了": "死了",
    "打板子": "判刑",
}
_JARGON_RE = re.compile(
    "|".join(sorted((re.escape(k) for k in JARGON if k != "米"), key=len, reverse=True))
)
_MONEY_MI = re.compile(r"(\d+|[一二三四五六七八九十百千万两]+)\s*(万)?米")
_GREETING = re.compile(
    r"^(?:喂|[\u4e00-\u9fff]?(?:律师|老师|主播|大家)好|(?:律师|老师|主播|大家)?(?:您好|你好|在吗|哈喽|嗨)|谢谢(?:律师|老师|主播|您|你)?|"
    r"感谢(?:律师|老师|主播|您)?|再见|拜拜|不客气|欢迎(?:来到)?直播间|在的|请说|请讲|"
    r"连麦的朋友请讲)[，,。！!～~\s]*"
)
_FAREWELL_TAIL = re.compile(
    r"[，,。\s]*(?:谢谢(?:律师|老师|主播|您|你)?|再见|拜拜|不客气)[。！!～~\s]*$"
)
_SENTENCE = re.compile(r"[^。！？!?；;]+[。！？!?；;]?")

_QUESTION = re.compile(
    r"[？?]|吗$|呢$|多少|(?<!好)几[个次天年月岁]|什么|怎么|哪|有没有|是不是|是否"
)
_ADVICE = (
    "建议",
    "可以",
    "应该",
    "需要",
    "要尽快",
    "一定要",
    "法律规定",
    "根据",
    "构成",
    "涉嫌",
    "起诉",
    "申请",
    "仲裁",
    "取保",
    "赔偿",
    "主张",
    "依法",
    "按照",
    "第",
    "条",
)
_VERIFY = (
    "也就是说",
    "是这样吗",
    "对吗",
    "对吧",
    "是吧",
    "没错吧",
    "我确认一下",
    "您的意思是",
    "你是说",
)
_EMOTION = (
    "别急",
    "别太担心",
    "别太着急",
    "不要着急",
    "别着急",
    "别担心",
    "不用担心",
    "理解您",
    "能理解",
    "放宽心",
    "先冷静",
)
_CLIENT_NEED = (
    "还想问",
    "另外问",
    "那如果",
    "还有一个问题",
    "那我能",
    "那我可以",
    "那我该",
    "能不能",
)
_ADDITION = ("还有", "另外", "对了", "补充", "忘了说", "而且")
_FILLER = re.compile(
    r"^(?:嗯+|哦+|好的?|好吧|明白了?|知道了|是的?|对+|行|收到|OK|ok)[。，！!～~]*$"
)
#: Discourse markers that open a client's addition; not part of the fact.
_DISCOURSE = re.compile(r"^(?:另外|还有|对了|而且|然后|就是说?)[，,]?")
#: Cues of critical facts: classification, liability, amounts, injuries, defences (E.2, 3 points).
_CRITICAL = (
    "鉴定",
    "轻伤",
    "重伤",
    "死亡",
    "致残",
    "万元",
    "元",
    "万",
    "借条",
    "合同",
    "协议",
    "报警",
    "自首",
    "前科",
    "拘留",
    "逮捕",
    "判",
    "先动手",
    "先推",
    "砸",
    "打",
    "欠",
    "辞退",
    "开除",
    "工资",
    "离婚",
    "抚养",
    "房产",
    "转账",
    "证据",
    "录音",
    "签",
    "社保",
)
#: Cues of non-critical facts: opinions, feelings, procedure (E.2, 1 point).
_MINOR = (
    "觉得",
    "感觉",
    "担心",
    "害怕",
    "希望",
    "想",
    "着急",
    "听说",
    "好像",
    "打电话",
    "问了",
    "很难",
    "不知道怎么办",
    "难受",
)
_CASE_TYPES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("刑事", ("抓", "拘留", "逮捕", "判刑", "坐牢", "罪", "看守所", "取保")),
    ("婚姻家庭", ("离婚", "抚养", "彩礼", "婚前", "夫妻", "老公", "老婆", "继承")),
    ("交通事故", ("撞", "交警", "事故认定", "伤残", "保险公司")),
    ("房屋租赁", ("租", "押金", "房东")),
    ("劳动", ("工资", "辞退", "开除", "加班", "社保", "劳动", "工伤", "公司")),
    ("借贷", ("借", "欠", "还钱", "借条", "利息")),
)


def _count(text: str, cues: Sequence[str]) -> int:
    return sum(text.count(c) for c in cues)


def convert_jargon(text: str) -> tuple[str, list[str]]:
    """``text`` with substitute words converted, and the conversions made."""
    edits: list[str] = []

    def one(m: re.Match[str]) -> str:
        edits.append(f"{m.group(0)}→{JARGON[m.group(0)]}")
        return JARGON[m.group(0)]

    out = _JARGON_RE.sub(one, text)

    def money(m: re.Match[str]) -> str:
        edits.append(f"{m.group(0)}→{m.group(1)}{m.group(2) or ''}元")
        return f"{m.group(1)}{m.group(2) or ''}元"

    return _MONEY_MI.sub(money, out), edits


def strip_greetings(text: str) -> str:
    """``text`` without leading greetings and trailing thanks/farewells."""
    prev = None
    original = out = text.strip()
    while prev != out:
        prev = out
        out = _GREETING.sub("", out, count=1).strip()
        out = _FAREWELL_TAIL.sub("", out).strip()
    return "" if out != original and _FILLER.match(out) else out


# -- roles --------------------------------------------------------------------------------------


_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"|「[^」]*」")
#: A host reading a viewer's message or taking a caller (the lawyer opening the consultation).
_HOST = ("网友", "留言", "连麦", "直播间", "请讲", "这位朋友", "粉丝", "私信")
#: Role confidence is margin / (margin + _MARGIN_SCALE): a margin of 1 cue per turn gives 0.5.
_MARGIN_SCALE = 1.0


def lawyer_score(texts: Sequence[str], *, first: bool) -> float:
    """Cues of the lawyer minus cues of the client per turn; quoted text (a viewer's message
    read out) does not count for its reader."""
    texts = [_QUOTED.sub("", t) for t in texts]
    joined = "".join(texts)
    questions = sum(1 for t in texts if _QUESTION.search(t))
    lawyer = (
        questions
        + _count(joined, _ADVICE)
        + joined.count("您")
        + _count(joined, _VERIFY)
        + 2 * _count(joined, _HOST)
    )
    client = _count(
        joined,
        (
            "律师",
            "我老公",
            "我老婆",
            "我家",
            "我妈",
            "我爸",
            "我儿子",
            "我女儿",
            "怎么办",
            "会判",
            "能要回",
            "我",
        ),
    )
    return (lawyer - client) / max(1, len(texts)) - (1.0 if first else 0.0)


def role_confidence(scores: dict[str, float]) -> float:
    """How far the lawyer's score stands above the next speaker's, in 0..1."""
    ranked = sorted(scores.values(), reverse=True)
    margin = ranked[0] - ranked[1] if len(ranked) > 1 else 0.0
    return round(margin / (margin + _MARGIN_SCALE), 3)


def role_flags(
    transcript: RawTranscript, roles: dict[str, Speaker], confidence: float, threshold: float
) -> tuple[str, ...]:
    flags = []
    if confidence < threshold:
        flags.append(f"role confidence {confidence:.2f} below {threshold:.2f}")
    if roles[transcript.turns[0].speaker] == "lawyer":
        flags.append("the lawyer opens the consultation (a host reading a message?)")
    if sum(1 for r in roles.values() if r == "client") > 1:
        flags.append("more than one client speaker")
    return tuple(flags)


def identify_roles(transcript: RawTranscript, *, threshold: float = 0.5) -> RoleAnnotation:
    """Roles by lexical cues (module docstring), with a confidence and the reasons to check
    them; a single-speaker transcript is an error."""
    speakers = transcript.speakers
    if len(speakers) < 2:
        raise ValueError(
            f"{transcript.source}: transcript {transcript.id!r}: field 'speaker': one speaker "
            f"only ({speakers}); a consultation needs a client and a lawyer"
        )
    first = transcript.turns[0].speaker
    scores = {
        s: lawyer_score([t.text for t in transcript.turns if t.speaker == s], first=s == first)
        for s in speakers
    }
    lawyer = max(speakers, key=lambda s: (scores[s], -speakers.index(s)))
    roles: dict[str, Speaker] = {s: ("lawyer" if s == lawyer else "client") for s in speakers}
    confidence = role_confidence(scores)
    return RoleAnnotation(
        id=transcript.id,
        annotator=ANNOTATOR,
        roles=roles,
        turns=tuple((t.speaker, roles[t.speaker], t.text) for t in transcript.turns),
        confidence=confidence,
        flags=role_flags(transcript, roles, confidence, threshold),
        source=transcript.source,
    )


def confirm_roles(record: RoleAnnotation, roles: dict[str, Speaker], who: str) -> RoleAnnotation:
    """``record`` with the roles a person gave (``<review_dir>/roles.csv``): flags cleared."""
    unknown = sorted(set(roles) - set(record.roles))
    missing = sorted(set(record.roles) - set(roles))
    if unknown or missing:
        raise ValueError(
            f"{who}: dialogue {record.id!r}: field 'speaker': "
            + (f"{unknown} are not speakers of the transcript " if unknown else "")
            + (f"no role for {missing}" if missing else "")
        )
    if "lawyer" not in roles.values() or "client" not in roles.values():
        raise ValueError(f"{who}: dialogue {record.id!r}: field 'role': need a 律师 and a 用户")
    return record.model_copy(
        update={
            "roles": roles,
            "turns": tuple((label, roles[label], text) for label, _, text in record.turns),
            "confidence": 1.0,
            "flags": (),
            "confirmed_by": who,
        }
    )


# -- stage 1 ------------------------------------------------------------------------------------


def standardise(roles: RoleAnnotation) -> tuple[list[tuple[Speaker, str]], list[str]]:
    """The stage-1 turns (speaker, text), not yet merged, and the edits made (appendix E.1,
    step 1)."""
    edits: list[str] = []
    turns: list[tuple[Speaker, str]] = []
    for label, role, raw in roles.turns:
        text, conv = convert_jargon(raw)
        edits.extend(conv)
        cleaned = strip_greetings(text)
        if not cleaned:
            edits.append(f"dropped greeting ({label}): {raw}")
            continue
        if cleaned != text:
            edits.append(f"removed greeting ({label}): {raw}")
        turns.append((role, cleaned))  # consecutive turns merge after labelling
    while turns and turns[0][0] != "client":
        edits.append(f"dropped lawyer turn before the client's query: {turns[0][1]}")
        turns.pop(0)
    while turns and turns[-1][0] != "lawyer":
        if _count(turns[-1][1], _ADVICE) >= 2 and not _FILLER.match(turns[-1][1]):
            break  # advice in a client turn: the roles may be swapped; kept and flagged
        edits.append(f"dropped client turn after the lawyer's last advice: {turns[-1][1]}")
        turns.pop()
    return turns, edits


def advice_flags(turns: Sequence[tuple[Speaker, str]]) -> tuple[str, ...]:
    """A dialogue ending with a client turn that reads like advice: kept, not rewritten."""
    if turns and turns[-1][0] == "client":
        return (
            "the last turn is a client's and reads like advice (kept; check the roles): "
            + turns[-1][1][:40],
        )
    return ()


def _join(a: str, b: str) -> str:
    return a + ("" if a.endswith(("。", "！", "？", "!", "?", "；", "，")) else "，") + b


def is_question(text: str) -> bool:
    last = [s for s in _SENTENCE.findall(text) if s.strip()]
    return bool(last) and bool(_QUESTION.search(last[-1]))


def label_intents(turns: Sequence[tuple[Speaker, str]]) -> list[int]:
    """One intent number per utterance (appendix E.1, step 2), by cue rules."""
    out: list[int] = []
    for i, (speaker, text) in enumerate(turns):
        prev = out[-1] if out else None
        if speaker == "client":
            if i == 0:
                out.append(1)
            elif _FILLER.match(text) and prev not in (5, 6):
                out.append(9)
            elif any(c in text for c in _CLIENT_NEED) or (is_question(text) and prev not in (5, 6)):
                out.append(4)
            elif prev in (5, 6) and not any(text.startswith(c) for c in _ADDITION):
                out.append(2)
            else:
                out.append(3)
        else:
            last_lawyer = all(s != "lawyer" for s, _ in turns[i + 1 :])
            if _FILLER.match(text):
                out.append(9)
            elif is_question(text) and not last_lawyer:
                out.append(6 if any(c in text for c in _VERIFY) else 5)
            elif any(c in text for c in _EMOTION) and _count(text, _ADVICE) == 0:
                out.append(8)
            elif _count(text, _ADVICE) > 0 or last_lawyer:
                out.append(7)
            else:
                out.append(10)
    return out


#: Intents whose consecutive turns of one speaker merge into one utterance (labelled as the
#: first of the group, advice over comfort); 4 (a new need) and 9 (an empty exchange) stay
#: utterances of their own.
_MERGE_GROUPS = ({1, 2, 3}, {5, 6}, {7, 8, 10})


def merge_labelled(
    turns: Sequence[tuple[Speaker, str]], intents: Sequence[int], edits: list[str]
) -> tuple[list[tuple[Speaker, str]], list[int]]:
    """Consecutive turns of one speaker merged where their intents belong together
    (appendix E.1: one utterance per turn), each labelled before merging."""
    out: list[tuple[Speaker, str]] = []
    labels: list[int] = []
    for (speaker, text), k in zip(turns, intents, strict=True):
        if out and out[-1][0] == speaker:
            prev = labels[-1]
            group = next((g for g in _MERGE_GROUPS if prev in g and k in g), None)
            if group is not None:
                out[-1] = (speaker, _join(out[-1][1], text))
                labels[-1] = 7 if 7 in (prev, k) else (prev if prev != 10 else k)
                edits.append(f"merged consecutive {speaker} turns")
                continue
        out.append((speaker, text))
        labels.append(k)
    return out, labels


def stage1(roles: RoleAnnotation) -> Stage1Annotation:
    turns, edits = standardise(roles)
    if not turns:
        raise ValueError(
            f"transcript {roles.id!r}: field 'turns': nothing is left after standardisation "
            "(no client query followed by lawyer speech)"
        )
    turns, intents = merge_labelled(turns, label_intents(turns), edits)
    dialogue = tuple(
        AnnotatedUtterance(speaker=s, text=t, intent=k)
        for (s, t), k in zip(turns, intents, strict=True)
    )
    return Stage1Annotation(
        id=roles.id,
        annotator=ANNOTATOR,
        dialogue=dialogue,
        edits=tuple(edits),
        flags=(*roles.flags, *advice_flags(turns)),
    )


# -- stage 2 ------------------------------------------------------------------------------------

_Q_TAIL = re.compile(r"(吗|呢|吧|没有|了没|没)?[？?。]*$")
_AFFIRM = re.compile(r"^(?:是的?|对+|有+|嗯+|没错|[\u4e00-\u9fff]{1,2}[了过])[，。！!的啊呀]*$")
_NEGATE = re.compile(r"^(?:还?没有?|不是|没[\u4e00-\u9fff]|不知道|不清楚)[，。！!的啊呀]*$")


def importance(fact: str) -> int:
    """3 for facts with classification/liability/amount cues, 1 for opinions and procedure,
    else 2 (appendix E.2, step 7)."""
    if any(c in fact for c in _MINOR) and not any(c in fact for c in ("鉴定", "万", "元", "伤")):
        return 1
    if any(c in fact for c in _CRITICAL):
        return 3
    return 2


#: First person with a kin term -> the client's relative (entity completion, E.2 step 4).
_KIN = {
    "老公": "丈夫",
    "丈夫": "丈夫",
    "老婆": "妻子",
    "妻子": "妻子",
    "儿子": "儿子",
    "女儿": "女儿",
    "哥": "哥哥",
    "姐": "姐姐",
    "弟": "弟弟",
    "妹": "妹妹",
    "妈": "母亲",
    "爸": "父亲",
}
_MY_KIN = re.compile(
    "我(?:的)?(" + "|".join(sorted(_KIN, key=len, reverse=True)) + ")(?:哥|姐|弟|妹|妈|爸)?"
)
#: 我们 before a place or organisation is the client's; else the client's side (several people)
_WE_OF = re.compile(r"我们(?=公司|单位|家|村|小区|厂|学校)")


def third_person(text: str) -> str:
    """First person -> 用户 (entity completion, appendix E.2 step 4): 我哥 -> 用户哥哥, 我们公司
    -> 用户公司, 我们 (a group) -> 用户一方, other 我 -> 用户."""
    text = _MY_KIN.sub(lambda m: "用户" + _KIN[m.group(1)], text)
    text = _WE_OF.sub("用户", text)
    text = text.replace("我们", "用户一方")
    return text.replace("我", "用户")


def _clauses(text: str) -> list[str]:
    return [s.strip().rstrip("。！!；;，,") for s in _SENTENCE.findall(text) if s.strip()]


def _question_core(question: str) -> str:
    sentences = [s for s in _SENTENCE.findall(question) if _QUESTION.search(s)]
    core = (sentences[0] if sentences else question).strip()
    core = re.sub(r"^(?:那|那么|请问)+", "", core)
    core = re.sub(r"^(?:你们|您们)", "双方", core)
    core = re.sub(r"[你您]", "用户", core)
    return _Q_TAIL.sub("", core).strip("，,")


_COVERB = re.compile(r"^(.{1,5}?)(给|跟|和|向|为|把|在|对|被)")


def answered(question: str, head: str) -> str:
    """A lawyer's question and the client's short answer as one statement (appendix E.2,
    step 6): 有没有/是不是 resolved by the answer; a question ending in 了 (done?) affirmed is
    its statement, denied gets 没有 before its verb phrase (公司给用户交社保了 + 没有 -> 公司没
    有给用户交社保); else ``question：answer``."""
    core = _question_core(question)
    negative = bool(_NEGATE.match(head))
    for pair, (yes, no) in (("有没有", ("有", "没有")), ("是不是", ("是", "不是"))):
        if pair in core:
            return core.replace(pair, no if negative else yes, 1)
    if core.endswith("了") and len(core) > 3:
        if not negative:
            return core
        m = _COVERB.match(core)
        if m is not None:
            return f"{m.group(1)}没有{core[m.end(1) :].removesuffix('了')}"
    return f"{core}：{head.rstrip('，。！!的啊呀')}" if core else head


def _statement_part(sentence: str) -> str:
    """The comma segments of a question sentence before its first questioning segment."""
    kept: list[str] = []
    for seg in sentence.rstrip("？?").split("，"):
        if _QUESTION.search(seg) or any(c in seg for c in ("怎么办", "能不能", "会不会", "够吗")):
            break
        kept.append(seg)
    return "，".join(kept)


def candidate_facts(dialogue: Sequence[AnnotatedUtterance]) -> list[str]:
    """The client's statements as clauses, in dialogue order (appendix E.2, steps 1, 5, 6)."""
    facts: list[str] = []
    for i, u in enumerate(dialogue):
        if u.speaker != "client" or u.intent not in (1, 2, 3, 4):
            continue
        prev = dialogue[i - 1] if i > 0 and dialogue[i - 1].speaker == "lawyer" else None
        for k, clause in enumerate(_clauses(u.text)):
            head, _, rest = clause.partition("，")
            short_head = bool(_AFFIRM.match(head) or _NEGATE.match(head))
            if k == 0 and short_head and prev is not None:
                if prev.intent == 6 and not rest:
                    continue  # a confirmed verification restates facts already taken
                if prev.intent == 5:
                    facts.append(answered(prev.text, head) + ("，" + rest if rest else ""))
                    continue
            if short_head and not rest:
                continue
            if short_head:
                clause = rest
            if is_question(clause):
                clause = _statement_part(clause)
            clause = _DISCOURSE.sub("", clause)
            if _FILLER.match(clause) or len(clause) < 4 or not strip_greetings(clause):
                continue
            facts.append(clause)
    return facts


def merge_similar(facts: Sequence[str], threshold: float = 0.8) -> list[str]:
    """Facts without those mostly contained in an earlier one (appendix E.2, step 3)."""
    out: list[str] = []
    for f in facts:
        if not any(coverage(f, g) >= threshold for g in out):
            out.append(f)
    return out


def advice_summary(dialogue: Sequence[AnnotatedUtterance], max_chars: int = 400) -> str:
    """The lawyer's advice sentences in order, without filler (appendix E.2, part 2)."""
    picked: list[str] = []
    for u in dialogue:
        if u.speaker != "lawyer" or u.intent != 7:
            continue
        for s in _SENTENCE.findall(u.text):
            s = s.strip()
            if (
                s
                and not _FILLER.match(s)
                and not is_question(s)
                and not (any(e in s for e in _EMOTION) and _count(s, _ADVICE) == 0)
            ):
                picked.append(s if s.endswith(("。", "！", "；")) else s.rstrip("，,") + "。")
    text = ""
    for sentence in picked:
        if text and len(text) + len(sentence) > max_chars:
            break
        text += sentence
    if not text:
        lawyer = [u.text for u in dialogue if u.speaker == "lawyer"]
        text = lawyer[-1] if lawyer else ""
    return text


def case_type(text: str) -> tuple[str, ...]:
    best = max(_CASE_TYPES, key=lambda kv: _count(text, kv[1]))
    return (best[0],) if _count(text, best[1]) > 0 else ("民事",)


def stage2(s1: Stage1Annotation) -> Stage2Annotation:
    dialogue = s1.dialogue
    query = next((u.text for u in dialogue if u.intent == 1), dialogue[0].text)
    facts = merge_similar([third_person(f) for f in candidate_facts(dialogue)])
    if not facts:
        facts = [third_person(query)]
    client_text = "".join(u.text for u in dialogue if u.speaker == "client")
    return Stage2Annotation(
        id=s1.id,
        annotator=ANNOTATOR,
        initial_query=query,
        facts=tuple(KeyFact(text=f, importance=importance(f)) for f in facts),
        suggestion=advice_summary(dialogue),
        case_type=case_type(client_text),
    )
