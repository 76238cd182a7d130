# Transcripts -> which facts each question elicited (matcher), and the judge's verdicts.


rule match_facts:
    input:
        unpack(match_inputs),
    output:
        "results/matches/{expert}/{strategy}/{cfg}/{mcfg}/{shardset}/{shard}.jsonl",
    resources:
        api=match_resources_api,
    log:
        "logs/match/{expert}/{strategy}/{cfg}/{mcfg}/{shardset}/{shard}.log",
    benchmark:
        "results/benchmarks/match/{expert}/{strategy}/{cfg}/{mcfg}/{shardset}/{shard}.tsv"
    script:
        "../scripts/match_facts.py"


rule judge_advice:
    input:
        unpack(match_inputs),
    output:
        "results/judgements/{expert}/{strategy}/{cfg}/{jcfg}/{shardset}/{shard}.jsonl",
    resources:
        api=judge_resources_api,
    log:
        "logs/judge/{expert}/{strategy}/{cfg}/{jcfg}/{shardset}/{shard}.log",
    benchmark:
        "results/benchmarks/judge/{expert}/{strategy}/{cfg}/{jcfg}/{shardset}/{shard}.tsv"
    script:
        "../scripts/judge_advice.py"
