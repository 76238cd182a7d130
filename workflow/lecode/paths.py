"""Every results path, formatted and parsed in one place (rules and library alike).

A job's outputs live under the digest of its spec (:mod:`lecode.specs`), so a path names
exactly the configuration, code and inputs that produced it. ``{name}`` fields are Snakemake
wildcards in the rules and keyword arguments of :func:`format`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

#: The prompt templates, one ``.txt`` file per template under a folder per role.
PROMPTS_DIR: Final = Path(__file__).resolve().parents[1] / "prompts"

DIGEST: Final = r"[0-9a-f]{10}"
WILDCARDS: Final[dict[str, str]] = {
    "expert": r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    # strategy names are the file names of their declarations (lecode.strategies)
    "strategy": r"[a-z][a-z0-9_]*",
    "shard": r"\d{3}",
    **{
        k: DIGEST
        for k in ("shardset", "sim", "mcfg", "jcfg", "scfg", "agg", "tcfg", "fcfg", "hcfg")
    },
    **{k: DIGEST for k in ("sftd", "sftt")},
    "variant": r"direct|keyfact|keyfact-e",
    **{k: DIGEST for k in ("rsmp", "rcfg", "t4cfg", "repcfg", "ncfg", "sncfg")},
    "rclient": r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    "cstrategy": r"[a-z][a-z0-9_]*",
    # the dataset build's files are named by their spec's digest
    "digest": DIGEST,
}

SHARD_DIR: Final = "results/shards/{shardset}"
SHARD: Final = SHARD_DIR + "/{shard}.jsonl"
MANIFEST: Final = SHARD_DIR + "/{shard}.manifest.json"
INDEX: Final = SHARD_DIR + "/index.json"
TRANSCRIPT: Final = "results/transcripts/{expert}/{strategy}/{sim}/{shardset}/{shard}.jsonl"
MATCH: Final = "results/matches/{expert}/{strategy}/{sim}/{mcfg}/{shardset}/{shard}.jsonl"
JUDGEMENT: Final = "results/judgements/{expert}/{strategy}/{sim}/{jcfg}/{shardset}/{shard}.jsonl"
SCORE: Final = "results/scores/{expert}/{strategy}/{sim}/{scfg}/{shardset}.csv"
AGGREGATE: Final = "results/aggregate/{agg}/scores.csv"
TABLES: Final = "results/tables/{tcfg}"
METRICS: Final = "results/tables/{tcfg}/metrics.json"
# The report stage's own outputs live under build/ (DVC versions results/ with the first stage).
FIGURES: Final = "build/figures/{fcfg}/figures"
PLOTS: Final = "build/figures/{fcfg}/plots"
HTML: Final = "build/html/{hcfg}/index.html"
# SFT (opt-in training; the data stage is part of the DAG, target sft_data).
SFT_DATA_DIR: Final = "results/sft/{sftd}"
SFT_DATA: Final = SFT_DATA_DIR + "/train.jsonl"
SFT_STATS: Final = SFT_DATA_DIR + "/stats.json"
SFT_DATASET_INFO: Final = SFT_DATA_DIR + "/dataset_info.json"
SFT_DIALOGUES: Final = SFT_DATA_DIR + "/dialogues.jsonl"
SFT_TRAIN_DIR: Final = "results/sft/{sftt}"
SFT_ADAPTER: Final = SFT_TRAIN_DIR + "/adapter"
SFT_TRAIN_LOG: Final = SFT_TRAIN_DIR + "/train_log.csv"
SFT_LOSS_PLOT: Final = SFT_TRAIN_DIR + "/loss.png"
SFT_PROVENANCE: Final = SFT_TRAIN_DIR + "/provenance.json"
#: The published adapter (a copy) that vLLM ``lora:`` entries point at: ``<publish_dir>/<name>``.
SFT_PUBLISHED: Final = "{publish_dir}/{variant}-sft"
# The client-reliability study (paper appendix C, Table 4).
RELIABILITY_ITEMS: Final = "results/reliability/{rsmp}/items.jsonl"
RELIABILITY: Final = "results/reliability/{rsmp}/{rclient}/{cstrategy}/{rcfg}.jsonl"
TABLE4: Final = "results/table4/{t4cfg}"
# Measured noise: replicate runs on a fixed subset (their simulate digest carries the replicate
# indices), the variance decomposition, and the judge-drift sentinel.
REPLICATE: Final = "results/replicates/{expert}/{strategy}/{sim}/{repcfg}"
NOISE: Final = "results/noise/{ncfg}"
SENTINEL: Final = "results/sentinel/{sncfg}"
# The dataset build: pre-annotation per shard of transcript files (named by the shard's spec
# digest), the review export, the assembled dataset and the agreement table.
CORPUS_ROOT: Final = "results/corpus"
CORPUS_ROLES: Final = CORPUS_ROOT + "/roles/{shard}/{digest}.jsonl"
CORPUS_STAGE1: Final = CORPUS_ROOT + "/stage1/{shard}/{digest}.jsonl"
CORPUS_STAGE2: Final = CORPUS_ROOT + "/stage2/{shard}/{digest}.jsonl"
CORPUS_REVIEW: Final = CORPUS_ROOT + "/review/{digest}"
CORPUS_DATASET: Final = CORPUS_ROOT + "/dataset/{digest}"
CORPUS_AGREEMENT: Final = CORPUS_ROOT + "/agreement/{digest}"
#: Finished dialogues of one expert x strategy configuration, across shard sets.
JOURNAL: Final = "store/dialogues/{expert}/{strategy}/{sim}.jsonl"

#: The published copies that DVC versions and people open.
PUBLISHED_TABLES: Final = "reports/tables"
PUBLISHED_METRICS: Final = "reports/metrics.json"
PUBLISHED_FIGURES: Final = "reports/figures"
PUBLISHED_PLOTS: Final = "reports/plots"
PUBLISHED_HTML: Final = "reports/index.html"

PATTERNS: Final[dict[str, str]] = {
    "shard": SHARD,
    "manifest": MANIFEST,
    "index": INDEX,
    "transcript": TRANSCRIPT,
    "match": MATCH,
    "judgement": JUDGEMENT,
    "score": SCORE,
    "aggregate": AGGREGATE,
    "tables": TABLES,
    "html": HTML,
    "journal": JOURNAL,
    "sft_data": SFT_DATA,
    "sft_adapter": SFT_ADAPTER,
    "reliability_items": RELIABILITY_ITEMS,
    "reliability": RELIABILITY,
}


def format(pattern: str, **fields: str) -> str:  # noqa: A001 - mirrors str.format
    return pattern.format(**fields)


def _stem(pattern: str) -> tuple[str, str]:
    root, rest = pattern.split("/", 1)
    return root, rest.rsplit(".", 1)[0] if "." in rest.rsplit("/", 1)[-1] else rest


def log(pattern: str) -> str:
    """The ``log:`` path of a rule whose output is ``pattern`` (``results/x`` -> ``logs/x``)."""
    root, stem = _stem(pattern)
    return f"logs/{stem}.log" if root == "results" else f"logs/{root}/{stem}.log"


def benchmark(pattern: str) -> str:
    """The ``benchmark:`` path, beside the outputs under the same root (one DVC output)."""
    root, stem = _stem(pattern)
    return f"{root}/benchmarks/{stem}.tsv"


def _regex(pattern: str) -> re.Pattern[str]:
    out, pos = [], 0
    for m in re.finditer(r"\{(\w+)\}", pattern):
        out.append(re.escape(pattern[pos : m.start()]))
        out.append(f"(?P<{m.group(1)}>{WILDCARDS[m.group(1)]})")
        pos = m.end()
    out.append(re.escape(pattern[pos:]))
    return re.compile("".join(out) + r"\Z")


_REGEXES = {kind: _regex(p) for kind, p in PATTERNS.items()}


def matches(pattern: str, path: str) -> bool:
    """Whether ``path`` has the form of ``pattern`` (each ``{name}`` as :data:`WILDCARDS`
    allows); a pattern with fields no wildcard constrains matches nothing."""
    try:
        return _regex(pattern).match(path) is not None
    except KeyError:
        return False


def parse(path: str) -> tuple[str, dict[str, str]]:
    """``(kind, fields)`` of a results path; ValueError when it is none of :data:`PATTERNS`."""
    for kind, rx in _REGEXES.items():
        m = rx.search(path)
        if m and (m.start() == 0 or path[m.start() - 1] == "/"):
            return kind, m.groupdict()
    raise ValueError(f"{path}: not a lecode results path")
