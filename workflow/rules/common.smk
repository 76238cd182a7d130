# Helpers shared by the rules: configuration validation and the paths of every job.
# Paths carry a short hash of each job's effective configuration, so a changed setting
# reruns exactly the jobs it affects (also on a fresh clone, without Snakemake's metadata).
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))

from lecode import config as lecode_config
from lecode.shards import shard_name

lecode_config.validate(config)


wildcard_constraints:
    expert=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    strategy=r"[a-z_]+",
    cfg=r"[0-9a-f]{10}",
    mcfg=r"[0-9a-f]{10}",
    jcfg=r"[0-9a-f]{10}",
    scfg=r"[0-9a-f]{10}",
    shardset=r"[0-9a-f]{10}",
    agg=r"[0-9a-f]{10}",
    shard=r"\d{3}",


SHARDS = [shard_name(k) for k in range(config["dataset"]["n_shards"])]
# The shard set is named by the test file's content and the sharding settings.
SHARD_SET = lecode_config.stable_hash(
    {
        "test_sha256": lecode_config.file_sha256(config["dataset"]["test"]),
        "n_shards": config["dataset"]["n_shards"],
        "limit": config["dataset"].get("limit"),
    }
)
SHARD_DIR = f"results/shards/{SHARD_SET}"
SYSTEMS = lecode_config.systems(config)


def sim_hash(expert, strategy):
    return lecode_config.stable_hash(lecode_config.simulation_config(config, expert, strategy))


MATCH_HASH = lecode_config.stable_hash(lecode_config.matcher_config(config))
JUDGE_CONFIG = lecode_config.judge_config(config)
JUDGE_HASH = lecode_config.stable_hash(JUDGE_CONFIG) if JUDGE_CONFIG else None
SCORE_HASH = lecode_config.stable_hash(
    {
        "matcher": MATCH_HASH,
        "judge": JUDGE_HASH,
        "metrics": config["metrics"],
        "code": lecode_config.code_hash(*lecode_config.SCORING_CODE),
    }
)


def is_llm(model):
    return config["models"][model]["backend"] != "offline"


def shard_file(wildcards):
    return f"results/shards/{wildcards.shardset}/{wildcards.shard}.jsonl"


def all_shard_files(wildcards=None):
    return [f"{SHARD_DIR}/{s}.jsonl" for s in SHARDS]


def transcript_file(expert, strategy, shard):
    h = sim_hash(expert, strategy)
    return f"results/transcripts/{expert}/{strategy}/{h}/{SHARD_SET}/{shard}.jsonl"


def match_file(expert, strategy, shard):
    h = sim_hash(expert, strategy)
    return f"results/matches/{expert}/{strategy}/{h}/{MATCH_HASH}/{SHARD_SET}/{shard}.jsonl"


def judgement_file(expert, strategy, shard):
    h = sim_hash(expert, strategy)
    return f"results/judgements/{expert}/{strategy}/{h}/{JUDGE_HASH}/{SHARD_SET}/{shard}.jsonl"


def score_file(expert, strategy):
    h = sim_hash(expert, strategy)
    return f"results/scores/{expert}/{strategy}/{h}/{SCORE_HASH}/{SHARD_SET}.csv"


def simulate_inputs(wildcards):
    expected = sim_hash(wildcards.expert, wildcards.strategy)
    if wildcards.cfg != expected:
        raise ValueError(
            f"{wildcards.expert}/{wildcards.strategy}: configuration hash {wildcards.cfg} is not "
            f"the current one ({expected}); request targets such as all_tables instead"
        )
    inputs = {"shard": shard_file(wildcards)}
    model = config["models"][wildcards.expert]
    if model.get("agent") == "retrieval":
        inputs["train"] = config["dataset"]["train"]
    return inputs


def simulate_resources_api(wildcards):
    return 1 if is_llm(wildcards.expert) or is_llm(config["client"]["model"]) else 0


def journal_file(wildcards):
    return f"store/dialogues/{wildcards.expert}/{wildcards.strategy}/{wildcards.cfg}.jsonl"


def match_inputs(wildcards):
    return {
        "shard": shard_file(wildcards),
        "transcripts": transcript_file(wildcards.expert, wildcards.strategy, wildcards.shard),
    }


def match_resources_api(wildcards):
    return 1 if is_llm(config["matcher"]["model"]) else 0


def judge_resources_api(wildcards):
    return 1


def score_inputs(wildcards):
    e, s = wildcards.expert, wildcards.strategy
    inputs = {
        "shards": [f"results/shards/{wildcards.shardset}/{k}.jsonl" for k in SHARDS],
        "transcripts": [transcript_file(e, s, k) for k in SHARDS],
        "matches": [match_file(e, s, k) for k in SHARDS],
        "judgements": [],
    }
    if JUDGE_HASH:
        inputs["judgements"] = [judgement_file(e, s, k) for k in SHARDS]
    return inputs


def all_score_files(wildcards=None):
    return [score_file(x["expert"], x["strategy"]) for x in SYSTEMS]


# The aggregate is named by everything it gathers, so a new system or setting makes a new one.
AGGREGATE = f"results/aggregate/{lecode_config.stable_hash(all_score_files())}/scores.csv"


def all_transcript_files(wildcards=None):
    return [transcript_file(x["expert"], x["strategy"], k) for x in SYSTEMS for k in SHARDS]


# Report code is hashed into the report rules' params: editing it rebuilds the reports.
REPORT_CODE = lecode_config.code_hash(*lecode_config.REPORT_CODE)


def report_inputs(wildcards=None):
    """Everything the tables, figures and HTML report read."""
    systems = [(x["expert"], x["strategy"]) for x in SYSTEMS]
    inputs = {
        "scores": AGGREGATE,
        "index": f"{SHARD_DIR}/index.json",
        "train": config["dataset"]["train"],
        "test": config["dataset"]["test"],
        "paper": "data/paper_numbers.csv",
        "transcripts": [transcript_file(e, s, k) for e, s in systems for k in SHARDS],
        "matches": [match_file(e, s, k) for e, s in systems for k in SHARDS],
        "judgements": [],
    }
    if JUDGE_HASH:
        inputs["judgements"] = [judgement_file(e, s, k) for e, s in systems for k in SHARDS]
    return inputs


def all_table_files(wildcards=None):
    return ["reports/tables", "reports/metrics.json"]


def all_report_files(wildcards=None):
    return [*all_table_files(), "reports/figures", "reports/plots", "reports/index.html"]
