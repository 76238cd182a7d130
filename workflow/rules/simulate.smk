# Shards -> transcripts: one job per expert x strategy x shard. Finished dialogues are
# journaled under store/dialogues as they complete, so a crash or kill loses nothing finished.


rule simulate:
    input:
        unpack(STEPS.simulate.inputs),
    output:
        paths.TRANSCRIPT,
    params:
        step=STEPS.simulate.name,
        spec=STEPS.simulate.spec,
    resources:
        api=STEPS.simulate.api,
        # minutes of wall time on a cluster: a shard of LLM consultations waits on its API
        runtime=STEPS.simulate.minutes(240, 30),
        mem_mb=2000,
        cpus_per_task=1,
    log:
        paths.log(paths.TRANSCRIPT),
    benchmark:
        paths.benchmark(paths.TRANSCRIPT)
    script:
        "../scripts/step.py"
