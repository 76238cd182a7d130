# SFT strategies (paper section 3.5; docs/sft.md). Training dialogues of each
# variant (direct, keyfact, keyfact-e) are CPU jobs of the DAG (target sft_data); LoRA training
# runs on GPUs: train_lora writes the adapter under its spec's digest and publish_lora copies it
# to <sft.train.publish_dir>/<variant>-sft, the directory the vLLM `lora:` entries of
# configs/sft.yaml serve. Those directories are inputs of every job that may start the server
# serving them (Roles.adapter_files in lecode.plan.roles), so `all_tables` trains,
# publishes, then serves and evaluates in one run; `sft_adapters` only trains and publishes.


rule build_sft_data:
    input:
        unpack(STEPS.sft_data.inputs),
    output:
        data=paths.SFT_DATA,
        stats=paths.SFT_STATS,
        info=paths.SFT_DATASET_INFO,
        dialogues=paths.SFT_DIALOGUES,
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
        unpack(published_adapter_inputs),
    output:
        directory(PUBLISHED_ADAPTER),
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
