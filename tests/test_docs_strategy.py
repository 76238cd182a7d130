"""The worked strategy example of ``docs/extending-strategies.md`` works as written: its code
blocks that name a file (```` ```python file=<path> ````) are written into a copy of the
package, and the strategy they add plays dialogues against the mock endpoint, with the calls
the page describes and the forecast counting exactly those."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lecode import strategies
from tests.support import plan_first, recap_each_turn
from tests.support.cases import synthetic_cases, write_jsonl
from tests.test_strategies import copy_package, run_in_copy, tree

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "extending-strategies.md"
BLOCK = re.compile(r"^```\w+ file=(\S+)\n(.*?)^```$", re.M | re.S)
#: strategy names the tests add to copies of the project
RESERVED = {plan_first.NAME, recap_each_turn.NAME}


def doc_files(text: str) -> dict[str, str]:
    """path -> content of every code block that names a file."""
    return {path: body for path, body in BLOCK.findall(text)}


def test_doc_blocks_are_found() -> None:
    text = (
        "x\n```python file=a/b.py\nA = 1\n```\n```yaml\nk: v\n```\n```text file=c.txt\n[u]\n```\n"
    )
    assert doc_files(text) == {"a/b.py": "A = 1\n", "c.txt": "[u]\n"}


def test_the_worked_example_runs_as_documented(tmp_path: Path) -> None:
    files = doc_files(PAGE.read_text(encoding="utf-8"))
    (module,) = [p for p in files if p.startswith("workflow/lecode/strategies/expert/")]
    name = Path(module).stem
    assert name not in RESERVED and name not in strategies.names("expert")
    assert len(files) == 3

    project = copy_package(tmp_path / "copy")
    before = tree(project / "workflow")
    for rel, body in files.items():
        (project / rel).write_text(body, encoding="utf-8")
    after = tree(project / "workflow")
    assert sorted(f"workflow/{k}" for k in after if before.get(k) != after[k]) == sorted(files)

    cases_file = write_jsonl(tmp_path / "cases.jsonl", synthetic_cases(6))
    rep = run_in_copy(project, cases_file, name, tmp_path / "store")
    stops = set()
    for case_id, r in rep["cases"].items():
        stops.add(r["stop_reason"])
        q = r["questions"]
        # as the page says: a check and a turn call per turn, one advise call when forced
        if r["stop_reason"] == "advice":
            expected = ["check", "turn"] * (q + 1)
        else:
            assert r["stop_reason"] == "max_turns", case_id
            expected = ["check", "turn"] * q + ["advise"]
        assert r["stored"] == sorted(expected) == r["forecast"], case_id
        assert r["expert_calls"] == len(expected) and r["client_calls"] == q, case_id
    assert stops == {"advice", "max_turns"}


@pytest.mark.parametrize("name", sorted(RESERVED))
def test_the_names_the_tests_reserve_are_free_in_the_project(name: str) -> None:
    assert name not in strategies.names("expert")
