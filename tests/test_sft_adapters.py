"""LoRA adapters served by vLLM: identified by what they are (their training, or their files),
not by their path; and one `all_tables` run trains, publishes, then serves and evaluates them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from lecode.config.experiment import Settings, deep_merge
from lecode.pipeline import Plan
from tests.conftest import copy_project

REPO = Path(__file__).resolve().parent.parent
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def sft_overlay(lora: dict[str, str], **train: Any) -> dict[str, Any]:
    """A vLLM base entry serving the given adapters, each played as an expert."""
    return {
        "sft": {
            "variants": ["direct", "keyfact"],
            "train": {"enabled": True, "base_model": "models/base", "devices": 1, **train},
        },
        "models": {
            "base": {
                "backend": "vllm",
                "model": "base",
                "model_path": "models/base",
                "seed": 0,
                "lora": lora,
            },
            **{
                name: {"backend": "vllm", "server": "base", "model": name, "seed": 0}
                for name in lora
            },
        },
        "experts": [{"model": "base", "strategy": "zero_shot"}]
        + [{"model": name, "strategy": "zero_shot"} for name in lora],
    }


PUBLISHED = {
    "direct-sft": "results/sft/lora/direct-sft",
    "keyfact-sft": "results/sft/lora/keyfact-sft",
}


def plan(overlay: dict[str, Any]) -> Plan:
    base = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    for key in ("train", "test"):
        base["dataset"][key] = str(REPO / base["dataset"][key])
    return Plan(Settings.parse(deep_merge(base, overlay)), paper=REPO / "data/paper_numbers.csv")


def test_a_published_adapter_is_identified_by_its_training() -> None:
    p = plan(sft_overlay(PUBLISHED))
    identity = p.roles.adapter_identity("direct-sft")
    assert identity == "train:" + p.sft.sft_train_spec("direct").digest()
    assert (
        p.roles.adapter_identity("keyfact-sft")
        == "train:" + p.sft.sft_train_spec("keyfact").digest()
    )
    assert p.roles.adapter_identity("base") is None  # the base model is no adapter
    sim = p.evaluation.simulate_spec("direct-sft", "zero_shot")
    assert sim.expert.adapter == identity
    assert sim.runtime.adapters == {"direct-sft": identity}
    assert p.roles.adapter_inputs("direct-sft") == sorted(PUBLISHED.values())
    assert p.roles.adapter_inputs("base") == sorted(PUBLISHED.values())  # its server serves them
    assert not p.roles.warnings

    # a training hyperparameter changes the adapter's identity, its evaluation's digest (so
    # its output directory and dialogue journal) and nothing of the base model's
    q = plan(sft_overlay(PUBLISHED, lora_r=16))
    assert q.roles.adapter_identity("direct-sft") != identity
    assert q.evaluation.sim("direct-sft", "zero_shot") != p.evaluation.sim(
        "direct-sft", "zero_shot"
    )
    assert q.evaluation.journal("direct-sft", "zero_shot") != p.evaluation.journal(
        "direct-sft", "zero_shot"
    )
    assert q.evaluation.sim("base", "zero_shot") == p.evaluation.sim("base", "zero_shot")


def test_an_external_adapter_is_identified_by_its_files(tmp_path: Path) -> None:
    adapter = tmp_path / "adapters" / "tuned"
    (adapter / "sub").mkdir(parents=True)
    (adapter / "adapter_config.json").write_text('{"r": 8}', encoding="utf-8")
    (adapter / "sub" / "weights.bin").write_bytes(b"\x00\x01" * 1000)
    first = plan(sft_overlay({"tuned": str(adapter)}))
    identity = first.roles.adapter_identity("tuned")
    assert identity is not None and identity.startswith("sha256:")
    assert first.roles.adapter_inputs("tuned") == []  # not a DAG output: it must exist
    assert plan(sft_overlay({"tuned": str(adapter)})).roles.adapter_identity("tuned") == identity

    (adapter / "sub" / "weights.bin").write_bytes(b"\x00\x02" * 1000)
    second = plan(sft_overlay({"tuned": str(adapter)}))
    assert second.roles.adapter_identity("tuned") not in (identity, None)
    assert second.evaluation.sim("tuned", "zero_shot") != first.evaluation.sim("tuned", "zero_shot")


def test_a_missing_external_adapter_is_identified_by_its_path_with_a_warning(
    tmp_path: Path,
) -> None:
    missing = str(tmp_path / "nowhere")
    p = plan(sft_overlay({"tuned": missing}))
    assert p.roles.adapter_identity("tuned") == "path:" + missing
    assert len(p.roles.warnings) == 1 and "models.tuned" in p.roles.warnings[0]


# -- the DAG: one all_tables run -----------------------------------------------------------------


def dag_edges(dot: str) -> tuple[dict[str, str], set[tuple[str, str]]]:
    """Job id -> rule, and (from, to) edges of `snakemake --dag` output."""
    rules = {m[1]: m[2] for m in re.finditer(r'^\s*(\d+)\[label = "([A-Za-z0-9_]+)', dot, re.M)}
    edges = {(m[1], m[2]) for m in re.finditer(r"^\s*(\d+) -> (\d+)", dot, re.M)}
    return rules, edges


@pytest.mark.slow
def test_one_all_tables_run_trains_publishes_and_then_evaluates(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    project = copy_project(tmp_path / "proj")
    (project / "models" / "base").mkdir(parents=True)
    (project / "sft.yaml").write_text(yaml.safe_dump(sft_overlay(PUBLISHED)), encoding="utf-8")
    cmd = [SNAKEMAKE, "all_tables", "--cores", "4", "--configfile", "sft.yaml"]
    run = subprocess.run([*cmd, "-n"], cwd=project, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout + run.stderr
    counts = {rule: int(n) for rule, n in re.findall(r"^([a-z_0-9]+)\s+(\d+)$", run.stdout, re.M)}
    assert counts.get("build_sft_data") == 2, out[-3000:]
    assert counts.get("train_lora") == 2 and counts.get("publish_lora") == 2
    assert counts.get("simulate") == 6  # base and two adapters x 2 shards
    assert not (project / "store" / "servers").exists()  # a dry run starts nothing

    dag = subprocess.run([*cmd, "--dag"], cwd=project, capture_output=True, text=True, timeout=300)
    assert dag.returncode == 0, dag.stderr[-3000:]
    rules, edges = dag_edges(dag.stdout)
    publish = {j for j, r in rules.items() if r == "publish_lora"}
    simulate = {j for j, r in rules.items() if r == "simulate"}
    assert len(publish) == 2 and simulate, dag.stdout[:2000]
    # every simulation waits for every adapter its server serves (vLLM takes them at start)
    for sim in simulate:
        assert {p for p in publish if (p, sim) in edges} == publish, sim


def test_a_simulation_refuses_an_adapter_published_under_other_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lecode.evaluation.steps.simulate import run
    from lecode.llm.errors import LLMConfigError

    spec = plan(sft_overlay(PUBLISHED)).evaluation.simulate_spec("direct-sft", "zero_shot")
    expected = spec.expert.adapter.removeprefix("train:")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LECODE_REPLAY", raising=False)
    adapter = tmp_path / PUBLISHED["direct-sft"]
    adapter.mkdir(parents=True)
    (adapter / "lecode_provenance.json").write_text(json.dumps({"spec": "0123456789"}))
    (tmp_path / "shard.jsonl").write_text("")
    with pytest.raises(LLMConfigError) as err:
        run(spec, shard="shard.jsonl", out="out.jsonl")
    assert "models.direct-sft" in str(err.value)
    assert "0123456789" in str(err.value) and expected in str(err.value)
    assert not (tmp_path / "out.jsonl").exists()

    (adapter / "lecode_provenance.json").write_text(json.dumps({"spec": expected}))
    run(spec, shard="shard.jsonl", out="out.jsonl")  # the adapter it is identified by
    assert (tmp_path / "out.jsonl").exists()
