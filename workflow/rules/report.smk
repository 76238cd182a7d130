# Scores -> the paper's tables (Markdown, CSV, LaTeX, provenance), figures and the HTML report.
# Each is built under its spec's digest in results/, then published to reports/ (what DVC
# versions and people open) by a plain copy.


rule tables:
    input:
        unpack(STEPS.tables.inputs),
    output:
        tables=directory(REPORT.tables_dir),
        manifest=REPORT.tables_manifest,
    params:
        step=STEPS.tables.name,
        spec=STEPS.tables.spec,
    threads: 2
    resources:
        mem_mb=report_mem_mb(REPORT.tables_spec),
        runtime=30,
        cpus_per_task=threads_per_task,
    log:
        paths.log(REPORT.tables_dir),
    benchmark:
        paths.benchmark(REPORT.tables_dir)
    script:
        "../scripts/step.py"


rule figures:
    input:
        unpack(STEPS.figures.inputs),
    output:
        figures=directory(REPORT.figures_dir),
        plots=directory(REPORT.plots_dir),
        manifest=REPORT.figures_manifest,
    params:
        step=STEPS.figures.name,
        spec=STEPS.figures.spec,
    threads: 1
    resources:
        mem_mb=report_mem_mb(REPORT.figures_spec),
        runtime=30,
        cpus_per_task=threads_per_task,
    log:
        paths.log(REPORT.figures_dir),
    benchmark:
        paths.benchmark(REPORT.figures_dir)
    script:
        "../scripts/step.py"


rule html_report:
    input:
        unpack(STEPS.html_report.inputs),
    output:
        REPORT.html_file,
    params:
        step=STEPS.html_report.name,
        spec=STEPS.html_report.spec,
    threads: 2
    resources:
        mem_mb=report_mem_mb(REPORT.html_spec),
        runtime=30,
        cpus_per_task=threads_per_task,
    log:
        paths.log(REPORT.html_file),
    script:
        "../scripts/step.py"


rule publish_tables:
    input:
        tables=ancient(REPORT.tables_dir),
        manifest=REPORT.tables_manifest,  # a rewrite of the folder in place re-publishes it
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
        figures=ancient(REPORT.figures_dir),
        plots=ancient(REPORT.plots_dir),
        manifest=REPORT.figures_manifest,
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
        REPORT.html_file,
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
