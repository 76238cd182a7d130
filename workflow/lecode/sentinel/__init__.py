"""The judge-drift sentinel: a frozen anchor set of (dialogue, advice) pairs, re-judged at each
scoring run and compared with the judgements stored for the same judge model.

Anchors (``judge_sentinel.anchors``, JSONL): ``{"id", "initial_query", "facts", "reference",
"dialogue": [[speaker, text], ...], "advice"}`` with speaker ``client``/``lawyer``. Stored
judgements (``judge_sentinel.stored``, JSON): ``{"judges": {<served model id>: {<anchor id>:
{professionalism, fluency, completeness, satisfaction, safety, overall}}}}``.

Agreement = the share of (anchor, score) pairs whose fresh score lies within ``tolerance`` of
the stored one (an anchor whose reply is unusable disagrees on all six). The run fails below
``threshold``. A call that failed (HTTP errors, timeouts, refused connections, after retries)
is no judgement: it is left out of the agreement and reported as an endpoint failure (which
endpoint, which failure, how many), which fails the run whatever the others agree on. A judge
without stored judgements is *unrecorded*: nothing to compare, the run goes on with a warning,
and the sentinel's output holds the judgements to record.

Freshness: the sentinel's requests carry its epoch (the digest of the judging it guards: the
judge's spec, the test set and every simulation) in their cache key (never in the request), so
each new scoring run asks the endpoint again, while a rerun or an offline replay of the same
run reads the store.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from lecode.agents.base import RoleError, UsageMeter
from lecode.agents.llm_judge import LLMJudge
from lecode.llm.errors import LLMCallError
from lecode.records import Case, Transcript, Turn

SCORES = ("professionalism", "fluency", "completeness", "satisfaction", "safety", "overall")


class Anchor(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    initial_query: str
    facts: tuple[str, ...] = ()
    reference: str
    dialogue: tuple[tuple[str, str], ...] = ()
    advice: str

    def case(self) -> Case:
        return Case(
            id=self.id,
            initial_query=self.initial_query,
            dialogue=(),
            facts=self.facts,
            importance=tuple(2 for _ in self.facts),
            suggestion=self.reference,
        )

    def transcript(self) -> Transcript:
        turns = [Turn(speaker="client", kind="query", text=self.initial_query)]
        for speaker, text in self.dialogue:
            kind = "question" if speaker == "lawyer" else "answer"
            turns.append(Turn(speaker=speaker, kind=kind, text=text))
        turns.append(Turn(speaker="lawyer", kind="advice", text=self.advice))
        return Transcript(
            case_id=self.id,
            expert="anchor",
            strategy="anchor",
            client="anchor",
            turns=tuple(turns),
            stop_reason="advice",
        )


def load_anchors(path: str | Path) -> list[Anchor]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                out.append(Anchor.model_validate_json(line))
    if not out:
        raise ValueError(f"{path}: no anchors")
    return out


def load_stored(path: str | Path | None, judge: str) -> dict[str, dict[str, int]] | None:
    """The stored judgements of ``judge`` (served model id), None when none are recorded."""
    if path is None or not Path(path).is_file():
        return None
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    got = (data.get("judges") or {}).get(judge)
    return dict(got) if got else None


class SentinelJudge(LLMJudge):
    """The configured judge, its cache keys salted with the sentinel's epoch."""

    epoch = ""

    async def call(
        self, purpose: str, template_hash: str, messages: Any, meter: UsageMeter, **kw: Any
    ) -> str:
        return await super().call(
            purpose, f"{template_hash}|sentinel:{self.epoch}", messages, meter, **kw
        )


Judgements = dict[str, dict[str, int] | None]


async def judge_anchors(
    judge: Any, anchors: Sequence[Anchor]
) -> tuple[Judgements, dict[str, LLMCallError]]:
    """Each judged anchor's six scores (None where the judge's reply was unusable), and the
    anchors whose call failed (endpoint errors after retries): those were not judged."""

    async def one(a: Anchor) -> dict[str, int] | None | LLMCallError:
        try:
            s = await judge.judge(a.case(), a.transcript(), meter=UsageMeter())
        except LLMCallError as exc:
            return exc
        except (RoleError, ValueError):
            return None
        return {k: int(getattr(s, k)) for k in SCORES}

    got = await asyncio.gather(*(one(a) for a in anchors))
    fresh: Judgements = {}
    failed: dict[str, LLMCallError] = {}
    for a, g in zip(anchors, got, strict=True):
        if isinstance(g, LLMCallError):
            failed[a.id] = g
        else:
            fresh[a.id] = g
    return fresh, failed


def agreement(
    fresh: Mapping[str, Mapping[str, int] | None],
    stored: Mapping[str, Mapping[str, int]],
    tolerance: int,
) -> tuple[float, int, int]:
    """(share agreeing, pairs agreeing, pairs compared) over the anchors that have stored
    judgements and were judged (an anchor absent from ``fresh`` was not: its call failed); an
    unusable fresh judgement (None) disagrees on every score."""
    agree = total = 0
    for anchor, old in stored.items():
        if anchor not in fresh:
            continue
        new = fresh[anchor]
        for k in SCORES:
            if k not in old:
                continue
            total += 1
            if new is not None and abs(int(new[k]) - int(old[k])) <= tolerance:
                agree += 1
    return (agree / total if total else 1.0), agree, total


class JudgeDriftError(RuntimeError):
    """The judge no longer agrees with its stored judgements of the anchors."""


class JudgeUnreachableError(RuntimeError):
    """Calls to the judge failed (endpoint errors), so the sentinel could not check it."""
