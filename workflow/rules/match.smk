# Transcripts -> which facts each question elicited (matcher), and the judge's verdicts.


rule match_facts:
    input:
        unpack(match_inputs),
    output:
        paths.MATCH,
    params:
        spec=match_params,
    resources:
        api=match_api,
        runtime=match_runtime,
        mem_mb=2000,
        cpus_per_task=1,
    log:
        paths.log(paths.MATCH),
    benchmark:
        paths.benchmark(paths.MATCH)
    script:
        "../scripts/match_facts.py"


rule judge_advice:
    input:
        unpack(judge_inputs),
    output:
        paths.JUDGEMENT,
    params:
        spec=judge_params,
    resources:
        api=1,
        runtime=120,
        mem_mb=2000,
        cpus_per_task=1,
    log:
        paths.log(paths.JUDGEMENT),
    benchmark:
        paths.benchmark(paths.JUDGEMENT)
    script:
        "../scripts/judge_advice.py"
