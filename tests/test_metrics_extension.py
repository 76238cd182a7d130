"""A metric declared only here, in one new module of a copy of the package: it reaches the score
file, the tables its tags name (and no other), ``lecode explain``'s wording of a missing value,
and (slow, in tests/test_workflow_integration.py on its finished run) reruns scoring and what
follows, never simulation."""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NEW_MODULE = Path("lecode/metrics/declared/critical_recall.py")

#: The whole metric: its function and its declaration, in one new module.
CRITICAL_RECALL = '''"""Critical recall: importance-3 facts elicited / importance-3 facts."""

from __future__ import annotations

from lecode.metrics.declaration import Dialogue, Example, MetricDeclaration


def critical_recall(d: Dialogue) -> float | None:
    critical = {i for i, w in enumerate(d.importance) if w == 3}
    if not critical:
        return None
    elicited = {f for facts in d.matched for f in facts}
    return len(critical & elicited) / len(critical)


DECLARED = (
    MetricDeclaration(
        key="critical_recall",
        header="CR",
        scale=100.0,
        direction="higher",
        section="effectiveness",
        value_type=float,
        need="matches",
        compute=critical_recall,
        tags=("table3", "table6", "summary"),
        missing="not applicable: no key fact of importance 3",
        order=35,
        description="importance-3 facts elicited / importance-3 facts",
        example=Example(expected=1.0, why="fact 0, the only importance-3 fact, by question 3"),
    ),
)
'''

#: Runs in the copy: a finished tiny run (the real steps, tests/test_provenance.py), then what
#: the tables, the score file and ``lecode explain`` show of the new metric.
PROBE = """
import json, sys
from pathlib import Path
import lecode
from lecode.report.explain import explain_case, explain_cell, find_cell
from lecode.report.document import load
from tests.test_provenance import TABLES, build_project

p = build_project(Path.cwd())
doc = load(TABLES, "table3")
cell = find_cell(doc, "llmx/zero_shot", "CR")
print(json.dumps({
    "lecode": lecode.__file__,
    "header": Path(p.plan.evaluation.aggregate_file).read_text(encoding="utf-8").splitlines()[0],
    "table3": (Path(TABLES) / "table3.md").read_text(encoding="utf-8"),
    "table6": (Path(TABLES) / "table6.md").read_text(encoding="utf-8"),
    "table7": (Path(TABLES) / "table7.md").read_text(encoding="utf-8"),
    "cell": explain_cell(doc, cell),
    "case": explain_case(doc, "st-3", system="llmx/zero_shot"),
}))
"""


def _package_copy(root: Path) -> Path:
    """``workflow/`` copied under ``root``, plus the new metric module: the only file written."""
    workflow = root / "workflow"
    shutil.copytree(
        REPO / "workflow",
        workflow,
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    (workflow / NEW_MODULE).write_text(CRITICAL_RECALL, encoding="utf-8")
    return workflow


def _differences(a: Path, b: Path) -> list[str]:
    """Files that differ between the two trees, or exist in only one (``__pycache__`` aside)."""
    out: list[str] = []

    def walk(cmp: filecmp.dircmp[str], rel: Path) -> None:
        out.extend(str(rel / n) for n in cmp.left_only + cmp.right_only + cmp.diff_files)
        for name, sub in cmp.subdirs.items():
            walk(sub, rel / name)

    walk(filecmp.dircmp(a, b, ignore=["__pycache__", "lecode.egg-info"]), Path())
    return sorted(out)


def test_a_new_metric_is_one_module(tmp_path: Path) -> None:
    workflow = _package_copy(tmp_path / "copy")
    assert _differences(REPO / "workflow", workflow) == [str(NEW_MODULE)]
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(workflow), str(REPO)]))
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=run_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["lecode"].startswith(str(workflow))
    # the score file: a column in registry order (after recall_at_5, before ndcg)
    assert ",recall_at_5,critical_recall,ndcg," in out["header"]
    # Tables 3 and 6 by its tags, between R@5 and NDCG; not Table 7
    assert "| R@5 | CR | NDCG |" in out["table3"] and "| R@5 | CR | NDCG |" in out["table6"]
    assert "CR" not in out["table7"]
    # the notes derived from the declarations name it with its scale
    assert "R, WR, R@5, CR, NDCG" in out["table6"]
    # st-1 elicits its one importance-3 fact, st-2 both of its two (llmx/zero_shot); st-3 has
    # none (not applicable), st-4 failed: mean 100.0 over 2 of 4
    assert "recomputed from the per-dialogue scores: 100 over 2 dialogues" in out["cell"]
    assert (
        "missing for 2: st-3 (not applicable: no key fact of importance 3), "
        "st-4 (failed dialogue: stop reason error)"
    ) in out["cell"]
    assert "CR —" in out["case"]
    assert "CR: not applicable: no key fact of importance 3" in out["case"]
    assert "failed dialogue" not in out["case"]
