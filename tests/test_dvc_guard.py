"""No Snakemake run beside `dvc repro` other than its stage's: while DVC holds its repository
lock (it records the outputs after the stage's run ends), another run is refused before its
first job."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lecode.dvc_guard import LOCK, STAGE_ENV, dvc_lock_holder, refusal
from tests.conftest import copy_project

REPO = Path(__file__).resolve().parent.parent
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
# what zc.lockfile (DVC's lock) does: an exclusive flock, the holder's PID written in the file
HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.write(fd, b" %d\\n" % os.getpid())
print("held", flush=True)
time.sleep(120)
"""


@pytest.fixture
def dvc_running(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    (tmp_path / LOCK).parent.mkdir(parents=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / LOCK)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield proc
    proc.kill()
    proc.wait()


def test_the_lock_of_a_running_dvc_is_seen_and_named(
    tmp_path: Path, dvc_running: subprocess.Popen[str]
) -> None:
    assert dvc_lock_holder(tmp_path) == f"PID {dvc_running.pid}"
    why = refusal(tmp_path, {})
    assert why is not None and f"PID {dvc_running.pid} holds .dvc/tmp/lock" in why
    assert "Wait for it to finish" in why
    assert refusal(tmp_path, {STAGE_ENV: "1"}) is None  # the stage's own run
    dvc_running.kill()
    dvc_running.wait()
    assert dvc_lock_holder(tmp_path) is None and refusal(tmp_path, {}) is None
    assert (tmp_path / LOCK).is_file()  # a lock file left behind holds nothing


def test_no_dvc_no_lock(tmp_path: Path) -> None:
    assert dvc_lock_holder(tmp_path) is None and refusal(tmp_path, {}) is None


def test_the_stage_command_marks_its_run(tmp_path: Path) -> None:
    fake = tmp_path / "fake-snakemake"
    fake.write_text(f'#!/bin/sh\necho "stage=${STAGE_ENV} args=$*"\n', encoding="utf-8")
    fake.chmod(0o755)
    run = subprocess.run(
        ["bash", str(REPO / "scripts/dvc_stage.sh"), str(fake), "all_tables"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.strip() == "stage=1 args=--cores all all_tables"


@pytest.mark.slow  # builds the DAG (about 15 s)
def test_snakemake_beside_dvc_repro_is_refused_before_any_job(
    tmp_path: Path, dvc_running: subprocess.Popen[str]
) -> None:
    copy_project(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != STAGE_ENV}
    run = subprocess.run(
        [SNAKEMAKE, "all_tables", "--cores", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    out = run.stdout + run.stderr
    assert run.returncode != 0
    assert f"`dvc repro` is running in this project (PID {dvc_running.pid}" in out, out[-3000:]
    assert not (tmp_path / "results").exists()  # no job ran
