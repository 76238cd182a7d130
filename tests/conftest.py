"""Shared fixtures: small hand-built consultations in the LeCoDe JSONL schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent


def raw_case(case_id: str = "c1", **overrides: Any) -> dict[str, Any]:
    """A valid record in the released LeCoDe schema (Chinese keys and speakers)."""
    rec: dict[str, Any] = {
        "id": case_id,
        "dialogue": [
            ["用户", "我朋友打架被抓了，怎么办？"],
            ["律师", "对方伤得重吗？"],
            ["用户", "鉴定是轻伤二级。"],
            ["律师", "建议尽快赔偿取得谅解。"],
        ],
        "initial_query": "我朋友打架被抓了，怎么办？",
        "suggestion": "轻伤二级可能构成故意伤害罪，建议积极赔偿取得谅解，争取缓刑。",
        "key_fact_dict_hard_version": {
            "原子事实": {"0": "朋友与人打架后被刑事拘留", "1": "对方伤情鉴定为轻伤二级"},
            "重要性分数": {"0": 2.0, "1": 3.0},
        },
        "case_type": ["刑事"],
        "charge_type": ["故意伤害"],
        "intention_annotation": [
            ["用户", "我朋友打架被抓了，怎么办？", "[1] Client Initial Query"],
            ["律师", "对方伤得重吗？", "[5] Lawyer Clarifying Question"],
            ["用户", "鉴定是轻伤二级。", "[2] Client Response"],
            ["律师", "建议尽快赔偿取得谅解。", "[7] Lawyer Legal Advice"],
        ],
    }
    rec.update(overrides)
    return rec


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text(
        "".join(
            (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records
        ),
        encoding="utf-8",
    )
    return path


PROJECT_FILES = ("Snakefile", "params.yaml", "profiles", "data", "workflow")


def copy_project(dest: Path) -> Path:
    """A copy of the workflow (rules, package, params, data) to run the real DAG in."""
    for name in PROJECT_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture
def repo() -> Path:
    return REPO
