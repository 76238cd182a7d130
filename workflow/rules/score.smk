# Matches + judgements + advice -> per-dialogue scores (one job per system, so the BERTScore
# model loads once per system), then all systems gathered with a coverage check.


rule score_system:
    input:
        unpack(score_inputs),
    output:
        "results/scores/{expert}/{strategy}/{cfg}/{scfg}/{shardset}.csv",
    threads: config["metrics"]["bertscore"].get("threads", 2)
    resources:
        mem_mb=config["metrics"]["bertscore"].get("mem_mb", 3000),
    log:
        "logs/score/{expert}/{strategy}/{cfg}/{scfg}/{shardset}.log",
    benchmark:
        "results/benchmarks/score/{expert}/{strategy}/{cfg}/{scfg}/{shardset}.tsv"
    script:
        "../scripts/score_system.py"


rule aggregate_scores:
    input:
        index=f"{SHARD_DIR}/index.json",
        scores=all_score_files(),
    output:
        AGGREGATE,
    params:
        systems=SYSTEMS,
    log:
        "logs/aggregate_scores.log",
    script:
        "../scripts/aggregate_scores.py"
