"""Run one pre-annotation step over one shard: with the offline rules, or with the LLM
annotator (every request through the response store). A dialogue that cannot be annotated
fails the job with its id and the reason; the others' requests stay in the store, so the rerun
after a fix replays them."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from lecode.agents.base import RoleError, UsageMeter
from lecode.agents.context import endpoint
from lecode.agents.roles import close_context, role_context
from lecode.corpus import rules
from lecode.corpus.annotations import (
    M,
    RoleAnnotation,
    Stage1Annotation,
    Stage2Annotation,
    read_records,
    write_records,
)
from lecode.corpus.llm_annotator import LLMAnnotator, annotator_templates
from lecode.corpus.specs import AnnotateSpec
from lecode.corpus.transcripts import DEFAULT_SPEAKER_TAGS, read_transcripts
from lecode.llm.errors import LLMCallError
from lecode.recordio import atomic_write_text
from lecode.specs import stable_hash

log = logging.getLogger("lecode")
In = TypeVar("In")
Out = TypeVar("Out")


class AnnotationError(RuntimeError):
    """Some dialogues of a shard could not be annotated (each named with its reason)."""


async def _each(items: Sequence[In], one: Callable[[In], Awaitable[Out]], what: str) -> list[Out]:
    results = await asyncio.gather(*(one(x) for x in items), return_exceptions=True)
    failed = [
        f"  {getattr(x, 'id', '?')}: {r}"
        for x, r in zip(items, results, strict=True)
        if isinstance(r, BaseException)
    ]
    for r in results:
        if isinstance(r, BaseException) and not isinstance(
            r, RoleError | LLMCallError | ValueError
        ):
            raise r
    if failed:
        raise AnnotationError(f"{what}: {len(failed)} dialogue(s) failed:\n" + "\n".join(failed))
    return [r for r in results if not isinstance(r, BaseException)]


class DialogueCache:
    """Each dialogue's record of a step, kept under ``spec.cache`` by a digest of the step's
    settings (code, annotator, prompts, thresholds) and of the dialogue's own input: a shard
    rerun because one transcript changed annotates that dialogue only. ``spec.cache`` None:
    no cache."""

    def __init__(self, step: str, spec: AnnotateSpec) -> None:
        self.dir = Path(spec.cache) / step if spec.cache else None
        settings = spec.model_dump(
            mode="json", exclude={"shard", "transcripts", "role_overrides", "previous", "cache"}
        )
        self.base = stable_hash([step, settings])
        self.made = 0

    async def get(self, cls: type[M], key: Any, make: Callable[[], Awaitable[M]]) -> M:
        path = self.dir / f"{stable_hash([self.base, key])}.json" if self.dir else None
        if path is not None and path.is_file():
            try:
                return cls.model_validate_json(path.read_text(encoding="utf-8"))
            except ValueError:
                pass  # a damaged entry is made again
        record = await make()
        self.made += 1
        if path is not None:
            atomic_write_text(path, record.model_dump_json())
        return record


def run(step: str, spec: AnnotateSpec, *, previous: str | None, out: str) -> int:
    """Annotate the shard's dialogues with ``step`` (roles, stage1, stage2); returns how many."""
    annotator: LLMAnnotator | None = None
    ctx = None
    if spec.annotator is not None:
        ctx = role_context(spec.runtime, [spec.annotator], job=f"corpus {step} {spec.shard}")
        name = spec.annotator.name
        annotator = LLMAnnotator(
            name, endpoint(ctx, name, spec.annotator.entry), annotator_templates()
        )
    meter = UsageMeter()
    try:
        records: list[Any] = asyncio.run(_step(step, annotator, previous, spec, meter))
    finally:
        if ctx is not None:
            close_context(ctx)
    records.sort(key=lambda r: str(r.id))
    write_records(out, records)
    who = annotator.name if annotator else rules.ANNOTATOR
    log.info("corpus %s shard %s: %d dialogue(s) by %s", step, spec.shard, len(records), who)
    return len(records)


async def _step(
    step: str,
    annotator: LLMAnnotator | None,
    previous: str | None,
    spec: AnnotateSpec,
    meter: UsageMeter,
) -> list[Any]:
    what = f"corpus {step} shard {spec.shard}"
    cache = DialogueCache(step, spec)
    if step == "roles":
        tags = spec.speaker_tags or DEFAULT_SPEAKER_TAGS
        transcripts = read_transcripts((f.path for f in spec.transcripts), tags)

        async def roles(t: Any) -> RoleAnnotation:
            given = spec.role_overrides.get(t.id)
            return await cache.get(
                RoleAnnotation,
                [t.id, t.source, [(x.speaker, x.text) for x in t.turns], given],
                lambda: new_roles(t, given),
            )

        async def new_roles(t: Any, given: dict[str, str] | None) -> RoleAnnotation:
            if annotator:
                found = await annotator.roles(t, meter)
                found = found.model_copy(update={"source": t.source})
            else:
                found = rules.identify_roles(t, threshold=spec.role_confidence)
            if given is not None:
                return rules.confirm_roles(found, given, "roles.csv")  # type: ignore[arg-type]
            return found

        return await _each(transcripts, roles, what)
    assert previous is not None
    if step == "stage1":
        found = read_records(previous, RoleAnnotation)

        async def one(r: Any) -> Stage1Annotation:
            async def new() -> Stage1Annotation:
                return await annotator.stage1(r, meter) if annotator else rules.stage1(r)

            return await cache.get(Stage1Annotation, r.model_dump(mode="json"), new)

        return await _each(found, one, what)
    s1 = read_records(previous, Stage1Annotation)

    async def two(s: Any) -> Stage2Annotation:
        async def new() -> Stage2Annotation:
            return await annotator.stage2(s, meter) if annotator else rules.stage2(s)

        return await cache.get(Stage2Annotation, s.model_dump(mode="json"), new)

    return await _each(s1, two, what)
