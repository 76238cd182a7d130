"""LLM experts, client simulators, matcher and judge against the mock endpoint."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from lecode.agents.base import RoleError, UsageMeter
from lecode.agents.context import ConfigurationError, RoleContext
from lecode.agents.experts import build_expert
from lecode.agents.judges import build_judge
from lecode.agents.matchers import build_matcher
from lecode.dataset import load_cases
from lecode.llm.errors import LLMConfigError
from lecode.mock import MockServer
from lecode.records import Case, Transcript, Turn
from lecode.strategies import ROLES, names
from lecode.strategies.templates import template_paths as template_files
from tests.support.cases import synthetic_cases, write_jsonl
from tests.support.mock_llm import mock_endpoint, model_cfg, runtime, simulate


@pytest.fixture
def cases(tmp_path: Path) -> list[Case]:
    return load_cases(write_jsonl(tmp_path / "cases.jsonl", synthetic_cases(8)))


@pytest.fixture
def mock(
    tmp_path: Path, cases: list[Case], monkeypatch: pytest.MonkeyPatch
) -> Iterator[MockServer]:
    with mock_endpoint(tmp_path / "cases.jsonl", monkeypatch) as server:
        yield server


def run(cases: list[Case], tmp_path: Path, url: str, **kw: object) -> list[Transcript]:
    rt = runtime(tmp_path / "store")
    try:
        return asyncio.run(simulate(cases, rt, model_cfg(url), **kw))
    finally:
        rt.close()


@pytest.mark.parametrize("strategy", names("expert"))
@pytest.mark.parametrize("client_strategy", names("client"))
def test_strategies_complete_dialogues(
    tmp_path: Path, mock: MockServer, cases: list[Case], strategy: str, client_strategy: str
) -> None:
    ts = run(cases, tmp_path, mock.url, strategy=strategy, client_strategy=client_strategy)
    assert [t.stop_reason for t in ts] == ["advice"] * len(cases)
    for case, t in zip(cases, ts, strict=True):
        assert t.advice == case.suggestion
        answers = [a for _, a in t.qa_pairs()]
        assert answers and all(a in case.facts or a == "不知道" for a in answers)
        assert t.usage["expert"].calls >= t.n_questions + 1
        assert t.usage["client"].calls == t.n_questions
        assert t.usage["expert"].prompt_tokens > 0 and t.usage["expert"].cost > 0


def test_max_turns_forces_advice(tmp_path: Path, mock: MockServer, cases: list[Case]) -> None:
    ts = run(cases, tmp_path, mock.url, max_turns=1)
    assert all(t.n_questions <= 1 for t in ts)
    assert {t.stop_reason for t in ts} == {"max_turns"}
    assert all(t.advice for t in ts)


def test_unmarked_reply_is_reasked_once_then_taken_as_advice(
    tmp_path: Path, mock: MockServer, cases: list[Case]
) -> None:
    """The default ``unmarked: reask`` policy: one re-ask, then the reply counts as advice."""
    mock.set_faults({"no_marker": 1.0})
    ts = run(cases[:2], tmp_path, mock.url)
    assert [t.stop_reason for t in ts] == ["advice", "advice"]
    assert all(t.usage["expert"].calls == 2 for t in ts)  # the reply, then one re-ask
    assert all(t.usage["expert"].unmarked_reasks == 1 for t in ts)
    assert all(t.usage["expert"].unmarked_advice == 1 for t in ts)
    assert mock.stats()["requests"]["expert"] == 4


def test_occasional_malformed_replies_recover(
    tmp_path: Path, mock: MockServer, cases: list[Case]
) -> None:
    mock.set_faults({"no_marker": 0.3})
    ts = run(cases, tmp_path, mock.url)
    reasked = [t for t in ts if t.usage["expert"].calls > t.n_questions + 1]
    assert reasked, "expected at least one re-ask at this rate"
    assert sum(t.stop_reason == "advice" for t in ts) >= len(cases) // 2


def test_infrastructure_failure_becomes_error_outcome(
    tmp_path: Path, mock: MockServer, cases: list[Case]
) -> None:
    mock.set_faults({"server_error": 1.0}, roles=["client"])
    ts = run(cases[:3], tmp_path, mock.url)
    assert {t.stop_reason for t in ts} == {"error"}
    assert all("server" in (t.error or "") for t in ts)
    assert all(t.usage["client"].retries == 4 for t in ts)  # visible in the record


def test_matcher_and_judge(tmp_path: Path, mock: MockServer, cases: list[Case]) -> None:
    ts = run(cases, tmp_path, mock.url)
    rt = runtime(tmp_path / "store")
    ctx = RoleContext(runtime=rt)
    matcher = build_matcher("m", model_cfg(mock.url), ctx)
    judge = build_judge("j", model_cfg(mock.url), ctx)

    async def score(case: Case, t: Transcript):
        meter = UsageMeter()
        found = await matcher.match(case, t.qa_pairs(), meter=meter)
        scores = await judge.judge(case, t, meter=meter)
        return found, scores, meter

    for case, t in zip(cases, ts, strict=True):
        found, scores, meter = asyncio.run(score(case, t))
        assert len(found) == len(t.qa_pairs())
        for (_q, a), idx in zip(t.qa_pairs(), found, strict=True):
            assert idx == ([] if a == "不知道" else [case.facts.index(a)])
        assert 1 <= scores.overall <= 10
        assert meter.by_role["matcher"].calls == 1 and meter.by_role["judge"].calls == 1
    assert {"template.matcher/match_facts", "template.judge/advice_quality"} <= (
        set(matcher.describe()) | set(judge.describe())
    )
    rt.close()


@pytest.mark.parametrize(
    ("fault", "role"),
    [
        ("judge_out_of_range", "judge"),
        ("bad_json", "judge"),
        ("matcher_bad_index", "matcher"),
        ("bad_json", "matcher"),
    ],
)
def test_invalid_matcher_and_judge_output_is_reasked_then_missing(
    tmp_path: Path, mock: MockServer, cases: list[Case], fault: str, role: str
) -> None:
    ts = run(cases[:1], tmp_path, mock.url)
    mock.set_faults({fault: 1.0})
    rt = runtime(tmp_path / "store")
    ctx = RoleContext(runtime=rt)  # matcher and judge re-ask twice
    meter = UsageMeter()
    if role == "judge":
        obj = build_judge("j", model_cfg(mock.url), ctx)
        coro = obj.judge(cases[0], ts[0], meter=meter)
    else:
        obj = build_matcher("m", model_cfg(mock.url), ctx)
        coro = obj.match(cases[0], ts[0].qa_pairs(), meter=meter)
    with pytest.raises(RoleError) as info:
        asyncio.run(coro)
    assert info.value.kind == "parse_error"
    assert meter.by_role[role].calls == 3  # the reply and two re-asks
    rt.close()


def test_judge_without_advice_is_an_error(
    tmp_path: Path, mock: MockServer, cases: list[Case]
) -> None:
    rt = runtime(tmp_path / "store")
    judge = build_judge("j", model_cfg(mock.url), RoleContext(runtime=rt))
    t = Transcript(
        case_id=cases[0].id,
        expert="e",
        strategy="zero_shot",
        client="c",
        turns=(Turn(speaker="client", kind="query", text=cases[0].initial_query),),
        stop_reason="parse_error",
    )
    with pytest.raises(RoleError):
        asyncio.run(judge.judge(cases[0], t, meter=UsageMeter()))
    rt.close()


def test_template_files_cover_every_strategy() -> None:
    for role in ROLES:
        for strategy in names(role):
            files = template_files(role, strategy)
            assert files and all(p.is_file() for p in files)
    assert template_files("matcher", "anything") == template_files("matcher", "default")
    with pytest.raises(LLMConfigError):
        template_files("expert", "nonsense")


def test_describe_records_identity_settings_and_template_hashes(
    tmp_path: Path, mock: MockServer, cases: list[Case]
) -> None:
    rt = runtime(tmp_path / "store")
    expert = build_expert("e", model_cfg(mock.url), "mediq_threshold", RoleContext(runtime=rt))
    d = expert.describe()
    assert d["served_model"] == "mock" and d["seed"] == "7" and d["temperature"] == "0.7"
    assert d["base_url"] == mock.url and d["threshold"] == "0.8"
    assert len(d["template.expert/mediq_confidence_score"]) == 16
    assert all(isinstance(v, str) for v in d.values())
    rt.close()


def test_llm_roles_need_a_runtime(mock: MockServer) -> None:
    with pytest.raises(ConfigurationError):
        build_expert("e", model_cfg(mock.url), "zero_shot", RoleContext())
