"""Runs one expert strategy against the mock endpoint and reports, per dialogue, the calls it
made next to the calls the forecast counts for it (``python -m tests.support.strategy_run``
prints the report as JSON, so a test can run it on a copy of the package)."""

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
from lecode.llm.forecast import dialogue_calls
from lecode.llm.mock import MockServer
from lecode.llm.store import SEGMENT_GLOB, decode_line
from tests.support.mock_llm import KEY_ENV, model_cfg, runtime, simulate


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
    """Per case: stop reason, questions, expert calls metered, the purposes of the stored
    expert requests and of the forecast's calls, and the texts of the private calls."""
    os.environ.setdefault(KEY_ENV, "sk-strategy-run-0123456789")
    cases = load_cases(cases_file)
    with MockServer(case_files=[cases_file]) as mock:
        rt = runtime(store)
        try:
            transcripts = asyncio.run(
                simulate(cases, rt, model_cfg(mock.url), strategy=strategy, max_turns=max_turns)
            )
        finally:
            rt.close()
    records = [r for r in stored_requests(store) if r["role"] == "expert"]
    out: dict[str, Any] = {"lecode": str(Path(lecode.__file__).resolve().parent), "cases": {}}
    for case, t in zip(cases, transcripts, strict=True):
        mine = [
            r
            for r in records
            if any(case.initial_query in m["content"] for m in r["request"]["messages"])
        ]
        private = {r["key"]: r["response"]["text"] for r in mine if r["purpose"] == "plan"}
        systems = [
            m["content"]
            for r in mine
            if r["purpose"] != "plan"
            for m in r["request"]["messages"]
            if m["role"] == "system"
        ]
        out["cases"][case.id] = {
            "stop_reason": t.stop_reason,
            "questions": t.n_questions,
            "expert_calls": t.usage["expert"].calls,
            "client_calls": t.usage["client"].calls,
            "stored": sorted(Counter(r["purpose"] for r in mine).elements()),
            "forecast": sorted(
                c.purpose for _, c in dialogue_calls(strategy, t.n_questions, max_turns)
            ),
            "private": sorted(private.values()),
            "systems": systems,
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
