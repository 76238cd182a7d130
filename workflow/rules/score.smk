# Matches + judgements + advice -> per-dialogue scores (one job per system, so the BERTScore
# model loads once per system), then all systems gathered with a coverage check.


rule score_system:
    input:
        unpack(score_inputs),
    output:
        paths.SCORE,
    params:
        spec=score_params,
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
        "../scripts/score_system.py"


rule aggregate_scores:
    input:
        index=PLAN.index_file,
        scores=all_score_files(),
    output:
        PLAN.aggregate_file,
    params:
        spec=spec_param(PLAN.aggregate_spec),
    resources:
        runtime=10,
        mem_mb=2000,
        cpus_per_task=1,
    log:
        paths.log(PLAN.aggregate_file),
    script:
        "../scripts/aggregate_scores.py"
