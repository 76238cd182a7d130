"""The typed configuration: unknown keys, semantic checks, runnable checks, the schema."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from lecode.config.base import SettingsError
from lecode.config.experiment import Settings
from lecode.preflight import SCHEMA_PATH, json_schema, preflight

REPO = Path(__file__).resolve().parent.parent
SAMPLE_TEST = str(REPO / "data/sample/sample_testset.jsonl")
SAMPLE_TRAIN = str(REPO / "data/sample/sample_trainset.jsonl")


def _params() -> dict[str, Any]:
    p = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    p["dataset"].update(train=SAMPLE_TRAIN, test=SAMPLE_TEST)
    return p


def _llm(**extra: Any) -> dict[str, Any]:
    return {"backend": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m", **extra}


def test_default_params_parse_with_defaults_filled() -> None:
    s = Settings.load(REPO / "params.yaml")
    assert s.simulation.max_turns == 10
    assert s.llm.store_dir == "store/responses"
    assert [x.label for x in s.systems()] == ["human_replay/baseline", "retrieval/baseline"]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda p: p["dataset"].update(n_shards=0), "dataset.n_shards"),
        (lambda p: p["experts"].append({"model": "nope", "strategy": "baseline"}), "experts[2]"),
        (lambda p: p["experts"][0].update(strategy="zero_shot"), "experts[0].strategy"),
        (lambda p: p["models"].update(x={"backend": "openai"}), "models.x.base_url"),
        (lambda p: p.update(judge={"model": "lexical"}), "judge.model"),
        (lambda p: p.update(surprise=1), "surprise: unknown setting"),
        (lambda p: p["simulation"].update(max_turns=0), "simulation.max_turns"),
        # a typo in a model entry is an error, never a silently unsent setting
        (lambda p: p["models"].update(x=_llm(temprature=0.0)), "models.x.temprature: unknown"),
        (lambda p: p["models"]["retrieval"].update(max_facts=3), "models.retrieval.max_facts"),
        (lambda p: p["models"].update(x={"backend": "vllm", "model": "m"}), "models.x"),
        (
            lambda p: p["models"].update(x={"backend": "vllm", "server": "retrieval"}),
            "models.x.server",
        ),
    ],
)
def test_invalid_settings_name_the_setting(mutate: Any, message: str) -> None:
    p = _params()
    mutate(p)
    with pytest.raises(SettingsError) as err:
        Settings.parse(p)
    assert message in str(err.value)


def test_duplicate_labels_are_rejected_before_any_job() -> None:
    p = _params()
    p["models"]["a"] = _llm(label="Same")
    p["models"]["b"] = _llm(label="Same")
    p["experts"] = [
        {"model": "a", "strategy": "zero_shot"},
        {"model": "b", "strategy": "zero_shot"},
    ]
    with pytest.raises(SettingsError, match=r"experts\[1\]: label 'Same'"):
        Settings.parse(p)
    p["experts"][1]["label"] = "Other"
    assert [x.label for x in Settings.parse(p).systems()] == ["Same", "Other"]


def test_missing_api_key_variable_is_found_when_the_dag_is_built() -> None:
    p = _params()
    p["models"]["a"] = _llm(api_key_env="SOME_KEY")
    p["experts"].append({"model": "a", "strategy": "zero_shot"})
    s = Settings.parse(p)
    with pytest.raises(SettingsError, match="models.a.api_key_env: environment variable SOME_KEY"):
        preflight(s, environ={})
    preflight(s, environ={"SOME_KEY": "x"})
    preflight(s, environ={"LECODE_REPLAY": "1"})  # replay sends nothing: no key needed


def test_empty_or_unreadable_datasets_name_the_setting(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    p = _params()
    p["dataset"]["test"] = str(empty)
    with pytest.raises(SettingsError, match="dataset.test: .* holds no consultations"):
        preflight(Settings.parse(p), environ={})
    p["dataset"]["test"] = str(tmp_path / "missing.jsonl")
    with pytest.raises(SettingsError, match="dataset.test: cannot read"):
        preflight(Settings.parse(p), environ={})


def test_override_file_merges(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text("simulation: {max_turns: 3}\n", encoding="utf-8")
    s = Settings.load(REPO / "params.yaml", extra)
    assert s.simulation.max_turns == 3
    assert s.dataset.n_shards == _params()["dataset"]["n_shards"]


#: Shipped files that are overlays of another shipped file (valid over it, not alone).
OVERLAY_OF = {"sft.yaml": "paper.yaml"}


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "configs").glob("*.yaml")))
def test_shipped_configurations_are_valid(name: str) -> None:
    base = [REPO / "configs" / OVERLAY_OF[name]] if name in OVERLAY_OF else []
    Settings.load(REPO / "params.yaml", *base, REPO / "configs" / name)


def test_schema_file_is_generated_from_the_models() -> None:
    assert json.loads(SCHEMA_PATH.read_text(encoding="utf-8")) == json_schema()
    # the schema forbids unknown keys in model entries too
    text = json.dumps(json_schema())
    assert '"additionalProperties": false' in text


def test_settings_are_parsed_not_mutated() -> None:
    p = _params()
    before = copy.deepcopy(p)
    Settings.parse(p)
    assert p == before
