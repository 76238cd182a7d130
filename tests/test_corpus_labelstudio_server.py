"""The Label Studio round trip against a real server started here on 127.0.0.1 (SQLite, no
browser): projects with the shipped configurations, the tasks imported, two annotators'
annotations and an adjudicator's submitted through its API, the export pulled, imported into
lecode, adjudicated and built into a dataset that `lecode validate` accepts.

Needs Label Studio in its own environment (``make labelstudio-env``: ``.venv-labelstudio``);
skipped without it. The server's first start (database migrations) takes about 90 s here."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lecode.config.corpus import CorpusSplit
from lecode.corpus import rules
from lecode.corpus.annotations import write_records
from lecode.corpus.labelstudio import (
    STAGE1_CONFIG,
    STAGE2_CONFIG,
    read_export,
    validate,
    write_sheets,
    write_tasks,
)
from lecode.corpus.labelstudio_client import LabelStudio, pull, push
from lecode.corpus.specs import AssembleSpec
from lecode.corpus.steps import corpus_assemble
from lecode.corpus.transcripts import read_transcripts, transcript_files
from lecode.specs import FileRef

REPO = Path(__file__).resolve().parent.parent
LS_ENV = REPO / ".venv-labelstudio"
LS_BIN = LS_ENV / "bin" / "label-studio"
ADMIN_TOKEN = "lecode-admin-token-0123456789"
PEOPLE = ("ann_a@lecode.test", "ann_b@lecode.test", "lead@lecode.test")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not LS_BIN.exists(),
        reason="Label Studio is not installed: make labelstudio-env (.venv-labelstudio)",
    ),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    data = tmp_path / "ls-data"
    data.mkdir()
    env = {
        **os.environ,
        "LABEL_STUDIO_BASE_DATA_DIR": str(data),
        "DJANGO_DB": "sqlite",
        "LABEL_STUDIO_USERNAME": "admin@lecode.test",
        "LABEL_STUDIO_PASSWORD": "lecode-admin-pw",
        "LABEL_STUDIO_USER_TOKEN": ADMIN_TOKEN,
    }
    port = free_port()
    log = (tmp_path / "ls.log").open("w")
    proc = subprocess.Popen(
        [str(LS_BIN), "start", "--no-browser", "--host", "127.0.0.1", "--port", str(port)],
        cwd=data,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        import httpx

        start = time.monotonic()
        while time.monotonic() - start < 300:
            if proc.poll() is not None:
                pytest.fail(f"label-studio exited: {(tmp_path / 'ls.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1)
        else:
            pytest.fail("label-studio did not answer within 300 s")
        print(f"label-studio answered after {time.monotonic() - start:.0f} s")
        setup = subprocess.run(
            [
                str(LS_ENV / "bin" / "python"),
                str(REPO / "tests/support/labelstudio_setup.py"),
                *PEOPLE,
            ],
            cwd=data,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert setup.returncode == 0, setup.stderr[-2000:]
        tokens = json.loads(setup.stdout.strip().splitlines()[-1])
        yield url, tokens
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def edited(result: list[dict], changes: dict[str, str]) -> list[dict]:
    out = json.loads(json.dumps(result))
    for r in out:
        if r["from_name"] in changes:
            r["value"] = {"choices": [changes[r["from_name"]]]}
    return out


def test_label_studio_round_trip_to_a_valid_dataset(
    tmp_path: Path, server: tuple[str, dict[str, str]]
) -> None:
    url, tokens = server
    s1 = {}
    s2 = {}
    for t in read_transcripts(transcript_files(REPO / "data" / "transcripts")):
        s1[t.id] = rules.stage1(rules.identify_roles(t))
        s2[t.id] = rules.stage2(s1[t.id])
    pre1, pre2 = tmp_path / "pre1.jsonl", tmp_path / "pre2.jsonl"
    write_records(pre1, s1.values())
    write_records(pre2, s2.values())
    written = write_tasks(list(s1.values()), list(s2.values()), tmp_path / "ls", "lecode")
    t2 = json.loads((tmp_path / "ls" / "stage2.tasks.json").read_text(encoding="utf-8"))
    assert len(written) == 4
    admin = LabelStudio(url, ADMIN_TOKEN)
    p1 = push(admin, "lecode stage 1", STAGE1_CONFIG, tmp_path / "ls" / "stage1.tasks.json")
    p2 = admin.create_project("lecode stage 2", STAGE2_CONFIG)
    assert len(admin.task_ids(p1)) == 6 and admin.import_tasks(p2, t2) == 6
    people = {email.split("@")[0]: LabelStudio(url, tokens[email]) for email in PEOPLE}
    target = "tr-labour-001"
    intent_of = {"ann_a": "3 Client Information Addition", "ann_b": "2 Client Response"}
    for project in (p1, p2):
        for task_id in admin.task_ids(project):
            task = admin.task(task_id)
            did = task["data"]["lecode_id"]
            result = task["predictions"][0]["result"]
            for who in ("ann_a", "ann_b"):
                changes = {"intent_2": intent_of[who]} if did == target and project == p1 else {}
                people[who].annotate(task_id, edited(result, changes))
            if did == target and project == p1:  # the adjudicator decides the disputed dialogue
                people["lead"].annotate(task_id, edited(result, {"intent_2": "2 Client Response"}))
    export = tmp_path / "export.json"
    users = pull(admin, p1, tmp_path / "stage1.json")
    stage1 = json.loads((tmp_path / "stage1.json").read_text(encoding="utf-8"))
    export.write_text(json.dumps(stage1 + admin.export(p2), ensure_ascii=False), encoding="utf-8")
    imported = read_export(export, "lecode", users)
    assert sorted(imported) == ["ann_a", "ann_b", "lead"]
    validate(imported, s1, s2)
    review_dir = tmp_path / "review"
    files = write_sheets(imported, review_dir)
    assert len(files) == 2 * 6 + 2 * 6 + 1  # both stages by each annotator; one adjudication
    spec = AssembleSpec(
        pre="p",
        final="ann_a",
        reviews=tuple(FileRef.of(f) for f in files),
        split=CorpusSplit(),
        reviewers=("ann_a", "ann_b"),
        adjudicators=("lead",),
        code="t",
    )
    out = tmp_path / "built"
    record = corpus_assemble.run(spec, stage1=[str(pre1)], stage2=[str(pre2)], out_dir=str(out))
    decided = record["decisions"][target]["stage1"]
    assert (decided["how"], decided["decided_by"]) == ("adjudication", "lead")
    assert decided["disputed"] == ["dialogue[2].intent"]
    assert record["decisions"]["tr-loan-002"]["stage1"]["how"] == "agreement"
    assert (record["n_train"], record["n_test"]) == (5, 1)
    lecode = Path(sys.executable).parent / "lecode"
    check = subprocess.run(
        [
            str(lecode),
            "validate",
            str(out / "LeCoDe_trainset.jsonl"),
            str(out / "LeCoDe_testset.jsonl"),
        ],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    lines = (out / "LeCoDe_trainset.jsonl").read_text(encoding="utf-8").splitlines()
    lines += (out / "LeCoDe_testset.jsonl").read_text(encoding="utf-8").splitlines()
    case = next(json.loads(x) for x in lines if json.loads(x)["id"] == target)
    assert case["intention_annotation"][2][2].startswith("[2]")
    assert case["annotated_by"]["stage1"] == "lead"
