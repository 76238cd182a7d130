"""``lecode explain``: how a reported number was produced, and one consultation in full.

``lecode explain table3 "human_replay/baseline" WR`` reads ``reports/tables/table3.provenance.json``
(written with the table, see :mod:`lecode.provenance`) and prints the cell's value and n/N, the
aggregation, every input file with its recorded sha256 (and whether the file on disk still has
it), how many LLM responses came from the response store, the models as configured and as
served, the dataset, the parameter subset, the git state and the metric stack. It also
recomputes the cell's mean from the per-dialogue scores file.

``lecode explain --case ID`` prints that consultation for every system of the table: the
transcript, the facts each question elicited, and the dialogue's scores.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from lecode import provenance as prov

DEFAULT_TABLES = "reports/tables"


class ExplainError(ValueError):
    """The table, row, column or case does not exist; the message lists what does."""


# --------------------------------------------------------------------------- lookup


def _norm(text: str) -> str:
    return " ".join(text.replace("↓", "").split()).casefold()


def _choices(values: Sequence[str]) -> str:
    return ", ".join(repr(v) for v in dict.fromkeys(values))


def find_cell(
    doc: Mapping[str, Any], row: str, column: str, setting: str | None = None
) -> dict[str, Any]:
    """The cell of ``doc`` at ``row`` (label, ``expert/strategy`` or expert) and ``column``
    (header such as ``WR`` or ``AT↓``, or metric key such as ``weighted_recall``)."""
    cells: list[dict[str, Any]] = list(doc["cells"])
    systems = doc.get("systems") or {}

    def row_keys(c: Mapping[str, Any]) -> set[str]:
        keys = {_norm(c["row"])}
        if c.get("statistic"):
            keys.add(_norm(c["statistic"]))
        refs = c.get("systems") or []
        if c.get("kind") in ("system", "paper", "offset") and refs:
            keys.add(_norm(refs[0]))
            keys.add(_norm(systems.get(refs[0], {}).get("expert", refs[0])))
        elif c.get("kind") == "delta" and refs:
            keys.add(_norm(" − ".join(refs)))
            keys.add(_norm(" - ".join(refs)))
        return keys

    want = _norm(row)
    by_row = [c for c in cells if want in row_keys(c)]
    if not by_row:
        raise ExplainError(
            f"{doc['table']}: no row {row!r}; rows: {_choices([c['row'] for c in cells])}"
        )
    if setting is not None:
        by_row = [c for c in by_row if _norm(c.get("setting", "")) == _norm(setting)]
        if not by_row:
            raise ExplainError(f"{doc['table']}: row {row!r} has no setting {setting!r}")
    col = _norm(column)
    found = [
        c
        for c in by_row
        if col in (_norm(c["column"]), _norm(c.get("metric", "")), _norm(c["column"] + "↓"))
        or (c.get("metric", "").endswith(":" + column))
    ]
    if not found:
        raise ExplainError(
            f"{doc['table']}: no column {column!r}; columns: "
            f"{_choices([c['column'] for c in by_row])}"
        )
    if len({(c["row"], c.get("setting", "")) for c in found}) > 1:
        opts = [f"{c['row']} [{c.get('setting') or '-'}]" for c in found]
        raise ExplainError(
            f"{doc['table']}: {row!r} matches several rows ({', '.join(opts)}); "
            "name the row by its label or pass --setting"
        )
    return found[0]


# --------------------------------------------------------------------------- checks


def _state(ref: Mapping[str, Any], root: Path) -> str:
    """``ok``, ``changed`` or ``missing``: the file on disk against its recorded sha256."""
    path = root / ref["path"]
    if not path.is_file():
        return "missing"
    if ref.get("sha256") is None:
        return "present (no hash recorded)"
    return "ok" if prov.sha256_file(path) == ref["sha256"] else "CHANGED since the table"


def _values(rows: list[dict[str, Any]], metric: str) -> dict[str, float]:
    out = {}
    for r in rows:
        v = r.get(metric)
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            out[str(r["case_id"])] = float(v)
    return out


def recompute(doc: Mapping[str, Any], cell: Mapping[str, Any], root: Path) -> dict[str, Any] | None:
    """The cell's mean (display scale) and n recomputed from the per-dialogue scores file,
    and the dialogues where the metric is missing; ``None`` where that does not apply."""
    if cell.get("kind") not in ("system", "delta") or not cell.get("systems"):
        return None
    scores = doc["run"].get("scores")
    if not scores or not (root / scores["path"]).is_file():
        return None
    from lecode.recordio import read_scores

    frame = read_scores(root / scores["path"])
    by_system: dict[str, list[dict[str, Any]]] = {}
    for r in frame.iter_rows(named=True):
        by_system.setdefault(f"{r['expert']}/{r['strategy']}", []).append(r)
    metric, scale = cell["metric"], float(cell.get("scale") or 1.0)
    refs = cell["systems"]
    rows = by_system.get(refs[0], [])
    own = _values(rows, metric)
    if cell["kind"] == "system":
        present = own
        values = list(own.values())
    else:
        other = _values(by_system.get(refs[1], []), metric) if len(refs) > 1 else {}
        present = {k: own[k] - other[k] for k in own if k in other}
        values = list(present.values())
    missing = [
        (str(r["case_id"]), str(r["stop_reason"])) for r in rows if str(r["case_id"]) not in present
    ]
    mean = None if not values else math.fsum(values) / len(values) * scale
    value = cell.get("value")
    agrees = (
        mean is None
        if value is None
        else mean is not None and abs(mean - float(value)) <= 2e-6 * max(1.0, abs(mean))
    )
    return {"mean": mean, "n": len(values), "missing": missing, "agrees": agrees}


# --------------------------------------------------------------------------- rendering


def _fmt(x: Any, digits: int = 6) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return str(x)


def _files(title: str, refs: Sequence[Mapping[str, Any]], root: Path, verify: bool) -> list[str]:
    if not refs:
        return [f"{title}: none"]
    total = sum(int(r.get("dialogues") or 0) for r in refs)
    head = f"{title} ({len(refs)} file{'s' * (len(refs) != 1)}"
    head += f", {total} dialogues)" if any("dialogues" in r for r in refs) else ")"
    lines = [head]
    pad = " " * (len(title) - len(title.lstrip()) + 2)
    for r in refs:
        state = f"  [{_state(r, root)}]" if verify else ""
        count = f"  {r['dialogues']} dialogues" if "dialogues" in r else ""
        lines.append(f"{pad}{r['path']}{count}\n{pad}  sha256 {r['sha256']}{state}")
    return lines


def _counts(d: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in d.items()) or "none"


def _model_lines(role: str, m: Mapping[str, Any]) -> list[str]:
    cfg = {k: v for k, v in (m.get("config") or {}).items()}
    lines = [f"  {role}: {m['name']} ({m.get('strategy') or '-'}), backend {m.get('backend')}"]
    lines.append(f"    configured: {json.dumps(cfg, ensure_ascii=False, sort_keys=True)}")
    for name, digest in (m.get("templates") or {}).items():
        lines.append(f"    prompt template {name}: sha256 {digest}")
    served = m.get("served")
    if served:
        lines.append(
            f"    as served ({served['stored_responses']} stored responses of this model "
            f"identity, store partition {served['partition']}):"
        )
        lines.append(f"      model ids: {_counts(served['served_models'])}")
        lines.append(f"      system fingerprints: {_counts(served['system_fingerprints'])}")
    return lines


def _stack_lines(stack: Mapping[str, Any]) -> list[str]:
    rouge = stack.get("rouge") or {}
    lines = [
        f"  jieba {stack.get('jieba')} (dictionary sha256 {stack.get('jieba_dict_sha256')})",
        f"  rouge-score {stack.get('rouge-score')} (ROUGE-L on {rouge.get('tokenizer')} tokens, "
        f"punctuation {rouge.get('punctuation')})",
    ]
    bert = stack.get("bertscore") or {}
    if bert.get("enabled") is False:
        lines.append("  BERTScore disabled")
    else:
        lines.append(
            f"  bert-score {stack.get('bert-score')}, transformers {stack.get('transformers')}, "
            f"torch {stack.get('torch')}"
        )
        lines.append(
            f"  BERTScore model {bert.get('model')} (sha256 {bert.get('model_sha256')}), "
            f"layer {bert.get('num_layers')}, idf {str(bert.get('idf')).lower()}, "
            f"rescaled {str(bert.get('rescale_with_baseline')).lower()}"
        )
    return lines


def _git_line(git: Mapping[str, Any]) -> str:
    if git.get("commit") is None:
        return "  not built inside a git repository (no commit recorded)"
    dirty = {True: "yes", False: "no"}.get(bool(git["dirty"]), "unknown")
    if git.get("dirty") is None:
        dirty = "unknown"
    return (
        f"  commit {git['commit']} (last change to {', '.join(git.get('scope') or [])}); "
        f"uncommitted changes: {dirty}"
    )


def _value_line(cell: Mapping[str, Any]) -> str:
    shown = str(cell.get("display") or _fmt(cell.get("value"))).replace("*", "")
    parts = [f"{shown} ({_fmt(cell.get('value'))})"]
    if cell.get("ci_low") is not None:
        parts.append(f"interval [{_fmt(cell['ci_low'], 4)}, {_fmt(cell['ci_high'], 4)}]")
    if cell.get("n") is not None:
        parts.append(f"n/N = {cell['n']}/{cell['N']}")
    if cell.get("rank") is not None:
        parts.append(f"rank {cell['rank']}")
    if cell.get("p_adjusted") is not None:
        parts.append(f"p {cell['p_value']}, Holm p {cell['p_adjusted']}")
    return "  ".join(parts)


def explain_cell(
    doc: Mapping[str, Any],
    cell: Mapping[str, Any],
    *,
    root: str | Path = ".",
    verify: bool = True,
) -> str:
    """The full, human-readable provenance of one cell."""
    root = Path(root)
    run = doc["run"]
    title = f"{doc['table']} · {cell['row']}"
    title += f" [{cell['setting']}]" if cell.get("setting") else ""
    title += f" · {cell['column']}" + (f" ({cell['metric']})" if cell.get("metric") else "")
    out = [
        title,
        "",
        "Value",
        "  " + _value_line(cell),
        "",
        "Aggregation",
        f"  {cell['aggregation']}",
    ]
    if verify:
        check = recompute(doc, cell, root)
        if check is not None:
            verdict = "matches the table" if check["agrees"] else "DOES NOT match the table"
            out.append(
                f"  recomputed from the per-dialogue scores: {_fmt(check['mean'])} over "
                f"{check['n']} dialogues ({verdict})"
            )
            if check["missing"]:
                listed = ", ".join(f"{c} ({why})" for c, why in check["missing"][:20])
                more = len(check["missing"]) - 20
                out.append(
                    f"  missing for {len(check['missing'])}: {listed}"
                    + (f" and {more} more" if more > 0 else "")
                )
    if run.get("scores"):
        out += ["", *_files("Per-dialogue scores (all systems)", [run["scores"]], root, verify)]
    for key in cell.get("systems") or []:
        s = (doc.get("systems") or {}).get(key)
        if s is None:
            continue
        out += ["", f"System {key} — {s.get('label')}"]
        hashes = s.get("config_hash") or {}
        if hashes:
            out.append("  configuration hashes (in the paths): " + _counts(hashes))
        check = s.get("params_check") or {}
        if check.get("reproduced") is True:
            out.append("  the recorded params and code give these hashes: yes")
        elif check.get("reproduced") is False:
            out.append(
                "  the recorded params and code give these hashes: NO (they give "
                f"{_counts(check.get('expected') or {})}; the files were made with other "
                "settings or code)"
            )
        elif check:
            out.append(f"  could not check the hashes: {check.get('error')}")
        out += _files("  per-dialogue scores of this system", s.get("scores") or [], root, verify)
        out += _files(
            f"  transcripts (stop reasons: {_counts(s.get('stop_reasons') or {})})",
            s.get("transcripts") or [],
            root,
            verify,
        )
        out += _files(
            f"  matches (status: {_counts(s.get('match_status') or {})})",
            s.get("matches") or [],
            root,
            verify,
        )
        if s.get("judgements"):
            out += _files(
                f"  judgements (status: {_counts(s.get('judge_status') or {})})",
                s["judgements"],
                root,
                verify,
            )
        else:
            out.append("  judgements: none (no judge configured)")
        store = s.get("store") or {}
        out.append("  LLM responses taken from the response store:")
        if not store:
            out.append("    none: no LLM call (offline agents only)")
        for role, u in store.items():
            out.append(f"    {role}: {u['from_store']} of {u['responses']} responses")
        out.append("  models:")
        for role, m in (s.get("models") or {}).items():
            out += ["  " + line for line in _model_lines(role, m)]
        reported = s.get("reported") or {}
        if reported:
            out.append("  recorded in the transcripts: " + json.dumps(reported, ensure_ascii=False))
    dataset = run.get("dataset") or {}
    if dataset:
        out += ["", "Dataset"]
        for name in ("test", "train"):
            if name in dataset:
                state = f"  [{_state(dataset[name], root)}]" if verify else ""
                out.append(
                    f"  {name}: {dataset[name]['path']}\n    sha256 "
                    f"{dataset[name]['sha256']}{state}"
                )
        shards = dataset.get("shards")
        if shards:
            state = f"  [{_state(shards, root)}]" if verify else ""
            out.append(
                f"  shards: {shards['path']} (shard set {shards.get('shard_set')}, "
                f"{shards.get('n_cases')} cases in {shards.get('n_shards')} shards, "
                f"limit {shards.get('limit')})\n    sha256 {shards['sha256']}{state}"
            )
    if run.get("paper") and cell.get("kind") in ("paper", "offset"):
        out += ["", *_files("Published numbers", [run["paper"]], root, verify)]
    out += ["", f"Parameters (subset; from the {run.get('params_source', 'configuration')})"]
    text = yaml.safe_dump(run.get("params") or {}, allow_unicode=True, sort_keys=True, width=96)
    out += ["  " + line for line in text.rstrip().splitlines()]
    out += ["", "Code", _git_line(run.get("git") or {})]
    out += [
        "",
        "Metric stack (when the table was built)",
        *_stack_lines(run.get("metric_stack") or {}),
    ]
    return "\n".join(out) + "\n"


def summary_text(doc: Mapping[str, Any], cell: Mapping[str, Any]) -> str:
    """A short provenance of one cell (the HTML report shows it on hover and click)."""
    run = doc["run"]
    lines = [
        f"{cell['row']}{' [' + cell['setting'] + ']' if cell.get('setting') else ''} · "
        f"{cell['column']}: {_value_line(cell)}",
        cell["aggregation"],
    ]
    if run.get("scores"):
        lines.append(f"scores {run['scores']['path']} sha256 {run['scores']['sha256'][:16]}…")
    for key in cell.get("systems") or []:
        s = (doc.get("systems") or {}).get(key)
        if s is None:
            continue
        n_t = sum(int(r.get("dialogues") or 0) for r in s.get("transcripts") or [])
        store = "; ".join(
            f"{r} {u['from_store']}/{u['responses']} from store"
            for r, u in (s.get("store") or {}).items()
        )
        lines.append(
            f"{key}: {len(s.get('transcripts') or [])} transcript files ({n_t} dialogues), "
            f"{len(s.get('matches') or [])} match files"
            + (f"; {store}" if store else "; no LLM call")
        )
        for role, m in (s.get("models") or {}).items():
            served = m.get("served") or {}
            extra = ""
            if served:
                extra = (
                    f"; served {', '.join(served['served_models'])}; fingerprints "
                    f"{', '.join(served['system_fingerprints'])}"
                )
            lines.append(f"  {role} {m['name']} ({m.get('backend')}){extra}")
    dataset = run.get("dataset") or {}
    if "test" in dataset:
        lines.append(f"test {dataset['test']['path']} sha256 {dataset['test']['sha256'][:16]}…")
    git = run.get("git") or {}
    if git.get("commit"):
        lines.append(f"git {git['commit'][:12]}{' (dirty)' if git.get('dirty') else ''}")
    stack = run.get("metric_stack") or {}
    bert = stack.get("bertscore") or {}
    lines.append(
        f"jieba {stack.get('jieba')}, rouge-score {stack.get('rouge-score')}, bert-score "
        f"{stack.get('bert-score')}, model {bert.get('model')} layer {bert.get('num_layers')}"
    )
    lines.append(f'lecode explain {doc["table"]} "{cell["row"]}" {cell["column"]}')
    return "\n".join(lines)


def html_summaries(tables_dir: str | Path) -> dict[str, str]:
    """``{cell id: summary}`` for every cell with provenance under ``tables_dir``."""
    out: dict[str, str] = {}
    for doc in prov.load_all(tables_dir).values():
        for cell in doc["cells"]:
            out[cell["id"]] = summary_text(doc, cell)
    return out


# --------------------------------------------------------------------------- --case


def _find_case(shards_index: Path, case_id: str) -> Any:
    from lecode.recordio import read_cases

    for path in sorted(shards_index.parent.glob("*.jsonl")):
        for case in read_cases(path):
            if case.id == case_id:
                return case, path
    return None, None


def explain_case(
    doc: Mapping[str, Any], case_id: str, *, system: str | None = None, root: str | Path = "."
) -> str:
    """One consultation for every system of ``doc`` (or one): transcript, the facts each
    question elicited, and the dialogue's scores."""
    from lecode.recordio import read_matches, read_scores, read_transcripts
    from lecode.report.spec import METRICS

    root = Path(root)
    run = doc["run"]
    shards = (run.get("dataset") or {}).get("shards")
    case, shard = (None, None)
    if shards:
        case, shard = _find_case(root / shards["path"], case_id)
    if case is None:
        raise ExplainError(f"case {case_id!r} is not in the evaluated test shards")
    systems = doc.get("systems") or {}
    keys = [system] if system else list(systems)
    unknown = [k for k in keys if k not in systems]
    if unknown:
        raise ExplainError(f"no system {unknown[0]!r}; systems: {_choices(list(systems))}")
    score_rows: dict[str, dict[str, Any]] = {}
    if run.get("scores") and (root / run["scores"]["path"]).is_file():
        for r in read_scores(root / run["scores"]["path"]).iter_rows(named=True):
            if r["case_id"] == case_id:
                score_rows[f"{r['expert']}/{r['strategy']}"] = r
    out = [f"Case {case.id} · {case.n_facts} facts · shard {shard}"]
    if case.case_type or case.charge_type:
        out.append(f"Type: {', '.join(case.case_type)}; charges: {', '.join(case.charge_type)}")
    out += ["", "Facts (importance 1-3):"]
    out += [
        f"  [{i}] (w{w}) {f}"
        for i, (f, w) in enumerate(zip(case.facts, case.importance, strict=True))
    ]
    out += ["", "Reference advice:", f"  {case.suggestion}"]
    for key in keys:
        s = systems[key]
        t = next(
            (
                t
                for p in s.get("transcripts") or []
                for t in read_transcripts(root / p["path"])
                if t.case_id == case_id
            ),
            None,
        )
        m = next(
            (
                m
                for p in s.get("matches") or []
                for m in read_matches(root / p["path"])
                if m.case_id == case_id
            ),
            None,
        )
        out += ["", f"== {key} — {s.get('label')} =="]
        if t is None:
            out.append("  no transcript for this case")
            continue
        out.append(f"  stop reason: {t.stop_reason}" + (f" ({t.error})" if t.error else ""))
        per_q = list(m.per_question) if m is not None and m.status == "ok" else None
        if m is not None and m.status != "ok":
            out.append(f"  matching failed: {m.error}")
        seen: set[int] = set()
        q = 0
        for k, turn in enumerate(t.turns):
            if turn.kind == "question":
                q += 1
                out.append(f"  lawyer  Q{q}: {turn.text}")
                nxt = t.turns[k + 1] if k + 1 < len(t.turns) else None
                if nxt is not None and nxt.kind == "answer":
                    continue
            elif turn.kind == "answer":
                out.append(f"  client  A{q}: {turn.text}")
            else:
                who = "client" if turn.speaker == "client" else "lawyer"
                out.append(f"  {who}  {turn.kind}: {turn.text}")
                continue
            if per_q is not None and 1 <= q <= len(per_q):
                found = list(per_q[q - 1])
                new = [i for i in found if i not in seen]
                seen.update(found)
                facts = ", ".join(f"[{i}]" + ("" if i in new else " (again)") for i in found)
                out.append(f"          → facts {facts or 'none'}")
        if per_q is not None:
            missed = [i for i in range(case.n_facts) if i not in seen]
            out.append(
                f"  elicited {len(seen)} of {case.n_facts} facts: "
                f"{', '.join(map(str, sorted(seen))) or 'none'}; missed: "
                f"{', '.join(map(str, missed)) or 'none'}"
            )
        row = score_rows.get(key)
        if row is not None:
            vals = []
            for metric in METRICS:
                v = row.get(metric.key)
                shown = "—" if v is None else f"{float(v) * metric.scale:.1f}"
                vals.append(f"{metric.display_header} {shown}")
            out.append("  scores: " + "  ".join(vals))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- command line


def _cmd_explain(args: argparse.Namespace) -> int:
    import sys

    tables = Path(args.tables)
    try:
        if args.case:
            doc = prov.load(tables, args.table or "table3")
            print(explain_case(doc, args.case, system=args.system, root=args.root), end="")
            return 0
        if not (args.table and args.row and args.column):
            print("lecode explain: give TABLE ROW COLUMN, or --case ID", file=sys.stderr)
            return 2
        doc = prov.load(tables, args.table)
        cell = find_cell(doc, args.row, args.column, args.setting)
    except (ExplainError, FileNotFoundError) as exc:
        print(f"lecode explain: {exc}", file=sys.stderr)
        return 2
    if args.json:
        record = {
            "cell": cell,
            "systems": {
                k: doc["systems"][k]
                for k in cell.get("systems") or []
                if k in doc.get("systems", {})
            },
            "run": doc["run"],
            "table_files": doc.get("files"),
        }
        if not args.no_verify:
            record["check"] = recompute(doc, cell, Path(args.root))
        print(json.dumps(record, ensure_ascii=False, indent=1))
    else:
        print(explain_cell(doc, cell, root=args.root, verify=not args.no_verify), end="")
    return 0


def register(sub: Any) -> None:
    """Add ``explain`` to the ``lecode`` command's subparsers."""
    p = sub.add_parser(
        "explain",
        help="how a reported number was produced (inputs, hashes, models, params, code)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("table", nargs="?", help="table name, e.g. table3, paired, table6, table2")
    p.add_argument("row", nargs="?", help="row label, expert/strategy, or expert")
    p.add_argument("column", nargs="?", help="column header (WR, AT) or metric key")
    p.add_argument("--setting", help="second row key in Tables 6/7 and the comparison (ZS, FS)")
    p.add_argument("--case", metavar="ID", help="show one consultation instead of a cell")
    p.add_argument("--system", metavar="EXPERT/STRATEGY", help="with --case: only this system")
    p.add_argument("--tables", default=DEFAULT_TABLES, help="tables folder (reports/tables)")
    p.add_argument("--root", default=".", help="project root the recorded paths are relative to")
    p.add_argument("--json", action="store_true", help="print the cell's provenance as JSON")
    p.add_argument(
        "--no-verify", action="store_true", help="do not rehash files or recompute the value"
    )
    p.set_defaults(func=_cmd_explain)
