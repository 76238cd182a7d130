# Measured noise (replicates: n > 1): replicate runs of each system on a fixed subset, one job
# per (system, varied factor, run), each under its own simulate digest (journaled, resumable);
# then the variance decomposition and minimum detectable differences, which the tables job
# publishes with a table of Table 3's neighbouring rows. And the judge-drift sentinel whenever a
# judge is configured: the tables are not built when the judge has drifted.


NOISE = PLAN.noise
SENTINEL = PLAN.sentinel


if NOISE.replicates_enabled:

    rule replicate:
        input:
            unpack(STEPS.replicate.inputs),
        output:
            directory(paths.REPLICATE),
        params:
            step=STEPS.replicate.name,
            spec=STEPS.replicate.spec,
        resources:
            api=STEPS.replicate.api,
            runtime=240,
            mem_mb=2000,
            cpus_per_task=1,
        log:
            paths.log(paths.REPLICATE),
        script:
            "../scripts/step.py"

    rule noise:
        input:
            unpack(STEPS.noise.inputs),
        output:
            directory(NOISE.noise_dir),
        params:
            step=STEPS.noise.name,
            spec=STEPS.noise.spec,
        threads: SETTINGS.metrics.bertscore.threads
        resources:
            runtime=30,
            mem_mb=SETTINGS.metrics.bertscore.mem_mb,
            cpus_per_task=threads_per_task,
        log:
            paths.log(NOISE.noise_dir),
        script:
            "../scripts/step.py"


if SENTINEL.sentinel_enabled:

    rule judge_sentinel:
        input:
            unpack(STEPS.judge_sentinel.inputs),
        output:
            directory(SENTINEL.sentinel_dir),
        params:
            step=STEPS.judge_sentinel.name,
            spec=STEPS.judge_sentinel.spec,
        resources:
            api=1,
            runtime=30,
            mem_mb=2000,
            cpus_per_task=1,
        log:
            paths.log(SENTINEL.sentinel_dir),
        script:
            "../scripts/step.py"
