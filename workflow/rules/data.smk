# Dataset -> shards (by a stable hash of the case id), with manifests and an index.


rule shard_dataset:
    input:
        unpack(STEPS.shard_dataset.inputs),
    output:
        shards=EVALUATION.shard_files(),
        manifests=[paths.format(paths.MANIFEST, shardset=SHARDSET, shard=k) for k in SHARDS],
        index=EVALUATION.index_file,
    params:
        step=STEPS.shard_dataset.name,
        spec=STEPS.shard_dataset.spec,
    resources:
        runtime=10,
        mem_mb=1000,
        cpus_per_task=1,
    log:
        paths.log(paths.SHARD_DIR.format(shardset=SHARDSET)),
    script:
        "../scripts/step.py"
