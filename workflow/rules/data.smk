# Dataset -> shards (by a stable hash of the case id), and the dataset statistics table.


rule shard_dataset:
    input:
        config["dataset"]["test"],
    output:
        shards=expand(f"{SHARD_DIR}/{{shard}}.jsonl", shard=SHARDS),
        manifests=expand(f"{SHARD_DIR}/{{shard}}.manifest.json", shard=SHARDS),
        index=f"{SHARD_DIR}/index.json",
    params:
        n_shards=config["dataset"]["n_shards"],
        limit=config["dataset"].get("limit"),
    log:
        "logs/shard_dataset.log",
    script:
        "../scripts/shard_dataset.py"

