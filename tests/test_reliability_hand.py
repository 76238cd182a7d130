"""Table 4 with hand-written questions (the paper's protocol): a JSONL file of questions per
consultation, read strictly, its content in the sample's digest, asked after the same context as
the LLM question writer's, and named in Table 4's note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from lecode.config.base import SettingsError
from lecode.config.experiment import Settings
from lecode.dataset import load_cases
from lecode.pipeline import Plan
from lecode.preflight import preflight
from lecode.reliability import read_items, writer_context
from lecode.reliability.hand import HandQuestionsError, hand_items, read_hand_questions
from lecode.reliability.steps.reliability_sample import run as sample_run
from lecode.reliability.table4 import table4
from lecode.stats import ResamplePlan

REPO = Path(__file__).resolve().parent.parent
TRAIN = REPO / "data/sample/sample_trainset.jsonl"
QUESTIONS = {
    "crim-004": ["您当时有没有受伤？", "对方报警了吗？", "您和对方以前认识吗？"],
    "crim-003": ["您动手时用了什么工具？", "对方伤情鉴定是几级？", "您有没有前科？"],
}


def write_questions(path: Path, records: list[Any]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    return path


def hand_file(tmp_path: Path, questions: dict[str, list[str]] = QUESTIONS) -> Path:
    records = [{"id": k, "questions": v} for k, v in questions.items()]
    return write_questions(tmp_path / "hand.jsonl", records)


def settings(questions_file: Path | None, **reliability: Any) -> Settings:
    p = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    p["dataset"].update(train=str(TRAIN), test=str(REPO / "data/sample/sample_testset.jsonl"))
    p["reliability"] = {
        "enabled": True,
        "questions_file": None if questions_file is None else str(questions_file),
        **reliability,
    }
    return Settings.parse(p)


def test_the_file_is_read_in_order_with_its_questions(tmp_path: Path) -> None:
    got = read_hand_questions(hand_file(tmp_path), 3)
    assert list(got) == ["crim-004", "crim-003"]  # file order
    assert got["crim-003"] == ("您动手时用了什么工具？", "对方伤情鉴定是几级？", "您有没有前科？")


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"id": "a", "questions": ["q1", "q2"]}], ":1: questions: expected exactly 3"),
        ([{"id": "a", "questions": ["q", "q", "q"]}], ":1: questions: expected exactly 3 distinct"),
        ([{"id": "a", "questions": "q1"}], ":1: questions: expected a list of strings"),
        ([{"id": "", "questions": ["a", "b", "c"]}], ":1: id: expected a non-empty string"),
        ([{"case": "a", "questions": ["a", "b", "c"]}], ':1: expected {"id": ..., "questions"'),
        (
            [{"id": "a", "questions": ["a", "b", "c"]}, {"id": "a", "questions": ["d", "e", "f"]}],
            ":2: id: 'a' appears twice",
        ),
        ([], "holds no consultation"),
    ],
)
def test_a_bad_file_is_refused_naming_line_and_field(
    tmp_path: Path, records: list[Any], message: str
) -> None:
    path = write_questions(tmp_path / "bad.jsonl", records)
    with pytest.raises(HandQuestionsError) as err:
        read_hand_questions(path, 3)
    assert str(path) in str(err.value) and message in str(err.value)


def test_items_take_the_writers_context_and_refuse_unknown_ids(tmp_path: Path) -> None:
    cases = load_cases(TRAIN)
    by_id = {c.id: c for c in cases}
    items = hand_items(
        cases, read_hand_questions(hand_file(tmp_path), 3), context_rounds=5, source="hand.jsonl"
    )
    assert [i.case.id for i in items] == ["crim-004", "crim-003"]
    assert all(i.source == "hand" for i in items)
    assert items[1].questions == tuple(QUESTIONS["crim-003"])
    assert items[1].context == writer_context(by_id["crim-003"], 5)
    assert items[1].context[0].text == by_id["crim-003"].initial_query
    with pytest.raises(HandQuestionsError, match="'nope'"):
        hand_items(cases, {"nope": ("a", "b", "c")}, context_rounds=5, source="hand.jsonl")


def test_the_files_content_enters_the_sample_digest(tmp_path: Path) -> None:
    path = hand_file(tmp_path)
    first = Plan(settings(path)).reliability.reliability_sample_spec
    assert first.questions_file is not None and first.questions_file.path == str(path)
    lawyer = Plan(settings(None)).reliability.reliability_sample_spec
    assert lawyer.questions_file is None and lawyer.digest() != first.digest()
    edited = {
        **QUESTIONS,
        "crim-003": ["您动手时用了什么工具？", "对方伤情鉴定是几级？", "您是否自首？"],
    }
    hand_file(tmp_path, edited)
    second = Plan(settings(path)).reliability.reliability_sample_spec
    assert second.digest() != first.digest()  # same path, other questions
    assert second.questions_file is not None
    assert second.questions_file.sha256 != first.questions_file.sha256


def test_the_sample_step_asks_the_files_questions(tmp_path: Path) -> None:
    spec = Plan(settings(hand_file(tmp_path))).reliability.reliability_sample_spec
    out = tmp_path / "items.jsonl"
    sample_run(spec, out=str(out))
    items = read_items(out)
    assert [(i.case.id, list(i.questions), i.source) for i in items] == [
        (k, v, "hand") for k, v in QUESTIONS.items()
    ]


def test_a_file_and_a_writer_together_and_a_bad_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="reliability.questions_file: the questions come"):
        p = yaml.safe_load((REPO / "configs/mock-llm.yaml").read_text(encoding="utf-8"))
        base = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
        from lecode.config.experiment import deep_merge

        merged = deep_merge(base, p)
        merged["reliability"]["question_writer"] = "mock"
        merged["reliability"]["questions_file"] = str(hand_file(tmp_path))
        Settings.parse(merged)
    bad = write_questions(tmp_path / "bad.jsonl", [{"id": "crim-003", "questions": ["q"]}])
    with pytest.raises(SettingsError, match=r"reliability\.questions_file: .*bad\.jsonl:1"):
        preflight(settings(bad), keys=False)


def test_table4_says_which_questions_were_asked() -> None:
    plan = ResamplePlan(resamples=100)
    notes = {
        source: table4([], {}, ["c1"], plan=plan, judged=False, sources=[source]).notes
        for source in ("hand", "lawyer", "writer")
    }
    assert any("hand-written per consultation" in n for n in notes["hand"])
    assert any("the real lawyer's next clarifying questions" in n for n in notes["lawyer"])
    assert any("LLM question writer" in n for n in notes["writer"])
    assert not any("hand-written per consultation" in n for n in notes["lawyer"])
