# Helpers shared by the rules. The configuration is parsed once into typed settings; a Plan
# derives every job's spec from them. A job's outputs live under its spec's digest, so what
# exists at the planned path is current and nothing else is (docs/reruns.md). The rules hand
# each job its spec (params: spec) and nothing else.
import atexit
import functools
import hashlib
import inspect
import json
import os
import sys
from collections import Counter
from pathlib import Path

from snakemake.common import overwrite_function_params

sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))

from lecode import paths
from lecode.config.base import SettingsError
from lecode.config.experiment import Settings
from lecode.plan import Plan
from lecode.preflight import check_keys, count_records, preflight
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

    failures = run_failures(PLAN)
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


SHARDS = PLAN.shards
SHARDSET = PLAN.shardset


_SPEC_JSON = {}


def spec_json(spec):
    """A spec's JSON, serialised once per spec (the spec is kept with it)."""
    got = _SPEC_JSON.get(id(spec))
    if got is None or got[0] is not spec:
        got = _SPEC_JSON[id(spec)] = (spec, spec.to_json())
    return got[1]


def spec_param(spec):
    """``params: spec=`` of a rule without wildcards: a function, since Snakemake formats a
    plain string param with the wildcards, and a spec holds display text (labels) that may
    contain braces."""
    text = spec.to_json()

    def spec_text(wildcards):
        return text

    overwrite_function_params(spec_text, inspect.signature(spec_text).parameters)
    return spec_text


def adapter_inputs(*names):
    """The published SFT adapters (outputs of publish_lora) that the vLLM servers of the model
    entries ``names`` serve: a server is started on demand by the first job that calls it and
    takes all its adapters then, so every job that may start it waits for all of them (and
    training never competes with a running server for the GPUs)."""
    try:
        return PLAN.adapter_inputs(*(n for n in names if n is not None))
    except SettingsError as exc:
        raise WorkflowError(str(exc)) from None


def with_adapters(inputs, *names):
    """``inputs`` plus ``adapters`` when the named entries' servers serve published adapters."""
    adapters = adapter_inputs(*names)
    if adapters:
        inputs["adapters"] = adapters
    return inputs


def _check(wildcards, field, expected):
    got = getattr(wildcards, field)
    if got != expected:
        raise WorkflowError(
            f"{wildcards}: {field} {got} is not the current configuration's ({expected}); "
            "request targets such as all_tables instead of old paths"
        )


# -- shard_dataset ------------------------------------------------------------------------------


def shard_outputs():
    return {
        "shards": PLAN.shard_files(),
        "manifests": [paths.format(paths.MANIFEST, shardset=SHARDSET, shard=k) for k in SHARDS],
        "index": PLAN.index_file,
    }


# -- simulate -------------------------------------------------------------------------------


@job_helper
def simulate_spec(wildcards):
    spec = PLAN.simulate_spec(wildcards.expert, wildcards.strategy)
    _check(wildcards, "sim", PLAN.sim(wildcards.expert, wildcards.strategy))
    return spec


@job_helper
def simulate_inputs(wildcards):
    spec = simulate_spec(wildcards)
    inputs = {"shard": paths.format(paths.SHARD, shardset=wildcards.shardset, shard=wildcards.shard)}
    if spec.train is not None:
        inputs["train"] = spec.train.path
    return with_adapters(inputs, spec.expert.name, spec.client.name)


@job_helper
def simulate_params(wildcards):
    return spec_json(simulate_spec(wildcards))


@job_helper
def simulate_api(wildcards):
    spec = simulate_spec(wildcards)
    return int(spec.expert.is_llm or spec.client.is_llm)


@job_helper
def simulate_runtime(wildcards):
    """Minutes of wall time on a cluster: a shard of LLM consultations waits on its API."""
    return 240 if simulate_api(wildcards) else 30


# -- match_facts and judge_advice -----------------------------------------------------------------


@job_helper
def evaluate_inputs(wildcards):
    return {
        "shard": paths.format(paths.SHARD, shardset=wildcards.shardset, shard=wildcards.shard),
        "transcripts": PLAN.transcript(wildcards.expert, wildcards.strategy, wildcards.shard),
    }


@job_helper
def match_inputs(wildcards):
    return with_adapters(evaluate_inputs(wildcards), PLAN.match_spec.role.name)


@job_helper
def judge_inputs(wildcards):
    return with_adapters(evaluate_inputs(wildcards), PLAN.judge_spec.role.name)


@job_helper
def match_params(wildcards):
    _check(wildcards, "mcfg", PLAN.mcfg)
    return spec_json(PLAN.match_spec)


@job_helper
def judge_params(wildcards):
    _check(wildcards, "jcfg", PLAN.jcfg)
    return spec_json(PLAN.judge_spec)


@job_helper
def match_api(wildcards):
    return int(PLAN.match_spec.role.is_llm)


@job_helper
def match_runtime(wildcards):
    return 120 if match_api(wildcards) else 15


# -- score_system and aggregate_scores ------------------------------------------------------------


@job_helper
def score_inputs(wildcards):
    e, s = wildcards.expert, wildcards.strategy
    _check(wildcards, "scfg", PLAN.scfg)
    return {
        "shards": PLAN.shard_files(),
        "transcripts": [PLAN.transcript(e, s, k) for k in SHARDS],
        "matches": [PLAN.match(e, s, k) for k in SHARDS],
        "judgements": [PLAN.judgement(e, s, k) for k in SHARDS] if PLAN.jcfg else [],
    }


@job_helper
def score_params(wildcards):
    return spec_json(PLAN.score_spec)


def all_score_files(wildcards=None):
    return [x.score_file for x in PLAN.run_system_files]


def all_transcript_files(wildcards=None):
    return PLAN.all_transcripts()


# -- reliability study (Table 4) ------------------------------------------------------------------


@job_helper
def reliability_spec(wildcards):
    spec = PLAN.reliability_spec(wildcards.rclient, wildcards.cstrategy)
    _check(wildcards, "rcfg", spec.digest())
    _check(wildcards, "rsmp", PLAN.reliability_sample_spec.digest())
    return spec


@job_helper
def reliability_inputs(wildcards):
    spec = reliability_spec(wildcards)
    inputs = {"sample": PLAN.reliability_items_file}
    return with_adapters(inputs, *(r.name for r in (spec.client, spec.judge) if r is not None))


@job_helper
def reliability_params(wildcards):
    return spec_json(reliability_spec(wildcards))


@job_helper
def reliability_api(wildcards):
    spec = reliability_spec(wildcards)
    return int(any(r is not None and r.is_llm for r in (spec.client, spec.judge)))


@job_helper
def reliability_runtime(wildcards):
    return 120 if reliability_api(wildcards) else 15


def table4_targets(wildcards=None):
    if not PLAN.reliability_enabled:
        raise WorkflowError(
            "Table 4 is off: set reliability.enabled: true (params.yaml or --configfile)"
        )
    return [PLAN.table4_dir]


# -- measured noise (replicates) ------------------------------------------------------------------


@job_helper
def replicate_spec(wildcards):
    return PLAN.replicate_spec_at(
        wildcards.expert, wildcards.strategy, wildcards.sim, wildcards.repcfg
    )


@job_helper
def replicate_inputs(wildcards):
    spec = replicate_spec(wildcards)
    inputs = {"test": spec.test.path}
    if spec.simulate.train is not None:
        inputs["train"] = spec.simulate.train.path
    roles = [spec.simulate.expert, spec.simulate.client, spec.match.role]
    if spec.judge is not None:
        roles.append(spec.judge.role)
    return with_adapters(inputs, *(r.name for r in roles))


@job_helper
def replicate_params(wildcards):
    return spec_json(replicate_spec(wildcards))


@job_helper
def replicate_api(wildcards):
    spec = replicate_spec(wildcards)
    roles = [spec.simulate.expert, spec.simulate.client, spec.match.role]
    return int(any(r.is_llm for r in roles) or spec.judge is not None)


# -- report steps ---------------------------------------------------------------------------------


def report_mem_mb(spec):
    """Memory a report job reserves: every system's dialogues are held at once
    (lecode.resources, measured by benchmarks/scale.py)."""
    from lecode.resources import report_memory_mb

    n = count_records(SETTINGS.dataset.test)
    if SETTINGS.dataset.limit is not None:
        n = min(n, SETTINGS.dataset.limit)
    return report_memory_mb(n * max(1, len(spec.systems)))


def report_inputs(spec):
    """Everything a report step reads (all named by its spec)."""
    inputs = {
        "aggregate": spec.aggregate,
        "index": spec.index,
        "train": spec.train.path,
        "test": spec.test.path,
        "paper": spec.paper.path,
        "transcripts": [p for x in spec.systems for p in x.transcripts],
        "matches": [p for x in spec.systems for p in x.matches],
        "judgements": [p for x in spec.systems for p in x.judgements],
        "scores": [x.score_file for x in spec.systems if x.not_run is None],
    }
    if spec.tables:
        # A folder named by its spec digest: what it holds is decided by that digest, and
        # folders have no checksum in Snakemake's records, so their times must not count.
        inputs["tables"] = ancient(spec.tables)
        inputs["tables_manifest"] = spec.tables + ".manifest.json"  # but its rewrites count
    extra = getattr(spec, "extra_tables", ())
    if extra:
        inputs["extra_tables"] = [ancient(p) for p in extra]
    return inputs


TABLES_DIR = PLAN.tables_dir
FIGURES_DIR = paths.format(paths.FIGURES, fcfg=PLAN.figures_spec.digest())
PLOTS_DIR = paths.format(paths.PLOTS, fcfg=PLAN.figures_spec.digest())
TABLES_MANIFEST = TABLES_DIR + ".manifest.json"
FIGURES_MANIFEST = str(Path(FIGURES_DIR).parent / "manifest.json")
HTML_FILE = paths.format(paths.HTML, hcfg=PLAN.html_spec.digest())


def all_table_files(wildcards=None):
    return [paths.PUBLISHED_TABLES, paths.PUBLISHED_METRICS]


def all_report_files(wildcards=None):
    return [
        *all_table_files(),
        paths.PUBLISHED_FIGURES,
        paths.PUBLISHED_PLOTS,
        paths.PUBLISHED_HTML,
    ]
