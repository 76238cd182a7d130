# Transcripts -> which facts each question elicited (matcher), and the judge's verdicts.


rule match_facts:
    input:
        unpack(STEPS.match_facts.inputs),
    output:
        paths.MATCH,
    params:
        step=STEPS.match_facts.name,
        spec=STEPS.match_facts.spec,
    resources:
        api=STEPS.match_facts.api,
        runtime=STEPS.match_facts.minutes(120, 15),
        mem_mb=2000,
        cpus_per_task=1,
    log:
        paths.log(paths.MATCH),
    benchmark:
        paths.benchmark(paths.MATCH)
    script:
        "../scripts/step.py"


rule judge_advice:
    input:
        unpack(STEPS.judge_advice.inputs),
    output:
        paths.JUDGEMENT,
    params:
        step=STEPS.judge_advice.name,
        spec=STEPS.judge_advice.spec,
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
        "../scripts/step.py"
