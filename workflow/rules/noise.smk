# Measured noise (replicates: n > 1): replicate runs of each system on a fixed subset, one job
# per (system, varied factor, run), each under its own simulate digest (journaled, resumable);
# then the variance decomposition and minimum detectable differences, which the tables job
# publishes with a table of Table 3's neighbouring rows. And the judge-drift sentinel whenever a
# judge is configured: the tables are not built when the judge has drifted.


if PLAN.replicates_enabled:

    rule replicate:
        input:
            unpack(replicate_inputs),
        output:
            directory(paths.REPLICATE),
        params:
            spec=replicate_params,
        resources:
            api=replicate_api,
            runtime=240,
            mem_mb=2000,
            cpus_per_task=1,
        log:
            paths.log(paths.REPLICATE),
        script:
            "../scripts/replicate.py"

    rule noise:
        input:
            index=PLAN.index_file,
            runs=PLAN.replicate_dirs(),
        output:
            directory(PLAN.noise_dir),
        params:
            spec=spec_param(PLAN.noise_spec),
        threads: SETTINGS.metrics.bertscore.threads
        resources:
            runtime=30,
            mem_mb=SETTINGS.metrics.bertscore.mem_mb,
            cpus_per_task=threads_per_task,
        log:
            paths.log(PLAN.noise_dir),
        script:
            "../scripts/noise.py"


if PLAN.sentinel_enabled:

    rule judge_sentinel:
        input:
            **with_adapters(
                {"anchors": PLAN.sentinel_spec.anchors.path}, PLAN.sentinel_spec.judge.name
            ),
        output:
            directory(PLAN.sentinel_dir),
        params:
            spec=spec_param(PLAN.sentinel_spec),
        resources:
            api=1,
            runtime=30,
            mem_mb=2000,
            cpus_per_task=1,
        log:
            paths.log(PLAN.sentinel_dir),
        script:
            "../scripts/judge_sentinel.py"
