"""Several reviews of one dialogue: an adjudicator's file decides where reviewers disagree;
without one, the configured rule (priority or majority), stated in split.json."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from lecode.config.corpus import CorpusSplit
from lecode.corpus.specs import AssembleSpec
from lecode.corpus.steps import corpus_assemble
from lecode.dataset import load_cases
from lecode.specs import FileRef
from tests.test_corpus_review import H1, write_reviews
from tests.test_corpus_review import pre_files as pre_files  # noqa: F401  (a fixture)

#: d2 as the adjudicator decides it: B's intent 6 on row 1, A's rewritten advice.
LEAD_D2 = (
    H1 + "0,用户,朋友借钱不还怎么办？,1\n1,律师,有借条吗？,6\n2,用户,有借条，借了一万元。,2\n"
    "3,律师,可以向法院起诉，要求还款。,7\n"
)
#: a third reviewer of d2 who sides with B on row 1
C_D2 = (
    H1 + "0,用户,朋友借钱不还怎么办？,1\n1,律师,有借条吗？,6\n2,用户,有借条，借了一万元。,2\n"
    "3,律师,可以起诉。,7\n"
)


def build(tmp_path: Path, pre: tuple[list[str], list[str]], **kw: object) -> tuple[dict, dict]:
    files = [Path(f) for f in write_reviews(tmp_path / "review")]
    for who, text in kw.pop("extra", {}).items():  # type: ignore[attr-defined]
        p = tmp_path / "review" / who / "d2.stage1.csv"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        files.append(p)
    spec = AssembleSpec(
        pre="p",
        final="ann_a",
        reviews=tuple(FileRef.of(f) for f in files),
        split=CorpusSplit(test_fraction=0.5, seed=0),
        code="t",
        **kw,  # type: ignore[arg-type]
    )
    out = tmp_path / "built"
    record = corpus_assemble.run(spec, stage1=pre[0], stage2=pre[1], out_dir=str(out))
    cases: dict[str, dict] = {}
    for n in ("train", "test"):
        for line in (out / f"LeCoDe_{n}set.jsonl").read_text(encoding="utf-8").splitlines():
            raw = json.loads(line)
            cases[raw["id"]] = raw
        for c in load_cases(out / f"LeCoDe_{n}set.jsonl"):
            cases[c.id]["dialogue"] = [{"intent": u.intent, "text": u.text} for u in c.dialogue]
    return record, cases


def test_without_adjudication_the_priority_rule_decides_and_says_so(
    tmp_path: Path, pre_files: tuple[list[str], list[str]]
) -> None:
    record, cases = build(tmp_path, pre_files, reviewers=("ann_a", "ann_b"))
    d2 = record["decisions"]["d2"]["stage1"]
    assert d2["how"] == "priority" and d2["decided_by"] == "ann_a"
    assert d2["disputed"] == ["dialogue[1].intent", "dialogue[3].text"]
    assert [u["intent"] for u in cases["d2"]["dialogue"]] == [1, 5, 2, 7]  # ann_a's
    assert record["adjudication_rule"].startswith("priority: ")
    assert record["decisions"]["d1"]["stage1"]["how"] == "agreement"  # A and B agree on d1
    rows = list(csv.reader((tmp_path / "built" / "disagreements.csv").open(encoding="utf-8-sig")))
    assert rows[0] == ["id", "stage", "field", "reviewers", "decided_by", "how"]
    assert ["d2", "stage1", "dialogue[1].intent", "ann_a;ann_b", "ann_a", "priority"] in rows


def test_an_adjudicators_file_decides_and_is_recorded(
    tmp_path: Path, pre_files: tuple[list[str], list[str]]
) -> None:
    record, cases = build(
        tmp_path,
        pre_files,
        reviewers=("ann_a", "ann_b"),
        adjudicators=("lead",),
        extra={"lead": LEAD_D2},
    )
    d2 = record["decisions"]["d2"]["stage1"]
    assert (d2["how"], d2["decided_by"]) == ("adjudication", "lead")
    assert d2["disputed"] == ["dialogue[1].intent", "dialogue[3].text"]
    assert [u["intent"] for u in cases["d2"]["dialogue"]] == [1, 6, 2, 7]
    assert cases["d2"]["dialogue"][3]["text"] == "可以向法院起诉，要求还款。"
    assert cases["d2"]["annotated_by"]["stage1"] == "lead"
    assert record["adjudicators"] == ["lead"]


def test_the_majority_rule_takes_the_value_most_reviewers_gave(
    tmp_path: Path, pre_files: tuple[list[str], list[str]]
) -> None:
    record, cases = build(
        tmp_path,
        pre_files,
        reviewers=("ann_a", "ann_b", "ann_c"),
        rule="majority",
        extra={"ann_c": C_D2},
    )
    d2 = record["decisions"]["d2"]["stage1"]
    assert d2["how"] == "majority" and d2["reviewers"] == ["ann_a", "ann_b", "ann_c"]
    # row 1: A 5, B 6, C 6 -> 6; the text stays the priority reviewer's (A)
    assert [u["intent"] for u in cases["d2"]["dialogue"]] == [1, 6, 2, 7]
    assert cases["d2"]["dialogue"][3]["text"] == "可以向法院起诉，要求还款。"
    assert record["adjudication_rule"].startswith("majority: ")


def test_the_plan_separates_adjudicators_from_reviewers(tmp_path: Path) -> None:
    import yaml

    from lecode.config.experiment import Settings
    from lecode.corpus.plan import CorpusPlan

    repo = Path(__file__).resolve().parent.parent
    write_reviews(tmp_path / "review")
    (tmp_path / "review" / "lead").mkdir()
    (tmp_path / "review" / "lead" / "d2.stage1.csv").write_text(LEAD_D2, encoding="utf-8")
    data = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
    data["corpus"].update(
        transcripts=str(repo / "data" / "transcripts"),
        review_dir=str(tmp_path / "review"),
        adjudication={"adjudicators": ["lead"], "rule": "majority"},
        final="ann_b",
    )
    plan = CorpusPlan(Settings.parse(data))
    plan.check()
    assert plan.reviewers == ("ann_b", "ann_a") and plan.adjudicators == ("lead",)
    spec = plan.assemble_spec
    assert spec.rule == "majority" and spec.adjudicators == ("lead",)
    assert any(f.path.endswith("lead/d2.stage1.csv") for f in spec.reviews)
    assert plan.agreement_spec.reviewers == ("ann_b", "ann_a")  # the adjudicator is no rater
