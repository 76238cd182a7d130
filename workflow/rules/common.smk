# Helpers shared by the rules. The configuration is parsed once into typed settings; a Plan
# composes every study's plan, which derives each job (its spec and the files it reads) from
# them. A job's outputs live under its spec's digest, so what exists at the planned path is
# current and nothing else is (docs/reruns.md). A step's rule names its step (STEPS below): its
# wildcards select the job, whose inputs, spec and resources the rule hands Snakemake; the one
# script workflow/scripts/step.py runs the step's declaration with them.
import atexit
import functools
import hashlib
import inspect
import json
import os
import sys
from collections import Counter
from types import SimpleNamespace
from pathlib import Path

from snakemake.common import overwrite_function_params

sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))

from lecode import paths
from lecode.config.base import SettingsError
from lecode.config.experiment import Settings
from lecode.pipeline import Plan
from lecode.preflight import check_keys, count_records, preflight
from lecode.fingerprint import steps as code_steps
from lecode.specs import roles_in_param

# Every job's software, for `--software-deployment-method apptainer` (unused otherwise: jobs
# then run in the current environment): LECODE_IMAGE (e.g. docker://REGISTRY/lecode:lock-<digest>),
# else the Apptainer image of this lock file that `make image-sif` writes (docs/clusters.md).
_LOCK = Path(workflow.basedir) / "requirements.lock"
_LOCK_DIGEST = hashlib.sha256(_LOCK.read_bytes()).hexdigest()[:12] if _LOCK.exists() else "none"
IMAGE = os.environ.get("LECODE_IMAGE") or f".image/lecode-lock-{_LOCK_DIGEST}.sif"

try:
    SETTINGS = Settings.parse(config, source="params.yaml (with any --configfile)")
    # what `lecode check` runs too; API keys wait for the scheduled jobs (onstart)
    preflight(
        SETTINGS,
        keys=False,
        layers=["params.yaml", *workflow.config_settings.configfiles],
    )
except SettingsError as exc:
    raise WorkflowError(str(exc)) from None


def models_of_jobs(jobs):
    """The model entries the given jobs call: the roles their specs hold (checked for API keys
    before any job runs)."""
    for job in jobs:
        yield from (role.name for role in roles_in_param(getattr(job.params, "spec", None)))


def refuse_beside_dvc_repro():
    """Called by onstart: no run beside `dvc repro` other than its stage's (lecode.dvc_guard)."""
    from lecode.dvc_guard import refusal

    why = refusal(workflow.basedir)
    if why is not None:
        raise WorkflowError(why)


def check_keys_of_scheduled_jobs():
    """Called by onstart: after the DAG is built, before the first job; a dry run spends
    nothing and is not checked (`lecode check` checks every model)."""
    try:
        check_keys(SETTINGS, models_of_jobs(workflow.dag.needrun_jobs()))
    except SettingsError as exc:
        raise WorkflowError(str(exc)) from None
PLAN = Plan(SETTINGS)


def report_failed_dialogues(success):
    """Called by onsuccess/onerror, after every job that could run did: the dialogues that
    failed, per system, endpoint URL and failure class (lecode.failures); a system whose every
    dialogue failed fails the run."""
    from lecode.failures import run_failures, summary

    failures = run_failures(EVALUATION)
    if not failures:
        return
    print("lecode: failures (LLM calls that failed after their retries):", file=sys.stderr)
    for line in summary(failures):
        print(line, file=sys.stderr)
    print(
        "lecode: fix the endpoint, then `lecode retry-errors` and run the workflow again "
        "(finished dialogues are kept)",
        file=sys.stderr,
    )
    dead = [f"{f.label} ({f.step})" for f in failures if f.all_failed]
    if dead and success:
        raise WorkflowError(
            f"every dialogue failed: {', '.join(dead)}; the tables were built, but these rows "
            "hold no results (see the lines above)"
        )


# -- per-job rule helpers --------------------------------------------------------------------------
# Snakemake calls a rule's input, params and resource functions several times per job, and it
# inspects each function's signature at every call. A helper declared with @job_helper tells
# Snakemake its parameters once and computes its value once per job (its wildcards): the
# DAG build's cost per job then stays the same however many experts and shards there are.
# With LECODE_HELPER_COUNTS=FILE, the calls and computations per helper are written to FILE
# when Snakemake exits (tests/test_dag_build_cost.py counts them).

HELPER_CALLS = Counter()
HELPER_RUNS = Counter()


def job_helper(fn):
    """A rule helper taking ``wildcards`` (and any other argument Snakemake passes by name,
    such as ``threads``), computed once per job."""
    cache = {}
    name = fn.__name__

    @functools.wraps(fn)
    def helper(wildcards, *args, **kwargs):
        HELPER_CALLS[name] += 1
        key = (tuple(wildcards.items()), args, tuple(sorted(kwargs.items())))
        try:
            value = cache[key]
        except KeyError:
            HELPER_RUNS[name] += 1
            value = cache[key] = fn(wildcards, *args, **kwargs)
        # inputs are handed out as copies: what Snakemake does with one stays with it
        return value.copy() if isinstance(value, (dict, list)) else value

    # what Snakemake would read from the signature at every call, read once
    overwrite_function_params(helper, inspect.signature(fn).parameters)
    return helper


def _write_helper_counts(path=os.environ.get("LECODE_HELPER_COUNTS")):
    if path:
        counts = {"calls": dict(HELPER_CALLS), "runs": dict(HELPER_RUNS)}
        Path(path).write_text(json.dumps(counts, sort_keys=True), encoding="utf-8")


atexit.register(_write_helper_counts)


@job_helper
def threads_per_task(wildcards, threads):
    """``cpus_per_task`` of a cluster job: its ``threads``."""
    return threads


wildcard_constraints:
    **paths.WILDCARDS,


EVALUATION = PLAN.evaluation
REPORT = PLAN.report
SHARDS = EVALUATION.shards
SHARDSET = EVALUATION.shardset


_SPEC_JSON = {}


def spec_json(spec):
    """A spec's JSON, serialised once per spec (the spec is kept with it)."""
    got = _SPEC_JSON.get(id(spec))
    if got is None or got[0] is not spec:
        got = _SPEC_JSON[id(spec)] = (spec, spec.to_json())
    return got[1]


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


def step_rule(step):
    """The per-job helpers of the rule of declared step ``step`` (its rule's ``params: step``):
    ``job`` (the planned job its wildcards select; a path of another configuration is refused),
    ``inputs`` (for ``unpack``), ``spec`` (its JSON), ``api`` (1 when it may call an LLM) and
    ``minutes(with_api, without)`` (its wall time on a cluster)."""

    def job(wildcards):
        try:
            found = PLAN.job(step, wildcards)
        except SettingsError as exc:
            raise WorkflowError(str(exc)) from None
        if found is None:
            raise WorkflowError(
                f"{step} {dict(wildcards.items())}: not a job of the current configuration; "
                "request targets such as all_tables instead of old paths"
            )
        return found

    job = job_helper(_named(job, f"{step}_job"))

    def inputs(wildcards):
        found = job(wildcards)
        out = {}
        for name, value in found.inputs.items():
            files = [value] if isinstance(value, str) else list(value)
            if name in found.ancient:
                # digest-named folders: what they hold is decided by the digest, and folders
                # have no checksum in Snakemake's records, so their times must not count
                files = [ancient(f) for f in files]
            out[name] = files[0] if isinstance(value, str) else files
        return out

    def spec(wildcards):
        return spec_json(job(wildcards).spec)

    def api(wildcards):
        return int(job(wildcards).calls_llms)

    def minutes(with_api, without):
        def runtime(wildcards):
            return with_api if api_helper(wildcards) else without

        return job_helper(_named(runtime, f"{step}_runtime"))

    api_helper = job_helper(_named(api, f"{step}_api"))
    return SimpleNamespace(
        name=step,
        job=job,
        inputs=job_helper(_named(inputs, f"{step}_inputs")),
        spec=job_helper(_named(spec, f"{step}_spec")),
        api=api_helper,
        minutes=minutes,
    )


#: The rule helpers of every declared step (lecode/<study>/steps/<step>.py), by step name.
STEPS = SimpleNamespace(**{name: step_rule(name) for name in code_steps()})


def all_score_files(wildcards=None):
    return [x.score_file for x in EVALUATION.run_system_files]


def all_transcript_files(wildcards=None):
    return EVALUATION.all_transcripts()


def sft_data_targets(wildcards=None):
    return PLAN.sft.sft_data_files()


def sft_adapter_targets(wildcards=None):
    try:  # names the missing setting (sft.train.base_model) before anything runs
        return PLAN.sft.published_adapters()
    except SettingsError as exc:
        raise WorkflowError(str(exc)) from None


@job_helper
def published_adapter_inputs(wildcards):
    """The trained adapter ``publish_lora`` copies to its stable path."""
    return PLAN.sft.publish_inputs(wildcards.variant)


#: publish_lora's output: <sft.train.publish_dir>/<variant>-sft
PUBLISHED_ADAPTER = paths.format(
    paths.SFT_PUBLISHED, publish_dir=SETTINGS.sft.train.publish_dir, variant="{variant}"
)
for _line in PLAN.roles.adapter_warnings(SETTINGS.llm_models(), replay=SETTINGS.replay()):
    print(f"lecode: {_line}", file=sys.stderr)


def table4_targets(wildcards=None):
    if not PLAN.reliability.reliability_enabled:
        raise WorkflowError(
            "Table 4 is off: set reliability.enabled: true (params.yaml or --configfile)"
        )
    return [PLAN.reliability.table4_dir]


# -- report steps ---------------------------------------------------------------------------------


def report_mem_mb(spec):
    """Memory a report job reserves: every system's dialogues are held at once
    (lecode.resources, measured by benchmarks/scale.py)."""
    from lecode.resources import report_memory_mb

    n = count_records(SETTINGS.dataset.test)
    if SETTINGS.dataset.limit is not None:
        n = min(n, SETTINGS.dataset.limit)
    return report_memory_mb(n * max(1, len(spec.systems)))


def all_table_files(wildcards=None):
    return [paths.PUBLISHED_TABLES, paths.PUBLISHED_METRICS]


def all_report_files(wildcards=None):
    return [
        *all_table_files(),
        paths.PUBLISHED_FIGURES,
        paths.PUBLISHED_PLOTS,
        paths.PUBLISHED_HTML,
    ]
