# Transcripts -> role identification -> stage 1 -> stage 2 (pre-annotation, sharded by file)
# -> review spreadsheets; reviewed files -> LeCoDe JSONL train/test (published to
# corpus.out_dir) and the agreement table (docs/building-a-dataset.md).
from lecode.corpus.plan import CorpusPlan

try:
    CORPUS = CorpusPlan(SETTINGS)
except SettingsError as exc:
    raise WorkflowError(str(exc)) from None


def corpus_transcripts(wildcards):
    """The transcript files of one shard (the build stops here when there are none)."""
    try:
        CORPUS.check()
    except SettingsError as exc:
        raise WorkflowError(str(exc)) from None
    return [str(f) for f in CORPUS.shard_files(wildcards.shard)]


def corpus_spec(step):
    """The spec of one shard's step; its digest names the output file."""

    def spec(wildcards):
        found = CORPUS.annotate_specs[step][wildcards.shard]
        if found.digest() != wildcards.digest:
            raise WorkflowError(f"corpus {step} {wildcards.shard}: no spec of digest {wildcards.digest}")
        return found.to_json()

    return spec


def corpus_previous(step):
    return lambda wildcards: CORPUS.annotation_file(step, wildcards.shard)


rule corpus_roles:
    input:
        corpus_transcripts,
    output:
        CORPUS.annotation_pattern("roles"),
    params:
        spec=corpus_spec("roles"),
    resources:
        runtime=30,
        mem_mb=1000,
        cpus_per_task=1,
        api=1,
    log:
        "logs/corpus/roles/{shard}-{digest}.log",
    script:
        "../scripts/corpus_roles.py"


rule corpus_stage1:
    input:
        corpus_previous("roles"),
    output:
        CORPUS.annotation_pattern("stage1"),
    params:
        spec=corpus_spec("stage1"),
    resources:
        runtime=30,
        mem_mb=1000,
        cpus_per_task=1,
        api=1,
    log:
        "logs/corpus/stage1/{shard}-{digest}.log",
    script:
        "../scripts/corpus_stage1.py"


rule corpus_stage2:
    input:
        corpus_previous("stage1"),
    output:
        CORPUS.annotation_pattern("stage2"),
    params:
        spec=corpus_spec("stage2"),
    resources:
        runtime=30,
        mem_mb=1000,
        cpus_per_task=1,
        api=1,
    log:
        "logs/corpus/stage2/{shard}-{digest}.log",
    script:
        "../scripts/corpus_stage2.py"


rule corpus_review_export:
    input:
        roles=CORPUS.annotation_files("roles"),
        stage1=CORPUS.annotation_files("stage1"),
        stage2=CORPUS.annotation_files("stage2"),
    output:
        directory(CORPUS.review_export_dir),
    params:
        spec=CORPUS.review_export_spec.to_json(),
    resources:
        runtime=10,
        mem_mb=1000,
        cpus_per_task=1,
    log:
        "logs/corpus/review_export.log",
    script:
        "../scripts/corpus_review_export.py"


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
        stage1=CORPUS.annotation_files("stage1"),
        stage2=CORPUS.annotation_files("stage2"),
        reviews=[f.path for f in CORPUS.assemble_spec.reviews],
        roles=CORPUS.annotation_files("roles"),
    output:
        directory(CORPUS.assemble_dir),
    params:
        spec=CORPUS.assemble_spec.to_json(),
    resources:
        runtime=10,
        mem_mb=1000,
        cpus_per_task=1,
    log:
        "logs/corpus/assemble.log",
    script:
        "../scripts/corpus_assemble.py"


rule corpus_agreement:
    input:
        stage1=CORPUS.annotation_files("stage1"),
        stage2=CORPUS.annotation_files("stage2"),
        reviews=[f.path for f in CORPUS.agreement_spec.reviews],
    output:
        directory(CORPUS.agreement_dir),
    params:
        spec=CORPUS.agreement_spec.to_json(),
    resources:
        runtime=10,
        mem_mb=1500,
        cpus_per_task=1,
    log:
        "logs/corpus/agreement.log",
    script:
        "../scripts/corpus_agreement.py"


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
