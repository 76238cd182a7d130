"""Deterministic role players of the mock endpoint.

The lawyer and the client learn which case and which turn a request belongs to from the
request's metadata (the ``X-Lecode-Case`` / ``X-Lecode-Turn`` / ``X-Lecode-Question`` headers
the LLM roles send, :func:`lecode.agents.llm_common.dialogue_headers`), so they play any
strategy, whatever its prompts show; a request without them (an older client, a replayed
record) is read from the prompt renderings of :mod:`lecode.llm.render` instead (the case by its
initial query, the turn by the ``律师：`` lines). The lawyer follows the case's script
(:class:`LawyerScript`: the case's facts in a fixed order, with one question the facts cannot
answer), then advises with the case's reference advice, replying to each call as the kind of
reply the strategy declares for it (the ``X-Lecode-Reply`` header); the client answers with
the one fact a question names, or 不知道; the matcher matches answers that contain a fact's
text; the judge reasons, then derives scores from a hash of the advice (and whether it equals
the reference shown to it).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from lecode.llm.render import LAWYER_PREFIX, one_line
from lecode.mock.casedata import CaseText

OFF_FACT_QUESTION = "您手里有没有录音、合同原件之类的其他书面证据？"
#: What the ``client_invents`` fault adds to an answer: no case fact supports it.
INVENTED = "另外，我家的狗叫旺财，今年已经养了五年了。"
TELL_ALL = ("都告诉我", "全部经过", "所有情况")


def _h(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big")


def fact_question(fact: str) -> str:
    return f"关于“{fact}”这件事，能具体说说吗？"


@dataclass(frozen=True)
class LawyerScript:
    """The mock lawyer's questions for one case: fact indices, -1 for the off-fact question."""

    targets: tuple[int, ...]

    @classmethod
    def for_case(cls, case: CaseText) -> LawyerScript:
        n = len(case.facts)
        if n == 0:
            return cls(())
        order = sorted(range(n), key=lambda j: _h(case.id, "order", j))
        n_ask = min(n, 2 + _h(case.id, "n") % 5)
        targets = list(order[:n_ask])
        if n_ask >= 3:
            targets.insert(1 + _h(case.id, "off") % (n_ask - 1), -1)
        return cls(tuple(targets))

    def question(self, case: CaseText, k: int) -> str:
        if k >= len(self.targets) or self.targets[k] < 0:
            return OFF_FACT_QUESTION
        return fact_question(case.facts[self.targets[k]])


#: Characters of an initial query the case index is keyed on (:meth:`Players.find_case`).
_KEY_CHARS = 8


class Players:
    def __init__(self, cases: Sequence[CaseText]) -> None:
        self.cases = list(cases)
        self._scripts: dict[str, LawyerScript] = {}
        # Index of the cases by the first characters of their initial query, so that finding
        # the case of a prompt does not scan every case (benchmarks/scale.py serves 10,000).
        self._by_head: dict[str, list[int]] = {}
        self._short: list[int] = []  # queries shorter than the key: scanned
        self._by_id: dict[str, CaseText] = {}
        for i, case in enumerate(self.cases):
            self._by_id.setdefault(case.id, case)
            q = case.initial_query
            if len(q) >= _KEY_CHARS:
                self._by_head.setdefault(q[:_KEY_CHARS], []).append(i)
            elif q:
                self._short.append(i)

    def case_by_id(self, case_id: str) -> CaseText | None:
        """The first case (in file order) with id ``case_id``."""
        return self._by_id.get(case_id)

    def find_case(self, text: str) -> CaseText | None:
        """The first case (in file order) whose initial query occurs in ``text``."""
        best = next((i for i in self._short if self.cases[i].initial_query in text), None)
        by_head = self._by_head
        for pos in range(len(text) - _KEY_CHARS + 1):
            for i in by_head.get(text[pos : pos + _KEY_CHARS], ()):
                if best is not None and i >= best:
                    break
                if text.startswith(self.cases[i].initial_query, pos):
                    best = i
                    break
        return None if best is None else self.cases[best]

    def script(self, case: CaseText) -> LawyerScript:
        script = self._scripts.get(case.id)
        if script is None:
            script = self._scripts[case.id] = LawyerScript.for_case(case)
        return script

    # -- expert ---------------------------------------------------------------------------
    def expert(
        self,
        reply: str,
        prompt: str,
        *,
        json_format: bool,
        no_marker: bool,
        case_id: str | None = None,
        turn: int | None = None,
    ) -> str:
        """The reply of the kind a strategy declared for the call (see
        :data:`lecode.strategies.calls.Reply`): ``yes_no`` / ``score`` say ready once the
        script's questions are asked; ``move`` then advises, else asks the next question;
        ``question`` / ``advice`` make that move; ``text`` is a private plan (the script's
        questions). ``case_id`` / ``turn`` (questions asked so far): from the request's
        metadata; when absent, read from the prompt."""
        case = self.case_by_id(case_id) if case_id is not None else self.find_case(prompt)
        if turn is None:
            turn = sum(1 for line in prompt.splitlines() if line.startswith(LAWYER_PREFIX))
        asked = turn
        if case is None:
            script, advice = LawyerScript(()), "请携带相关材料到当地法律援助中心进一步咨询。"
        else:
            script, advice = self.script(case), case.suggestion or "建议保留证据，依法维权。"
        done = asked >= len(script.targets)
        if reply == "yes_no":
            return "YES" if done else "NO"
        if reply == "score":
            return "0.9" if done else "0.2"
        if reply == "text":
            questions = (
                [script.question(case, k) for k in range(len(script.targets))] if case else []
            )
            return "咨询计划：" + ("；".join(questions) or "了解案件的基本事实。")
        if reply == "advice" or (reply == "move" and done):
            kind, text = "advice", advice
        else:
            kind, text = "question", script.question(case, asked) if case else OFF_FACT_QUESTION
        if no_marker:
            return text
        if json_format:
            action = "ask" if kind == "question" else "advise"
            return json.dumps({"action": action, "content": text}, ensure_ascii=False)
        return ("提问：" if kind == "question" else "建议：") + text

    # -- client ---------------------------------------------------------------------------
    def client(
        self,
        prompt: str,
        *,
        leaks: bool = False,
        invents: bool = False,
        withholds: bool = False,
        contradicts: bool = False,
        case_id: str | None = None,
        question: str | None = None,
    ) -> str:
        """The fact the question names, else 不知道; the flags make it misbehave (see
        :mod:`lecode.mock.faults`): ``leaks`` answers with every fact, ``invents`` adds
        :data:`INVENTED`, ``withholds`` says 不知道 to a question naming a fact,
        ``contradicts`` negates the named fact (没有 + fact). ``case_id`` / ``question``: from
        the request's metadata (the case's facts, the question asked); when absent, the facts
        listed in the prompt and the question after its label."""
        if question is None:
            question = text_after(prompt, "【律师的问题】")
        if any(marker in question for marker in TELL_ALL):
            return "这个一下子说不清，您具体想了解哪方面？"
        case = self.case_by_id(case_id) if case_id is not None else None
        if case is not None:
            facts = [one_line(f) for f in case.facts]
        else:
            facts = [line[2:].strip() for line in prompt.splitlines() if line.startswith("- ")]
        named = next((f for f in facts if f and f in question), None)
        if leaks and facts:
            answer = "；".join(f.rstrip("。；") for f in facts if f) + "。"
        elif named is None or withholds:
            answer = "不知道"
        elif contradicts:
            answer = "没有" + named
        else:
            answer = named
        if invents:
            answer = (answer.rstrip("。") + "。" if answer != "不知道" else "") + INVENTED
        return answer

    # -- reliability study (Table 4) -------------------------------------------------------
    def reliability_questions(self, prompt: str) -> str:
        """The question writer: the number asked for, of fixed questions (the writer never sees
        the facts, so the mock asks what a lawyer commonly asks)."""
        m = re.search(r"(\d+) 个澄清问题", prompt)
        n = int(m.group(1)) if m else 3
        pool = [
            "这件事最早是什么时候发生的？",
            "对方现在是什么态度？",
            "您手里有没有书面的证据？",
            "事情发生后您报过警或者找过有关部门吗？",
            "你们之间签过什么协议吗？",
        ]
        qs = [pool[k % len(pool)] + ("" if k < len(pool) else f"（{k}）") for k in range(n)]
        return json.dumps({"questions": qs}, ensure_ascii=False)

    def reliability_judge(self, prompt: str) -> str:
        """Relevance and factuality of a client answer: factual when every statement (split
        at 。；) is 不知道 or inside a fact; relevant unless it says 不知道 to a question that
        names a fact, or states more than 3 facts."""
        facts = []
        for line in text_after(prompt, "【关键事实清单】").splitlines():
            m = re.match(r"^(\d+):\s*(.*)$", line)
            if m:
                facts.append(m.group(2).strip())
        question = text_after(prompt, "【律师的问题】").strip()
        answer = text_after(prompt, "【模拟当事人的回答】").strip()
        parts = [p.strip() for p in answer.replace("；", "。").split("。") if p.strip()]
        factual = all(p == "不知道" or any(p in f for f in facts) for p in parts)
        named = any(f and f in question for f in facts)
        stated = sum(1 for f in facts if f and f in answer)
        relevant = not ((answer == "不知道" and named) or stated > 3)
        reason = "模拟评审：" + ("与事实清单一致。" if factual else "含有清单以外的信息。")
        return json.dumps(
            {"reason": reason, "relevance": int(relevant), "factuality": int(factual)},
            ensure_ascii=False,
        )

    # -- matcher --------------------------------------------------------------------------
    def matcher(self, prompt: str, *, bad_index: bool, bad_json: bool, digest: str) -> str:
        if bad_json:
            return "好的，我来逐条分析这些问答。"
        facts = {}
        for line in text_after(prompt, "【关键事实列表】").splitlines():
            m = re.match(r"^(\d+):\s*(.*)$", line)
            if m:
                facts[int(m.group(1))] = m.group(2).strip()
        out: dict[str, list[int]] = {}
        for m in re.finditer(r"^QA(\d+)：\n问：.*\n答：(.*)$", prompt, re.M):
            answer = m.group(2)
            hits = [i for i, f in sorted(facts.items()) if f and f in answer]
            if hits:
                out[f"QA{m.group(1)}"] = hits
        if bad_index:
            out["QA0" if not out else next(iter(out))] = [len(facts) + 3]
        text = json.dumps(out, ensure_ascii=False)
        if _h(digest, "fence") % 2:
            text = f"```json\n{text}\n```"
        return text

    # -- judge ----------------------------------------------------------------------------
    def judge(self, prompt: str, *, out_of_range: bool, bad_json: bool, drift: bool = False) -> str:
        """The Table 9 reply: reasoning first (comparison with the reference, one reason per
        dimension), then five hash-derived scores and their rounded mean as the overall score;
        advice equal to the reference scores at least 7 everywhere. ``drift`` lowers every
        score by 3 (at least 1)."""
        if bad_json:
            return "这条建议整体不错，专业性较强。"
        advice = text_after(prompt, "【待评建议】")
        reference = text_after(prompt, "【参考建议】")
        same = bool(advice) and advice == reference
        names = ("professionalism", "fluency", "completeness", "satisfaction", "safety")
        scores = {n: (7 + _h(advice, n) % 4 if same else 4 + _h(advice, n) % 6) for n in names}
        if drift:
            scores = {n: max(1, v - 3) for n, v in scores.items()}
        scores["overall"] = round(sum(scores.values()) / len(names))
        if out_of_range:
            scores["professionalism"] = 11
        analysis = {"comparison": "与参考建议一致。" if same else "与参考建议相比有所欠缺。"}
        analysis |= {n: f"模拟理由：{scores[n]} 分。" for n in names}
        analysis["overall"] = "取五项分数的平均值。"
        return json.dumps({"analysis": analysis, "scores": scores}, ensure_ascii=False)


def text_after(prompt: str, label: str) -> str:
    """The text after ``label`` up to the next blank line."""
    start = prompt.find(label)
    if start < 0:
        return ""
    rest = prompt[start + len(label) :].lstrip("\n")
    end = rest.find("\n\n")
    return rest if end < 0 else rest[:end]
