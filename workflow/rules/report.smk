# Scores -> the paper's tables (Markdown, CSV, LaTeX) and DVC metrics.


rule table3:
    input:
        scores=AGGREGATE,
        index=f"{SHARD_DIR}/index.json",
    output:
        tables=expand("reports/tables/table3.{ext}", ext=TABLE_FORMATS),
        metrics="reports/metrics.json",
    params:
        systems=SYSTEMS,
        report=config["report"],
    threads: 2
    resources:
        mem_mb=2000,
    log:
        "logs/table3.log",
    benchmark:
        "results/benchmarks/table3.tsv"
    script:
        "../scripts/table3.py"
