# SFT strategies (paper section 3.5; docs/sft.md). Training dialogues of each
# variant (direct, keyfact, keyfact-e) are CPU jobs of the DAG (target sft_data); LoRA training
# runs on GPUs: train_lora writes the adapter under its spec's digest and publish_lora copies it
# to <sft.train.publish_dir>/<variant>-sft, the directory the vLLM `lora:` entries of
# configs/sft.yaml serve. Those directories are inputs of every job that may start the server
# serving them (adapter_inputs in common.smk), so `all_tables` trains, publishes, then serves
# and evaluates in one run; `sft_adapters` only trains and publishes.
import json as _json

try:
    SFT_DATA_SPECS = {v: PLAN.sft_data_spec(v) for v in PLAN.sft_variants}
except SettingsError as exc:
    raise WorkflowError(str(exc)) from None
SFT_DATA_VARIANT = {spec.digest(): v for v, spec in SFT_DATA_SPECS.items()}


def _sft_data_variant(wildcards):
    try:
        return SFT_DATA_VARIANT[wildcards.sftd]
    except KeyError:
        raise WorkflowError(
            f"results/sft/{wildcards.sftd}: not the data of a configured SFT variant "
            "(request the target sft_data)"
        ) from None


def _sft_train_specs():
    try:
        return {PLAN.sft_train_spec(v).digest(): v for v in PLAN.sft_variants}
    except SettingsError as exc:
        raise WorkflowError(str(exc)) from None


def _sft_train_variant(wildcards):
    variant = _sft_train_specs().get(wildcards.sftt)
    if variant is None:
        raise WorkflowError(f"results/sft/{wildcards.sftt}: not a configured SFT training")
    return variant


@job_helper
def sft_data_params(wildcards):
    return spec_json(SFT_DATA_SPECS[_sft_data_variant(wildcards)])


@job_helper
def sft_data_api(wildcards):
    spec = SFT_DATA_SPECS[_sft_data_variant(wildcards)]
    return int(any(r is not None and r.is_llm for r in (spec.writer, spec.matcher)))


@job_helper
def sft_train_inputs(wildcards):
    return {"data": PLAN.sft_data_file(_sft_train_variant(wildcards))}


@job_helper
def sft_train_params(wildcards):
    return spec_json(PLAN.sft_train_spec(_sft_train_variant(wildcards)))


@job_helper
def publish_inputs(wildcards):
    trained = PLAN.sft_train_dir(wildcards.variant)
    return {"adapter": trained + "/adapter", "provenance": trained + "/provenance.json"}


def sft_data_targets(wildcards=None):
    return PLAN.sft_data_files()


def sft_adapter_targets(wildcards=None):
    _sft_train_specs()  # names the missing setting (sft.train.base_model) before anything runs
    return [PLAN.sft_published(v) for v in PLAN.sft_variants]


@job_helper
def sft_data_inputs(wildcards):
    spec = SFT_DATA_SPECS[_sft_data_variant(wildcards)]
    for role in (spec.writer, spec.matcher):
        if role is not None and adapter_inputs(role.name):
            raise WorkflowError(
                f"models.{role.name} (the SFT data's {'writer' if role is spec.writer else 'matcher'})"
                " is served by a vLLM server that serves the adapters trained on this data; "
                "let another model entry write or validate the questions"
            )
    return {"train": SETTINGS.dataset.train}


rule build_sft_data:
    input:
        unpack(sft_data_inputs),
    output:
        data=paths.SFT_DATA,
        stats=paths.SFT_STATS,
        info=paths.SFT_DATASET_INFO,
        dialogues=paths.SFT_DATA_DIR + "/dialogues.jsonl",
    params:
        spec=sft_data_params,
    resources:
        api=sft_data_api,
        mem_mb=1000,
        runtime=120,
        cpus_per_task=1,
    log:
        paths.log(paths.SFT_DATA),
    script:
        "../scripts/sft_data.py"


rule train_lora:
    """LoRA adapter of one variant (GPU; `--resources gpu=N` bounds concurrent trainings)."""
    input:
        unpack(sft_train_inputs),
    output:
        adapter=directory(paths.SFT_ADAPTER),
        log=paths.SFT_TRAIN_LOG,
        plot=paths.SFT_LOSS_PLOT,
        provenance=paths.SFT_PROVENANCE,
    params:
        spec=sft_train_params,
    threads: 8
    resources:
        gpu=SETTINGS.sft.train.devices,
        mem_mb=32000,
        # minutes: about 4.7 A100-hours per variant on one GPU (docs/sft.md)
        runtime=720,
        cpus_per_task=threads_per_task,
    log:
        paths.log(paths.SFT_ADAPTER),
    script:
        "../scripts/sft_train.py"


rule publish_lora:
    """The adapter at the stable path the vLLM `lora:` entries point at (a plain copy)."""
    input:
        unpack(publish_inputs),
    output:
        directory(SETTINGS.sft.train.publish_dir + "/{variant}-sft"),
    resources:
        mem_mb=500,
        runtime=5,
        cpus_per_task=1,
    log:
        "logs/publish/sft-{variant}.log",
    shell:
        "rm -rf {output} && cp -r {input.adapter} {output} 2> {log}"
        " && cp {input.provenance} {output}/lecode_provenance.json"


rule sft_adapters:
    """Train and publish the LoRA adapters of every configured variant (GPU)."""
    input:
        sft_adapter_targets,


def _warn_stale_adapters():
    """Adapters identified by their path (missing, and not produced by the DAG), and published
    adapters of an earlier training (a run that evaluates them replaces them first)."""
    for name in SETTINGS.llm_models():
        PLAN.adapter_identity(name)
    for line in dict.fromkeys(PLAN.warnings):
        print(f"lecode: warning: {line}", file=sys.stderr)
    if SETTINGS.replay():
        return
    for name in SETTINGS.llm_models():
        identity = PLAN.adapter_identity(name) or ""
        if not identity.startswith("train:") or PLAN.not_run(name) is not None:
            continue
        path = PLAN.adapter_path(name)
        current = identity.removeprefix("train:")
        prov = Path(path) / "lecode_provenance.json"
        try:
            trained = _json.loads(prov.read_text())["spec"] if prov.is_file() else None
        except (OSError, ValueError, KeyError):
            trained = "an unreadable provenance"
        if trained is not None and trained != current:
            print(
                f"lecode: models.{name} serves {path}, which was trained by {trained}; the "
                f"current sft settings train {current}, which a run that evaluates it trains "
                "and publishes first (docs/sft.md)",
                file=sys.stderr,
            )


_warn_stale_adapters()
