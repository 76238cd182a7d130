"""Nothing lost, nothing swapped: every input line lands in a turn or stops the build naming
file, line and field; doubtful roles and advice that standardisation would delete are flagged;
every reviewer's file reaches the dataset."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
import yaml

from lecode.config.corpus import CorpusSplit
from lecode.config.experiment import Settings
from lecode.corpus import rules
from lecode.corpus.annotate import run as annotate
from lecode.corpus.annotations import RoleAnnotation, read_records
from lecode.corpus.inputs import load_pre
from lecode.corpus.plan import CorpusPlan
from lecode.corpus.review import ReviewError, import_review
from lecode.corpus.specs import AssembleSpec, RolesSpec
from lecode.corpus.steps import corpus_assemble
from lecode.corpus.transcripts import TranscriptError, read_transcript_file
from lecode.dataset import load_cases
from lecode.specs import FileRef
from tests.test_corpus_review import H1, PRE1, PRE2
from tests.test_corpus_review import pre_files as pre_files  # noqa: F401  (a fixture)

REPO = Path(__file__).resolve().parent.parent

#: A host who opens by reading a viewer's message (first person, quoted), and a client who
#: uses 根据/建议/起诉: the cue rules give the client the lawyer's role.
SWAPPED = """\
说话人1：先念一条网友留言：“我老公欠了别人二十万，我家里的钱都被他拿走了，我要不要一起还？我该怎么办？”这位朋友连麦了，请讲。
说话人2：您好，我就是留言的人。根据借条，是我老公一个人签的字，债主已经起诉了，建议我怎么应对？
说话人1：借款是什么时候？你们结婚了吗？
说话人2：结婚第三年借的，法院的传票写了我是被告，按照法律规定我需要赔偿吗？
说话人1：赌债不属于夫妻共同债务，你可以主张不承担，建议收集他赌博的证据。
说话人2：好的，我根据您的建议申请调取证据，应该可以向法院主张不承担。
"""


def params(tmp_path: Path, **corpus: Any) -> Settings:
    data: dict[str, Any] = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    data["corpus"] = {**data["corpus"], **corpus}
    return Settings.parse(data)


def test_a_malformed_cue_timing_stops_the_read(tmp_path: Path) -> None:
    srt = tmp_path / "s.srt"
    srt.write_text(
        "1\n00:00:01,000 --> 00:00:02,000\n说话人1：我被撞了怎么办？\n\n"
        "2\n00:00:03,000 -> 00:00:04,000\n说话人2：交警怎么认定的？\n\n"
        "3\n00:00:05,000 --> 00:0O:06,000\n说话人2：有没有受伤？\n\n"
        "4\n00:00:07,000 --> 00:00:08,000\n说话人1：腿骨折了。\n",
        encoding="utf-8",
    )
    with pytest.raises(TranscriptError) as err:
        read_transcript_file(srt)
    text = str(err.value)
    assert f"{srt}:6: field 'timing'" in text and "-> 00:00:04,000" in text
    assert f"{srt}:10: field 'timing'" in text and "00:0O:06" in text
    assert len(err.value.problems) == 2


def test_an_unlisted_speaker_tag_stops_the_read_and_patterns_are_configurable(
    tmp_path: Path,
) -> None:
    txt = tmp_path / "t.txt"
    txt.write_text(
        "王女士：我老公欠钱不还怎么办？\n律师：借条在谁手里？\n家属：在我这里。\n"
        "记录员：以上内容已记录。\n律师：建议起诉。\n",
        encoding="utf-8",
    )
    with pytest.raises(TranscriptError) as err:
        read_transcript_file(txt)
    assert len(err.value.problems) == 1
    assert f"{txt}:4: field 'speaker': unknown speaker tag '记录员'" in str(err.value)
    tags = (
        *Settings.parse(
            yaml.safe_load((REPO / "params.yaml").read_text("utf-8"))
        ).corpus.speaker_tags,
        "记录员",
    )
    (t,) = read_transcript_file(txt, tags)
    assert [x.speaker for x in t.turns] == ["王女士", "律师", "家属", "记录员", "律师"]
    assert t.turns[0].text == "我老公欠钱不还怎么办？"  # not glued onto anything
    with pytest.raises(ValueError, match="speaker_tags"):
        params(tmp_path, speaker_tags=["(unclosed"])


def test_a_duplicate_id_in_two_shards_stops_the_plan_and_the_assembly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the per-dialogue cache is written under results/
    d = tmp_path / "t"
    d.mkdir()
    (d / "a.jsonl").write_text(
        '{"id": "dup", "turns": [["A", "欠薪怎么办？"], ["B", "建议仲裁。"]]}\n', encoding="utf-8"
    )
    (d / "dup.txt").write_text("A：被辞退了怎么办？\nB：建议申请仲裁。\n", encoding="utf-8")
    plan = CorpusPlan(
        params(tmp_path, transcripts=str(d), n_shards=2, review_dir=str(tmp_path / "r"))
    )
    assert {plan.shard_files(s)[0].name for s in plan.shards} == {"a.jsonl", "dup.txt"}
    assert any("field 'id'" in p and "'dup' repeats" in p for p in plan.problems)
    # the shards' outputs, once made, are refused by the assembly too
    out = []
    for shard in plan.shards:
        spec = plan.annotate_specs["roles"][shard]
        annotate("roles", spec, previous=None, out=str(tmp_path / f"roles-{shard}.jsonl"))
        s1 = tmp_path / f"s1-{shard}.jsonl"
        annotate(
            "stage1",
            plan.annotate_specs["stage1"][shard],
            previous=str(tmp_path / f"roles-{shard}.jsonl"),
            out=str(s1),
        )
        out.append(str(s1))
    with pytest.raises(ValueError, match="'dup' also in"):
        load_pre(out, [])


def test_swapped_roles_are_flagged_and_a_person_fixes_them_before_stage1(tmp_path: Path) -> None:
    src = tmp_path / "swap.txt"
    src.write_text(SWAPPED, encoding="utf-8")
    (t,) = read_transcript_file(src)
    found = rules.identify_roles(t)
    assert found.roles["说话人2"] == "lawyer"  # the cues are fooled ...
    assert found.flags and found.confidence < 0.5  # ... and say so
    assert rules.stage1(found).flags[0].startswith("role confidence")
    from lecode.corpus.roles_review import roles_to_check

    sheet = list(csv.reader(roles_to_check([found]).lstrip("\ufeff").splitlines()))
    assert sheet[1][:3] == ["swap", "说话人1", "用户"]
    spec = RolesSpec(
        shard="000",
        transcripts=(FileRef.of(src),),
        role_overrides={"swap": {"说话人1": "lawyer", "说话人2": "client"}},
        annotator=None,
        code="t",
    )
    annotate("roles", spec, previous=None, out=str(tmp_path / "roles.jsonl"))
    (fixed,) = read_records(tmp_path / "roles.jsonl", RoleAnnotation)
    assert fixed.roles == {"说话人1": "lawyer", "说话人2": "client"} and not fixed.flags
    assert fixed.confirmed_by == "roles.csv"


def test_the_roles_file_is_checked_against_the_transcripts(tmp_path: Path) -> None:
    review = tmp_path / "review"
    review.mkdir()
    (review / "roles.csv").write_text(
        "\ufeffid,speaker,role\ntr-loan-002,A,律师\ntr-loan-002,B,用户\nnope,A,律师\n",
        encoding="utf-8",
    )
    plan = CorpusPlan(
        params(tmp_path, review_dir=str(review), transcripts=str(REPO / "data" / "transcripts"))
    )
    assert any(
        f"{review / 'roles.csv'}:4: field 'id': no transcript 'nope'" in p for p in plan.problems
    )


def test_advice_in_a_trailing_client_turn_is_kept_and_flagged() -> None:
    roles = RoleAnnotation(
        id="x",
        annotator="rules",
        roles={"A": "client", "B": "lawyer"},
        turns=(
            ("A", "client", "我被辞退了怎么办？"),
            ("B", "lawyer", "签合同了吗？"),
            ("A", "client", "根据劳动合同法，建议你申请仲裁，可以主张赔偿金。"),
        ),
    )
    s1 = rules.stage1(roles)
    assert s1.dialogue[-1].text.startswith("根据劳动合同法")
    assert any("reads like advice" in f for f in s1.flags)
    # a plain thank-you after the advice is still dropped
    thanks = roles.model_copy(
        update={"turns": (*roles.turns[:2], ("B", "lawyer", "建议仲裁。"), ("A", "client", "好的"))}
    )
    assert rules.stage1(thanks).dialogue[-1].speaker == "lawyer" and not rules.stage1(thanks).flags


def test_the_documented_settings_use_the_shipped_reviews() -> None:
    plan = CorpusPlan(Settings.load(str(REPO / "params.yaml")))
    assert plan.reviewers == ("ann_a", "ann_b")
    assert len(plan.assemble_spec.reviews) == 8 and plan.agreement_dir in plan.targets()
    assert plan.corpus.split.test_fraction == 0.2  # the paper's 8:2


def test_a_reviewer_list_that_leaves_reviews_out_is_refused(tmp_path: Path) -> None:
    plan = CorpusPlan(
        params(tmp_path, reviewers=[], transcripts=str(REPO / "data" / "transcripts"))
    )
    with pytest.raises(Exception, match=r"holds reviews by \['ann_a', 'ann_b'\]"):
        plan.check()
    plan = CorpusPlan(
        params(tmp_path, reviewers=["ann_b"], transcripts=str(REPO / "data" / "transcripts"))
    )
    with pytest.raises(Exception, match=r"\['ann_a'\]"):
        plan.check()


def test_a_non_final_reviewers_work_reaches_the_dataset(
    tmp_path: Path, pre_files: tuple[list[str], list[str]]
) -> None:
    a = tmp_path / "review" / "ann_a" / "d1.stage1.csv"
    b = tmp_path / "review" / "ann_b" / "d2.stage1.csv"
    for p in (a, b):
        p.parent.mkdir(parents=True, exist_ok=True)
    a.write_text(
        H1 + "0,用户,我被公司辞退了，能要赔偿吗？,1\n1,律师,签劳动合同了吗？,5\n"
        "2,用户,签了三年。,3\n3,律师,建议申请劳动仲裁，主张赔偿金。,7\n",
        encoding="utf-8",
    )
    b.write_text(
        H1 + "0,用户,朋友借钱不还怎么办？,1\n1,律师,有借条吗？,6\n"
        "2,用户,有借条，借了一万元。,2\n3,律师,可以起诉。,7\n",
        encoding="utf-8",
    )
    spec = AssembleSpec(
        pre="p",
        final="ann_a",
        reviewers=("ann_a", "ann_b"),
        reviews=(FileRef.of(a), FileRef.of(b)),
        split=CorpusSplit(test_fraction=0.5, seed=0),
        code="t",
    )
    out = tmp_path / "built"
    record = corpus_assemble.run(spec, stage1=pre_files[0], stage2=pre_files[1], out_dir=str(out))
    cases = {c.id: c for n in ("train", "test") for c in load_cases(out / f"LeCoDe_{n}set.jsonl")}
    assert [u.intent for u in cases["d2"].dialogue] == [1, 6, 2, 7]  # ann_b's
    assert [u.intent for u in cases["d1"].dialogue] == [1, 5, 3, 7]  # ann_a's
    assert record["reviewed"]["stage1"] == ["d1", "d2"]
    assert record["decisions"]["d2"]["stage1"]["decided_by"] == "ann_b"


def test_reviewer_comments_are_kept_and_unknown_columns_refused(tmp_path: Path) -> None:
    p = tmp_path / "me" / "d1.stage1.csv"
    p.parent.mkdir()
    body = (
        "0,用户,我被公司辞退了，能要赔偿吗？,1,\n1,律师,签劳动合同了吗？,5,\n"
        "2,用户,签了三年。,3,应是补充信息\n3,律师,建议申请劳动仲裁，主张赔偿金。,7,\n"
    )
    p.write_text("\ufeffrow,speaker,text,intent,备注\n" + body, encoding="utf-8")
    review = import_review([p], "me", PRE1, PRE2)
    noted = [c for c in review.changes if c.comment]
    assert {(c.row, c.field, c.comment) for c in noted} >= {(2, "intent", "应是补充信息")}
    p.write_text("\ufeffrow,speaker,text,intent,意见\n" + body, encoding="utf-8")
    with pytest.raises(ReviewError, match=rf"{p}:1: field '意见': unknown column"):
        import_review([p], "me", PRE1, PRE2)


def test_a_new_transcript_reruns_its_own_shard_only(tmp_path: Path) -> None:
    d = tmp_path / "t"
    d.mkdir()
    for f in (REPO / "data" / "transcripts").iterdir():
        (d / f.name).write_bytes(f.read_bytes())
    before = CorpusPlan(params(tmp_path, transcripts=str(d), n_shards=4))
    (d / "tr-new-007.txt").write_text("A：被辞退了怎么办？\nB：建议申请仲裁。\n", encoding="utf-8")
    after = CorpusPlan(params(tmp_path, transcripts=str(d), n_shards=4))
    changed = [
        s
        for s in before.shards
        if before.annotation_file("stage2", s) != after.annotation_file("stage2", s)
    ]
    assert changed == [
        s for s in after.shards if any(f.name == "tr-new-007.txt" for f in after.shard_files(s))
    ]
    assert after.review_export_current == "results/corpus/review/current"
    assert after.review_export_current in after.targets()


def test_a_new_transcript_annotates_its_own_dialogue_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    d = tmp_path / "t"
    d.mkdir()
    for f in (REPO / "data" / "transcripts").iterdir():
        (d / f.name).write_bytes(f.read_bytes())
    made: list[str] = []
    real = rules.identify_roles

    def counted(t: Any, **kw: Any) -> RoleAnnotation:
        made.append(t.id)
        return real(t, **kw)

    monkeypatch.setattr(rules, "identify_roles", counted)

    def build() -> None:
        plan = CorpusPlan(params(tmp_path, transcripts=str(d), n_shards=1))
        spec = plan.annotate_specs["roles"]["000"]
        annotate("roles", spec, previous=None, out=str(tmp_path / "roles.jsonl"))

    build()
    assert len(made) == 6
    made.clear()
    (d / "tr-new-007.txt").write_text("A：被辞退了怎么办？\nB：建议申请仲裁。\n", encoding="utf-8")
    build()  # one shard holds every transcript: its job reruns, one dialogue is annotated
    assert made == ["tr-new-007"]
    assert len(read_records(tmp_path / "roles.jsonl", RoleAnnotation)) == 7
