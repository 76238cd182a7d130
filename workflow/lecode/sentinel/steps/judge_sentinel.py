"""The judge-drift sentinel (see lecode.sentinel): the anchors re-judged, compared with the
stored judgements; fails the run below the threshold."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

from lecode import paths
from lecode.agents.context import endpoint, templates
from lecode.agents.roles import close_context, role_context
from lecode.llm.errors import failure_summary
from lecode.plan.jobs import JobFiles, Step
from lecode.recordio import atomic_write_text
from lecode.sentinel import (
    JudgeDriftError,
    JudgeUnreachableError,
    SentinelJudge,
    agreement,
    judge_anchors,
    load_anchors,
    load_stored,
)
from lecode.sentinel.specs import SentinelSpec

log = logging.getLogger("lecode")
RESULT = "judge_sentinel.json"


def run(spec: SentinelSpec, *, out_dir: str) -> dict:
    from lecode.report.document import Provenance, stats_document, write_document
    from lecode.report.model import StatsTable

    anchors = load_anchors(spec.anchors.path)
    served = str(getattr(spec.judge.entry, "model", None) or spec.judge.name)
    stored = load_stored(spec.stored.path if spec.stored else None, served)
    ctx = role_context(spec.runtime, [spec.judge], job="judge_sentinel")
    try:
        cfg = spec.judge.entry
        judge = SentinelJudge(
            spec.judge.name, endpoint(ctx, spec.judge.name, cfg), templates("judge", "default", ctx)
        )
        judge.epoch = spec.epoch
        fresh, failed = asyncio.run(judge_anchors(judge, anchors))
    finally:
        close_context(ctx)
    failures = failure_summary(failed.values())
    if stored is None:
        status, share, agree, total = "unrecorded", None, 0, 0
        log.warning(
            "judge sentinel: no stored judgements for %r in %s; record the ones in %s",
            served,
            spec.stored.path if spec.stored else "(no file)",
            Path(out_dir) / RESULT,
        )
    else:
        share, agree, total = agreement(fresh, stored, spec.tolerance)
        status = "ok" if share >= spec.threshold else "drift"
    if failed:
        # a call that failed is no judgement: neither agreement nor drift can be told
        status = "endpoint_error"
    result = {
        "judge": served,
        "epoch": spec.epoch,
        "status": status,
        "agreement": share,
        "agreeing": agree,
        "compared": total,
        "threshold": spec.threshold,
        "tolerance": spec.tolerance,
        "judgements": fresh,
        "failed_calls": {a: str(e) for a, e in failed.items()},
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / RESULT, json.dumps(result, ensure_ascii=False, indent=1) + "\n")
    nan = float("nan")
    table = StatsTable(
        name="judge_sentinel",
        title="Judge-drift sentinel: the anchors re-judged",
        columns=("value",),
        column_keys=("value",),
        rows=("anchors", "scores compared", "agreement (%)", "threshold (%)"),
        keys=("anchors", "compared", "agreement", "threshold"),
        values=(
            (float(len(anchors)),),
            (float(total),),
            (nan if share is None else 100.0 * share,),
            (100.0 * spec.threshold,),
        ),
        formats=("{:.0f}", "{:.0f}", "{:.1f}", "{:.1f}"),
        row_header="Anchors",
        notes=(
            f"judge {served}: status {status}; a score agrees within ±{spec.tolerance} of the "
            "stored judgement (lecode.sentinel)",
            *(f"failed: {line}" for line in failures),
        ),
    )
    write_document(stats_document(table, Provenance(spec_digest=spec.digest())), out)
    log.info("judge sentinel: %s, agreement %s (%d/%d)", status, share, agree, total)
    if failed:
        verdict = "no stored judgements to compare"
        if share is not None:
            verdict = f"{agree}/{total} scores of the judged anchors agree" + (
                f", below judge_sentinel.threshold={spec.threshold:.0%}: these drifted"
                if share < spec.threshold
                else ""
            )
        raise JudgeUnreachableError(
            f"judge sentinel: {len(failed)} of {len(anchors)} anchor judgements of {served!r} "
            f"failed at the endpoint, so the judge could not be fully checked ({verdict}): "
            + "; ".join(failures)
        )
    if status == "drift":
        raise JudgeDriftError(
            f"judge {served!r} agrees with its stored anchor judgements on {agree}/{total} "
            f"scores ({share:.0%}), below judge_sentinel.threshold={spec.threshold:.0%}: the "
            "judge has drifted; its scores are not comparable with earlier runs"
        )
    return result


def _run_job(spec: SentinelSpec, job: JobFiles) -> None:
    run(spec, out_dir=job.output[0])


STEP = Step(spec=SentinelSpec, run=_run_job, output=paths.SENTINEL)
