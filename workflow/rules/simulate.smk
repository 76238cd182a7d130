# Shards -> transcripts: one job per expert x strategy x shard. Finished dialogues are
# journaled under store/dialogues as they complete, so a crash or kill loses nothing finished.


rule simulate:
    input:
        unpack(simulate_inputs),
    output:
        paths.TRANSCRIPT,
    params:
        spec=simulate_params,
    resources:
        api=simulate_api,
        # minutes of wall time on a cluster: a shard of LLM consultations waits on its API
        runtime=simulate_runtime,
        mem_mb=2000,
        cpus_per_task=1,
    log:
        paths.log(paths.TRANSCRIPT),
    benchmark:
        paths.benchmark(paths.TRANSCRIPT)
    script:
        "../scripts/simulate.py"
