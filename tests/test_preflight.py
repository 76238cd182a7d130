"""One preflight for the Snakefile and ``lecode check``: the same bad inputs are refused with the
same message by both; unreadable params files; labels are display text (any text works)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from lecode.config.base import SettingsError
from lecode.config.experiment import Settings
from lecode.preflight import preflight
from tests.conftest import copy_project, raw_case, write_jsonl

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SAMPLE = REPO / "data/sample/sample_testset.jsonl"


def _params(tmp_path: Path) -> dict[str, Any]:
    p = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    p["dataset"].update(train=str(SAMPLE), test=str(SAMPLE))
    return p


def _bad_inputs(tmp_path: Path) -> dict[str, tuple[dict[str, Any], str]]:
    """name: (override of params.yaml, the message both must give)."""
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + SAMPLE.read_bytes())
    invalid = write_jsonl(tmp_path / "invalid.jsonl", [{**raw_case("c1"), "suggestion": ""}])
    return {
        "sft writer": (
            {"sft": {"writer": "nosuchmodel"}},
            "sft.writer: model 'nosuchmodel' is not defined under models",
        ),
        "invalid dataset": (
            {"dataset": {"test": str(invalid)}},
            f"dataset.test: {invalid}:1: record 'c1': field 'suggestion': missing or empty",
        ),
        "dataset with a BOM": (
            {"dataset": {"test": str(bom)}},
            f"dataset.test: {bom}:1: record '?': field '<json>': not valid JSON: Unexpected "
            "UTF-8 BOM",
        ),
    }


def _refusal(params: dict[str, Any]) -> str:
    """What the one path both callers take (parse, then preflight) says."""
    with pytest.raises(SettingsError) as info:
        preflight(Settings.parse(params, source="params.yaml"), keys=False)
    return str(info.value)


@pytest.mark.parametrize("name", ["sft writer", "invalid dataset", "dataset with a BOM"])
def test_bad_inputs_are_refused_before_any_job(tmp_path: Path, name: str) -> None:
    from lecode.config.experiment import deep_merge

    override, message = _bad_inputs(tmp_path)[name]
    assert message in _refusal(deep_merge(_params(tmp_path), override))


def test_lecode_check_gives_the_dag_builds_message(tmp_path: Path) -> None:
    from lecode.config.experiment import deep_merge

    override, message = _bad_inputs(tmp_path)["dataset with a BOM"]
    expected = _refusal(deep_merge(_params(tmp_path), override))
    (tmp_path / "extra.yaml").write_text(yaml.safe_dump(override), encoding="utf-8")
    run = subprocess.run(
        [
            str(BIN / "lecode"),
            "check",
            "--params",
            "params.yaml",
            "--params",
            str(tmp_path / "extra.yaml"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1
    assert expected in run.stderr and message in run.stderr
    assert "configuration valid" not in run.stdout


@pytest.mark.parametrize("command", ["status", "check", "forecast"])
def test_a_missing_params_file_is_one_line_and_exit_2(tmp_path: Path, command: str) -> None:
    run = subprocess.run(
        [str(BIN / "lecode"), command, "--params", "nosuch.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().splitlines() == [
        f"lecode {command}: nosuch.yaml: cannot read: No such file or directory"
    ]
    assert "Traceback" not in run.stderr


def test_a_mistyped_sentinel_path_is_refused_naming_it(tmp_path: Path) -> None:
    p = _params(tmp_path)
    p["models"]["j"] = {"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "j"}
    p["judge"] = {"model": "j"}
    p["judge_sentinel"] = {"stored": "data/anchors/judge_anchor_score.json"}
    with pytest.raises(
        SettingsError,
        match=r"judge_sentinel\.stored: data/anchors/judge_anchor_score\.json does not exist",
    ):
        preflight(Settings.parse(p), keys=False)
    p["judge_sentinel"] = {"enabled": False, "stored": "data/anchors/judge_anchor_score.json"}
    preflight(Settings.parse(p), keys=False)  # off: nothing to read


# -- DAG builds (Snakemake) ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(tmp_path_factory.mktemp("preflight"))


def _dry_run(project: Path, extra: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    (project / "extra.yaml").write_text(json.dumps(extra), encoding="utf-8")
    cmd = [str(BIN / "snakemake"), "all_tables", "-n", "--cores", "1", "--configfile", "extra.yaml"]
    env = {k: v for k, v in os.environ.items() if k != "LECODE_REPLAY"}
    return subprocess.run(cmd, cwd=project, capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.parametrize(
    "text",
    [
        "{y}",
        pytest.param("{{y}}", marks=pytest.mark.slow),
        pytest.param("${z}", marks=pytest.mark.slow),
    ],
)
def test_labels_with_braces_reach_the_tables(project: Path, text: str) -> None:
    """Each kind of label (an expert's, a model's, a group, a reliability client's) holds
    ``text``; the DAG builds and the tables job's spec carries the labels unchanged."""
    extra = {
        "models": {
            "retrieval": {
                "backend": "offline",
                "agent": "retrieval",
                "label": f"R {text}",
                "group": f"M {text}",
            }
        },
        "experts": [
            {
                "model": "human_replay",
                "strategy": "baseline",
                "label": f"H {text}",
                "group": f"G {text}",
            },
            {"model": "retrieval", "strategy": "baseline"},
        ],
        "reliability": {
            "enabled": True,
            "clients": [{"model": "fact_lookup", "label": f"C {text}"}],
        },
    }
    run = _dry_run(project, extra)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    assert "WildcardError" not in out
    from lecode.config.experiment import deep_merge

    base = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    settings = Settings.parse(deep_merge(base, extra))
    assert [(x.label, x.group) for x in settings.systems()] == [
        (f"H {text}", f"G {text}"),
        (f"R {text}", f"M {text}"),
    ]


@pytest.mark.slow
def test_the_dag_refuses_a_mistyped_sentinel_path(project: Path) -> None:
    extra = {
        "models": {"j": {"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "j"}},
        "judge": {"model": "j"},
        "judge_sentinel": {"stored": "data/anchors/judge_anchor_score.json"},
    }
    run = _dry_run(project, extra)
    out = run.stdout + run.stderr
    assert run.returncode != 0
    assert "judge_sentinel.stored: data/anchors/judge_anchor_score.json does not exist" in out
    assert "Traceback" not in out


@pytest.mark.slow
def test_the_dag_refuses_what_lecode_check_refuses(project: Path, tmp_path: Path) -> None:
    override, message = _bad_inputs(tmp_path)["dataset with a BOM"]
    run = _dry_run(project, override)
    out = run.stdout + run.stderr
    assert run.returncode != 0
    assert message in out and "Job stats" not in out


def test_strategy_names_are_the_declared_ones_and_not_in_the_schema(tmp_path: Path) -> None:
    from lecode import strategies
    from lecode.preflight import json_schema

    p = _params(tmp_path)
    p["client"] = {"model": "fact_lookup", "strategy": "first_person"}
    with pytest.raises(SettingsError) as info:
        Settings.parse(p)
    message = str(info.value)
    assert "client.strategy: unknown client strategy 'first_person'" in message
    assert all(n in message for n in strategies.names("client"))
    schema = json.dumps(json_schema())
    listed = [f'"{n}"' for n in strategies.names("expert") + strategies.names("client")]
    # no strategy is enumerated; the one quoted name is the client's default
    assert [q for q in listed if q in schema] == ['"first_person_dialogue"']
    assert schema.count('"first_person_dialogue"') == 1
