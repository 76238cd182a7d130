# Transcripts -> which facts each question elicited (matcher), and the judge's verdicts.


rule match_facts:
    input:
        unpack(evaluate_inputs),
    output:
        paths.MATCH,
    params:
        spec=match_params,
    resources:
        api=match_api,
    log:
        paths.log(paths.MATCH),
    benchmark:
        paths.benchmark(paths.MATCH)
    script:
        "../scripts/match_facts.py"


rule judge_advice:
    input:
        unpack(evaluate_inputs),
    output:
        paths.JUDGEMENT,
    params:
        spec=judge_params,
    resources:
        api=1,
    log:
        paths.log(paths.JUDGEMENT),
    benchmark:
        paths.benchmark(paths.JUDGEMENT)
    script:
        "../scripts/judge_advice.py"
