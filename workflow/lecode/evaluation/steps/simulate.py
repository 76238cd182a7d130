"""One shard of consultations for one expert x strategy, journaled as dialogues finish."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from lecode import paths
from lecode.agents.clients import build_client
from lecode.agents.context import RoleContext
from lecode.agents.experts import build_expert
from lecode.agents.roles import close_context, role_context
from lecode.dataset import load_cases
from lecode.evaluation.consultations import DialogueJournal, simulate_cases
from lecode.evaluation.specs import SimulateSpec
from lecode.failures import of_records, summary
from lecode.plan.jobs import JobFiles, Step
from lecode.progress import Progress, ledger_usage
from lecode.recordio import read_cases, write_transcripts
from lecode.records import Case, Transcript

log = logging.getLogger("lecode")


def journal_path(spec: SimulateSpec) -> str:
    return paths.format(
        paths.JOURNAL, expert=spec.expert.name, strategy=spec.strategy, sim=spec.digest()
    )


def consult(
    spec: SimulateSpec,
    cases: Sequence[Case],
    ctx: RoleContext,
    *,
    progress: Progress | None = None,
) -> list[Transcript]:
    """The spec's expert and client, built in ``ctx``, consult on ``cases``; finished
    dialogues are journaled under the spec's digest (one place for the simulate step and the
    noise study's replicates)."""
    digest = spec.digest()
    expert = build_expert(
        spec.expert.name,
        spec.expert.entry,
        spec.strategy,
        ctx,
        replicate=spec.replicate,
    )
    client = build_client(
        spec.client.name,
        spec.client.entry,
        spec.client_strategy,
        ctx,
        replicate=spec.client_replicate,
    )

    def provenance() -> dict[str, str]:
        """The spec digest, the replicate indices and what each role reports right now."""
        out = {
            "config_hash": digest,
            "expert.replicate": str(spec.replicate),
            "client.replicate": str(spec.client_replicate),
        }
        for role, obj in (("expert", expert), ("client", client)):
            describe = getattr(obj, "describe", None)
            if callable(describe):
                out.update({f"{role}.{k}": str(v) for k, v in describe().items()})
        return out

    return asyncio.run(
        simulate_cases(
            cases,
            expert,
            client,
            strategy=spec.strategy,
            max_turns=spec.max_turns,
            journal=DialogueJournal(journal_path(spec)),
            provenance=provenance,
            fail_on_error=spec.fail_on_error,
            progress=progress,
        )
    )


def run(spec: SimulateSpec, *, shard: str, out: str) -> None:
    cases = read_cases(shard)
    train = load_cases(spec.train.path) if spec.train else []
    name = f"{spec.expert.name}/{spec.strategy}"
    ctx = role_context(
        spec.runtime, [spec.expert, spec.client], train=train, job=f"simulate {name} {shard}"
    )
    try:
        if ctx.runtime is not None and not ctx.runtime.replay:
            # a published adapter must be the one this evaluation is identified by (before
            # any dialogue; replay evaluates nothing, its responses are keyed by the identity)
            for role in (spec.expert, spec.client):
                ctx.runtime.check_adapter(role.name)
        progress = Progress(f"simulate {name} {shard}", usage=ledger_usage(ctx.runtime))
        transcripts = consult(spec, cases, ctx, progress=progress)
    finally:
        close_context(ctx)
    write_transcripts(out, transcripts)
    failed = of_records(
        name, [t.model_dump(include={"stop_reason", "error"}) for t in transcripts], "simulation"
    )
    for line in summary([failed] if failed.failed else []):
        log.warning("%s", line)


def _run_job(spec: SimulateSpec, job: JobFiles) -> None:
    run(spec, shard=job.input.shard, out=job.output[0])


STEP = Step(spec=SimulateSpec, run=_run_job, output=paths.TRANSCRIPT)
