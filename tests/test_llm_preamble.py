"""A lawyer that opens its replies with a short phrase before the marker (``好的，我了解了。``
then ``提问：…``), played by the mock endpoint over real HTTP: every sample dialogue is read as its
questions and then advice, each reading is counted, and the strict reading refuses it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from lecode.agents.clients import build_client
from lecode.agents.context import RoleContext
from lecode.agents.experts import build_expert
from lecode.dataset import load_cases
from lecode.evaluation.consultations import simulate_case
from lecode.mock import MockServer
from lecode.records import Transcript
from tests.conftest import REPO
from tests.support.mock_llm import KEY_ENV, entry, model_cfg, runtime

SAMPLE = REPO / "data" / "sample" / "sample_testset.jsonl"
CLIENT = entry("fact_lookup", {"backend": "offline", "agent": "fact_lookup", "max_facts": 3})


@pytest.fixture
def preamble_lawyer(monkeypatch: pytest.MonkeyPatch) -> Iterator[MockServer]:
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdef")
    server = MockServer(case_files=[SAMPLE], faults={"preamble": 1.0})
    server.start()
    yield server
    server.stop()


def run(tmp_path: Path, url: str, **markers: str) -> list[Transcript]:
    cases = load_cases(SAMPLE)
    rt = runtime(tmp_path / "store")
    rt.default_max_turns = 10
    ctx = RoleContext(runtime=rt)
    cfg = model_cfg(url, markers=markers) if markers else model_cfg(url)
    expert = build_expert("lawyer", cfg, "zero_shot", ctx)
    client = build_client("fact_lookup", CLIENT, "baseline", ctx)

    async def go() -> list[Transcript]:
        try:
            return list(
                await asyncio.gather(
                    *(
                        simulate_case(c, expert, client, strategy="zero_shot", max_turns=10)
                        for c in cases
                    )
                )
            )
        finally:
            await rt.aclose()

    return asyncio.run(go())


def test_every_sample_dialogue_is_read_as_questions_then_advice(
    tmp_path: Path, preamble_lawyer: MockServer
) -> None:
    transcripts = run(tmp_path, preamble_lawyer.url)
    assert len(transcripts) == 11
    for t in transcripts:
        assert t.stop_reason == "advice", (t.case_id, t.error)
        assert t.n_questions >= 1
        # the preamble is part of neither the questions nor the advice
        assert not any(turn.text.startswith(("好的", "明白")) for turn in t.turns[1:])
        u = t.usage["expert"]
        # every move (each question and the advice) was read after its preamble
        assert u.read_after_preamble == t.n_questions + 1
        assert (u.unmarked_reasks, u.read_anywhere, u.read_two_moves) == (0, 0, 0)


def test_the_strict_reading_refuses_a_preamble(tmp_path: Path, preamble_lawyer: MockServer) -> None:
    transcripts = run(tmp_path, preamble_lawyer.url, reading="strict")
    assert {t.stop_reason for t in transcripts} == {"parse_error"}
    assert all("does not start with" in (t.error or "") for t in transcripts)
