"""The Label Studio round trip without a server: tasks with predictions, an export read back
as review sheets with the same change records as the spreadsheets, and bad exports named by
file, task and field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from lecode.corpus.labelstudio import read_export, tasks, validate, write_sheets
from lecode.corpus.review import ReviewError, import_review
from tests.test_corpus_review import PRE1, PRE2


def export_of(
    t: list[dict[str, Any]], edit: dict[str, Any] | None = None, user: int = 7
) -> list[dict[str, Any]]:
    """What Label Studio exports after an annotator accepted the predictions (with ``edit``:
    {from_name: value} replacing the value of a result)."""
    out = []
    for k, task in enumerate(t):
        result = copy.deepcopy(task["predictions"][0]["result"])
        for r in result:
            if edit and r["from_name"] in edit.get(task["data"]["lecode_id"], {}):
                v = edit[task["data"]["lecode_id"]][r["from_name"]]
                r["value"] = {"choices": [v]} if r["type"] == "choices" else {"text": [v]}
        extra = [
            {
                "from_name": n,
                "to_name": "dialogue",
                "type": "textarea" if not n.startswith(("delete", "fact_delete")) else "choices",
                "value": {"choices": [v]}
                if n.startswith(("delete", "fact_delete"))
                else {"text": [v]},
            }
            for n, v in (edit or {}).get(task["data"]["lecode_id"], {}).items()
            if not any(r["from_name"] == n for r in result)
        ]
        out.append(
            {
                "id": 100 + k,
                "data": task["data"],
                "annotations": [
                    {
                        "id": k,
                        "completed_by": user,
                        "result": result + extra,
                        "was_cancelled": False,
                    }
                ],
            }
        )
    return out


def write(tmp_path: Path, data: Any, name: str = "export.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return p


def test_accepted_predictions_come_back_unchanged(tmp_path: Path) -> None:
    t1, t2 = tasks(list(PRE1.values()), list(PRE2.values()), "proj")
    assert t1[0]["data"]["utterances"][1] == {
        "idx": 1,
        "speaker": "律师",
        "text": "签劳动合同了吗？",
    }
    path = write(tmp_path, export_of(t1) + export_of(t2))
    got = read_export(path, "proj", {"7": "ann_x@lecode.test"})
    assert list(got) == ["ann_x"]
    validate(got, PRE1, PRE2)
    files = write_sheets(got, tmp_path / "review")
    review = import_review(files, "ann_x", PRE1, PRE2)
    assert review.stage1 == {
        k: v.model_copy(update={"annotator": "ann_x"}) for k, v in PRE1.items()
    }
    assert review.stage2["d2"].facts == PRE2["d2"].facts
    assert not any(c.changed for c in review.changes)


def test_corrections_become_the_same_change_records_as_the_sheets(tmp_path: Path) -> None:
    t1, t2 = tasks(list(PRE1.values()), list(PRE2.values()), "proj")
    edits = {
        "d1": {
            "intent_2": "3 Client Information Addition",
            "comment_2": "补充信息",
            "importance_1": "2",
            "new_facts": "3|公司没有提前三十天通知用户",
        },
        "d2": {
            "text_3": "可以向法院起诉，要求还款。",
            "fact_delete_1": "delete",
            "insert_2": "用户|3|他还把我拉黑了",
        },
    }
    path = write(tmp_path, export_of(t1, edits) + export_of(t2, edits))
    got = read_export(path, "proj", {"7": "ann_a"})
    validate(got, PRE1, PRE2)
    review = import_review(write_sheets(got, tmp_path / "r"), "ann_a", PRE1, PRE2)
    changed = sorted(
        (c.dialogue, c.stage, c.row, c.field, c.kind) for c in review.changes if c.changed
    )
    assert changed == [
        ("d1", 1, 2, "intent", "edited"),
        ("d1", 2, -1, "fact.importance", "added"),
        ("d1", 2, -1, "fact.text", "added"),
        ("d1", 2, 1, "fact.importance", "edited"),
        ("d2", 1, -1, "intent", "added"),
        ("d2", 1, -1, "speaker", "added"),
        ("d2", 1, -1, "text", "added"),
        ("d2", 1, 3, "text", "edited"),
        ("d2", 2, 1, "fact.importance", "deleted"),
        ("d2", 2, 1, "fact.text", "deleted"),
    ]
    assert [u.text for u in review.stage1["d2"].dialogue][3] == "他还把我拉黑了"
    assert any(c.comment == "补充信息" for c in review.changes)


def test_bad_exports_name_file_task_and_field(tmp_path: Path) -> None:
    t1, _ = tasks(list(PRE1.values()), list(PRE2.values()), "proj")
    data = export_of(t1, {"d1": {"intent_2": "11 Gossip"}})
    data[1]["annotations"][0]["result"] = [
        r for r in data[1]["annotations"][0]["result"] if r["from_name"] != "speaker_0"
    ]
    other = copy.deepcopy(data[0])
    other["id"] = 999
    other["data"]["lecode_project"] = "someone-else"
    path = write(tmp_path, [*data, other])
    with pytest.raises(ReviewError) as err:
        read_export(path, "proj")
    text = str(err.value)
    assert f"{path}: task 100 (d1, stage 1): field 'intent_2': unknown label ['11 Gossip']" in text
    assert f"{path}: task 101 (d2, stage 1): field 'speaker_0': missing" in text
    assert (
        f"{path}: task 999: field 'data.lecode_project': 'someone-else': a task of another project"
        in text
    )
    assert len(err.value.problems) == 3
    with pytest.raises(ReviewError, match="field '<json>'"):
        read_export(write(tmp_path, {"not": "a list"}, "x.json"), "proj")


def test_a_review_of_an_unknown_dialogue_is_refused(tmp_path: Path) -> None:
    t1, _ = tasks(list(PRE1.values()), list(PRE2.values()), "proj")
    data = export_of(t1)
    data[0]["data"]["lecode_id"] = "d9"
    got = read_export(write(tmp_path, data), "proj")
    with pytest.raises(ReviewError, match="field 'lecode_id': no pre-annotated dialogue 'd9'"):
        validate(got, PRE1, PRE2)
