"""Runs one expert strategy against the mock endpoint and reports, per dialogue, the calls it
made next to the calls the forecast counts for it (``python -m tests.support.strategy_run``
prints the report as JSON, so a test can run it on a copy of the package).

Requests are grouped by dialogue the way the mock endpoint groups them: by the case each
request names in its metadata (``X-Lecode-Case``), never by what its prompt shows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import lecode
from lecode.dataset import load_cases
from lecode.forecast import dialogue_calls
from lecode.llm.store import SEGMENT_GLOB, decode_line
from lecode.mock import MockServer
from tests.support.mock_llm import KEY_ENV, model_cfg, runtime, simulate

#: the purposes of the private calls the report shows the replies of
PRIVATE = ("plan", "notes", "summary", "recap")


def stored_requests(store: Path) -> list[dict[str, Any]]:
    """Every record of the response store under ``store``."""
    out = []
    for seg in sorted(store.rglob(SEGMENT_GLOB)):
        for line in seg.read_bytes().splitlines():
            decoded = decode_line(line)
            if decoded is not None:
                out.append(json.loads(decoded[1]))
    return out


def report(cases_file: Path, strategy: str, max_turns: int, store: Path) -> dict[str, Any]:
    """Per case: stop reason, questions, the question/answer pairs, expert calls metered, the
    purposes of the expert requests the mock answered for the case and of the forecast's calls,
    the replies of the private calls, the system prompts of the other calls, and the dialogue
    ids the requests named."""
    os.environ.setdefault(KEY_ENV, "sk-strategy-run-0123456789")
    cases = load_cases(cases_file)
    with MockServer(case_files=[cases_file], keep_exchanges=True) as mock:
        rt = runtime(store)
        try:
            transcripts = asyncio.run(
                simulate(cases, rt, model_cfg(mock.url), strategy=strategy, max_turns=max_turns)
            )
        finally:
            rt.close()
        exchanges = mock.exchanges()
    out: dict[str, Any] = {"lecode": str(Path(lecode.__file__).resolve().parent), "cases": {}}
    for case, t in zip(cases, transcripts, strict=True):
        mine = [x for x in exchanges if x["case"] == case.id]
        expert = [x for x in mine if x["role"] == "expert"]
        out["cases"][case.id] = {
            "stop_reason": t.stop_reason,
            "questions": t.n_questions,
            "qa": [list(p) for p in t.qa_pairs()],
            "expert_calls": t.usage["expert"].calls,
            "client_calls": t.usage["client"].calls,
            "stored": sorted(Counter(x["purpose"] for x in expert).elements()),
            "forecast": sorted(
                c.purpose for _, c in dialogue_calls(strategy, t.n_questions, max_turns, case)
            ),
            "private": [x["reply"] for x in expert if x["purpose"] in PRIVATE],
            "systems": [
                m["content"]
                for x in expert
                if x["purpose"] not in PRIVATE
                for m in x["messages"]
                if m["role"] == "system"
            ],
            "prompts": [
                [x["purpose"], "\n".join(m["content"] for m in x["messages"])] for x in expert
            ],
            "dialogues": sorted({x["dialogue"] for x in mine}),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=Path, required=True)
    ap.add_argument("--strategy", required=True)
    ap.add_argument("--max-turns", type=int, default=4)
    ap.add_argument("--store", type=Path, required=True)
    args = ap.parse_args(argv)
    rep = report(args.cases, args.strategy, args.max_turns, args.store)
    json.dump(rep, sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
