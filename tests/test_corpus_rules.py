"""The offline annotator's rules on hand-built transcripts, and the shipped transcripts
assembled into a dataset the LeCoDe loader accepts."""

from __future__ import annotations

from pathlib import Path

from lecode.corpus import rules
from lecode.corpus.annotations import AnnotatedUtterance, Stage1Annotation
from lecode.corpus.assemble import assemble, seeded_split
from lecode.corpus.transcripts import RawTranscript, RawTurn, read_transcripts, transcript_files
from lecode.dataset import load_cases

REPO = Path(__file__).resolve().parent.parent


def transcript(*turns: tuple[str, str]) -> RawTranscript:
    return RawTranscript("t1", "<test>", tuple(RawTurn(s, x, k) for k, (s, x) in enumerate(turns)))


CONSULTATION = transcript(
    ("B", "欢迎来到直播间。"),
    ("A", "律师好"),
    ("A", "我借给朋友两万米，他不还，怎么办？"),
    ("B", "有没有借条？"),
    ("A", "有。"),
    ("B", "也就是说他写了借条，对吗？"),
    ("A", "对"),
    ("B", "建议你带着借条向法院起诉，要求还款。"),
    ("A", "好的，谢谢律师。"),
)


def test_roles_go_to_who_asks_and_advises() -> None:
    r = rules.identify_roles(CONSULTATION)
    assert r.roles == {"B": "lawyer", "A": "client"}
    assert r.turns[2] == ("A", "client", "我借给朋友两万米，他不还，怎么办？")


def test_stage1_standardises_and_labels_intents() -> None:
    s1 = rules.stage1(rules.identify_roles(CONSULTATION))
    got = [(u.speaker, u.text, u.intent) for u in s1.dialogue]
    assert got == [
        ("client", "我借给朋友两万元，他不还，怎么办？", 1),  # greeting dropped, jargon converted
        ("lawyer", "有没有借条？", 5),
        ("client", "有。", 2),
        ("lawyer", "也就是说他写了借条，对吗？", 6),
        ("client", "对", 2),
        ("lawyer", "建议你带着借条向法院起诉，要求还款。", 7),
    ]
    assert "两万米→两万元" in s1.edits
    assert "dropped greeting (B): 欢迎来到直播间。" in s1.edits
    assert "dropped client turn after the lawyer's last advice: 好的" not in s1.edits


def test_consecutive_turns_merge() -> None:
    t = transcript(("A", "我被打了"), ("A", "对方跑了"), ("B", "建议报警。"))
    s1 = rules.stage1(rules.identify_roles(t))
    assert [u.text for u in s1.dialogue] == ["我被打了，对方跑了", "建议报警。"]


def test_stage2_facts_join_short_answers_with_the_question() -> None:
    s1 = rules.stage1(rules.identify_roles(CONSULTATION))
    s2 = rules.stage2(s1)
    assert s2.initial_query == "我借给朋友两万元，他不还，怎么办？"
    # the query's statement part, first person -> 用户; 有没有借条 + 有 -> 有借条; the
    # confirmed verification adds nothing
    assert [(f.text, f.importance) for f in s2.facts] == [
        ("用户借给朋友两万元，他不还", 3),
        ("有借条", 3),
    ]
    assert s2.suggestion == "建议你带着借条向法院起诉，要求还款。"
    assert s2.case_type == ("借贷",)


def test_importance_cues() -> None:
    assert rules.importance("对方伤情鉴定为轻伤二级") == 3
    assert rules.importance("用户觉得对方态度不好") == 1
    assert rules.importance("双方是同村邻居") == 2


def test_seeded_split_is_stable_and_recorded() -> None:
    ids = [f"c{k}" for k in range(10)]
    train, test = seeded_split(ids, 0.3, seed=0)
    assert len(test) == 3 and sorted(train + test) == sorted(ids)
    assert seeded_split(list(reversed(ids)), 0.3, seed=0) == (train, test)
    assert seeded_split(ids, 0.3, seed=1) != (train, test)
    assert seeded_split(["a", "b"], 0.01, seed=0)[1]  # both sides non-empty


def test_shipped_transcripts_make_a_valid_dataset(tmp_path: Path) -> None:
    s1: dict[str, Stage1Annotation] = {}
    s2 = {}
    for t in read_transcripts(transcript_files(REPO / "data" / "transcripts")):
        s1[t.id] = rules.stage1(rules.identify_roles(t))
        s2[t.id] = rules.stage2(s1[t.id])
    record = assemble(s1, s2, {}, {}, test_fraction=0.3, seed=0, out_dir=tmp_path)
    train = load_cases(tmp_path / "LeCoDe_trainset.jsonl")
    test = load_cases(tmp_path / "LeCoDe_testset.jsonl")
    assert record["n_train"] == len(train) == 4 and record["n_test"] == len(test) == 2
    for case in train + test:
        assert case.dialogue[0].speaker == "client" and case.dialogue[0].intent == 1
        assert case.dialogue[-1].speaker == "lawyer"
        assert all(u.intent is not None for u in case.dialogue)
        assert case.n_facts >= 2 and case.suggestion
    assert "| # Dialogue Samples | 6 | 4 | 2 |" in (tmp_path / "table2.md").read_text("utf-8")


def test_intent_rules_keep_speaker_classes() -> None:
    turns = [("client", "我被辞退了"), ("lawyer", "别担心。"), ("lawyer", "嗯")]
    got = rules.label_intents(turns)  # type: ignore[arg-type]
    assert got == [1, 8, 9]
    AnnotatedUtterance(speaker="lawyer", text="嗯", intent=9)


def test_a_dialogue_that_cannot_be_annotated_fails_its_job_by_name(tmp_path: Path) -> None:
    import pytest

    from lecode.corpus.annotate import AnnotationError
    from lecode.corpus.annotate import run as annotate
    from lecode.corpus.specs import RolesSpec
    from lecode.specs import FileRef

    src = tmp_path / "t.jsonl"
    src.write_text(
        '{"id": "ok1", "turns": [["A", "我被欠薪了怎么办？"], ["B", "建议申请仲裁。"]]}\n'
        '{"id": "solo", "turns": [["A", "我自己说两句"], ["A", "还是我"]]}\n',
        encoding="utf-8",
    )
    spec = RolesSpec(shard="000", transcripts=(FileRef.of(src),), annotator=None, code="t")
    with pytest.raises(AnnotationError) as err:
        annotate("roles", spec, previous=None, out=str(tmp_path / "roles.jsonl"))
    assert "1 dialogue(s) failed" in str(err.value)
    assert "solo: " in str(err.value) and "field 'speaker': one speaker only" in str(err.value)
    assert not (tmp_path / "roles.jsonl").exists()  # nothing half-written


def test_intents_4_8_9_survive_because_turns_are_labelled_before_merging() -> None:
    t = transcript(
        ("A", "我被打了怎么办？"),
        ("B", "别担心。"),
        ("B", "你报警了吗？"),
        ("A", "报了"),
        ("A", "那我能让他赔医药费吗？"),
        ("B", "嗯"),
        ("B", "可以起诉要求赔偿。"),
    )
    got = [(u.intent, u.text) for u in rules.stage1(rules.identify_roles(t)).dialogue]
    assert got == [
        (1, "我被打了怎么办？"),
        (8, "别担心。"),
        (5, "你报警了吗？"),
        (2, "报了"),
        (4, "那我能让他赔医药费吗？"),
        (9, "嗯"),
        (7, "可以起诉要求赔偿。"),
    ]


def test_entity_completion_keeps_plurals_and_relatives_readable() -> None:
    assert (
        rules.third_person("我们一共三个，我哥、我姐和我")
        == "用户一方一共三个，用户哥哥、用户姐姐和用户"
    )
    assert rules.third_person("我们公司没给我交社保") == "用户公司没给用户交社保"
    assert rules.third_person("我老公欠了钱") == "用户丈夫欠了钱"


def test_answers_to_done_questions_read_as_statements() -> None:
    assert rules.answered("公司给你交社保了吗？", "没有。") == "公司没有给用户交社保"
    assert rules.answered("你跟公司签劳动合同了吗？", "签了") == "用户跟公司签劳动合同了"
    assert rules.answered("工资怎么发？", "转账") == "工资怎么发：转账"


def test_greetings_and_discourse_markers_are_not_facts() -> None:
    t = transcript(
        ("A", "张律师好，我被公司辞退了怎么办？"),
        ("B", "签合同了吗？"),
        ("A", "张律师好。签了。另外，公司没给我补偿。"),
        ("B", "建议申请仲裁。"),
    )
    facts = [f.text for f in rules.stage2(rules.stage1(rules.identify_roles(t))).facts]
    assert not any("律师好" in f for f in facts)
    assert "公司没给用户补偿" in facts


def test_review_effort_counts_changed_fields_by_hand() -> None:
    from lecode.corpus.annotations import KeyFact, Stage1Annotation, Stage2Annotation
    from lecode.corpus.effort import effort1, effort2

    pre = Stage1Annotation(
        id="d",
        annotator="r",
        dialogue=(
            AnnotatedUtterance(speaker="client", text="我被公司辞腿了", intent=1),
            AnnotatedUtterance(speaker="lawyer", text="签合同了吗？", intent=5),
            AnnotatedUtterance(speaker="client", text="签了", intent=2),
        ),
    )
    done = pre.model_copy(
        update={
            "dialogue": (
                AnnotatedUtterance(speaker="client", text="我被公司辞退了", intent=1),
                AnnotatedUtterance(speaker="lawyer", text="签合同了吗？", intent=6),
            )
        }
    )
    # aligned 2 (text changed once, intent once), one deleted utterance (3 fields): 5 of 9
    e = effort1(pre, done)
    assert (e.changed, e.fields) == (5, 9)
    p2 = Stage2Annotation(
        id="d",
        annotator="r",
        initial_query="q",
        suggestion="s",
        facts=(
            KeyFact(text="用户被辞退", importance=2),
            KeyFact(text="用户签了合同", importance=3),
        ),
    )
    d2 = p2.model_copy(
        update={
            "facts": (KeyFact(text="用户被辞退", importance=3),),
            "case_type": ("劳动",),
        }
    )
    # matched 1 (importance changed), 1 deleted (2 fields), case type changed: 4 of 2*2+4
    e2 = effort2(p2, d2)
    assert (e2.changed, e2.fields) == (4, 8)
