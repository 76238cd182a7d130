"""Code fingerprints: every module a step can import is covered, and an edit changes the
fingerprint of exactly the steps that import the edited module."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lecode import fingerprint as fp

REPO = Path(__file__).resolve().parent.parent
STEPS = sorted(
    p.stem
    for p in (REPO / "workflow/lecode/steps").glob("*.py")
    if (REPO / "workflow/scripts" / p.name).is_file()
)


def _clear() -> None:
    fp.direct_imports.cache_clear()
    fp.closure.cache_clear()
    fp.step_code.cache_clear()


@pytest.fixture
def workflow_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the package that the fingerprint functions read instead of the real one."""
    root = tmp_path / "workflow"
    shutil.copytree(
        REPO / "workflow/lecode", root / "lecode", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(REPO / "workflow/scripts", root / "scripts")
    monkeypatch.setattr(fp, "PACKAGE_DIR", root / "lecode")
    monkeypatch.setattr(fp, "WORKFLOW_DIR", root)
    monkeypatch.setattr(fp, "SCRIPTS_DIR", root / "scripts")
    _clear()
    yield root
    _clear()


def test_every_step_has_an_entry_module_and_script() -> None:
    assert set(STEPS) >= {
        "shard_dataset",
        "simulate",
        "match_facts",
        "judge_advice",
        "score_system",
        "aggregate_scores",
        "tables",
        "figures",
        "html_report",
    }


def test_closure_follows_lazy_and_from_imports() -> None:
    sim = fp.closure("lecode.steps.simulate")
    # build_expert imports the LLM expert lazily, inside a function
    assert "lecode.agents.llm_expert" in sim
    assert "lecode.agents.retrieval" in sim
    # packages on the way are executed on import and so are covered
    assert {"lecode", "lecode.agents", "lecode.steps"} <= set(sim)
    # the judge is not part of the simulation (its own step)
    assert "lecode.agents.llm_judge" not in sim
    assert "lecode.agents.llm_judge" in fp.closure("lecode.steps.judge_advice")


def test_an_edit_changes_exactly_the_steps_that_import_the_module(workflow_copy: Path) -> None:
    before = {s: fp.step_code(s) for s in STEPS}
    closures = {s: set(fp.closure(f"lecode.steps.{s}")) for s in STEPS}
    modules = sorted({m for c in closures.values() for m in c})
    assert len(modules) > 30
    for module in modules:
        path = fp.module_file(module)
        assert path is not None
        original = path.read_bytes()
        path.write_bytes(original + b"\n# edited\n")
        # a comment changes no import: the parsed imports and closures stay valid, only the
        # hashes of the files are computed again
        fp.step_code.cache_clear()
        after = {s: fp.step_code(s) for s in STEPS}
        changed = {s for s in STEPS if after[s] != before[s]}
        assert changed == {s for s in STEPS if module in closures[s]}, module
        path.write_bytes(original)
    _clear()
    assert {s: fp.step_code(s) for s in STEPS} == before


def test_editing_the_judge_changes_only_the_judge(workflow_copy: Path) -> None:
    before = {s: fp.step_code(s) for s in STEPS}
    judge = workflow_copy / "lecode/agents/llm_judge.py"
    judge.write_text(judge.read_text(encoding="utf-8") + "\n# stricter\n", encoding="utf-8")
    _clear()
    changed = {s for s in STEPS if fp.step_code(s) != before[s]}
    assert "judge_advice" in changed
    assert not changed & {"simulate", "match_facts", "score_system", "shard_dataset"}


def test_a_new_helper_module_is_covered_once_imported(workflow_copy: Path) -> None:
    before = fp.step_code("score_system")
    (workflow_copy / "lecode/newhelper.py").write_text("X = 1\n", encoding="utf-8")
    _clear()
    assert fp.step_code("score_system") == before  # not imported: not covered
    scoring = workflow_copy / "lecode/scoring.py"
    scoring.write_text(scoring.read_text(encoding="utf-8") + "\nfrom lecode import newhelper\n")
    _clear()
    assert "lecode.newhelper" in fp.closure("lecode.steps.score_system")


def test_imported_modules_are_within_the_closure(tmp_path: Path) -> None:
    """Import each step module, call its role builders' lazy imports, and compare the lecode
    modules Python actually loaded with the closure (the closure must cover them all)."""
    code = """
import json, sys
import lecode.agents.experts as e, lecode.agents.clients as c
import lecode.agents.matchers as m, lecode.agents.judges as j
step = sys.argv[1]
__import__(f"lecode.steps.{step}")
if step == "simulate":
    import lecode.agents.llm_expert, lecode.agents.retrieval, lecode.agents.human_replay
    import lecode.agents.llm_client_sim, lecode.agents.fact_lookup, lecode.llm.runtime
    loaded = [k for k in sys.modules if k.startswith("lecode")]
    print(json.dumps(loaded))
"""
    out = subprocess.run(
        [sys.executable, "-c", code, "simulate"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO / "workflow",
    ).stdout
    loaded = set(json.loads(out))
    # the builders of other roles were imported by this test itself, not by the step
    loaded -= {"lecode.agents.matchers", "lecode.agents.judges"}
    assert loaded <= set(fp.closure("lecode.steps.simulate"))
