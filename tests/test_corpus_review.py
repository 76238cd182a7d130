"""The review round trip and the agreement table, with two invented annotators' files whose
agreement is computed by hand below."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from lecode.config.corpus import CorpusSplit
from lecode.config.sections import RougeSettings
from lecode.corpus.agreement import cohen_kappa, percent_agreement
from lecode.corpus.annotations import (
    AnnotatedUtterance,
    KeyFact,
    Stage1Annotation,
    Stage2Annotation,
    write_records,
)
from lecode.corpus.review import ReviewError, export_review, import_review
from lecode.corpus.specs import AgreementSpec, AssembleSpec
from lecode.corpus.steps import corpus_agreement, corpus_assemble
from lecode.dataset import load_cases
from lecode.specs import FileRef
from lecode.text import JiebaTokenizer


def u(speaker: str, text: str, intent: int) -> AnnotatedUtterance:
    return AnnotatedUtterance(speaker=speaker, text=text, intent=intent)  # type: ignore[arg-type]


PRE1 = {
    "d1": Stage1Annotation(
        id="d1",
        annotator="rules",
        dialogue=(
            u("client", "我被公司辞退了，能要赔偿吗？", 1),
            u("lawyer", "签劳动合同了吗？", 5),
            u("client", "签了三年。", 2),
            u("lawyer", "建议申请劳动仲裁，主张赔偿金。", 7),
        ),
    ),
    "d2": Stage1Annotation(
        id="d2",
        annotator="rules",
        dialogue=(
            u("client", "朋友借钱不还怎么办？", 1),
            u("lawyer", "有借条吗？", 5),
            u("client", "有借条，借了一万元。", 2),
            u("lawyer", "可以起诉。", 7),
        ),
    ),
}
PRE2 = {
    "d1": Stage2Annotation(
        id="d1",
        annotator="rules",
        initial_query="我被公司辞退了，能要赔偿吗？",
        facts=(
            KeyFact(text="用户被公司辞退", importance=2),
            KeyFact(text="用户与公司签了三年劳动合同", importance=3),
        ),
        suggestion="建议申请劳动仲裁，主张赔偿金。",
        case_type=("劳动",),
    ),
    "d2": Stage2Annotation(
        id="d2",
        annotator="rules",
        initial_query="朋友借钱不还怎么办？",
        facts=(
            KeyFact(text="朋友借了用户一万元", importance=3),
            KeyFact(text="朋友写了借条", importance=3),
        ),
        suggestion="可以起诉。",
        case_type=("借贷",),
    ),
}
H1 = "row,speaker,text,intent\n"
H2 = "field,row,text,importance\n"
#: Annotator A: d1 row 2 intent 2 -> 3; d2 row 3 text rewritten; d1 fact 1 importance 3 -> 2
#: and a fact added; d2 fact 1 deleted and the advice summary rewritten.
ANN_A = {
    "d1.stage1.csv": H1 + "0,用户,我被公司辞退了，能要赔偿吗？,1\n"
    "1,律师,签劳动合同了吗？,5 Lawyer Clarifying Question\n"
    "2,用户,签了三年。,3\n3,律师,建议申请劳动仲裁，主张赔偿金。,7\n",
    "d2.stage1.csv": H1
    + "0,用户,朋友借钱不还怎么办？,1\n1,律师,有借条吗？,5\n2,用户,有借条，借了一万元。,2\n"
    "3,律师,可以向法院起诉，要求还款。,7\n",
    "d1.stage2.csv": H2 + "initial_query,,我被公司辞退了，能要赔偿吗？,\nfact,0,用户被公司辞退,2\n"
    "fact,1,用户与公司签了三年劳动合同,2\nfact,,公司没有提前三十天通知用户,3\n"
    "suggestion,,建议申请劳动仲裁，主张赔偿金。,\ncase_type,,劳动,\n",
    "d2.stage2.csv": H2 + "initial_query,,朋友借钱不还怎么办？,\nfact,0,朋友借了用户一万元,3\n"
    "suggestion,,可以向法院起诉，要求还款。,\ncase_type,,借贷,\n",
}
#: Annotator B: d1 row 2 intent 2 -> 3; d2 row 1 intent 5 -> 6; d2 fact 1 importance 3 -> 2
#: and a fact added.
ANN_B = {
    "d1.stage1.csv": H1
    + "0,用户,我被公司辞退了，能要赔偿吗？,1\n1,律师,签劳动合同了吗？,5\n2,用户,签了三年。,3\n"
    "3,律师,建议申请劳动仲裁，主张赔偿金。,7\n",
    "d2.stage1.csv": H1
    + "0,用户,朋友借钱不还怎么办？,1\n1,律师,有借条吗？,6\n2,用户,有借条，借了一万元。,2\n"
    "3,律师,可以起诉。,7\n",
    "d1.stage2.csv": H2 + "initial_query,,我被公司辞退了，能要赔偿吗？,\nfact,0,用户被公司辞退,2\n"
    "fact,1,用户与公司签了三年劳动合同,3\nsuggestion,,建议申请劳动仲裁，主张赔偿金。,\n"
    "case_type,,劳动,\n",
    "d2.stage2.csv": H2
    + "initial_query,,朋友借钱不还怎么办？,\nfact,0,朋友借了用户一万元,3\nfact,1,朋友写了借条,2\n"
    "fact,,朋友把用户拉黑了,1\nsuggestion,,可以起诉。,\ncase_type,,借贷,\n",
}


def write_reviews(root: Path) -> list[str]:
    files = []
    for name, content in (("ann_a", ANN_A), ("ann_b", ANN_B)):
        for fname, text in content.items():
            p = root / name / fname
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("\ufeff" + text, encoding="utf-8")  # as a spreadsheet saves it
            files.append(str(p))
    return files


@pytest.fixture
def pre_files(tmp_path: Path) -> tuple[list[str], list[str]]:
    s1, s2 = tmp_path / "pre" / "s1.jsonl", tmp_path / "pre" / "s2.jsonl"
    write_records(s1, PRE1.values())
    write_records(s2, PRE2.values())
    return [str(s1)], [str(s2)]


def test_kappa_by_hand() -> None:
    # p_o = 3/4; p_e = (2*1 + 1*2 + 1*1)/16 = 5/16; kappa = (12/16 - 5/16) / (11/16) = 7/11
    assert cohen_kappa([1, 1, 2, 3], [1, 2, 2, 3]) == pytest.approx(7 / 11)
    assert percent_agreement([1, 1, 2, 3], [1, 2, 2, 3]) == 0.75
    assert cohen_kappa([1, 2], [2, 1]) == pytest.approx(-1.0)
    assert math.isnan(cohen_kappa([5, 5], [5, 5]))  # chance agreement is certain


def test_kappa_textbook_example() -> None:
    # 50 items: both yes 20, A yes / B no 5, A no / B yes 10, both no 15 -> p_o = 0.7,
    # p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_kappa_matches_scikit_learn_when_installed() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    import random

    rng = random.Random(0)
    a = [rng.randint(1, 10) for _ in range(200)]
    b = [x if rng.random() < 0.7 else rng.randint(1, 10) for x in a]
    assert cohen_kappa(a, b) == pytest.approx(metrics.cohen_kappa_score(a, b))


def test_export_then_import_unchanged_records_no_change(tmp_path: Path) -> None:
    export_review(PRE1.values(), PRE2.values(), tmp_path / "me")
    files = sorted(str(p) for p in (tmp_path / "me").iterdir())
    assert (tmp_path / "me" / "d1.stage1.csv").read_bytes().startswith(b"\xef\xbb\xbf")
    review = import_review(files, "me", PRE1, PRE2)
    assert review.stage1["d1"].dialogue == PRE1["d1"].dialogue
    assert review.stage2["d2"].facts == PRE2["d2"].facts
    assert review.changes and not any(c.changed for c in review.changes)


def test_every_field_records_whether_a_human_changed_it(tmp_path: Path) -> None:
    files = write_reviews(tmp_path)
    a = import_review([f for f in files if "/ann_a/" in f], "ann_a", PRE1, PRE2)
    changed = sorted((c.dialogue, c.stage, c.row, c.field, c.kind) for c in a.changes if c.changed)
    assert changed == [
        ("d1", 1, 2, "intent", "edited"),
        ("d1", 2, -1, "fact.importance", "added"),
        ("d1", 2, -1, "fact.text", "added"),
        ("d1", 2, 1, "fact.importance", "edited"),
        ("d2", 1, 3, "text", "edited"),
        ("d2", 2, -1, "suggestion", "edited"),
        ("d2", 2, 1, "fact.importance", "deleted"),
        ("d2", 2, 1, "fact.text", "deleted"),
    ]
    # stage 1: 2 dialogues x 4 rows x 3 fields; stage 2: d1 3 facts x 2 + 4, d2 2 facts x 2 + 4
    # (query, summary, case type, charge type)
    assert len(a.changes) == 24 + 10 + 8
    assert a.stage2["d1"].facts[2] == KeyFact(text="公司没有提前三十天通知用户", importance=3)


def test_bad_review_files_name_file_line_and_field(tmp_path: Path) -> None:
    p = tmp_path / "x" / "d1.stage1.csv"
    p.parent.mkdir()
    p.write_text(H1 + "0,用户,问,1\n1,法官,嗯,5\n2,用户,答,7\n9,律师,好,7\n", encoding="utf-8")
    q = tmp_path / "x" / "d9.stage2.csv"
    q.write_text(H2, encoding="utf-8")
    with pytest.raises(ReviewError) as err:
        import_review([str(p), str(q)], "x", PRE1, PRE2)
    text = str(err.value)
    assert f"{p}:3: field 'speaker'" in text
    assert f"{p}:4: field 'intent': intent 7 (Lawyer Legal Advice) is not a client intent" in text
    assert f"{p}:5: field 'row'" in text
    assert f"{q}:0: field 'id'" in text


def test_jieba_tokens_of_the_rewritten_summary() -> None:
    # the ROUGE-L expectations below rest on these tokens
    tok = JiebaTokenizer(punctuation=True)
    assert tok.tokenize("可以起诉。") == ["可以", "起诉", "。"]
    assert len(tok.tokenize("可以向法院起诉，要求还款。")) == 8


def test_agreement_table_by_hand(tmp_path: Path, pre_files: tuple[list[str], list[str]]) -> None:
    files = write_reviews(tmp_path / "review")
    spec = AgreementSpec(
        pre="p",
        reviewers=("ann_a", "ann_b"),
        reviews=tuple(FileRef.of(f) for f in files),
        rouge=RougeSettings(),
        fact_threshold=0.5,
        code="test",
    )
    out = tmp_path / "agreement"
    corpus_agreement.run(spec, stage1=pre_files[0], stage2=pre_files[1], out_dir=str(out))
    data = json.loads((out / "agreement.json").read_text(encoding="utf-8"))
    got = {(a["first"].split(" (")[0], a["second"]): a for a in data["agreements"]}
    pre_a, pre_b, a_b = (
        got["pre-annotation", "ann_a"],
        got["pre-annotation", "ann_b"],
        got["ann_a", "ann_b"],
    )
    # Stage 1. pre vs A: d2's last utterance was rewritten (可以起诉。 -> 可以向法院起诉，要求
    # 还款。, similarity 2 x 5 / 18 >= 0.5), so all 8 align; intents agree on 7.
    # Label counts pre {1:2, 5:2, 2:2, 7:2}, A {1:2, 5:2, 2:1, 3:1, 7:2}: p_e = 14/64,
    # kappa = (56 - 14) / (64 - 14) = 21/25. Alpha: value counts {1:4, 5:4, 2:3, 3:1, 7:4},
    # n = 16, 2 disagreeing ordered pairs: 1 - 15 x 2 / (256 - 58) = 28/33.
    assert (pre_a["utterances_aligned"], pre_a["utterances_first"]) == (8, 8)
    assert pre_a["intent_agreement"] == pytest.approx(7 / 8)
    assert pre_a["intent_kappa"] == pytest.approx(21 / 25)
    assert pre_a["intent_alpha"] == pytest.approx(28 / 33)
    # pre vs B: 8 aligned, 6 agree; pre {1:2,5:2,2:2,7:2}, B {1:2,5:1,6:1,3:1,2:1,7:2}:
    # p_e = 12/64, kappa = (48 - 12) / (64 - 12) = 9/13; alpha: counts {1:4,5:3,6:1,2:3,3:1,
    # 7:4}, 4 disagreeing ordered pairs: 1 - 15 x 4 / (256 - 52) = 12/17.
    assert pre_b["intent_agreement"] == pytest.approx(0.75)
    assert pre_b["intent_kappa"] == pytest.approx(9 / 13)
    assert pre_b["intent_alpha"] == pytest.approx(12 / 17)
    # A vs B: 8 aligned, 7 agree; A {1:2,5:2,3:1,2:1,7:2}, B {1:2,5:1,6:1,3:1,2:1,7:2}:
    # p_e = 12/64, kappa = (56 - 12) / (64 - 12) = 11/13; alpha: counts {1:4,5:3,6:1,3:2,2:2,
    # 7:4}, 2 disagreeing ordered pairs: 1 - 30 / (256 - 50) = 88/103.
    assert a_b["intent_agreement"] == pytest.approx(7 / 8)
    assert a_b["intent_kappa"] == pytest.approx(11 / 13)
    assert a_b["intent_alpha"] == pytest.approx(88 / 103)
    assert a_b["speaker_agreement"] == 1.0 and a_b["speaker_alpha"] == 1.0
    # All reviewers (A and B) over the pre-annotated utterances: the same 8 pairs as A vs B.
    group = data["all_reviewers"]
    assert group["utterance_units"] == 8 and group["intent_alpha"] == pytest.approx(88 / 103)
    # Fact units: d1 F0 (2, 2), d1 F1 (2, 3), d2 F0 (3, 3) rated twice; d1 A's added fact, d2
    # F1 (B only) and B's added fact once. Ordinal alpha with two values = nominal: counts
    # {2:3, 3:3}, 2 disagreeing ordered pairs: 1 - 5 x 2 / (36 - 18) = 4/9.
    assert group["fact_units"] == 3 and group["importance_alpha"] == pytest.approx(4 / 9)
    # Stage 2 facts (identical texts match): pre vs A 4 / 4 / 3 -> P = R = F1 = 3/4; importance
    # on matched (2,2) (3,2) (3,3) -> 2/3. ROUGE-L: d1 identical 1; d2 LCS 3 tokens, candidate
    # 8, reference 3 -> F = 2 * (3/8) * 1 / (3/8 + 1) = 6/11; mean 17/22.
    assert (pre_a["facts_first"], pre_a["facts_second"], pre_a["facts_matched"]) == (4, 4, 3)
    assert pre_a["fact_f1"] == pytest.approx(0.75)
    assert pre_a["importance_agreement"] == pytest.approx(2 / 3)
    assert pre_a["importance_alpha"] == pytest.approx(4 / 9)
    assert pre_a["advice_rouge_l"] == pytest.approx(17 / 22)
    # pre vs B: 4 / 5 / 4 -> P 4/5, R 1, F1 8/9; importance (2,2) (3,3) (3,3) (3,2) -> 3/4
    assert pre_b["fact_precision"] == pytest.approx(0.8) and pre_b["fact_recall"] == 1.0
    assert pre_b["fact_f1"] == pytest.approx(8 / 9)
    assert pre_b["importance_agreement"] == pytest.approx(0.75)
    assert pre_b["advice_rouge_l"] == pytest.approx(1.0)
    # A vs B: 4 / 5 / 3 -> P 3/5, R 3/4, F1 2/3; importance (2,2) (2,3) (3,3) -> 2/3
    assert a_b["fact_f1"] == pytest.approx(2 / 3)
    assert a_b["importance_agreement"] == pytest.approx(2 / 3)
    assert a_b["advice_rouge_l"] == pytest.approx(17 / 22)
    rows = {
        r["statistic"]: r
        for r in csv.DictReader((out / "annotation_agreement.csv").open(encoding="utf-8-sig"))
    }
    cols = ("pre-annotation:ann_a", "pre-annotation:ann_b", "ann_a:ann_b", "all_reviewers", "paper")
    assert [rows["intent_agreement"][c] for c in cols] == ["87.5", "75.0", "87.5", "", "88.0"]
    assert [rows["fact_f1"][c] for c in cols] == ["75.0", "88.888889", "66.666667", "", "80.0"]
    assert rows["intent_alpha"]["all_reviewers"] == "0.854369"
    # fields changed: A 8 of 42 records, B 5 of 42 (d1 intent, d2 intent, d2 importance, added
    # fact)
    assert [rows["fields_changed"][c] for c in cols] == ["19.047619", "11.904762", "", "", ""]
    md = (out / "annotation_agreement.md").read_text(encoding="utf-8")
    assert "| Stage 1: intent Cohen's κ | 0.840 | 0.692 | 0.846 | — | — |" in md
    assert (
        "| Stage 1: intent Krippendorff's α (nominal) | 0.848 | 0.706 | 0.854 | 0.854 | — |" in md
    )
    from lecode.report.document import load_all
    from lecode.report.html import render_html

    page = render_html(tables=load_all(out), metadata={})  # the HTML report's section
    assert "<h3>Annotation agreement</h3>" in page and "ann_a vs ann_b" in page
    assert "Annotation agreement" in (out / "annotation_agreement.md").read_text(encoding="utf-8")
    changes = list(csv.DictReader((out / "review_changes.csv").open(encoding="utf-8-sig")))
    assert len(changes) == 84 and sum(c["changed"] == "True" for c in changes) == 13


def test_assembly_takes_the_final_reviewer(
    tmp_path: Path, pre_files: tuple[list[str], list[str]]
) -> None:
    files = write_reviews(tmp_path / "review")
    spec = AssembleSpec(
        pre="p",
        final="ann_a",
        reviews=tuple(FileRef.of(f) for f in files if "/ann_a/" in f),
        split=CorpusSplit(test_fraction=0.5, seed=0),
        code="test",
    )
    out = tmp_path / "built"
    record = corpus_assemble.run(spec, stage1=pre_files[0], stage2=pre_files[1], out_dir=str(out))
    cases = {
        c.id: c
        for name in ("LeCoDe_trainset.jsonl", "LeCoDe_testset.jsonl")
        for c in load_cases(out / name)
    }
    assert sorted(cases) == ["d1", "d2"] and record["n_train"] == record["n_test"] == 1
    assert [u.intent for u in cases["d1"].dialogue] == [1, 5, 3, 7]
    assert cases["d1"].facts[2] == "公司没有提前三十天通知用户"
    assert cases["d2"].suggestion == "可以向法院起诉，要求还款。"
    split = json.loads((out / "split.json").read_text(encoding="utf-8"))
    assert split["seed"] == 0 and split["reviewed"] == {
        "stage1": ["d1", "d2"],
        "stage2": ["d1", "d2"],
    }
    raw = json.loads((out / "LeCoDe_trainset.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert raw["annotated_by"] == {"stage1": "ann_a", "stage2": "ann_a"}


def test_export_step_writes_sheets_sources_and_guidelines(
    tmp_path: Path, pre_files: tuple[list[str], list[str]]
) -> None:
    from lecode.corpus.annotations import RoleAnnotation
    from lecode.corpus.specs import ReviewExportSpec
    from lecode.corpus.steps import corpus_review_export

    roles = RoleAnnotation(
        id="d1",
        annotator="rules",
        roles={"说话人1": "client", "说话人2": "lawyer"},
        turns=(("说话人1", "client", "律师好"), ("说话人2", "lawyer", "请讲")),
    )
    roles_file = tmp_path / "roles.jsonl"
    write_records(roles_file, [roles])
    out = tmp_path / "export"
    n = corpus_review_export.run(
        ReviewExportSpec(pre="p", code="t"),
        stage1=pre_files[0],
        stage2=pre_files[1],
        out_dir=str(out),
        roles=[str(roles_file)],
    )
    # two sheets per dialogue, one source text (d2 has no roles record here), roles to check,
    # the Label Studio tasks and configurations of both stages
    assert n == 10
    source = (out / "d1.source.txt").read_text(encoding="utf-8")
    assert "说话人1=用户，说话人2=律师" in source and "[1] 说话人2（律师）：请讲" in source
    assert "intent" in (out / "GUIDELINES.md").read_text(encoding="utf-8")
    rows = list(csv.reader((out / "d2.stage2.csv").open(encoding="utf-8-sig")))
    assert rows[0] == ["field", "row", "text", "importance", "comment"]
    assert rows[2] == ["fact", "0", "朋友借了用户一万元", "3", ""]
