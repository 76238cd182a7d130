"""Paper fidelity of the LLM roles: judge protocol (Table 9), few-shot demonstrations in every
call, reasoning models, unmarked replies, MediQ confidence. Scripted replies, no network."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lecode.agents.base import ExpertMove, RoleError, UsageMeter
from lecode.agents.llm_client_sim import LLMSimulatedClient
from lecode.agents.llm_expert import LLMExpert, unmarked_policy
from lecode.agents.llm_judge import LLMJudge
from lecode.agents.llm_matcher import LLMMatcher
from lecode.dataset import load_cases
from lecode.evaluation.consultations import simulate_case
from lecode.llm.endpoint import Completion
from lecode.llm.errors import LLMConfigError
from lecode.llm.spec import ModelSpec
from lecode.mock import MockServer
from lecode.records import Case, Transcript, Turn
from lecode.strategies.templates import load_strategy
from tests.support.cases import synthetic_cases, write_jsonl
from tests.support.mock_llm import KEY_ENV, model_cfg, runtime

CASE = Case(
    id="c1",
    initial_query="朋友借了我五万块钱一直不还，怎么办？",
    dialogue=(),
    facts=("借款金额五万元", "有借条", "借款已到期一年"),
    importance=(3, 3, 2),
    suggestion="凭借条向法院起诉，要求归还借款五万元及逾期利息；起诉前可先发催款函保留证据。",
)
HISTORY = (Turn(speaker="client", kind="query", text=CASE.initial_query),)


@dataclass(frozen=True)
class ReasoningCompletion(Completion):
    """A completion as an endpoint that keeps the API's ``reasoning_content`` would return it."""

    reasoning: str = ""
    reasoning_tokens: int = 0


@dataclass
class ScriptedLLM:
    """Stands in for :class:`lecode.llm.endpoint.Endpoint`: scripted replies, recorded requests."""

    replies: list[str | Completion]
    spec: ModelSpec = field(
        default_factory=lambda: ModelSpec.from_config(
            "scripted", {"backend": "openai", "base_url": "http://scripted/v1", "model": "scripted"}
        )
    )
    requests: list[list[dict[str, str]]] = field(default_factory=list)
    purposes: list[str] = field(default_factory=list)
    seen_models: set[str] = field(default_factory=set)
    seen_fingerprints: set[str] = field(default_factory=set)

    async def complete(self, messages: Sequence[dict[str, str]], **kw: Any) -> Completion:
        self.requests.append([dict(m) for m in messages])
        self.purposes.append(str(kw.get("purpose")))
        reply = self.replies.pop(0)
        if isinstance(reply, Completion):
            return reply
        return Completion(
            text=reply,
            key="k" * 64,
            cached=False,
            retries=0,
            prompt_tokens=100,
            completion_tokens=len(reply),
            cost=0.0,
        )


def expert(
    strategy: str, replies: list[str | Completion], **kw: Any
) -> tuple[LLMExpert, ScriptedLLM]:
    llm = ScriptedLLM(list(replies))
    return LLMExpert("e", llm, load_strategy("expert", strategy), strategy=strategy, **kw), llm  # type: ignore[arg-type]


def move(
    e: LLMExpert, meter: UsageMeter, *, must_advise: bool = False, history: Sequence[Turn] = HISTORY
) -> ExpertMove:
    return asyncio.run(e.start(CASE).next_move(history, must_advise=must_advise, meter=meter))


# --- 1. judge: Table 9 protocol -------------------------------------------------------------


def judge_reply(scores: dict[str, int] | None = None, **analysis: str) -> str:
    dims = ("professionalism", "fluency", "completeness", "satisfaction", "safety")
    body = {
        "analysis": {"comparison": "遗漏了逾期利息。", **{d: f"{d} 的理由" for d in dims}}
        | {"overall": "取各项的中间水平。"}
        | analysis,
        "scores": scores
        or {
            "professionalism": 6,
            "fluency": 8,
            "completeness": 5,
            "satisfaction": 6,
            "safety": 8,
            "overall": 6,
        },
    }
    return json.dumps(body, ensure_ascii=False)


def judged_transcript(advice: str = "建议起诉。") -> Transcript:
    return Transcript(
        case_id=CASE.id,
        expert="e",
        strategy="zero_shot",
        client="c",
        turns=(*HISTORY, Turn(speaker="lawyer", kind="advice", text=advice)),
        stop_reason="advice",
    )


def judge(replies: list[str | Completion]) -> tuple[LLMJudge, ScriptedLLM]:
    llm = ScriptedLLM(list(replies))
    return LLMJudge("j", llm, load_strategy("judge", "default")), llm  # type: ignore[arg-type]


def test_judge_sees_reference_bands_and_reasons_before_scoring() -> None:
    j, llm = judge([judge_reply()])
    scores = asyncio.run(j.judge(CASE, judged_transcript(), meter=UsageMeter()))
    system, user = llm.requests[0][0]["content"], llm.requests[0][1]["content"]
    assert CASE.suggestion in user and "建议起诉。" in user and CASE.initial_query in user
    assert user.index("【参考建议】") < user.index("【待评建议】")
    for band in ("1–2 分", "3–4 分", "5–6 分", "7–8 分", "9–10 分"):
        assert band in system
    assert "从严" in system and "参考建议" in system
    assert "不必等于" not in system + user  # the overall score is derived from the dimensions
    assert user.index('"analysis"') < user.index('"scores"')  # reasoning before the scores
    assert (scores.professionalism, scores.completeness, scores.overall) == (6, 5, 6)
    assert "与参考建议对照：遗漏了逾期利息。" in scores.rationale
    assert "专业性：professionalism 的理由" in scores.rationale


def test_judge_reasks_scores_without_reasoning_or_not_derived_from_dimensions() -> None:
    flat = {
        "professionalism": 5,
        "fluency": 5,
        "completeness": 5,
        "satisfaction": 5,
        "safety": 5,
        "overall": 9,
    }
    no_reason = json.dumps(dict(flat, overall=5))
    j, llm = judge([judge_reply(flat), no_reason, judge_reply()])
    meter = UsageMeter()
    scores = asyncio.run(j.judge(CASE, judged_transcript(), meter=meter))
    assert scores.overall == 6 and meter.by_role["judge"].calls == 3
    # each re-ask shows the replies so far and the instruction
    assert [len(r) for r in llm.requests] == [2, 4, 6]


def test_judge_needs_reference_advice() -> None:
    j, _ = judge([judge_reply()])
    case = CASE.model_copy(update={"suggestion": "  "})
    with pytest.raises(RoleError):
        asyncio.run(j.judge(case, judged_transcript(), meter=UsageMeter()))


# --- 2. few-shot demonstrations in every call -----------------------------------------------


def test_few_shot_forced_advice_and_reasks_keep_the_demonstrations() -> None:
    e, llm = expert("few_shot", ["提问：还有别的证据吗？", "建议：凭借条起诉。"], max_turns=1)
    history = (*HISTORY, Turn(speaker="lawyer", kind="question", text="有借条吗？"))
    history = (*history, Turn(speaker="client", kind="answer", text="有借条。"))
    m = move(e, UsageMeter(), must_advise=True, history=history)
    assert (m.kind, m.text) == ("advice", "凭借条起诉。")
    assert len(llm.requests) == 2  # the question was re-asked
    for request in llm.requests:
        assert "【示范一】" in request[0]["content"] and "【示范二】" in request[0]["content"]
    assert "提问环节到此结束" in llm.requests[0][1]["content"]
    assert "有借条吗？" in llm.requests[0][1]["content"]
    assert "advise" not in {k for k in e.templates}  # the demonstration-free prompt is unused


def test_few_shot_turn_prompt_unchanged_in_substance() -> None:
    e, llm = expert("few_shot", ["提问：借条在您手里吗？"])
    assert move(e, UsageMeter()).kind == "question"
    user = llm.requests[0][1]["content"]
    assert user.endswith("你已经提问 0 次，最多还可以提问 10 次。请写出你的下一条回复。")
    assert "${" not in user and "【示范一】" in llm.requests[0][0]["content"]


# --- 3. reasoning models --------------------------------------------------------------------


def test_inline_reasoning_never_reaches_the_protocol() -> None:
    thought = "<think>当事人没说有没有借条。提问：我先想想 建议：别急</think>\n\n"
    e, llm = expert("zero_shot", [thought + "提问：您手里有借条吗？"])
    meter = UsageMeter()
    m = move(e, meter)
    assert (m.kind, m.text) == ("question", "您手里有借条吗？")
    assert meter.by_role["expert"].reasoning_tokens > 0  # estimated from the stripped text

    client = LLMSimulatedClient(
        "c",
        ScriptedLLM(["<think>事实里没有</think>不知道。"]),  # type: ignore[arg-type]
        load_strategy("client", "first_person_dialogue"),
        strategy="first_person_dialogue",
    )
    dialogue = client.start(CASE)
    answer = asyncio.run(dialogue.answer(HISTORY, "对方是做什么工作的？", meter=meter))
    assert answer == "不知道"

    matcher = LLMMatcher(
        "m",
        ScriptedLLM(['<think>也许 {"QA0": [2]}</think>{"QA0": [1]}']),  # type: ignore[arg-type]
        load_strategy("matcher", "default"),
    )
    found = asyncio.run(matcher.match(CASE, [("有借条吗？", "有借条")], meter=meter))
    assert found == [[1]]

    j, _ = judge(["</think>" + judge_reply()])  # template-opened reasoning: only the close
    assert asyncio.run(j.judge(CASE, judged_transcript(), meter=meter)).overall == 6


def test_reasoning_is_not_fed_back_in_a_reask() -> None:
    e, llm = expert("zero_shot", ["<think>想一想</think>您好，请问您有借条吗", "提问：有借条吗？"])
    move(e, UsageMeter())
    assert llm.requests[1][-2] == {"role": "assistant", "content": "您好，请问您有借条吗"}


def test_reported_reasoning_tokens_are_used_as_given() -> None:
    reply = ReasoningCompletion(
        text="提问：借款什么时候到期？",
        key="k" * 64,
        cached=False,
        retries=0,
        prompt_tokens=100,
        completion_tokens=300,
        cost=0.0,
        reasoning="很长的推理",
        reasoning_tokens=250,
    )
    e, _ = expert("zero_shot", [reply])
    meter = UsageMeter()
    assert move(e, meter).text == "借款什么时候到期？"
    assert meter.by_role["expert"].reasoning_tokens == 250


# --- 4. replies without a marker ------------------------------------------------------------


def test_unmarked_default_reasks_once_then_takes_advice() -> None:
    e, llm = expert("zero_shot", ["请问有借条吗", "您可以去法院起诉对方。"])
    meter = UsageMeter()
    m = move(e, meter)
    assert (m.kind, m.text) == ("advice", "您可以去法院起诉对方。")
    u = meter.by_role["expert"]
    assert (u.calls, u.unmarked_reasks, u.unmarked_advice, u.unmarked_questions) == (2, 1, 1, 0)
    assert "提问：" in llm.requests[1][-1]["content"]  # the re-ask names the markers


def test_unmarked_reask_recovers_with_a_marker() -> None:
    e, _ = expert("zero_shot", ["请问有借条吗", "提问：请问有借条吗？"])
    meter = UsageMeter()
    assert move(e, meter).kind == "question"
    u = meter.by_role["expert"]
    assert (u.unmarked_reasks, u.unmarked_advice, u.unmarked_questions) == (1, 0, 0)


@pytest.mark.parametrize(("policy", "kind"), [("advice", "advice"), ("question", "question")])
def test_unmarked_policy_takes_the_reply_at_once(policy: str, kind: str) -> None:
    e, llm = expert("zero_shot", ["有借条吗？"], unmarked=policy)
    meter = UsageMeter()
    m = move(e, meter)
    assert (m.kind, m.text, len(llm.requests)) == (kind, "有借条吗？", 1)
    u = meter.by_role["expert"]
    assert (u.unmarked_advice, u.unmarked_questions) == (
        int(kind == "advice"),
        int(kind != "advice"),
    )
    assert e.describe()["unmarked"] == policy


def test_unmarked_reply_in_a_forced_advice_call_is_advice() -> None:
    e, _ = expert("zero_shot", ["请尽快起诉。"], unmarked="question")
    meter = UsageMeter()
    assert move(e, meter, must_advise=True).kind == "advice"
    assert meter.by_role["expert"].unmarked_advice == 1


def test_other_malformed_replies_still_end_in_parse_error() -> None:
    e, _ = expert("zero_shot", ["提问：有借条吗？\n建议：起诉。", "提问："])
    with pytest.raises(RoleError) as info:
        move(e, UsageMeter())
    assert info.value.kind == "parse_error"
    e, _ = expert("zero_shot_json", ["请问有借条吗", "还是没有 JSON"], unmarked="advice")
    with pytest.raises(RoleError):
        move(e, UsageMeter())


def test_unmarked_policy_values() -> None:
    assert unmarked_policy(None) == "reask"
    assert unmarked_policy("question") == "question"
    with pytest.raises(LLMConfigError):
        unmarked_policy("maybe")
    e, _ = expert("zero_shot", [])
    assert e.unmarked == "reask" and e.describe()["unmarked"] == "reask"


@pytest.fixture
def mock_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[MockServer, list[Case]]]:
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdef")
    cases = load_cases(write_jsonl(tmp_path / "cases.jsonl", synthetic_cases(3)))
    with MockServer(case_files=[tmp_path / "cases.jsonl"]) as server:
        yield server, cases


@pytest.mark.parametrize(("policy", "stop"), [("reask", "advice"), ("question", "max_turns")])
def test_unmarked_branches_are_recorded_per_dialogue(
    tmp_path: Path, mock_cases: tuple[MockServer, list[Case]], policy: str, stop: str
) -> None:
    mock, cases = mock_cases
    mock.set_faults({"no_marker": 1.0})
    rt = runtime(tmp_path / "store")
    cfg = model_cfg(mock.url)
    e = LLMExpert(
        "e",
        rt.endpoint("e", cfg),
        load_strategy("expert", "zero_shot"),
        strategy="zero_shot",
        max_turns=3,
        unmarked=policy,
    )
    c = LLMSimulatedClient(
        "c",
        rt.endpoint("c", cfg),
        load_strategy("client", "first_person_dialogue"),
        strategy="first_person_dialogue",
    )

    async def run() -> list[Transcript]:
        return list(
            await asyncio.gather(
                *(simulate_case(x, e, c, strategy="zero_shot", max_turns=3) for x in cases)
            )
        )

    try:
        ts = asyncio.run(run())
    finally:
        rt.close()
    for t in ts:
        assert t.stop_reason == stop and t.advice
        u = t.usage["expert"]
        if policy == "reask":
            assert (u.unmarked_reasks, u.unmarked_advice, u.unmarked_questions) == (1, 1, 0)
        else:
            assert (u.unmarked_questions, u.unmarked_advice) == (3, 1) and t.n_questions == 3


# --- 5. MediQ confidence --------------------------------------------------------------------


def test_mediq_threshold_reads_fractions() -> None:
    e, llm = expert("mediq_threshold", ["8/10", "建议：凭借条起诉。"], threshold=0.8)
    meter = UsageMeter()
    assert move(e, meter).kind == "advice"
    assert llm.purposes == ["confidence_score", "advise"]
    assert meter.by_role["expert"].confidence_failures == 0


def test_mediq_threshold_reasks_ambiguous_confidence_and_counts_failures() -> None:
    e, llm = expert(
        "mediq_threshold", ["1. 借款金额清楚\n2. 大概0.6，也可能0.9", "0.3", "提问：有借条吗？"]
    )
    meter = UsageMeter()
    assert move(e, meter).kind == "question"
    assert meter.by_role["expert"].confidence_failures == 1
    assert llm.purposes == ["confidence_score", "confidence_score", "ask"]

    e, _ = expert("mediq", ["也许吧", "不好说"])
    meter = UsageMeter()
    with pytest.raises(RoleError):
        move(e, meter)
    assert meter.by_role["expert"].confidence_failures == 2


def test_each_client_dialogue_holds_the_state_its_strategy_started() -> None:
    """One client serves two dialogues at once: each answer call renders the case its
    strategy's ``start(case)`` put into that dialogue's state."""
    llm = ScriptedLLM(["有借条。", "对方是司机。"])
    client = LLMSimulatedClient(
        "c",
        llm,  # type: ignore[arg-type]
        load_strategy("client", "first_person_dialogue"),
        strategy="first_person_dialogue",
    )
    other = Case(
        id="c2",
        initial_query="工伤怎么赔？",
        dialogue=(),
        facts=("在工地摔伤", "对方是司机"),
        importance=(3, 1),
        suggestion="申请工伤认定。",
    )
    first, second = client.start(CASE), client.start(other)
    assert (first.state.case, second.state.case) == (CASE, other)
    assert first.state is not second.state and first.state.values == {}
    meter = UsageMeter()
    asyncio.run(first.answer(HISTORY, "有借条吗？", meter=meter))
    asyncio.run(second.answer(HISTORY, "对方做什么工作？", meter=meter))
    prompts = ["".join(m["content"] for m in r) for r in llm.requests]
    assert "借款金额五万元" in prompts[0] and "借款金额五万元" not in prompts[1]
    assert "在工地摔伤" in prompts[1] and "在工地摔伤" not in prompts[0]


def test_a_json_reply_is_reasked_once_naming_the_problem() -> None:
    """``ask_json`` (the SFT question writer, the dataset annotator): the re-ask shows the model
    its reply and names what the parser found wrong."""
    from lecode.llm.parsing import ReplyFormatError
    from lecode.sft.questions import LLMWriter, writer_templates

    llm = ScriptedLLM(['{"q": 1}', '{"questions": []}'])
    writer = LLMWriter("w", llm, writer_templates())

    def parse(reply: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(reply)
        if "questions" not in data:
            raise ReplyFormatError('"questions" is missing')
        return data

    first = [{"role": "user", "content": "写三个问题"}]
    template = writer.templates["reask"]
    out = asyncio.run(writer.ask_json("direct", template, first, parse, UsageMeter()))
    assert out == {"questions": []}
    assert len(llm.requests) == 2
    assert llm.requests[1][:2] == [*first, {"role": "assistant", "content": '{"q": 1}'}]
    assert '"questions" is missing' in llm.requests[1][2]["content"]

    llm = ScriptedLLM(['{"q": 1}', '{"q": 2}'])
    writer = LLMWriter("w", llm, writer_templates())
    with pytest.raises(RoleError, match="after 1 re-ask"):
        asyncio.run(writer.ask_json("direct", template, first, parse, UsageMeter()))
