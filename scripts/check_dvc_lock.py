"""Fails when the committed dvc.lock does not describe the code, data and params at HEAD.

Run in a clone (outputs need not be present: only dependencies and parameters are compared).
Exit 0: every stage's recorded deps and params match; exit 1: names what changed, and how to
record it (`make dvc-lock`: `dvc repro` then `dvc push`, and commit dvc.lock).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

STALE_KEYS = ("changed deps", "changed params", "changed cmd", "always changed")


def stale(status: dict[str, Any]) -> list[str]:
    """``stage: what`` for every stage whose recorded inputs differ from the workspace."""
    problems = []
    for stage, entries in status.items():
        for entry in entries if isinstance(entries, list) else [entries]:
            if not isinstance(entry, dict):
                problems.append(f"{stage}: {entry}")
                continue
            for key in STALE_KEYS:
                if key in entry:
                    what = entry[key]
                    if key == "changed deps" and isinstance(what, dict):
                        # A dependency that is another stage's output and was not pulled is
                        # absent, not changed: git holds every code, data and params file.
                        what = {k: v for k, v in what.items() if v != "deleted"}
                        if not what:
                            continue
                    detail = (
                        ", ".join(f"{k} ({v})" for k, v in what.items())
                        if isinstance(what, dict)
                        else str(what)
                    )
                    problems.append(f"{stage}: {key}: {detail}")
    return problems


def main() -> int:
    dvc = str(Path(sys.executable).with_name("dvc"))
    proc = subprocess.run([dvc, "status", "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        return 1
    problems = stale(json.loads(proc.stdout or "{}"))
    if problems:
        print("dvc.lock does not match the code, data and params at HEAD:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        print("record the run: `make dvc-lock`, then commit dvc.lock", file=sys.stderr)
        return 1
    print("dvc.lock matches the code, data and params")
    return 0


if __name__ == "__main__":
    sys.exit(main())
