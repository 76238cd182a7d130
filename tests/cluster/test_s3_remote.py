"""Results through object storage: a DVC remote on S3 (dvc-s3), served here by moto on
127.0.0.1 (scripts/s3_local.sh).

As in tests/test_regeneration.py, the working tree becomes a scratch repository ("origin"),
built with ``dvc repro``; here it pushes to the S3 remote. A fresh clone configured the way
docs/clusters.md says pulls from the bucket, schedules nothing, and regenerates
byte-identical tables with only the report jobs.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.cluster.conftest import REPO, VENV, unavailable
from tests.test_regeneration import (
    GIT,
    environ,
    link_venv,
    make_origin,
    ran_jobs,
    run,
    snakemake_dry,
    tool,
    tree,
)

pytestmark = pytest.mark.cluster

BUCKET = "lecode-test"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A moto S3 server on 127.0.0.1 with an empty bucket; its URL."""
    if not (VENV / "bin" / "moto_server").exists():
        unavailable("moto_server not installed: make cluster-env")
    try:
        import dvc_s3  # noqa: F401
    except ImportError:
        unavailable("dvc-s3 not installed: make cluster-env")
    port = free_port()
    env = {
        **os.environ,
        "LECODE_S3_STATE": str(tmp_path_factory.mktemp("s3-state")),
        "LECODE_S3_BUCKET": BUCKET,
        "LECODE_VENV": str(VENV),
    }
    script = str(REPO / "scripts" / "s3_local.sh")
    subprocess.run(["bash", script, "start", str(port)], env=env, check=True, timeout=60)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        subprocess.run(["bash", script, "stop"], env=env, timeout=30)


def use_s3(root: Path, url: str) -> None:
    """docs/clusters.md: the default remote pointed at a bucket, kept out of git (config.local)."""
    dvc = tool("dvc")
    run(root, dvc, "remote", "modify", "--local", "storage", "url", f"s3://{BUCKET}/lecode")
    run(root, dvc, "remote", "modify", "--local", "storage", "endpointurl", url)


def s3_env(root: Path) -> dict[str, str]:
    return environ(root, **CREDENTIALS)


def bucket_keys(url: str) -> list[str]:
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    keys = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        keys += [o["Key"] for o in page.get("Contents", [])]
    return keys


@pytest.fixture(scope="module")
def origin(s3: str, tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    base = tmp_path_factory.mktemp("s3-regen")
    # the local remote make_origin configures is never written: use_s3 replaces it
    org = make_origin(base / "origin", base / "unused-remote")
    use_s3(org.root, s3)
    env = s3_env(org.root)
    run(org.root, tool("dvc"), "repro", env=env)
    run(org.root, *GIT, "add", "-A", env=env)
    run(org.root, *GIT, "commit", "-qm", "dvc repro", env=env)
    run(org.root, tool("dvc"), "push", env=env)
    assert not (base / "unused-remote").exists()
    return org


@pytest.fixture(scope="module")
def clone(s3: str, origin: SimpleNamespace, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone configured as docs/clusters.md says, after ``dvc pull``."""
    clone = tmp_path_factory.mktemp("s3-clone") / "clone"
    run(clone.parent, *GIT, "clone", "-q", str(origin.root), str(clone))
    link_venv(clone)
    use_s3(clone, s3)
    run(clone, tool("dvc"), "pull", env=s3_env(clone))
    return clone


def dvc_outputs(root: Path) -> dict[str, bytes]:
    """What the stages version (dvc.yaml outs), file by file."""
    files = {}
    for out in ("results", "store", "reports/tables", ".snakemake/metadata"):
        for p in sorted((root / out).rglob("*")):
            if p.is_file():
                files[p.relative_to(root).as_posix()] = p.read_bytes()
    return files


def test_the_bucket_holds_the_run_and_a_clone_gets_it_back(
    s3: str, origin: SimpleNamespace, clone: Path
) -> None:
    keys = bucket_keys(s3)
    assert keys and all(k.startswith("lecode/") for k in keys), keys[:5]
    want, got = dvc_outputs(origin.root), dvc_outputs(clone)
    assert any(k.startswith("results/transcripts/") for k in want)
    assert sorted(got) == sorted(want)
    assert [k for k in want if got[k] != want[k]] == []
    env = s3_env(clone)
    status = run(clone, tool("dvc"), "status", env=env).stdout
    assert "Data and pipelines are up to date" in status, status
    cloud = run(clone, tool("dvc"), "status", "-c", env=env).stdout
    assert "Cache and remote 'storage' are in sync" in cloud, cloud


@pytest.mark.timeout(600)
def test_a_clone_from_s3_schedules_nothing_and_regenerates_identical_tables(
    origin: SimpleNamespace, clone: Path
) -> None:
    assert snakemake_dry(clone, "all_tables") == {}, "a fresh clone after dvc pull must not rerun"
    shutil.rmtree(clone / "reports")
    made = run(clone, "make", "-o", ".venv/.installed", "all_tables", env=s3_env(clone))
    # only the publishing copy (results/tables/<digest> came with the pull), at most the tables
    jobs = ran_jobs(made)
    assert "publish_tables" in jobs, jobs
    assert set(jobs) <= {"tables", "publish_tables", "all_tables", "total"}, jobs
    want, got = tree(origin.root / "reports"), tree(clone / "reports")
    compared = [
        k for k in want if k.startswith("tables/") and k.endswith((".md", ".csv", ".tex"))
    ] + ["metrics.json"]
    assert any(k.startswith("tables/table3.") for k in compared)
    assert [k for k in compared if got.get(k) != want[k]] == []
