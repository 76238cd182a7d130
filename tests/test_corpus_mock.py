"""The mock endpoint as the annotator model: every pre-annotation step goes through the
response store, the annotation equals what the offline rules make of the same dialogues, and a
rebuild replays: nothing reaches the endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from lecode.config.experiment import Settings
from lecode.corpus import rules
from lecode.corpus.annotate import run as annotate
from lecode.corpus.annotations import Stage2Annotation, read_records
from lecode.corpus.plan import STEPS, CorpusPlan
from lecode.corpus.transcripts import read_transcripts, transcript_files
from lecode.mock import MockServer
from tests.support.mock_llm import KEY_ENV, model_dict

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the per-dialogue cache is written under results/


@pytest.fixture
def mock(monkeypatch: pytest.MonkeyPatch) -> Iterator[MockServer]:
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdef")
    with MockServer() as server:
        yield server


def plan_for(url: str, tmp_path: Path, *, replay: bool) -> CorpusPlan:
    params: dict[str, Any] = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    params["models"]["annotator"] = model_dict(url)
    params["corpus"] = {
        "transcripts": str(REPO / "data" / "transcripts"),
        "n_shards": 2,
        "annotator": "annotator",
    }
    params["llm"] = {"store_dir": str(tmp_path / "store"), "replay": replay}
    return CorpusPlan(Settings.parse(params))


def build(plan: CorpusPlan, out: Path) -> list[Stage2Annotation]:
    before = {"stage1": "roles", "stage2": "stage1"}
    for step in STEPS:
        for shard in plan.shards:
            spec = plan.annotate_specs[step][shard]
            previous = str(out / f"{before[step]}-{shard}.jsonl") if step in before else None
            annotate(step, spec, previous=previous, out=str(out / f"{step}-{shard}.jsonl"))
    return [
        r for s in plan.shards for r in read_records(out / f"stage2-{s}.jsonl", Stage2Annotation)
    ]


def test_mock_annotator_through_the_store_and_a_replayed_rebuild(
    mock: MockServer, tmp_path: Path
) -> None:
    url = mock.url
    plan = plan_for(url, tmp_path, replay=False)
    assert all(s.templates for s in plan.annotate_specs["stage1"].values())
    first = build(plan, tmp_path / "first")
    stats = mock.stats()
    n = len(first)
    assert n == 6
    # one request per dialogue and step, each answered once
    assert stats["requests"] == {"annotator": 3 * n}
    assert {e["purpose"] for e in stats["log"]} == {"roles", "stage1", "stage2"}
    # the mock plays the annotator with the offline rules: the same annotation, by the model
    expected = {}
    for t in read_transcripts(transcript_files(REPO / "data" / "transcripts")):
        expected[t.id] = rules.stage2(rules.stage1(rules.identify_roles(t)))
    for rec in first:
        assert rec.annotator == "annotator"
        assert rec.model_copy(update={"annotator": "rules"}) == expected[rec.id]
    # the rebuild in replay mode: every answer from the store, nothing sent
    mock.reset()
    again = build(plan_for(url, tmp_path, replay=True), tmp_path / "again")
    assert mock.stats()["total_requests"] == 0
    assert again == first


def test_prompt_templates_enter_the_step_digests(tmp_path: Path) -> None:
    plan = plan_for("http://127.0.0.1:9/v1", tmp_path, replay=True)
    offline = CorpusPlan(Settings.load(REPO / "params.yaml"))
    spec = plan.annotate_specs["stage2"]["000"]
    assert set(spec.templates) == {"annotate/stage2.txt", "annotate/reask.txt"}
    assert offline.annotate_specs["stage2"]["000"].templates == {}
    assert spec.digest() != offline.annotate_specs["stage2"]["000"].digest()
    # each step's digest chains the previous one's
    assert spec.previous == plan.annotate_specs["stage1"]["000"].digest()
