"""Replicate runs: the replicate indices enter the simulate digest (and so the journal and the
results path) only when non-zero, each factor varies only its own seed, and a replicate run
resumes from its own journal."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lecode.config.experiment import Settings
from lecode.mock import MockServer
from lecode.pipeline import Plan
from tests.support.mock_llm import KEY_ENV, model_dict

REPO = Path(__file__).resolve().parent.parent
TEST = REPO / "data" / "sample" / "sample_testset.jsonl"


def _params(url: str = "http://127.0.0.1:9/v1", **replicates: Any) -> dict[str, Any]:
    return {
        "dataset": {"train": str(TEST), "test": str(TEST), "n_shards": 1},
        "models": {
            "mock": model_dict(url),
            "lexical": {"backend": "offline", "agent": "lexical"},
        },
        "experts": [{"model": "mock", "strategy": "zero_shot"}],
        "client": {"model": "mock"},
        "matcher": {"model": "lexical"},
        "judge": {"model": "mock"},
        "simulation": {"max_turns": 3},
        "metrics": {"bertscore": {"model": "x", "num_layers": 1, "enabled": False}},
        "replicates": {"n": 3, "cases": 2, **replicates},
    }


def test_replicate_specs_and_digests() -> None:
    plan = Plan(Settings.parse(_params()))
    specs = {(s.factor, s.index): s for s in plan.noise.replicate_specs()}
    assert set(specs) == {
        ("base", 0),
        ("expert", 1),
        ("expert", 2),
        ("client", 1),
        ("client", 2),
        ("judge", 1),
        ("judge", 2),
    }
    main = plan.evaluation.simulate_spec("mock", "zero_shot").digest()
    base = specs[("base", 0)]
    # the base run is the main configuration: same digest, same journal
    assert base.simulate.digest() == main
    # expert / client replicates: their own simulate digests (journal and path)
    sims = {k: s.simulate.digest() for k, s in specs.items()}
    assert len({sims[("expert", 1)], sims[("expert", 2)], sims[("client", 1)], main}) == 4
    assert specs[("expert", 1)].simulate.replicate == 1
    assert specs[("expert", 1)].simulate.client_replicate == 0
    assert specs[("client", 2)].simulate.client_replicate == 2
    # the judge factor judges the base transcripts again
    assert sims[("judge", 2)] == main and specs[("judge", 2)].judge_replicate == 2
    dirs = plan.noise.replicate_dirs()
    assert len(set(dirs)) == 7 and all(
        f"/{main}/" in plan.noise.replicate_dir(specs[k]) for k in (("base", 0), ("judge", 1))
    )
    assert len(plan.noise.replicate_cases) == 2
    assert plan.noise.noise_dir in plan.report.tables_spec.extra_tables


def test_switched_factors_and_no_judge() -> None:
    plan = Plan(Settings.parse(_params(vary=["client"])))
    assert {(s.factor, s.index) for s in plan.noise.replicate_specs()} == {
        ("base", 0),
        ("client", 1),
        ("client", 2),
    }
    params = _params()
    params["judge"] = None
    assert "judge" not in Plan(Settings.parse(params)).noise.replicate_factors()
    off = _params()
    off["replicates"] = {"n": 1}
    assert not Plan(Settings.parse(off)).noise.replicates_enabled


@pytest.fixture
def mock(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[MockServer]:
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdef")
    monkeypatch.chdir(tmp_path)
    with MockServer(case_files=[TEST]) as server:
        yield server


def test_a_replicate_run_resumes_from_its_journal(mock: MockServer, tmp_path: Path) -> None:
    from lecode.noise.steps.replicate import run
    from lecode.recordio import read_transcripts
    from lecode.score_io import read_scores

    params = _params(mock.url)
    params["llm"] = {"store_dir": str(tmp_path / "responses")}
    plan = Plan(Settings.parse(params))
    spec = next(s for s in plan.noise.replicate_specs() if (s.factor, s.index) == ("expert", 1))
    out = tmp_path / plan.noise.replicate_dir(spec)
    run(spec, out_dir=str(out))
    ts = read_transcripts(out / "transcripts.jsonl")
    assert len(ts) == 2 and all(t.provenance["expert.replicate"] == "1" for t in ts)
    assert read_scores(out / "scores.csv").height == 2
    # its own journal, under its own simulate digest
    journal = tmp_path / "store" / "dialogues" / "mock" / "zero_shot"
    assert [p.stem for p in journal.glob("*.jsonl")] == [spec.simulate.digest()]
    assert sum(mock.requests_by_role().values()) > 0
    # the response store is gone, the journal is not: the dialogues are not simulated again
    shutil.rmtree(tmp_path / "responses")
    shutil.rmtree(out)
    mock.reset()
    run(spec, out_dir=str(out))
    assert mock.requests_by_role().get("expert", 0) == 0
    assert mock.requests_by_role().get("client", 0) == 0
