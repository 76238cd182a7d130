from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from lecode.config import ParamsError, load_params, simulation_config, stable_hash, validate

REPO = Path(__file__).resolve().parent.parent


def _params() -> dict:
    return yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))


def test_default_params_are_valid() -> None:
    assert load_params(REPO / "params.yaml")["simulation"]["max_turns"] == 10


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda p: p["dataset"].update(n_shards=0), "dataset.n_shards"),
        (
            lambda p: p["experts"].append({"model": "nope", "strategy": "baseline"}),
            "experts[2].model",
        ),
        (lambda p: p["experts"][0].update(strategy="zero_shot"), "experts[0].strategy"),
        (
            lambda p: (
                p["models"]["x"].update(backend="openai")
                if "x" in p["models"]
                else p["models"].update(x={"backend": "openai"})
            ),
            "models.x",
        ),
        (lambda p: p.update(judge={"model": "lexical"}), "judge.model"),
        (lambda p: p.update(surprise=1), "<top level>"),
    ],
)
def test_invalid_params_name_the_setting(mutate, message: str) -> None:
    p = _params()
    mutate(p)
    with pytest.raises(ParamsError, match=message.replace("[", r"\[").replace("]", r"\]")):
        validate(p)


def test_override_file_merges(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text("simulation: {max_turns: 3}\n", encoding="utf-8")
    p = load_params(REPO / "params.yaml", extra)
    assert p["simulation"]["max_turns"] == 3
    assert p["dataset"] == _params()["dataset"]  # untouched sections stay as they were


def test_simulation_hash_changes_only_with_what_matters() -> None:
    p = _params()
    h_replay = stable_hash(simulation_config(p, "human_replay", "baseline"))
    h_retr = stable_hash(simulation_config(p, "retrieval", "baseline"))
    q = copy.deepcopy(p)
    q["models"]["retrieval"]["top_k"] = 9
    q["models"]["retrieval"]["label"] = "BM25"  # display only: no rerun
    assert stable_hash(simulation_config(q, "human_replay", "baseline")) == h_replay
    assert stable_hash(simulation_config(q, "retrieval", "baseline")) != h_retr
    q = copy.deepcopy(p)
    q["models"]["retrieval"]["label"] = "BM25"
    assert stable_hash(simulation_config(q, "retrieval", "baseline")) == h_retr
