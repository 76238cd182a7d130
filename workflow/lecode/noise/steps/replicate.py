"""One replicate run of the noise study: the fixed subset simulated with the run's replicate
indices (journaled under its own simulate digest, so it resumes), matched, judged with the
run's judge replicate and scored; every record written beside the scores for audit.
BERTScore is left to the noise job, which loads its model once for every run."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from lecode import paths
from lecode.agents.judges import build_judge
from lecode.agents.matchers import build_matcher
from lecode.agents.roles import close_context, role_context
from lecode.dataset import load_cases
from lecode.evaluation.steps.judge_advice import judge_dialogue
from lecode.evaluation.steps.match_facts import match_dialogue
from lecode.evaluation.steps.simulate import consult
from lecode.noise.specs import ReplicateSpec
from lecode.plan.jobs import JobFiles, Step
from lecode.recordio import write_judgements, write_matches, write_transcripts
from lecode.score_io import write_scores

log = logging.getLogger("lecode")

TRANSCRIPTS = "transcripts.jsonl"
MATCHES = "matches.jsonl"
JUDGEMENTS = "judgements.jsonl"
SCORES = "scores.csv"


def run(spec: ReplicateSpec, *, out_dir: str) -> None:
    from lecode.evaluation.scoring import score_dialogues
    from lecode.metrics.advice import RougeL

    sim = spec.simulate
    wanted = set(spec.cases)
    cases = [c for c in load_cases(spec.test.path) if c.id in wanted]
    train = load_cases(sim.train.path) if sim.train else []
    roles = [sim.expert, sim.client, spec.match.role] + ([spec.judge.role] if spec.judge else [])
    name = f"{sim.expert.name}/{sim.strategy} {spec.factor}-{spec.index}"
    ctx = role_context(spec.runtime, roles, train=train, job=f"replicate {name}")
    try:
        transcripts = consult(sim, cases, ctx)
        by_id = {c.id: c for c in cases}
        matcher = build_matcher(spec.match.role.name, spec.match.role.entry, ctx)

        async def evaluate() -> tuple[list, list]:
            ms = await asyncio.gather(
                *(match_dialogue(matcher, by_id[t.case_id], t) for t in transcripts)
            )
            js: list = []
            if spec.judge is not None:
                judge = build_judge(
                    spec.judge.role.name,
                    spec.judge.role.entry,
                    ctx,
                    replicate=spec.judge_replicate,
                )
                js = list(
                    await asyncio.gather(
                        *(judge_dialogue(judge, by_id[t.case_id], t) for t in transcripts)
                    )
                )
            return list(ms), js

        matches, judgements = asyncio.run(evaluate())
    finally:
        close_context(ctx)
    rows = score_dialogues(
        by_id,
        transcripts,
        {m.case_id: m for m in matches},
        {j.case_id: j for j in judgements},
        RougeL(punctuation=spec.score.rouge.punctuation == "keep"),
        None,
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_transcripts(out / TRANSCRIPTS, transcripts)
    write_matches(out / MATCHES, matches)
    write_judgements(out / JUDGEMENTS, judgements)
    write_scores(out / SCORES, rows)
    log.info("%s: %d dialogues scored", name, len(rows))


def _run_job(spec: ReplicateSpec, job: JobFiles) -> None:
    run(spec, out_dir=job.output[0])


STEP = Step(spec=ReplicateSpec, run=_run_job, output=paths.REPLICATE)
