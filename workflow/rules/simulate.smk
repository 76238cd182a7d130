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
    log:
        paths.log(paths.TRANSCRIPT),
    benchmark:
        paths.benchmark(paths.TRANSCRIPT)
    script:
        "../scripts/simulate.py"
