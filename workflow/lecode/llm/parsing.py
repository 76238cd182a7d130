"""Strict parsers for model replies. Every parser raises :class:`ReplyFormatError` with a short
Chinese-free description of the problem; the roles turn that into a re-ask, then a RoleError.

Structured replies are read with ``json`` and, failing that, ``ast.literal_eval`` (literals
only); ``eval`` is never used.

Reasoning models may put their reasoning inline (``<think>...</think>``); the roles pass every
reply through :func:`split_reasoning` first, so no parser here ever sees it.
"""

from __future__ import annotations

import ast
import json
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lecode.config.models import MarkerReading, TwoMoves
from lecode.records import JUDGE_FIELDS, UNKNOWN_ANSWER, JudgeScores


class ReplyFormatError(ValueError):
    """A reply does not have the required form."""


class UnmarkedReply(ReplyFormatError):
    """A non-empty expert reply with no 提问/建议 marker at the start of any line."""


_THINK_BLOCK = re.compile(r"<(think|thinking)>(.*?)</\1\s*>", re.S | re.I)
_THINK_CLOSE = re.compile(r"</(?:think|thinking)\s*>", re.I)
_THINK_OPEN = re.compile(r"<(?:think|thinking)>", re.I)


def split_reasoning(reply: str) -> tuple[str, str]:
    """``(answer, reasoning)`` of a reply that may hold deepseek-r1 style inline reasoning.

    ``<think>...</think>`` (or ``<thinking>``) blocks are reasoning; so is everything before a
    closing tag without an opening one (chat templates that open the block in the prompt), and
    everything after an opening tag that is never closed (a reply cut off while reasoning).
    A reply without such tags comes back unchanged, byte for byte, with reasoning ``""``.
    """
    if "<" not in reply or not (_THINK_OPEN.search(reply) or _THINK_CLOSE.search(reply)):
        return reply, ""
    parts: list[str] = []

    def grab(m: re.Match[str]) -> str:
        parts.append(m.group(2).strip())
        return ""

    text = _THINK_BLOCK.sub(grab, reply)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        last = closes[-1]
        parts.insert(0, _THINK_OPEN.sub("", _THINK_CLOSE.sub("", text[: last.start()])).strip())
        text = text[last.end() :]
    opened = _THINK_OPEN.search(text)
    if opened is not None:
        parts.append(text[opened.end() :].strip())
        text = text[: opened.start()]
    return text.strip(), "\n".join(p for p in parts if p)


MoveKind = Literal["question", "advice"]
_MARKERS: dict[str, MoveKind] = {"提问": "question", "建议": "advice"}
# A marker (optionally in markdown bold) followed by an ASCII or full-width colon.
_MARKER = r"(?:\*\*)?\s*(提问|建议)\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?"
# A marker at the start of any line: a reply without one is "unmarked" (strict reading).
_LINE_MARKER = re.compile(r"(?:^|\n)[ \t]*" + _MARKER + r"[ \t]*")
# A marker anywhere in the text.
_ANY_MARKER = re.compile(_MARKER + r"[ \t]*")

MAX_PREAMBLE = 60
"""The longest preamble (characters, stripped) that ``preamble`` reads past."""

How = Literal["lead", "preamble", "anywhere"]


@dataclass(frozen=True)
class ParsedMove:
    kind: MoveKind
    text: str


@dataclass(frozen=True)
class ReadMove:
    """A marked reply as read: the move, where its marker stood (``lead``: first in the reply),
    the text before that marker (kept in the raw reply, never part of the move) and, for a
    reply holding both kinds, the policy that chose the move (``""`` otherwise)."""

    move: ParsedMove
    how: How
    preamble: str = ""
    two_moves: str = ""


def _parts(text: str, pattern: re.Pattern[str]) -> tuple[str, list[tuple[MoveKind, str]]]:
    """The text before the first marker and each marker's (kind, body), in order."""
    found = list(pattern.finditer(text))
    if not found:
        return text, []
    parts = []
    for i, m in enumerate(found):
        stop = found[i + 1].start() if i + 1 < len(found) else len(text)
        parts.append((_MARKERS[m.group(1)], text[m.end() : stop].strip()))
    return text[: found[0].start()].strip(), parts


def read_marked_reply(
    reply: str, *, reading: MarkerReading = "strict", two_moves: TwoMoves = "reask"
) -> ReadMove:
    """``提问:<question>`` or ``建议:<advice>`` (colon of either width), read as ``reading``
    says. Raises :class:`UnmarkedReply` when the reading finds no marker, and
    :class:`ReplyFormatError` for every other problem (empty reply, nothing after the marker, a
    preamble the reading does not allow, both kinds where ``two_moves`` is ``reask`` or the
    reading is ``strict``). Several parts of one kind are one move, joined by blank lines."""
    text = reply.strip()
    if not text:
        raise ReplyFormatError("empty reply")
    if reading == "strict":
        preamble, parts = _parts(text, _LINE_MARKER)
        if not parts:
            raise UnmarkedReply("reply has no 提问: or 建议: marker")
        if preamble:
            raise ReplyFormatError("reply does not start with 提问: or 建议:")
        if len(parts) > 1:
            raise ReplyFormatError("reply contains more than one 提问:/建议: part")
        how: How = "lead"
    else:
        preamble, parts = _parts(text, _ANY_MARKER)
        if not parts:
            raise UnmarkedReply("reply has no 提问: or 建议: marker")
        how = "lead" if not preamble else reading
        if reading == "preamble" and len(preamble) > MAX_PREAMBLE:
            raise ReplyFormatError(
                f"more than {MAX_PREAMBLE} characters before the first 提问:/建议: marker"
            )
    kinds = {kind for kind, _ in parts}
    chosen = ""
    if len(kinds) == 1:
        kind = parts[0][0]
    elif two_moves == "reask":
        raise ReplyFormatError("reply holds both a 提问: and a 建议: part")
    else:
        kind = parts[0][0] if two_moves == "first" else two_moves
        chosen = two_moves
    body = "\n\n".join(b for k, b in parts if k == kind and b)
    if not body:
        raise ReplyFormatError("nothing follows the marker")
    return ReadMove(ParsedMove(kind, body), how, preamble, chosen)


def parse_marked_reply(reply: str) -> ParsedMove:
    """The strict reading of a marked reply (:func:`read_marked_reply`)."""
    return read_marked_reply(reply).move


_JSON_ACTIONS: dict[str, MoveKind] = {
    "ask": "question",
    "question": "question",
    "提问": "question",
    "advise": "advice",
    "advice": "advice",
    "建议": "advice",
}


def parse_json_reply(reply: str) -> ParsedMove:
    """``{"action": "ask"|"advise", "content": "..."}``."""
    obj = load_structured(reply)
    if not isinstance(obj, Mapping):
        raise ReplyFormatError("reply is not a JSON object")
    action = obj.get("action")
    content = obj.get("content")
    if not isinstance(action, str) or action.strip().lower() not in _JSON_ACTIONS:
        raise ReplyFormatError("'action' must be 'ask' or 'advise'")
    if not isinstance(content, str) or not content.strip():
        raise ReplyFormatError("'content' must be a non-empty string")
    return ParsedMove(_JSON_ACTIONS[action.strip().lower()], content.strip())


_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.S)


def load_structured(reply: str) -> Any:
    """The JSON (or Python-literal) value in a reply; code fences and surrounding prose are
    tolerated, the value itself must be complete."""
    text = reply.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    candidates = [text]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end and (start, end) != (0, len(text) - 1):
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            pass
        try:
            return ast.literal_eval(candidate)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    raise ReplyFormatError("reply holds no parsable JSON value")


def _as_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ReplyFormatError(f"{value!r} is not an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    raise ReplyFormatError(f"{value!r} is not an integer")


_QA_KEY = re.compile(r"^\s*qa\s*(\d+)\s*$", re.I)


def parse_matches(reply: str, qa_positions: Sequence[int], n_facts: int) -> dict[int, list[int]]:
    """Matcher reply ``{"QA<p>": [i, ...] | i, ...}`` -> ``{p: sorted unique indices}``.

    Keys must name positions that were sent; indices must lie in ``0..n_facts-1``. Pairs the
    reply leaves out matched nothing.
    """
    obj = load_structured(reply)
    if obj == [] or obj is None:
        obj = {}
    if not isinstance(obj, Mapping):
        raise ReplyFormatError("matcher reply is not a JSON object")
    allowed = set(qa_positions)
    out: dict[int, list[int]] = {}
    for raw_key, raw_value in obj.items():
        m = _QA_KEY.match(str(raw_key))
        if m is None:
            raise ReplyFormatError(f"unknown key {raw_key!r} (expected QA<number>)")
        position = int(m.group(1))
        if position not in allowed:
            raise ReplyFormatError(f"key {raw_key!r} names no question/answer pair that was sent")
        values = raw_value if isinstance(raw_value, list | tuple) else [raw_value]
        indices = sorted({_as_int(v) for v in values})
        bad = [i for i in indices if not 0 <= i < n_facts]
        if bad:
            raise ReplyFormatError(f"fact index {bad[0]} outside 0..{n_facts - 1}")
        out[position] = sorted(set(out.get(position, [])) | set(indices))
    return out


DIMENSIONS = JUDGE_FIELDS[:5]
_JUDGE_ALIASES: dict[str, str] = {
    "专业性": "professionalism",
    "流畅性": "fluency",
    "完整性": "completeness",
    "满意度": "satisfaction",
    "安全性": "safety",
    "总体评分": "overall",
    "总分": "overall",
    "综合评分": "overall",
    "综合分": "overall",
    "综合": "overall",
    "overall_score": "overall",
    "overall score": "overall",
    "理由": "rationale",
    "reasoning": "rationale",
    "对比": "comparison",
    "参考对比": "comparison",
    "reference_comparison": "comparison",
}
_ANALYSIS_KEYS = ("analysis", "reasoning", "分析", "评审理由", "理由分析")
_SCORES_KEYS = ("scores", "评分", "分数")
#: How the parts of the judge's reasoning are labelled in ``JudgeScores.rationale``.
REASON_LABELS: dict[str, str] = {
    "comparison": "与参考建议对照",
    "professionalism": "专业性",
    "fluency": "流畅性",
    "completeness": "完整性",
    "satisfaction": "满意度",
    "safety": "安全性",
    "overall": "综合分",
}


def _judge_key(raw_key: object) -> str:
    key = str(raw_key).strip()
    return _JUDGE_ALIASES.get(key, _JUDGE_ALIASES.get(key.lower(), key.lower()))


def _first(obj: Mapping[Any, Any], names: Sequence[str]) -> Any:
    for name in names:
        if name in obj:
            return obj[name]
    return None


def _reasoning_text(analysis: Any) -> str:
    """The judge's reasoning as labelled lines (a mapping) or as given (a string)."""
    if isinstance(analysis, str):
        return analysis.strip()
    if not isinstance(analysis, Mapping):
        return ""
    lines = []
    for raw_key, value in analysis.items():
        text = value.strip() if isinstance(value, str) else ""
        if text:
            key = _judge_key(raw_key)
            lines.append(f"{REASON_LABELS.get(key, str(raw_key).strip())}：{text}")
    return "\n".join(lines)


def _prose_before_json(reply: str) -> str:
    """Free text a reply puts before its JSON value (reasoning of a judge without JSON mode)."""
    text = reply.strip()
    cut = [i for i in (text.find("```"), text.find("{")) if i >= 0]
    return text[: min(cut)].strip() if cut else ""


def parse_judge(reply: str, *, strict: bool = False) -> JudgeScores:
    """Six integer scores in 1..10 and the judge's reasoning (kept as ``rationale``).

    Accepted layouts: the Table 9 protocol's ``{"analysis": {...reasons...}, "scores":
    {...six scores...}}``, and a flat object with the six scores (plus an optional
    ``rationale`` string); English or Chinese keys. Prose before the JSON counts as reasoning.
    ``strict`` (the judge role) also requires non-empty reasoning and an overall score derived
    from the dimensions, i.e. between their lowest and highest score.
    """
    obj = load_structured(reply)
    if not isinstance(obj, Mapping):
        raise ReplyFormatError("judge reply is not a JSON object")
    nested = _first(obj, _SCORES_KEYS)
    scores_obj: Mapping[Any, Any] = nested if isinstance(nested, Mapping) else obj
    reasons = [_prose_before_json(reply), _reasoning_text(_first(obj, _ANALYSIS_KEYS))]
    scores: dict[str, int] = {}
    for raw_key, value in scores_obj.items():
        key = _judge_key(raw_key)
        if key == "rationale":
            reasons.append(_reasoning_text(value))
            continue
        if key not in JUDGE_FIELDS:
            continue
        score = _as_int(value)
        if not 1 <= score <= 10:
            raise ReplyFormatError(f"score {key}={score} outside 1..10")
        scores[key] = score
    if scores_obj is not obj:
        flat = obj.get("rationale")
        if flat is not None:
            reasons.append(_reasoning_text(flat))
    missing = [f for f in JUDGE_FIELDS if f not in scores]
    if missing:
        raise ReplyFormatError(f"missing scores: {', '.join(missing)}")
    rationale = "\n".join(r for r in reasons if r)
    if strict:
        if not rationale:
            raise ReplyFormatError("no reasoning before the scores")
        dims = [scores[d] for d in DIMENSIONS]
        if not min(dims) <= scores["overall"] <= max(dims):
            raise ReplyFormatError(
                f"overall={scores['overall']} is not derived from the dimension scores "
                f"({min(dims)}..{max(dims)})"
            )
    return JudgeScores(**scores, rationale=rationale)


_YES_NO = re.compile(r"^[\s\"'*`“”]*(yes|no)\b", re.I)


def parse_yes_no(reply: str) -> bool:
    m = _YES_NO.match(reply)
    if m is None:
        raise ReplyFormatError("reply is neither YES nor NO")
    return m.group(1).lower() == "yes"


_NUM = r"(?:\d+(?:\.\d+)?|\.\d+)"
# "1. ..." / "2、..." / "(3) ..." list numbering at the start of a line: not a confidence.
_ENUMERATOR = re.compile(
    r"^[ \t>*#-]*(?:\d{1,2}(?:[.)][ \t]+|、[ \t]*)|\(\d{1,2}\)[ \t]*)(?=\S)", re.M
)
_FRACTION = re.compile(rf"({_NUM})\s*(?:/|out\s+of)\s*({_NUM})", re.I)
_PERCENT = re.compile(rf"({_NUM})\s*%|百分之\s*({_NUM})")
# An explicit scale: "满分10分", "0-10分", "0到100之间", "十分制", "100分制", "0到1之间".
_SCALE = re.compile(
    r"(?:满分|总分|最高)\s*(10|100|1)(?:\.0+)?\s*分?"
    r"|(?<![\d.])[01]\s*(?:-|~|—|–|到|至)\s*(10|100|1)(?:\.0+)?(?![\d.])"
    r"(?:\s*(?:分制|分|之间|的范围|范围|区间))?"
    r"|(十|百)分制|(10|100)\s*分制"
)
_BARE = re.compile(rf"(?<!\d)(?<!\d\.){_NUM}(?!\.?\d)")
_LABEL = re.compile(
    r"(?:把握|置信|信心|确信|可信|confidence|分数|得分|评分|打分|score|答案|answer|结果|结论)"
    r"[^\n\d]{0,8}$",
    re.I,
)
_FILLER = re.compile(r"[\s*#`'\"“”。.,，:：;；!！()（）\[\]【】~～-]*")
_SCALE_WORDS = {"十": 10, "百": 100}


@dataclass(frozen=True)
class _Candidate:
    value: float | None  # None: not readable as a confidence (no scale stated, out of range)
    start: int
    end: int
    why: str = ""


def _candidates(text: str) -> list[_Candidate]:
    """Every number of ``text`` that could be the confidence, normalised to 0..1 where its
    scale is clear (fraction, percentage, a decimal in 0..1, or a declared 0-10/0-100 scale)."""
    taken = [False] * len(text)
    out: list[_Candidate] = []

    def free(m: re.Match[str]) -> bool:
        return not any(taken[m.start() : m.end()])

    def take(m: re.Match[str]) -> None:
        for i in range(m.start(), m.end()):
            taken[i] = True

    for m in _ENUMERATOR.finditer(text):
        take(m)
    for m in _FRACTION.finditer(text):
        if not free(m):
            continue
        take(m)
        num, den = float(m.group(1)), float(m.group(2))
        ok = den > 0 and 0 <= num <= den
        out.append(_Candidate(num / den if ok else None, m.start(), m.end(), "bad fraction"))
    for m in _PERCENT.finditer(text):
        if not free(m):
            continue
        take(m)
        value = float(m.group(1) or m.group(2))
        ok = 0 <= value <= 100
        out.append(_Candidate(value / 100 if ok else None, m.start(), m.end(), "bad percentage"))
    scales: set[float] = set()
    for m in _SCALE.finditer(text):
        if not free(m):
            continue
        take(m)
        word = m.group(3)
        scales.add(float(_SCALE_WORDS[word] if word else (m.group(1) or m.group(2) or m.group(4))))
    scale = scales.pop() if len(scales) == 1 else None
    for m in _BARE.finditer(text):
        if not free(m):
            continue
        value = float(m.group(0))
        if scale is not None:
            ok = 0 <= value <= scale
            out.append(
                _Candidate(value / scale if ok else None, m.start(), m.end(), "outside the scale")
            )
        elif 0 <= value <= 1:
            out.append(_Candidate(value, m.start(), m.end()))
        else:
            why = "conflicting scales" if scales else f"{m.group(0)} without a stated scale"
            out.append(_Candidate(None, m.start(), m.end(), why))
    return sorted(out, key=lambda c: c.start)


def _one_value(cands: Sequence[_Candidate]) -> float | None:
    values = {None if c.value is None else round(c.value, 6) for c in cands}
    if len(values) == 1 and None not in values:
        return values.pop()
    return None


def parse_confidence(reply: str) -> float:
    """A confidence in 0..1 (MediQ's numeric gate).

    Read: decimals in 0..1 ("0.8"), fractions ("8/10", "8 out of 10"), percentages ("80%",
    "百分之80"), and numbers on a 0-10 or 0-100 scale the reply states ("满分10分，8分",
    "按0-100打分：80"). List numbering ("1. ...") is not a candidate. When the reply holds
    several different candidates, the one labelled as the answer ("把握程度：0.9") or standing
    alone on a line wins; otherwise, and for a bare number above 1 without a stated scale
    ("8": 0-10 or 0-100?), :class:`ReplyFormatError` asks for a re-ask.
    """
    text = unicodedata.normalize("NFKC", reply).strip()
    cands = _candidates(text)
    if not cands:
        raise ReplyFormatError("reply holds no number")
    value = _one_value(cands)
    if value is None:
        labelled = [c for c in cands if _LABEL.search(text[: c.start])]
        value = _one_value(labelled)
    if value is None:
        alone = []
        for c in cands:
            line_start = text.rfind("\n", 0, c.start) + 1
            line_end = text.find("\n", c.end)
            line = text[line_start : len(text) if line_end < 0 else line_end]
            rest = line[: c.start - line_start] + line[c.end - line_start :]
            if _FILLER.fullmatch(rest):
                alone.append(c)
        value = _one_value(alone)
    if value is None:
        if len(cands) == 1:
            raise ReplyFormatError(f"confidence not readable: {cands[0].why}")
        raise ReplyFormatError(
            f"ambiguous confidence: {len(cands)} candidate numbers, none clearly the answer"
        )
    return value


_CLIENT_PREFIX = re.compile(r"^(?:用户|当事人|客户|我)\s*[:：]\s*")
_PUNCT = re.compile(r"[\s。．.!！,，、~～…\"'“”]+")


def normalize_client_answer(reply: str) -> str:
    """Strip a speaker prefix; an answer that only says 'don't know' becomes exactly 不知道."""
    text = _CLIENT_PREFIX.sub("", reply.strip()).strip()
    if not text:
        raise ReplyFormatError("empty answer")
    if _PUNCT.sub("", text) in (UNKNOWN_ANSWER, "我不知道", "不清楚", "我不清楚"):
        return UNKNOWN_ANSWER
    return text
