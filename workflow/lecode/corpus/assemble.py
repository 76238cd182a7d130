"""The reviewed annotations assembled into the LeCoDe JSONL schema, split into train and test
by a seeded stable hash of the dialogue ids, validated with :func:`lecode.dataset.load_cases`,
with the split's record and Table 2 statistics."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lecode.corpus.annotations import Stage1Annotation, Stage2Annotation
from lecode.dataset import DatasetError, load_cases, to_lecode_json
from lecode.recordio import atomic_write_text
from lecode.records import Case, Utterance
from lecode.specs import file_sha256

TRAIN_FILE = "LeCoDe_trainset.jsonl"
TEST_FILE = "LeCoDe_testset.jsonl"
SPLIT_FILE = "split.json"
TABLE2_FILE = "table2.md"


def to_case(s1: Stage1Annotation, s2: Stage2Annotation) -> Case:
    return Case(
        id=s1.id,
        initial_query=s2.initial_query,
        dialogue=tuple(
            Utterance(speaker=u.speaker, text=u.text, intent=u.intent) for u in s1.dialogue
        ),
        facts=tuple(f.text for f in s2.facts),
        importance=tuple(f.importance for f in s2.facts),
        suggestion=s2.suggestion,
        case_type=s2.case_type,
        charge_type=s2.charge_type,
    )


def split_key(case_id: str, seed: int) -> tuple[int, str]:
    digest = hashlib.sha256(f"{seed}:{case_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big"), case_id


def seeded_split(
    ids: Sequence[str], test_fraction: float, seed: int
) -> tuple[list[str], list[str]]:
    """(train ids, test ids), each sorted: ids ranked by the seeded hash; the last
    ``round(n * test_fraction)`` (at least one of each side when n >= 2) are the test set. A
    dialogue's side depends on its id, the seed and the size of the test set only."""
    n = len(ids)
    n_test = round(n * test_fraction)
    if n >= 2:
        n_test = min(max(n_test, 1), n - 1)
    ranked = sorted(ids, key=lambda i: split_key(i, seed))
    test = set(ranked[n - n_test :]) if n_test else set()
    return sorted(i for i in ids if i not in test), sorted(test)


def _jsonl(cases: Sequence[Case], sources: dict[str, dict[str, str]]) -> str:
    lines = []
    for c in cases:
        rec: dict[str, Any] = to_lecode_json(c)
        rec["annotated_by"] = sources[c.id]
        lines.append(json.dumps(rec, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def assemble(
    pre1: dict[str, Stage1Annotation],
    pre2: dict[str, Stage2Annotation],
    reviewed1: dict[str, Stage1Annotation],
    reviewed2: dict[str, Stage2Annotation],
    *,
    test_fraction: float,
    seed: int,
    out_dir: str | Path,
    extra: dict[str, Any] | None = None,
    decided_by: dict[str, dict[str, str]] | None = None,
) -> dict[str, Any]:
    """Write the train and test files, ``split.json`` and ``table2.md``; returns the split
    record. A record the LeCoDe loader rejects stops the build with every violation named."""
    from lecode.report.document import Provenance, stats_document
    from lecode.report.render import render_plain_markdown
    from lecode.report.tables import table2

    out = Path(out_dir)
    missing = sorted(set(pre1) ^ set(pre2))
    if missing:
        raise ValueError(f"dialogues without both stages of pre-annotation: {missing}")
    cases: dict[str, Case] = {}
    sources: dict[str, dict[str, str]] = {}
    for did in sorted(pre2):
        s1 = reviewed1.get(did, pre1[did])
        s2 = reviewed2.get(did, pre2[did])
        cases[did] = to_case(s1, s2)
        sources[did] = (decided_by or {}).get(did) or {
            "stage1": s1.annotator,
            "stage2": s2.annotator,
        }
    train_ids, test_ids = seeded_split(list(cases), test_fraction, seed)
    train = [cases[i] for i in train_ids]
    test = [cases[i] for i in test_ids]
    atomic_write_text(out / TRAIN_FILE, _jsonl(train, sources))
    atomic_write_text(out / TEST_FILE, _jsonl(test, sources))
    for name in (TRAIN_FILE, TEST_FILE):
        try:
            load_cases(out / name)
        except DatasetError as exc:
            raise DatasetError(exc.violations) from None
    record = {
        "seed": seed,
        "test_fraction": test_fraction,
        "method": "sha256(f'{seed}:{id}') ranking; the last round(n * test_fraction) are test",
        "n_dialogues": len(cases),
        "n_train": len(train),
        "n_test": len(test),
        "train_ids": train_ids,
        "test_ids": test_ids,
        "reviewed": {
            "stage1": sorted(i for i in cases if i in reviewed1),
            "stage2": sorted(i for i in cases if i in reviewed2),
        },
        "files": {name: file_sha256(out / name) for name in (TRAIN_FILE, TEST_FILE)},
        **(extra or {}),
    }
    atomic_write_text(out / SPLIT_FILE, json.dumps(record, ensure_ascii=False, indent=2) + "\n")
    atomic_write_text(
        out / TABLE2_FILE, render_plain_markdown(stats_document(table2(train, test), Provenance()))
    )
    return record
