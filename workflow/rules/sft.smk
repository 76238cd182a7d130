# SFT strategies (paper section 3.5; docs/sft.md). Training dialogues of each
# variant (direct, keyfact, keyfact-e) are CPU jobs of the DAG (target sft_data); LoRA training
# runs on GPUs: train_lora writes the adapter under its spec's digest and publish_lora copies it
# to <sft.train.publish_dir>/<variant>-sft, the directory the vLLM `lora:` entries of
# configs/sft.yaml serve. Those directories are inputs of every job that may start the server
# serving them (Roles.adapter_files in lecode.plan.roles), so `all_tables` trains, publishes, then serves
# and evaluates in one run; `sft_adapters` only trains and publishes.
import json as _json

SFT = PLAN.sft


@job_helper
def publish_inputs(wildcards):
    trained = SFT.sft_train_dir(wildcards.variant)
    return {"adapter": trained + "/adapter", "provenance": trained + "/provenance.json"}


def sft_data_targets(wildcards=None):
    return SFT.sft_data_files()


def sft_adapter_targets(wildcards=None):
    try:  # names the missing setting (sft.train.base_model) before anything runs
        return [SFT.sft_published(v) for v in SFT.sft_variants if SFT.sft_train_spec(v)]
    except SettingsError as exc:
        raise WorkflowError(str(exc)) from None


rule build_sft_data:
    input:
        unpack(STEPS.sft_data.inputs),
    output:
        data=paths.SFT_DATA,
        stats=paths.SFT_STATS,
        info=paths.SFT_DATASET_INFO,
        dialogues=paths.SFT_DATA_DIR + "/dialogues.jsonl",
    params:
        step=STEPS.sft_data.name,
        spec=STEPS.sft_data.spec,
    resources:
        api=STEPS.sft_data.api,
        mem_mb=1000,
        runtime=120,
        cpus_per_task=1,
    log:
        paths.log(paths.SFT_DATA),
    script:
        "../scripts/step.py"


rule train_lora:
    """LoRA adapter of one variant (GPU; `--resources gpu=N` bounds concurrent trainings)."""
    input:
        unpack(STEPS.sft_train.inputs),
    output:
        adapter=directory(paths.SFT_ADAPTER),
        log=paths.SFT_TRAIN_LOG,
        plot=paths.SFT_LOSS_PLOT,
        provenance=paths.SFT_PROVENANCE,
    params:
        step=STEPS.sft_train.name,
        spec=STEPS.sft_train.spec,
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
        "../scripts/step.py"


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
    roles = PLAN.roles
    for name in SETTINGS.llm_models():
        roles.adapter_identity(name)
    for line in dict.fromkeys(roles.warnings):
        print(f"lecode: warning: {line}", file=sys.stderr)
    if SETTINGS.replay():
        return
    for name in SETTINGS.llm_models():
        identity = roles.adapter_identity(name) or ""
        if not identity.startswith("train:") or roles.not_run(name) is not None:
            continue
        path = roles.adapter_path(name)
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
