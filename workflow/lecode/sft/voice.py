"""Facts in the lawyer's and in the client's voice, and the offline question rules.

LeCoDe's atomic facts are written about the client in the third person ("用户没有前科").
:func:`client_voice` states a fact as the client would ("我没有前科。"), the answer of a
Key-fact training dialogue; :func:`lawyer_voice` addresses the client ("您没有前科").

:func:`fact_question` is the offline writer's rule set: it turns one fact into a question that
asks for the fact's content without stating it, clause by clause (a fact like
"双方因在工地抢活发生冲突，对方三人，用户一方四人" becomes
"双方因为什么发生冲突，对方几人，您一方几人？"). Rules, first that applies to a clause:

1. amounts of money become 多少钱, counts, ages, durations and dates become 几 + unit
   ("十二万元" -> "多少钱", "三人" -> "几人", "二十三岁" -> "几岁");
2. a cause ("因……发生") becomes 因为什么;
3. a negation becomes 有没有 / 是否 ("没有前科" -> "有没有前科");
4. a copula ("为" / "是") asks for the predicate: 是什么, or 是谁……的 for "是 X 踢的";
5. otherwise subject and first verb ask for the rest ("醉酒男子掀翻……" -> "醉酒男子掀翻了什么").

A clause none of the rules can turn into a question is left out when another clause was
asked; a fact with no askable clause gets a topic question ("被害人腿部具体是什么情况？").
"""

from __future__ import annotations

import re
from functools import lru_cache

import jieba.posseg as pseg

from lecode.text import is_punctuation

CLIENT = "我"
LAWYER = "您"
#: How the annotators name the client inside a fact.
CLIENT_NAMES = ("用户", "当事人", "咨询人", "求助人")
_CLAUSE = re.compile(r"[，,；;。！!？?]+")
_TRAIL = "。；;，,.！!？? \t\n"

_NUM = r"(?:[0-9０-９]+(?:\.[0-9]+)?|[零〇一二两三四五六七八九十百千万亿]+(?:来|多|余)?)"
_MONEY = re.compile(_NUM + r"(?:多|余)?(?:万元|千元|百元|元|块钱|万)(?:多|余)?(?:钱)?")
_YEAR = re.compile(r"(?:19|20)[0-9]{2}年")
_COUNT = re.compile(
    _NUM + r"(?P<unit>周岁|岁|个月|年|月|日|天|小时|人|名|个|次|家|辆|套|张|份|刀|块|部|台|间)"
    r"(?:半|多|余)?"
)
_NEGATION = re.compile(r"(?:根本|从来|并|都|也|还)?(没有|没|未|无|不)(?=[\u4e00-\u9fff])")
_NEG_SKIP = (
    "不要",
    "不得",
    "不能",
    "不再",
    "不知",
    "不是",
    "不同",
    "不断",
    "不久",
    "无法",
    "未成年",
)
_COPULA = re.compile(r"(?<![因认作行成以否不只总还就即])(为|是)(?![否不])")
_CAUSE = re.compile(r"因为?(.+?)(发生|产生|引发|导致|起了?|闹|被|而)")
_KIN: tuple[str, ...] = (
    "儿子",
    "女儿",
    "父亲",
    "母亲",
    "丈夫",
    "妻子",
    "弟弟",
    "哥哥",
    "姐姐",
    "妹妹",
    "表哥",
)
_KIN += ("朋友", "家人", "孩子", "老人")
_PERSON = re.compile(rf"^(您|对方|他|她|他们|对方的)?({'|'.join(_KIN)})?")
_PERSON_WORDS = re.compile(
    "|".join(["您", "他", "她", "人", "老板", "男子", "女子", "骗子", *_KIN])
)


def _swap(text: str, to: str) -> str:
    for name in CLIENT_NAMES:
        text = text.replace(name, to)
    return text


def client_voice(fact: str) -> str:
    """The fact as the client states it: first person, ending with a full stop."""
    text = _swap(fact.strip().rstrip(_TRAIL), CLIENT)
    return f"{text}。" if text else ""


def client_answer(facts: list[str]) -> str:
    """The client's reply that discloses ``facts`` (joined as the offline client joins them)."""
    parts = [client_voice(f).rstrip("。") for f in facts]
    return "；".join(p for p in parts if p) + "。"


def lawyer_voice(fact: str) -> str:
    return _swap(fact.strip().rstrip(_TRAIL), LAWYER)


def clauses(text: str) -> list[str]:
    return [c.strip() for c in _CLAUSE.split(text) if c.strip()]


@lru_cache(maxsize=4096)
def _pos(text: str) -> tuple[tuple[str, str], ...]:
    return tuple((w.word, w.flag) for w in pseg.cut(text))


def subject_of(clause: str) -> str:
    """The words before the clause's first verb (its subject or topic), or ''."""
    out: list[str] = []
    for word, flag in _pos(clause):
        if flag.startswith("v") and out:
            break
        if flag.startswith(("p", "d", "c")) and out:
            break
        out.append(word)
    subject = "".join(out)
    return "" if subject == clause or is_punctuation(subject) else subject


def _mask_numbers(clause: str) -> str:
    out = _YEAR.sub("哪年", clause)
    out = _MONEY.sub("多少钱", out)
    return _COUNT.sub(lambda m: "几" + m.group("unit"), out)


def _negation(clause: str) -> str | None:
    for m in _NEGATION.finditer(clause):
        if m.start() == 0 or clause[m.start(1) :].startswith(_NEG_SKIP):
            continue
        if "的" in clause[m.end() : m.end() + 2]:  # "未关的窗户": an attribute, not the claim
            continue
        word = m.group(1)
        repl = "是否" if word in ("未", "不") else "有没有"
        return clause[: m.start()] + repl + clause[m.end() :]
    return None


def _copula(clause: str) -> str | None:
    m = _COPULA.search(clause)
    if m is None or m.start() == 0 or m.end() >= len(clause):
        return None
    subject, predicate = clause[: m.start()], clause[m.end() :]
    if predicate.endswith("的"):
        words = _pos(predicate)
        for i, (_, flag) in enumerate(words):
            if flag.startswith("v") and i > 0:
                masked = "".join(w for w, _ in words[:i])
                who = "谁" if _PERSON_WORDS.search(masked) else "什么"
                return f"{subject}是{who}{''.join(w for w, _ in words[i:])}"
    return f"{subject}是什么"


def _cause(clause: str) -> str | None:
    m = _CAUSE.search(clause)
    if m is None:
        return None
    return f"{clause[: m.start()]}因为什么{m.group(2)}{clause[m.end() :]}"


def _verb(clause: str) -> str | None:
    words = _pos(clause)
    for i, (word, flag) in enumerate(words):
        if not flag.startswith("v") or i == 0:
            continue
        subject = "".join(w for w, _ in words[:i])
        rest = "".join(w for w, _ in words[i + 1 :]).lstrip("了")
        if not rest:
            return None
        person = _PERSON.match(rest)
        who = person.group(0) if person and person.group(0) else ""
        return f"{subject}{word}{who or '了'}什么"
    return None


def ask_clause(clause: str) -> str | None:
    """The clause as a question (without the question mark), or None."""
    masked = _mask_numbers(clause)
    if masked != clause:
        return _negation(masked) or masked
    for rule in (_cause, _negation, _copula, _verb):
        q = rule(clause)
        if q:
            return q
    return None


def topic_question(fact: str) -> str:
    first = clauses(lawyer_voice(fact))
    subject = subject_of(first[0]) if first else ""
    if subject and subject != LAWYER:
        return f"{subject}具体是什么情况？"
    return "这件事具体是怎么回事？"


def fact_question(fact: str, *, max_clauses: int = 3) -> str:
    """The offline writer's question for one fact (see the module docstring)."""
    parts = [q for c in clauses(lawyer_voice(fact))[:max_clauses] if (q := ask_clause(c))]
    if not parts:
        return topic_question(fact)
    return "，".join(parts) + "？"


def join_questions(questions: list[str]) -> str:
    """One compound question from several (the Key-fact-e offline writer)."""
    parts = [q.strip().rstrip(_TRAIL) for q in questions]
    return "，".join(p for p in parts if p) + "？"
