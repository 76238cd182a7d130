"""Code fingerprints: every module a step can import is covered, an edit of the code changes the
fingerprint of exactly the steps that import the edited module, and comments, docstrings and
layout change none."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lecode import fingerprint as fp

REPO = Path(__file__).resolve().parent.parent
STEPS = sorted(fp.steps())
#: modules whose comments and docstrings must move no step (relative to workflow/lecode)
QUIET_EDITS = ("config/models.py", "records.py", "llm/templates.py", "metrics/clarification.py")
CODE_EDIT = b"\n_EDITED_FOR_THE_TEST = 1\n"


@pytest.fixture
def workflow_copy(tmp_path: Path) -> Path:
    """A copy of the package and scripts (a ``workflow/`` directory) to edit."""
    root = tmp_path / "workflow"
    shutil.copytree(
        REPO / "workflow/lecode", root / "lecode", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(REPO / "workflow/scripts", root / "scripts")
    return root


def step_codes(root: Path) -> dict[str, str]:
    tree = fp.CodeTree(root)  # a tree is read once: a new one sees the edits
    return {s: tree.step_code(s) for s in STEPS}


def closures(root: Path) -> dict[str, set[str]]:
    tree = fp.CodeTree(root)
    return {s: set(tree.closure(tree.step_module(s))) for s in STEPS}


def edit_docstrings(source: bytes) -> bytes:
    """``source`` with " (reworded)" added at the end of every docstring."""
    tree = ast.parse(source)
    lines = source.split(b"\n")
    ends = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                doc = body[0].value
                if isinstance(doc.value, str):
                    assert doc.end_lineno is not None and doc.end_col_offset is not None
                    ends.append((doc.end_lineno - 1, doc.end_col_offset))
    assert ends, "the module has no docstring to edit"
    for row, col in sorted(ends, reverse=True):
        line = lines[row]
        quote = 3 if line[col - 3 : col] in (b'"""', b"'''") else 1
        lines[row] = line[: col - quote] + b" (reworded)" + line[col - quote :]
    return b"\n".join(lines)


# --------------------------------------------------------------------------- normalisation


def test_normalisation_ignores_comments_docstrings_and_layout() -> None:
    base = b'"""Doc."""\n\ndef f(x):\n    """Says hi."""\n    return g(x, "hi")\n'
    same = [
        b'"""Doc."""\n\ndef f(x):\n    """Says hi."""\n    return g(x, "hi")  # why\n',
        b'"""Other words."""\n\n\ndef f(x):\n    """Says hello."""\n'
        b'    return g(\n        x, "hi"\n    )\n',
        b'def f(x):\n    return g(x, "hi")\n',
        b"def f(x):\n    'attribute-style note'\n    return g(x, 'hi')\n",
    ]
    different = [
        b'def f(x):\n    return g(x, "hello")\n',  # a string literal
        b'def f(x):\n    return g(x, f"hi {x}")\n',
        b"def f(y):\n    return g(y, 'hi')\n",  # a name
        b"def f(x):\n    return g(x, b'hi')\n",  # bytes, not str
        b'def f(x):\n    raise ValueError("x must be positive")\n',
        b'def f(x):\n    raise ValueError("x must be > 0")\n',
    ]
    d = fp.normalised_digest(base)
    assert [fp.normalised_digest(s) for s in same] == [d] * len(same)
    digests = [fp.normalised_digest(s) for s in different]
    assert d not in digests and len(set(digests)) == len(different)


def test_an_unparsable_file_is_named() -> None:
    with pytest.raises(fp.FingerprintError, match=r"lecode/broken\.py: cannot be parsed"):
        fp.normalised_digest(b"def f(:\n", "lecode/broken.py")


# --------------------------------------------------------------------------- the real package


def test_every_step_has_an_entry_module_that_declares_it() -> None:
    """Each ``lecode/<study>/steps/<step>.py`` declares ``STEP = Step(spec=<its spec>, ...)``
    whose spec names that step (read from the syntax tree: importing every step would load
    every library the pipeline uses)."""
    import ast
    import importlib

    studies = {fp.step_module(s).split(".")[1] for s in STEPS}
    spec_steps = {
        name: cls.step
        for study in studies
        for name, cls in vars(importlib.import_module(f"lecode.{study}.specs")).items()
        if isinstance(cls, type) and isinstance(getattr(cls, "step", None), str)
    }
    for step in STEPS:
        path = fp.module_file(fp.step_module(step))
        assert path is not None
        tree = ast.parse(path.read_text(encoding="utf-8"))
        declared = [
            node.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "STEP" for t in node.targets)
        ]
        assert len(declared) == 1, f"{path}: one STEP = Step(...) at module level"
        call = declared[0]
        assert isinstance(call, ast.Call) and ast.unparse(call.func) == "Step", path
        spec = next(k.value for k in call.keywords if k.arg == "spec")
        assert spec_steps[ast.unparse(spec)] == step, (path, ast.unparse(spec))
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
    sim = fp.closure("lecode.evaluation.steps.simulate")
    # build_expert imports the LLM expert lazily, inside a function
    assert "lecode.agents.llm_expert" in sim
    assert "lecode.agents.retrieval" in sim
    # packages on the way are executed on import and so are covered
    assert {"lecode", "lecode.agents", "lecode.evaluation", "lecode.evaluation.steps"} <= set(sim)
    # the judge is not part of the simulation (its own step)
    assert "lecode.agents.llm_judge" not in sim
    assert "lecode.agents.llm_judge" in fp.closure("lecode.evaluation.steps.judge_advice")


def test_the_installed_tree_is_the_default() -> None:
    tree = fp.CodeTree(REPO / "workflow")
    assert {s: fp.step_code(s) for s in STEPS} == {s: tree.step_code(s) for s in STEPS}


def test_a_code_edit_changes_exactly_the_steps_that_import_the_module(
    workflow_copy: Path,
) -> None:
    before = step_codes(workflow_copy)
    within = closures(workflow_copy)
    modules = sorted({m for c in within.values() for m in c})
    assert len(modules) > 30
    for module in modules:
        path = fp.CodeTree(workflow_copy).module_file(module)
        assert path is not None
        original = path.read_bytes()
        path.write_bytes(original + CODE_EDIT)
        after = step_codes(workflow_copy)
        changed = {s for s in STEPS if after[s] != before[s]}
        assert changed == {s for s in STEPS if module in within[s]}, module
        path.write_bytes(original)
    assert step_codes(workflow_copy) == before


@pytest.mark.parametrize("module", QUIET_EDITS)
def test_comments_and_docstrings_change_no_step(workflow_copy: Path, module: str) -> None:
    before = step_codes(workflow_copy)
    name = "lecode." + module.removesuffix(".py").replace("/", ".")
    holders = {s for s, c in closures(workflow_copy).items() if name in c}
    path = workflow_copy / "lecode" / module
    original = path.read_bytes()

    path.write_bytes(original + b"\n# a note on what follows\n")
    assert step_codes(workflow_copy) == before
    path.write_bytes(edit_docstrings(original))
    assert path.read_bytes() != original
    assert step_codes(workflow_copy) == before

    path.write_bytes(original + CODE_EDIT)
    after = step_codes(workflow_copy)
    assert {s for s in STEPS if after[s] != before[s]} == holders


def test_editing_the_judge_changes_only_the_judge(workflow_copy: Path) -> None:
    before = step_codes(workflow_copy)
    judge = workflow_copy / "lecode/agents/llm_judge.py"
    judge.write_bytes(judge.read_bytes() + CODE_EDIT)
    after = step_codes(workflow_copy)
    changed = {s for s in STEPS if after[s] != before[s]}
    assert "judge_advice" in changed
    assert not changed & {"simulate", "match_facts", "score_system", "shard_dataset"}


def test_the_step_script_is_hashed_normalised(workflow_copy: Path) -> None:
    """Every step rule runs ``scripts/step.py``: a code edit there moves every step."""
    before = step_codes(workflow_copy)
    script = workflow_copy / "scripts/step.py"
    original = script.read_bytes()
    script.write_bytes(original + b"\n# reviewed\n")
    assert step_codes(workflow_copy) == before
    script.write_bytes(original + CODE_EDIT)
    after = step_codes(workflow_copy)
    assert {s for s in STEPS if after[s] != before[s]} == set(STEPS)


def test_a_new_helper_module_is_covered_once_imported(workflow_copy: Path) -> None:
    before = step_codes(workflow_copy)["score_system"]
    (workflow_copy / "lecode/newhelper.py").write_text("X = 1\n", encoding="utf-8")
    assert step_codes(workflow_copy)["score_system"] == before  # not imported: not covered
    scoring = workflow_copy / "lecode/evaluation/scoring.py"
    scoring.write_text(scoring.read_text(encoding="utf-8") + "\nfrom lecode import newhelper\n")
    assert "lecode.newhelper" in fp.CodeTree(workflow_copy).closure(
        "lecode.evaluation.steps.score_system"
    )


def test_code_digest_hashes_the_named_modules(workflow_copy: Path) -> None:
    tree = fp.CodeTree(workflow_copy)
    one = tree.code_digest(["lecode.text"])
    assert one == fp.code_digest(["lecode.text"])  # the installed tree: same files
    assert tree.code_digest(["lecode.text", "lecode.records"]) != one
    text = workflow_copy / "lecode/text.py"
    text.write_bytes(text.read_bytes() + b"\n# note\n")
    assert fp.CodeTree(workflow_copy).code_digest(["lecode.text"]) == one
    text.write_bytes(text.read_bytes() + CODE_EDIT)
    assert fp.CodeTree(workflow_copy).code_digest(["lecode.text"]) != one
    with pytest.raises(fp.FingerprintError, match="lecode.nosuch: not a module"):
        tree.code_digest(["lecode.nosuch"])


def test_reading_another_tree(workflow_copy: Path) -> None:
    """Within ``reading``, the module functions (and the template digests) read that tree."""
    installed = fp.step_code("score_system")
    template = REPO / "workflow/prompts/judge/advice_quality.txt"
    template_digest = fp.digest_files([template], template.parent)
    script = workflow_copy / "scripts/step.py"
    script.write_bytes(script.read_bytes() + CODE_EDIT)
    copied = workflow_copy.parent / "workflow/prompts/judge"
    copied.mkdir(parents=True)
    (copied / "advice_quality.txt").write_bytes(template.read_bytes() + "改".encode())
    with fp.reading(fp.CodeTree(workflow_copy)):
        assert fp.step_code("score_system") != installed
        assert fp.digest_files([template], template.parent) != template_digest
    assert fp.step_code("score_system") == installed
    assert fp.digest_files([template], template.parent) == template_digest


def test_imported_modules_are_within_the_closure(tmp_path: Path) -> None:
    """Import each step module, call its role builders' lazy imports, and compare the lecode
    modules Python actually loaded with the closure (the closure must cover them all)."""
    code = """
import json, sys
import lecode.agents.experts as e, lecode.agents.clients as c
import lecode.agents.matchers as m, lecode.agents.judges as j
step = sys.argv[1]
__import__(f"lecode.evaluation.steps.{step}")
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
    # strategy declarations are loaded by name (the plan adds the one a job uses)
    declared = ("lecode.strategies.expert", "lecode.strategies.client")
    loaded = {m for m in loaded if not m.startswith(declared)}
    assert loaded <= set(fp.closure("lecode.evaluation.steps.simulate"))


# --------------------------------------------------------------------------- discovery


def fake_package(root: Path, files: dict[str, str]) -> fp.CodeTree:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return fp.CodeTree(root)


DISCOVERY_FILES = {
    "lecode/__init__.py": "",
    "lecode/steps/__init__.py": "",
    "lecode/steps/score.py": "from lecode.decls import one\nimport lecode.strats\n",
    "lecode/steps/other.py": "import lecode.strats.base\n",
    # found by listing: every module below it, once anything of it is imported
    "lecode/decls/__init__.py": 'DISCOVERY = "all"\n',
    "lecode/decls/one.py": "A = 1\n",
    "lecode/decls/unimported.py": "from lecode import helper\n",
    "lecode/decls/sub/__init__.py": "",
    "lecode/decls/sub/two.py": "B = 2\n",
    "lecode/decls/perjob/__init__.py": 'DISCOVERY: str = "per_job"\n',
    "lecode/decls/perjob/p.py": "C = 3\n",
    "lecode/helper.py": "H = 1\n",
    # chosen per job: none of its modules by listing
    "lecode/strats/__init__.py": 'DISCOVERY = "per_job"\nimport importlib\n',
    "lecode/strats/base.py": "class Strategy: ...\n",
    "lecode/strats/expert/__init__.py": "",
    "lecode/strats/expert/zero.py": "from lecode.strats.base import Strategy\nS = Strategy()\n",
    "lecode/strats/expert/few.py": "from lecode.strats.base import Strategy\nS = Strategy()\n",
    # no rule: only what is imported
    "lecode/plain/__init__.py": "",
    "lecode/plain/a.py": "",
    "lecode/plain/b.py": "",
}


def test_discovery_all_and_per_job(tmp_path: Path) -> None:
    root = tmp_path / "workflow"
    files = {**DISCOVERY_FILES, "lecode/steps/plain.py": "from lecode.plain import a\n"}
    tree = fake_package(root, files)
    assert tree.discovery("lecode.decls") == "all"
    assert tree.discovery("lecode.strats") == "per_job"
    assert tree.discovery("lecode.plain") == ""
    assert tree.closure("lecode.steps.score") == (
        "lecode",
        "lecode.decls",
        "lecode.decls.one",
        "lecode.decls.perjob",  # its package module, not its modules
        "lecode.decls.sub",
        "lecode.decls.sub.two",
        "lecode.decls.unimported",
        "lecode.helper",  # imported by a discovered module
        "lecode.steps",
        "lecode.steps.score",
        "lecode.strats",
    )
    assert tree.closure("lecode.steps.other") == (
        "lecode",
        "lecode.steps",
        "lecode.steps.other",
        "lecode.strats",
        "lecode.strats.base",  # imported by name: followed
    )
    assert "lecode.plain.b" not in tree.closure("lecode.steps.plain")

    before = {s: tree.step_code(s) for s in ("score", "other")}

    def edit(rel: str) -> dict[str, str]:
        path = root / rel
        path.write_text(path.read_text(encoding="utf-8") + "\nZ = 0\n", encoding="utf-8")
        fresh = fp.CodeTree(root)
        return {s: fresh.step_code(s) for s in ("score", "other")}

    after = edit("lecode/decls/sub/two.py")  # found by listing
    assert after["score"] != before["score"] and after["other"] == before["other"]
    before = after
    zero = fp.CodeTree(root).code_digest(["lecode.strats.expert.zero"])
    after = edit("lecode/strats/expert/zero.py")  # a strategy: only its jobs, via its digest
    assert after == before
    assert fp.CodeTree(root).code_digest(["lecode.strats.expert.zero"]) != zero
    assert edit("lecode/decls/perjob/p.py") == before


def test_a_discovery_value_other_than_the_two_is_named(tmp_path: Path) -> None:
    tree = fake_package(
        tmp_path / "workflow",
        {
            "lecode/__init__.py": "",
            "lecode/steps/__init__.py": "",
            "lecode/steps/s.py": "import lecode.decls\n",
            "lecode/decls/__init__.py": 'DISCOVERY = "everything"\n',
        },
    )
    with pytest.raises(fp.FingerprintError, match=r"lecode/decls/__init__\.py: DISCOVERY must"):
        tree.closure("lecode.steps.s")
