from __future__ import annotations

import json
from pathlib import Path

import pytest

from lecode.dataset import DatasetError, load_cases, split_cases, to_lecode_json, validate_file
from tests.conftest import raw_case, write_jsonl


def test_loads_chinese_keys_and_intents(tmp_path: Path) -> None:
    (case,) = load_cases(write_jsonl(tmp_path / "d.jsonl", [raw_case()]))
    assert case.facts == ("朋友与人打架后被刑事拘留", "对方伤情鉴定为轻伤二级")
    assert case.importance == (2, 3)
    assert [u.speaker for u in case.dialogue] == ["client", "lawyer", "client", "lawyer"]
    assert [u.intent for u in case.dialogue] == [1, 5, 2, 7]


def test_accepts_english_keys_and_speakers(tmp_path: Path) -> None:
    rec = raw_case()
    rec["key_fact_dict_hard_version"] = {
        "atomic_facts": {"1": "b", "0": "a"},
        "importance_scores": {"0": 1, "1": 3.0},
    }
    rec["dialogue"] = [["user", "q?"], ["lawyer", "a."]]
    del rec["intention_annotation"]
    (case,) = load_cases(write_jsonl(tmp_path / "d.jsonl", [rec]))
    assert case.facts == ("a", "b") and case.importance == (1, 3)
    assert [u.intent for u in case.dialogue] == [None, None]


def test_misaligned_annotation_keeps_case_without_intents(tmp_path: Path) -> None:
    rec = raw_case()
    rec["intention_annotation"] = rec["intention_annotation"][:2]
    (case,) = load_cases(write_jsonl(tmp_path / "d.jsonl", [rec]))
    assert all(u.intent is None for u in case.dialogue)


def _problems(tmp_path: Path, records: list) -> list[tuple[int, str | None, str]]:
    path = write_jsonl(tmp_path / "bad.jsonl", records)
    with pytest.raises(DatasetError) as info:
        load_cases(path)
    assert str(path) in str(info.value)
    return [(v.line, v.record_id, v.field) for v in info.value.violations]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"initial_query": "  "}, "initial_query"),
        ({"suggestion": None}, "suggestion"),
        ({"dialogue": [["法官", "x"]]}, "dialogue[0]"),
        ({"dialogue": []}, "dialogue"),
        (
            {"key_fact_dict_hard_version": {"原子事实": {"0": "a"}}},
            "key_fact_dict_hard_version.重要性分数",
        ),
        (
            {"key_fact_dict_hard_version": {"原子事实": {"0": "a"}, "重要性分数": {"0": 5.0}}},
            "key_fact_dict_hard_version.重要性分数.0",
        ),
        (
            {"key_fact_dict_hard_version": {"原子事实": {"0": "a"}, "重要性分数": {"1": 2.0}}},
            "key_fact_dict_hard_version.重要性分数",
        ),
        (
            {
                "key_fact_dict_hard_version": {
                    "原子事实": {"0": "a", "2": "b"},
                    "重要性分数": {"0": 1, "2": 1},
                }
            },
            "key_fact_dict_hard_version.原子事实",
        ),
        (
            {"key_fact_dict_hard_version": {"原子事实": {"0": ""}, "重要性分数": {"0": 1}}},
            "key_fact_dict_hard_version.原子事实.0",
        ),
        ({"case_type": [1]}, "case_type"),
        ({"intention_annotation": [["用户", "x", "[42] ?"]] * 4}, "intention_annotation[0]"),
    ],
)
def test_each_violation_names_line_record_and_field(
    tmp_path: Path, overrides: dict, field: str
) -> None:
    problems = _problems(tmp_path, [raw_case("ok"), raw_case("bad", **overrides)])
    assert (2, "bad", field) in problems
    assert all(p[1] == "bad" for p in problems)


def test_duplicate_ids_bad_json_and_missing_id(tmp_path: Path) -> None:
    rec = raw_case()
    del rec["id"]
    problems = _problems(tmp_path, [raw_case("a"), raw_case("a"), "{not json", rec, "[1, 2]"])
    assert (2, "a", "id") in problems
    assert (3, None, "<json>") in problems
    assert (4, None, "id") in problems
    assert (5, None, "<json>") in problems


def test_non_utf8_is_reported_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin.jsonl"
    path.write_bytes(json.dumps(raw_case()).encode() + b"\n" + "é".encode("latin-1") + b"\n")
    assert [(v.line, v.field) for v in validate_file(path)] == [(2, "<encoding>")]


def test_valid_file_has_no_violations(tmp_path: Path) -> None:
    assert validate_file(write_jsonl(tmp_path / "d.jsonl", [raw_case("a"), raw_case("b")])) == []


def test_split_is_deterministic_and_order_independent(tmp_path: Path) -> None:
    recs = [raw_case(f"case-{i:03d}") for i in range(50)]
    cases = load_cases(write_jsonl(tmp_path / "d.jsonl", recs))
    train, test = split_cases(cases)
    assert (len(train), len(test)) == (40, 10)
    train2, test2 = split_cases(list(reversed(cases)))
    assert {c.id for c in test} == {c.id for c in test2}
    assert {c.id for c in train} | {c.id for c in test} == {c.id for c in cases}


def test_roundtrip_to_released_schema(tmp_path: Path) -> None:
    (case,) = load_cases(write_jsonl(tmp_path / "d.jsonl", [raw_case()]))
    again = load_cases(write_jsonl(tmp_path / "e.jsonl", [to_lecode_json(case)]))
    assert again == [case]
