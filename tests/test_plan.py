"""Job digests change with exactly what decides a job's outputs, per step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from lecode import paths
from lecode.config.experiment import Settings
from lecode.pipeline import Plan
from lecode.specs import roles_in, roles_in_param

REPO = Path(__file__).resolve().parent.parent


def _params() -> dict[str, Any]:
    p = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    p["dataset"].update(
        train=str(REPO / "data/sample/sample_trainset.jsonl"),
        test=str(REPO / "data/sample/sample_testset.jsonl"),
    )
    p["models"]["a"] = {"backend": "openai", "base_url": "http://x/v1", "model": "a"}
    p["models"]["b"] = {"backend": "openai", "base_url": "http://y/v1", "model": "b"}
    p["experts"] += [
        {"model": "a", "strategy": "zero_shot"},
        {"model": "b", "strategy": "zero_shot"},
    ]
    return p


def _digests(p: dict[str, Any]) -> dict[str, str | None]:
    plan = Plan(Settings.parse(p), paper=REPO / "data/paper_numbers.csv")
    out: dict[str, str | None] = {
        "shards": plan.evaluation.shardset,
        "match": plan.evaluation.mcfg,
        "judge": plan.evaluation.jcfg,
    }
    out.update(
        {
            f"sim:{x.expert}": plan.evaluation.sim(x.expert, x.strategy)
            for x in plan.evaluation.systems
        }
    )
    out.update(
        score=plan.evaluation.scfg,
        aggregate=plan.evaluation.aggregate_file,
        tables=plan.report.tables_dir,
    )
    return out


def _changed(mutate: Any) -> set[str]:
    p = _params()
    before = _digests(p)
    mutate(p)
    after = _digests(p)
    return {k for k in before if before.get(k) != after.get(k)} | (after.keys() - before.keys())


def test_runtime_only_settings_change_nothing() -> None:
    def mutate(p: dict[str, Any]) -> None:
        p["models"]["a"].update(concurrency=32, timeout=5, max_retries=0, price={"prompt": 1})
        p["models"]["a"]["api_key_env"] = "A_KEY"
        p["metrics"]["bertscore"].update(threads=1, mem_mb=1000)
        p["llm"] = {"store_dir": "elsewhere/responses"}

    assert _changed(mutate) == set()


def test_one_experts_setting_reruns_that_expert_only() -> None:
    changed = _changed(lambda p: p["models"]["a"].update(temperature=0.3))
    assert changed == {"sim:a", "aggregate", "tables"}


def test_a_label_changes_the_tables_only() -> None:
    assert _changed(lambda p: p["experts"][2].update(label="A!")) == {"tables"}
    assert _changed(lambda p: p["experts"][2].update(group="Ours")) == {"tables"}
    assert _changed(lambda p: p["experts"][2].update(paper_label="GPT-4o")) == {"tables"}


def test_adding_an_expert_keeps_every_other_digest() -> None:
    def add(p: dict[str, Any]) -> None:
        p["models"]["c"] = {"backend": "openai", "base_url": "http://z/v1", "model": "c"}
        p["experts"].append({"model": "c", "strategy": "few_shot"})

    assert _changed(add) == {"sim:c", "aggregate", "tables"}


def test_matcher_and_judge_settings_rerun_their_steps_and_scores() -> None:
    assert _changed(lambda p: p.update(matcher={"model": "a"})) == {
        "match",
        "score",
        "aggregate",
        "tables",
    }
    assert _changed(lambda p: p.update(judge={"model": "b"})) == {
        "judge",
        "score",
        "aggregate",
        "tables",
    }


def test_the_client_reruns_every_simulation() -> None:
    changed = _changed(lambda p: p.update(client={"model": "a", "strategy": "instruct_question"}))
    assert {"sim:human_replay", "sim:retrieval", "sim:a", "sim:b"} <= changed
    assert "match" not in changed


def test_max_turns_and_metrics_settings() -> None:
    assert "match" not in _changed(lambda p: p["simulation"].update(max_turns=5))
    assert _changed(lambda p: p["simulation"].update(max_turns=5)) >= {"sim:a", "sim:retrieval"}
    assert _changed(lambda p: p["metrics"]["rouge"].update(punctuation="drop")) == {
        "score",
        "aggregate",
        "tables",
    }


def test_the_test_set_names_the_shard_set_but_not_the_simulation(tmp_path: Path) -> None:
    src = REPO / "data/sample/sample_testset.jsonl"
    fewer = tmp_path / "fewer.jsonl"
    fewer.write_text(
        "".join(src.read_text(encoding="utf-8").splitlines(True)[:-1]), encoding="utf-8"
    )
    changed = _changed(lambda p: p["dataset"].update(test=str(fewer)))
    assert "shards" in changed and "sim:a" not in changed  # finished dialogues are reused


def test_paths_round_trip_through_the_parser() -> None:
    plan = Plan(Settings.parse(_params()), paper=REPO / "data/paper_numbers.csv")
    t = plan.evaluation.transcript("a", "zero_shot", "001")
    assert paths.parse(t) == (
        "transcript",
        {
            "expert": "a",
            "strategy": "zero_shot",
            "sim": plan.evaluation.sim("a", "zero_shot"),
            "shardset": plan.evaluation.shardset,
            "shard": "001",
        },
    )
    assert paths.parse(plan.evaluation.score("b", "zero_shot"))[0] == "score"
    assert paths.parse(plan.evaluation.journal("a", "zero_shot"))[1]["sim"] == plan.evaluation.sim(
        "a", "zero_shot"
    )


def test_spec_json_round_trips_and_keeps_the_digest() -> None:
    plan = Plan(Settings.parse(_params()), paper=REPO / "data/paper_numbers.csv")
    spec = plan.evaluation.simulate_spec("a", "zero_shot")
    again = type(spec).from_json(spec.to_json())
    assert again == spec and again.digest() == spec.digest()
    assert "concurrency" not in str(spec.identity())


def test_a_jobs_models_are_the_roles_its_spec_holds() -> None:
    """What the DAG build checks API keys for: every role of a spec, at any depth, read back
    from the JSON the rule hands the job."""
    p = _params()
    p["judge"] = {"model": "b"}
    p["replicates"] = {"experts": ["a"], "n": 2, "cases": 2}
    plan = Plan(Settings.parse(p), paper=REPO / "data/paper_numbers.csv")
    simulate = plan.evaluation.simulate_spec("a", "zero_shot")
    assert [r.name for r in roles_in(simulate)] == ["a", p["client"]["model"]]
    assert [r.name for r in roles_in(json.loads(simulate.to_json()))] == ["a", p["client"]["model"]]
    assert [r.name for r in roles_in(json.loads(plan.evaluation.judge_spec.to_json()))] == ["b"]
    replicate = plan.noise.replicate_specs()[0]
    names = {r.name for r in roles_in(json.loads(replicate.to_json()))}
    assert names == {"a", p["client"]["model"], p["matcher"]["model"], "b"}
    assert roles_in(json.loads(plan.evaluation.shard_spec.to_json())) == []
    # what a rule's params hand over: a spec's JSON, or a digest that only marks a rerun
    assert [r.name for r in roles_in_param(plan.evaluation.judge_spec.to_json())] == ["b"]
    assert roles_in_param(plan.evaluation.judge_spec.digest()) == [] and roles_in_param(None) == []
