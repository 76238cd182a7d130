# Scores -> the paper's tables (Markdown, CSV, LaTeX), DVC metrics, figures and the HTML report.


rule tables:
    input:
        unpack(report_inputs),
        system_scores=all_score_files(),  # named in each cell's provenance
    output:
        tables=directory("reports/tables"),
        metrics="reports/metrics.json",
    params:
        systems=SYSTEMS,
        report=config["report"],
        code=REPORT_CODE,
    threads: 2
    resources:
        mem_mb=2000,
    log:
        "logs/tables.log",
    benchmark:
        "results/benchmarks/tables.tsv"
    script:
        "../scripts/tables.py"


rule figures:
    input:
        unpack(report_inputs),
    output:
        figures=directory("reports/figures"),
        plots=directory("reports/plots"),
    params:
        systems=SYSTEMS,
        code=REPORT_CODE,
    threads: 1
    resources:
        mem_mb=2000,
    log:
        "logs/figures.log",
    benchmark:
        "logs/benchmarks/figures.tsv"  # results/ belongs to the all_tables DVC stage
    script:
        "../scripts/figures.py"


rule html_report:
    input:
        unpack(report_inputs),
        figures=ancient("reports/figures"),  # folders: no checksum, so no mtime either
        tables=ancient("reports/tables"),  # the cells' provenance, shown on click
    output:
        "reports/index.html",
    params:
        systems=SYSTEMS,
        report=config["report"],
        code=REPORT_CODE,
    threads: 2
    resources:
        mem_mb=2000,
    log:
        "logs/html_report.log",
    script:
        "../scripts/html_report.py"
