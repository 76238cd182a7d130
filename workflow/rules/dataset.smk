# Transcripts -> role identification -> stage 1 -> stage 2 (pre-annotation, sharded by file)
# -> review spreadsheets; reviewed files -> LeCoDe JSONL train/test (published to
# corpus.out_dir) and the agreement table (docs/building-a-dataset.md).
try:
    CORPUS = PLAN.corpus
except SettingsError as exc:
    raise WorkflowError(str(exc)) from None


rule corpus_roles:
    input:
        unpack(STEPS.corpus_roles.inputs),
    output:
        paths.CORPUS_ROLES,
    params:
        step=STEPS.corpus_roles.name,
        spec=STEPS.corpus_roles.spec,
    resources:
        runtime=30,
        mem_mb=1000,
        cpus_per_task=1,
        api=1,
    log:
        "logs/corpus/roles/{shard}-{digest}.log",
    script:
        "../scripts/step.py"


rule corpus_stage1:
    input:
        unpack(STEPS.corpus_stage1.inputs),
    output:
        paths.CORPUS_STAGE1,
    params:
        step=STEPS.corpus_stage1.name,
        spec=STEPS.corpus_stage1.spec,
    resources:
        runtime=30,
        mem_mb=1000,
        cpus_per_task=1,
        api=1,
    log:
        "logs/corpus/stage1/{shard}-{digest}.log",
    script:
        "../scripts/step.py"


rule corpus_stage2:
    input:
        unpack(STEPS.corpus_stage2.inputs),
    output:
        paths.CORPUS_STAGE2,
    params:
        step=STEPS.corpus_stage2.name,
        spec=STEPS.corpus_stage2.spec,
    resources:
        runtime=30,
        mem_mb=1000,
        cpus_per_task=1,
        api=1,
    log:
        "logs/corpus/stage2/{shard}-{digest}.log",
    script:
        "../scripts/step.py"


rule corpus_review_export:
    input:
        unpack(STEPS.corpus_review_export.inputs),
    output:
        directory(CORPUS.review_export_dir),
    params:
        step=STEPS.corpus_review_export.name,
        spec=STEPS.corpus_review_export.spec,
    resources:
        runtime=10,
        mem_mb=1000,
        cpus_per_task=1,
    log:
        "logs/corpus/review_export.log",
    script:
        "../scripts/step.py"


rule corpus_review_current:
    """The current review export at a stable path (corpus.review_export)."""
    input:
        ancient(CORPUS.review_export_dir),
    output:
        directory(CORPUS.review_export_current),
    params:
        spec=CORPUS.review_export_spec.digest(),  # a new export replaces it
    resources:
        runtime=5,
        mem_mb=500,
        cpus_per_task=1,
    log:
        "logs/publish/corpus_review.log",
    shell:
        "rm -rf {output} && cp -r {input} {output} 2> {log}"


rule corpus_assemble:
    input:
        unpack(STEPS.corpus_assemble.inputs),
    output:
        directory(CORPUS.assemble_dir),
    params:
        step=STEPS.corpus_assemble.name,
        spec=STEPS.corpus_assemble.spec,
    resources:
        runtime=10,
        mem_mb=1000,
        cpus_per_task=1,
    log:
        "logs/corpus/assemble.log",
    script:
        "../scripts/step.py"


rule corpus_agreement:
    input:
        unpack(STEPS.corpus_agreement.inputs),
    output:
        directory(CORPUS.agreement_dir),
    params:
        step=STEPS.corpus_agreement.name,
        spec=STEPS.corpus_agreement.spec,
    resources:
        runtime=10,
        mem_mb=1500,
        cpus_per_task=1,
    log:
        "logs/corpus/agreement.log",
    script:
        "../scripts/step.py"


rule corpus_publish:
    """The built dataset at its stable paths (corpus.out_dir), what DVC versions."""
    input:
        ancient(CORPUS.assemble_dir),
    output:
        CORPUS.published,
    params:
        spec=CORPUS.assemble_spec.digest(),  # a new build re-publishes
    resources:
        runtime=5,
        mem_mb=500,
        cpus_per_task=1,
    log:
        "logs/publish/corpus.log",
    shell:
        "for f in {output}; do cp {input}/$(basename $f) $f; done 2> {log}"
