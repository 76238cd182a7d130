"""One SFT variant's training data: dialogues, chat samples, audit records and statistics.

Outputs (in one directory, named by the job spec's digest):

- ``train.jsonl``: one chat sample per line, ``{"messages": [{"role": "system" | "user" |
  "assistant", "content": ...}]}``, the last message being the target. TRL reads it as a
  conversational dataset (:mod:`lecode.sft.train` trains on the last message only), and
  LLaMA-Factory through ``dataset_info.json`` (``sharegpt`` formatting, role/content tags);
- ``dialogues.jsonl``: per training case, the training dialogue (turns, targets, the facts each
  question asks for) or why the case was left out;
- ``stats.json``: samples, dialogues, turns and tokens (jieba words and characters: the base
  model's tokenizer is not needed to build the data; the training log counts model tokens).

Cases are processed in id order and every sample follows its dialogue's order, so the files
are byte-identical across runs (the LLM writer's replies come from the response store).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lecode.agents.base import Matcher, RoleError, UsageMeter
from lecode.records import Case, RoleUsage
from lecode.sft.dialogues import (
    SFTDialogue,
    cap,
    direct_dialogue,
    keyfact_dialogue,
    samples,
)
from lecode.sft.questions import VARIANT_MODE, QuestionWriter, validate
from lecode.text import tokenize

TRAIN_FILE = "train.jsonl"
DIALOGUES_FILE = "dialogues.jsonl"
STATS_FILE = "stats.json"
INFO_FILE = "dataset_info.json"


class Rejected:
    def __init__(self, case_id: str, kinds: Sequence[str], details: Sequence[str]) -> None:
        self.case_id = case_id
        self.kinds = list(kinds)
        self.details = list(details)


def direct_dialogues(cases: Sequence[Case]) -> tuple[list[SFTDialogue], list[Rejected]]:
    out, rejected = [], []
    for case in cases:
        d = direct_dialogue(case)
        if d is None:
            rejected.append(Rejected(case.id, ["structure"], ["no client query or no advice"]))
        else:
            out.append(d)
    return out, rejected


async def keyfact_dialogues(
    cases: Sequence[Case],
    variant: str,
    writer: QuestionWriter,
    matcher: Matcher,
    *,
    max_leak: float,
) -> tuple[list[SFTDialogue], list[Rejected], dict[str, RoleUsage]]:
    """Questions for every case (concurrently; the endpoint limits requests), validated."""
    mode = VARIANT_MODE[variant]
    meters = [UsageMeter() for _ in cases]

    async def one(case: Case, meter: UsageMeter) -> SFTDialogue | Rejected:
        if not case.facts:
            return Rejected(case.id, ["structure"], ["the case has no key facts"])
        try:
            questions = await writer.write(case, mode, meter=meter)
        except RoleError as exc:
            return Rejected(case.id, ["writer"], [str(exc)])
        try:
            problems = await validate(
                case, questions, mode, matcher=matcher, max_leak=max_leak, meter=meter
            )
        except RoleError as exc:
            return Rejected(case.id, ["matcher"], [str(exc)])
        if problems:
            return Rejected(case.id, [p.kind for p in problems], [p.detail for p in problems])
        return keyfact_dialogue(case, questions)

    results = await asyncio.gather(*(one(c, m) for c, m in zip(cases, meters, strict=True)))
    usage: dict[str, RoleUsage] = {}
    for m in meters:
        for role, u in m.by_role.items():
            usage[role] = usage.get(role, RoleUsage()) + u
    dialogues = [r for r in results if isinstance(r, SFTDialogue)]
    rejected = [r for r in results if isinstance(r, Rejected)]
    return dialogues, rejected, usage


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def dataset_info(variant: str) -> dict[str, Any]:
    """LLaMA-Factory's ``dataset_info.json`` entry for ``train.jsonl``."""
    return {
        f"lecode_{variant.replace('-', '_')}": {
            "file_name": TRAIN_FILE,
            "formatting": "sharegpt",
            "columns": {"messages": "messages"},
            "tags": {
                "role_tag": "role",
                "content_tag": "content",
                "user_tag": "user",
                "assistant_tag": "assistant",
                "system_tag": "system",
            },
        }
    }


def _count(texts: Sequence[str]) -> tuple[int, int]:
    return sum(len(tokenize(t)) for t in texts), sum(len(t) for t in texts)


def write_variant(
    out_dir: str | Path,
    *,
    variant: str,
    n_cases: int,
    dialogues: Sequence[SFTDialogue],
    rejected: Sequence[Rejected],
    templates: dict[str, Any],
    max_turns: int,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the variant's files; returns the statistics."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    capped = sorted((cap(d, max_turns) for d in dialogues), key=lambda d: d.case_id)
    lines: list[str] = []
    records: list[dict[str, Any]] = []
    prompt_tok = prompt_chr = target_tok = target_chr = 0
    forced = questions = 0
    per_dialogue_q = []
    labels: Counter[str] = Counter()
    for d in capped:
        n_q = 0
        for messages, was_forced in samples(d, templates, max_turns):
            lines.append(_dump({"messages": messages}))
            t, c = _count([m["content"] for m in messages[:-1]])
            prompt_tok, prompt_chr = prompt_tok + t, prompt_chr + c
            t, c = _count([messages[-1]["content"]])
            target_tok, target_chr = target_tok + t, target_chr + c
            forced += was_forced
            n_q += messages[-1]["content"].startswith("提问")
        questions += n_q
        per_dialogue_q.append(n_q)
        labels.update(d.labels)
        records.append(
            {
                "case_id": d.case_id,
                "status": "ok",
                "turns": [t.model_dump() for t in d.turns],
                "targets": d.targets,
                "question_facts": [list(f) for f in d.question_facts],
                "advice_from_suggestion": d.advice_from_suggestion,
            }
        )
    for r in sorted(rejected, key=lambda r: r.case_id):
        records.append(
            {"case_id": r.case_id, "status": "rejected", "kinds": r.kinds, "problems": r.details}
        )
    records.sort(key=lambda r: r["case_id"])
    n_samples = len(lines)
    stats: dict[str, Any] = {
        "variant": variant,
        "cases": n_cases,
        "dialogues": len(capped),
        "rejected": len(rejected),
        "rejected_by_kind": dict(
            sorted(Counter(k for r in rejected for k in set(r.kinds)).items())
        ),
        "samples": n_samples,
        "question_samples": questions,
        "advice_samples": len(capped),
        "advice_forced": forced,
        "max_turns": max_turns,
        "turns": {
            "total": questions,
            "mean": round(questions / len(capped), 3) if capped else 0.0,
            "max": max(per_dialogue_q, default=0),
        },
        "tokens": {
            "tokenizer": "jieba words (punctuation included)",
            "prompt": prompt_tok,
            "target": target_tok,
            "total": prompt_tok + target_tok,
            "mean_per_sample": round((prompt_tok + target_tok) / n_samples, 1) if n_samples else 0,
        },
        "chars": {"prompt": prompt_chr, "target": target_chr, "total": prompt_chr + target_chr},
    }
    if variant == "direct":
        stats["direct"] = {
            "lawyer_utterances": dict(sorted(labels.items())),
            "advice_from_suggestion": sum(d.advice_from_suggestion for d in capped),
        }
    else:
        asked = sum(len(f) for d in capped for f in d.question_facts)
        stats["facts"] = {
            "asked": asked,
            "facts_per_question": round(asked / questions, 3) if questions else 0.0,
        }
    stats.update(extra or {})
    _write(out / TRAIN_FILE, "".join(line + "\n" for line in lines))
    _write(out / DIALOGUES_FILE, "".join(_dump(r) + "\n" for r in records))
    _write(out / STATS_FILE, json.dumps(stats, ensure_ascii=False, indent=2) + "\n")
    _write(out / INFO_FILE, json.dumps(dataset_info(variant), ensure_ascii=False, indent=2) + "\n")
    return stats
