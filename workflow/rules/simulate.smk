# Shards -> transcripts: one job per expert x strategy x shard. Finished dialogues are
# journaled under store/ as they complete, so a crash or kill loses nothing that finished.


rule simulate:
    input:
        unpack(simulate_inputs),
    output:
        "results/transcripts/{expert}/{strategy}/{cfg}/{shardset}/{shard}.jsonl",
    params:
        journal=journal_file,
    resources:
        api=simulate_resources_api,
    log:
        "logs/simulate/{expert}/{strategy}/{cfg}/{shardset}/{shard}.log",
    benchmark:
        "results/benchmarks/simulate/{expert}/{strategy}/{cfg}/{shardset}/{shard}.tsv"
    script:
        "../scripts/simulate.py"
