# Scores -> the paper's tables (Markdown, CSV, LaTeX, provenance), figures and the HTML report.
# Each is built under its spec's digest in results/, then published to reports/ (what DVC
# versions and people open) by a plain copy.


rule tables:
    input:
        **report_inputs(PLAN.tables_spec),
    output:
        tables=directory(TABLES_DIR),
        manifest=TABLES_MANIFEST,
    params:
        spec=spec_param(PLAN.tables_spec),
    threads: 2
    resources:
        mem_mb=report_mem_mb(PLAN.tables_spec),
        runtime=30,
        cpus_per_task=threads_per_task,
    log:
        paths.log(TABLES_DIR),
    benchmark:
        paths.benchmark(TABLES_DIR)
    script:
        "../scripts/tables.py"


rule figures:
    input:
        **report_inputs(PLAN.figures_spec),
    output:
        figures=directory(FIGURES_DIR),
        plots=directory(PLOTS_DIR),
        manifest=FIGURES_MANIFEST,
    params:
        spec=spec_param(PLAN.figures_spec),
    threads: 1
    resources:
        mem_mb=report_mem_mb(PLAN.figures_spec),
        runtime=30,
        cpus_per_task=threads_per_task,
    log:
        paths.log(FIGURES_DIR),
    benchmark:
        paths.benchmark(FIGURES_DIR)
    script:
        "../scripts/figures.py"


rule html_report:
    input:
        **report_inputs(PLAN.html_spec),
        figures=ancient(FIGURES_DIR),  # digest-named folders: existence decides (see common)
        figures_manifest=FIGURES_MANIFEST,
    output:
        HTML_FILE,
    params:
        spec=spec_param(PLAN.html_spec),
    threads: 2
    resources:
        mem_mb=report_mem_mb(PLAN.html_spec),
        runtime=30,
        cpus_per_task=threads_per_task,
    log:
        paths.log(HTML_FILE),
    script:
        "../scripts/html_report.py"


rule publish_tables:
    input:
        tables=ancient(TABLES_DIR),
        manifest=TABLES_MANIFEST,  # a rewrite of the folder in place re-publishes it
    output:
        tables=directory(paths.PUBLISHED_TABLES),
        metrics=paths.PUBLISHED_METRICS,
    resources:
        runtime=5,
        mem_mb=500,
        cpus_per_task=1,
    log:
        "logs/publish/tables.log",
    shell:
        "rm -rf {output.tables} && cp -r {input.tables} {output.tables} 2> {log}"
        " && mv {output.tables}/metrics.json {output.metrics}"


rule publish_figures:
    input:
        figures=ancient(FIGURES_DIR),
        plots=ancient(PLOTS_DIR),
        manifest=FIGURES_MANIFEST,
    output:
        figures=directory(paths.PUBLISHED_FIGURES),
        plots=directory(paths.PUBLISHED_PLOTS),
    resources:
        runtime=5,
        mem_mb=500,
        cpus_per_task=1,
    log:
        "logs/publish/figures.log",
    shell:
        "rm -rf {output.figures} {output.plots} && cp -r {input.figures} {output.figures}"
        " && cp -r {input.plots} {output.plots} 2> {log}"


rule publish_html:
    input:
        HTML_FILE,
    output:
        paths.PUBLISHED_HTML,
    resources:
        runtime=5,
        mem_mb=500,
        cpus_per_task=1,
    log:
        "logs/publish/html.log",
    shell:
        "cp {input} {output} 2> {log}"
