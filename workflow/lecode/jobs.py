"""One function per pipeline step; the Snakemake scripts in ``workflow/scripts`` call these.

dataset -> shards -> transcripts -> matches (+ judgements) -> per-dialogue scores -> aggregate.
Each function reads its inputs, writes its outputs atomically, and logs to the job's log.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import polars as pl

from lecode import config as cfgmod
from lecode.agents.registry import (
    RoleContext,
    build_client,
    build_expert,
    build_judge,
    build_matcher,
)
from lecode.dataset import file_sha256, load_cases
from lecode.evaluate import judge_dialogue, match_dialogue
from lecode.recordio import (
    read_cases,
    read_judgements,
    read_matches,
    read_transcripts,
    scores_frame,
    write_judgements,
    write_matches,
    write_scores,
    write_transcripts,
)
from lecode.records import Case, Judgement, Matches, Transcript
from lecode.shards import check_union, select, write_shards
from lecode.simulate import DialogueJournal, simulate_cases

log = logging.getLogger("lecode")


def setup_logging(log_path: str | Path | None) -> None:
    """Send this job's log records to its Snakemake ``log:`` file (and stderr)."""
    handlers: list[logging.Handler] = [logging.StreamHandler()]
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w", encoding="utf-8"))
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )


def uses_llm(params: dict[str, Any], *model_names: str) -> bool:
    return any(params["models"][m]["backend"] != "offline" for m in model_names)


def role_context(
    params: dict[str, Any], *, models: Sequence[str], train: Sequence[Case] = (), job: str = ""
) -> RoleContext:
    """Role context; the LLM runtime (store, limiters, ledger) only when an LLM role needs it."""
    ctx = RoleContext(train_cases=train, prompts_dir=cfgmod.PROMPTS_DIR)
    if uses_llm(params, *models):
        from lecode.llm.runtime import LLMRuntime

        ctx.runtime = LLMRuntime.from_params(params, job=job)
    return ctx


def close_context(ctx: RoleContext) -> None:
    if ctx.runtime is not None:
        ctx.runtime.close()


def make_shards(test_path: str, n_shards: int, limit: int | None, out_dir: str) -> None:
    cases = select(load_cases(test_path), limit)
    index = write_shards(
        cases,
        n_shards,
        out_dir,
        source={"path": test_path, "sha256": file_sha256(test_path), "limit": limit},
    )
    log.info("%d test cases in %d shards: %s", len(cases), n_shards, index["shards"])


def run_simulation(
    params: dict[str, Any],
    *,
    expert: str,
    strategy: str,
    shard: str,
    out: str,
    journal: str,
) -> None:
    cases = read_cases(shard)
    em = params["models"][expert]
    train = load_cases(params["dataset"]["train"]) if em.get("agent") == "retrieval" else []
    client_cfg = params["client"]
    ctx = role_context(
        params,
        models=[expert, client_cfg["model"]],
        train=train,
        job=f"simulate {expert}/{strategy} {Path(shard).name}",
    )
    exp = build_expert(expert, em, strategy, ctx)
    cl = build_client(
        client_cfg["model"], params["models"][client_cfg["model"]], client_cfg["strategy"], ctx
    )
    sim_cfg = cfgmod.simulation_config(params, expert, strategy)
    config_hash = cfgmod.stable_hash(sim_cfg)

    def provenance() -> dict[str, str]:
        """The configuration hash and what each role reports about itself right now."""
        out = {"config_hash": config_hash}
        for role, obj in (("expert", exp), ("client", cl)):
            describe = getattr(obj, "describe", None)
            if callable(describe):
                out.update({f"{role}.{k}": str(v) for k, v in describe().items()})
        return out

    try:
        transcripts = asyncio.run(
            simulate_cases(
                cases,
                exp,
                cl,
                strategy=strategy,
                max_turns=int(params["simulation"]["max_turns"]),
                journal=DialogueJournal(journal),
                provenance=provenance,
                fail_on_error=params["simulation"].get("fail_on_error"),
            )
        )
    finally:
        close_context(ctx)
    write_transcripts(out, transcripts)


E = TypeVar("E", Matches, Judgement)


def _evaluate_shard(
    params: dict[str, Any],
    role: str,
    evaluate: Callable[[Any, Case, Transcript], Awaitable[E]],
    *,
    shard: str,
    transcripts: str,
) -> list[E]:
    """Run the configured matcher or judge over every transcript of one shard."""
    cases = {c.id: c for c in read_cases(shard)}
    name = params[role]["model"]
    ctx = role_context(params, models=[name], job=f"{role} {transcripts}")
    build = build_matcher if role == "matcher" else build_judge
    player = build(name, params["models"][name], ctx)

    async def all_() -> list[E]:
        ts = read_transcripts(transcripts)
        return list(await asyncio.gather(*(evaluate(player, cases[t.case_id], t) for t in ts)))

    try:
        records = asyncio.run(all_())
    finally:
        close_context(ctx)
    n_bad = sum(r.status != "ok" for r in records)
    log.info("%s: %d dialogues, %d without a result", role, len(records), n_bad)
    return records


def run_matching(params: dict[str, Any], *, shard: str, transcripts: str, out: str) -> None:
    matches = _evaluate_shard(
        params, "matcher", match_dialogue, shard=shard, transcripts=transcripts
    )
    write_matches(out, matches)


def run_judging(params: dict[str, Any], *, shard: str, transcripts: str, out: str) -> None:
    judgements = _evaluate_shard(
        params, "judge", judge_dialogue, shard=shard, transcripts=transcripts
    )
    write_judgements(out, judgements)


def run_scoring(
    params: dict[str, Any],
    *,
    shards: Sequence[str],
    transcripts: Sequence[str],
    matches: Sequence[str],
    judgements: Sequence[str],
    out: str,
    threads: int = 1,
) -> None:
    """Per-dialogue scores of one system over all its shards (one BERTScore model load)."""
    from lecode.metrics.advice import BertScorer, RougeL
    from lecode.scoring import score_dialogues

    cases = {c.id: c for s in shards for c in read_cases(s)}
    ts = [t for p in transcripts for t in read_transcripts(p)]
    ms = {m.case_id: m for p in matches for m in read_matches(p)}
    js = {j.case_id: j for p in judgements for j in read_judgements(p)}
    mcfg = params["metrics"]
    rouge = RougeL(punctuation=mcfg["rouge"].get("punctuation", "keep") == "keep")
    bcfg = mcfg["bertscore"]
    bert = None
    if bcfg.get("enabled", True):
        bert = BertScorer(
            model=bcfg["model"],
            num_layers=int(bcfg["num_layers"]),
            batch_size=int(bcfg.get("batch_size", 32)),
            threads=threads,
        )
    rows = score_dialogues(cases, ts, ms, js, rouge, bert)
    write_scores(out, rows)
    log.info("scored %d dialogues", len(rows))


def aggregate_scores(
    *, index: str, score_files: Sequence[str], systems: Sequence[dict[str, str]], out: str
) -> pl.DataFrame:
    """All systems' per-dialogue scores in one CSV; checks each system covers every case once."""
    from lecode.recordio import atomic_write_text, read_scores

    frames = []
    for path, sysinfo in zip(score_files, systems, strict=True):
        frame = read_scores(path)
        check_union(index, frame["case_id"].to_list(), f"{sysinfo['expert']}/{sysinfo['strategy']}")
        frames.append(frame)
    allf = pl.concat(frames) if frames else scores_frame([])
    atomic_write_text(out, allf.write_csv(float_precision=6))
    return allf


class ReportInputs:
    """The files a report step reads (the ``report_inputs`` of the rules), loaded once."""

    def __init__(self, files: Any):
        from lecode.recordio import read_scores

        self.scores = read_scores(files.scores)
        self.train = load_cases(files.train)
        self.test = load_cases(files.test)
        index = json.loads(Path(files.index).read_text(encoding="utf-8"))
        self.n_expected = int(index["n_cases"])
        self.test_ids = set(index["case_ids"])
        self.transcripts = [t for p in files.transcripts for t in read_transcripts(p)]
        self.matches = [m for p in files.matches for m in read_matches(p)]
        self.judgements = [j for p in files.judgements for j in read_judgements(p)]

    def usage(self) -> pl.DataFrame:
        from lecode.report.usage import usage_frame

        return usage_frame(self.transcripts, self.matches, self.judgements)


def build_tables(
    files: Any,
    systems: Sequence[dict[str, str]],
    report: dict[str, Any],
    *,
    out_dir: str,
    metrics: str,
    params: dict[str, Any] | None = None,
) -> None:
    """Every table, the metrics JSON, and ``<table>.provenance.json`` next to each table.

    ``params``: the job's configuration (Snakemake's ``config``); without it the provenance
    reads ``params.yaml`` and records that it did (and whether it reproduces the input paths).
    """
    from lecode.provenance import write_provenance
    from lecode.report.outputs import ReportSettings, write_tables

    data = ReportInputs(files)
    written = write_tables(
        data.scores,
        systems,
        data.n_expected,
        out_dir,
        train_cases=data.train,
        test_cases=data.test,
        paper_numbers=files.paper,
        usage=data.usage(),
        settings=ReportSettings.from_params(report),
        metrics_path=metrics,
    )
    log.info("wrote %s", sorted(written))
    source = "snakemake config"
    if params is None:
        source = "params.yaml (the job was not given its configuration)"
        params = cfgmod.load_params("params.yaml") if Path("params.yaml").is_file() else {}
    params = {**params, "report": report}
    provenance = write_provenance(out_dir, files, systems, params, params_source=source)
    log.info("wrote %s", [p.name for p in provenance])


def build_figures(
    files: Any, systems: Sequence[dict[str, str]], *, figures: str, plots: str
) -> None:
    from lecode.report.figures import write_figures

    data = ReportInputs(files)
    Path(figures).mkdir(parents=True, exist_ok=True)
    Path(plots).mkdir(parents=True, exist_ok=True)
    written = write_figures(
        Path(figures).parent,
        figures_dir=figures,
        plots_dir=plots,
        scores=data.scores,
        systems=systems,
        train_cases=data.train,
        test_cases=data.test,
        matches=data.matches or None,
    )
    log.info("wrote %s", sorted(written))


def build_html(
    files: Any, systems: Sequence[dict[str, str]], report: dict[str, Any], *, out: str
) -> None:
    from lecode.explain import html_summaries
    from lecode.report.html import write_html
    from lecode.report.outputs import ReportSettings

    data = ReportInputs(files)
    tables = getattr(files, "tables", None)
    write_html(
        out,
        provenance=html_summaries(tables) if tables else None,
        scores=data.scores,
        systems=systems,
        n_expected=data.n_expected,
        train_cases=data.train,
        test_cases=data.test,
        transcripts=data.transcripts,
        matches=data.matches,
        judgements=data.judgements,
        paper_numbers=files.paper,
        usage=data.usage(),
        settings=ReportSettings.from_params(report),
        figures_dir=files.figures,
    )
