# Matches + judgements + advice -> per-dialogue scores (one job per system, so the BERTScore
# model loads once per system), then all systems gathered with a coverage check.


rule score_system:
    input:
        unpack(STEPS.score_system.inputs),
    output:
        paths.SCORE,
    params:
        step=STEPS.score_system.name,
        spec=STEPS.score_system.spec,
    threads: SETTINGS.metrics.bertscore.threads
    resources:
        mem_mb=SETTINGS.metrics.bertscore.mem_mb,
        runtime=60,
        cpus_per_task=threads_per_task,
    log:
        paths.log(paths.SCORE),
    benchmark:
        paths.benchmark(paths.SCORE)
    script:
        "../scripts/step.py"


rule aggregate_scores:
    input:
        unpack(STEPS.aggregate_scores.inputs),
    output:
        EVALUATION.aggregate_file,
    params:
        step=STEPS.aggregate_scores.name,
        spec=STEPS.aggregate_scores.spec,
    resources:
        runtime=10,
        mem_mb=2000,
        cpus_per_task=1,
    log:
        paths.log(EVALUATION.aggregate_file),
    script:
        "../scripts/step.py"
