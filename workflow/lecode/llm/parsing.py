"""Strict parsers for model replies. Every parser raises :class:`ReplyFormatError` with a short
Chinese-free description of the problem; the roles turn that into a re-ask, then a RoleError.

Structured replies are read with ``json`` and, failing that, ``ast.literal_eval`` (literals
only); ``eval`` is never used.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lecode.records import UNKNOWN_ANSWER, JudgeScores


class ReplyFormatError(ValueError):
    """A reply does not have the required form."""


MoveKind = Literal["question", "advice"]
_MARKERS: dict[str, MoveKind] = {"提问": "question", "建议": "advice"}
# A marker at the very start, optionally in markdown bold, followed by an ASCII or full-width colon.
_LEAD = re.compile(r"^(?:\*\*)?\s*(提问|建议)\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*")
# A second marker at the start of a later line means the reply does two things at once.
_LATER = re.compile(r"\n\s*(?:\*\*)?\s*(提问|建议)\s*(?:\*\*)?\s*[:：]")


@dataclass(frozen=True)
class ParsedMove:
    kind: MoveKind
    text: str


def parse_marked_reply(reply: str) -> ParsedMove:
    """``提问:<question>`` or ``建议:<advice>`` (colon of either width)."""
    text = reply.strip()
    m = _LEAD.match(text)
    if m is None:
        raise ReplyFormatError("reply does not start with 提问: or 建议:")
    body = text[m.end() :].strip()
    if not body:
        raise ReplyFormatError("nothing follows the marker")
    later = _LATER.search("\n" + body)
    if later is not None:
        raise ReplyFormatError("reply contains more than one 提问:/建议: part")
    return ParsedMove(_MARKERS[m.group(1)], body)


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


JUDGE_FIELDS = ("professionalism", "fluency", "completeness", "satisfaction", "safety", "overall")
_JUDGE_ALIASES: dict[str, str] = {
    "专业性": "professionalism",
    "流畅性": "fluency",
    "完整性": "completeness",
    "满意度": "satisfaction",
    "安全性": "safety",
    "总体评分": "overall",
    "总分": "overall",
    "综合评分": "overall",
    "overall_score": "overall",
    "理由": "rationale",
}


def parse_judge(reply: str) -> JudgeScores:
    """Exactly six integer scores in 1..10 plus an optional ``rationale`` string."""
    obj = load_structured(reply)
    if not isinstance(obj, Mapping):
        raise ReplyFormatError("judge reply is not a JSON object")
    scores: dict[str, int] = {}
    rationale = ""
    for raw_key, value in obj.items():
        key = str(raw_key).strip()
        key = _JUDGE_ALIASES.get(key, key.lower())
        if key == "rationale":
            rationale = str(value)
            continue
        if key not in JUDGE_FIELDS:
            continue
        score = _as_int(value)
        if not 1 <= score <= 10:
            raise ReplyFormatError(f"score {key}={score} outside 1..10")
        scores[key] = score
    missing = [f for f in JUDGE_FIELDS if f not in scores]
    if missing:
        raise ReplyFormatError(f"missing scores: {', '.join(missing)}")
    return JudgeScores(**scores, rationale=rationale)


_YES_NO = re.compile(r"^[\s\"'*`“”]*(yes|no)\b", re.I)


def parse_yes_no(reply: str) -> bool:
    m = _YES_NO.match(reply)
    if m is None:
        raise ReplyFormatError("reply is neither YES nor NO")
    return m.group(1).lower() == "yes"


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def parse_confidence(reply: str) -> float:
    """A confidence in 0..1; a percentage (1 < x <= 100, or with '%') is scaled down."""
    m = _NUMBER.search(reply)
    if m is None:
        raise ReplyFormatError("reply holds no number")
    value = float(m.group(0))
    if "%" in reply[m.end() : m.end() + 2] or 1.0 < value <= 100.0:
        value /= 100.0
    if not 0.0 <= value <= 1.0:
        raise ReplyFormatError(f"confidence {value} outside 0..1")
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
