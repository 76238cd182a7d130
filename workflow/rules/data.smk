# Dataset -> shards (by a stable hash of the case id), with manifests and an index.


rule shard_dataset:
    input:
        SETTINGS.dataset.test,
    output:
        **shard_outputs(),
    params:
        spec=spec_param(PLAN.shard_spec),
    resources:
        runtime=10,
        mem_mb=1000,
        cpus_per_task=1,
    log:
        paths.log(paths.SHARD_DIR.format(shardset=SHARDSET)),
    script:
        "../scripts/shard_dataset.py"
