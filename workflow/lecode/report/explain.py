"""``lecode explain``: how a reported number was produced, and one consultation in full.

``lecode explain table3 "human_replay/baseline" WR`` reads ``reports/tables/table3.provenance.json``
(the document the table was written from, see :mod:`lecode.report.document`) and prints the
cell's value and n/N, the aggregation, the spec digests of the jobs behind it, every input file
with its recorded sha256 (and whether the file on disk still has it), how many LLM responses
came from the response store, the roles' model entries and what they reported, the dataset, the
report settings, the git state and the package versions. It also recomputes the cell's mean
from the per-dialogue scores.

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

from pydantic import TypeAdapter

from lecode.report.document import DocumentError, SystemInfo, TableDocument, load
from lecode.report.model import FROM_PAPER, FROM_SCORES, Cell, Row
from lecode.report.served import served_lines
from lecode.specs import file_sha256

DEFAULT_TABLES = "reports/tables"


class ExplainError(ValueError):
    """The table, row, column or case does not exist; the message lists what does."""


# --------------------------------------------------------------------------- lookup


def _norm(text: str) -> str:
    return " ".join(text.replace("↓", "").split()).casefold()


def _choices(values: Sequence[str]) -> str:
    return ", ".join(repr(v) for v in dict.fromkeys(values))


def _row_keys(doc: TableDocument, row: Row) -> set[str]:
    keys = {_norm(row.label)}
    if row.key:
        keys.add(_norm(row.key))
    if row.delta_of is not None and row.kind == "delta":
        keys.add(_norm(" − ".join(row.delta_of)))
        keys.add(_norm(" - ".join(row.delta_of)))
    elif len(row.systems) == 1:
        keys.add(_norm(row.systems[0]))
        info = doc.systems.get(row.systems[0])
        if info is not None:
            keys.add(_norm(info.system.expert))
    return keys


def _column_keys(doc: TableDocument, cell: Cell) -> set[str]:
    col = doc.column(cell.column)
    return {_norm(col.key), _norm(col.header), _norm(col.name or col.key)}


def find_cell(doc: TableDocument, row: str, column: str, setting: str | None = None) -> Cell:
    """The cell of ``doc`` at ``row`` (label, ``expert/strategy``, expert, a difference's
    ``a − b`` or a statistic's key) and ``column`` (header such as ``WR`` or ``AT↓``, or key
    such as ``weighted_recall``)."""
    want = _norm(row)
    by_row = [(r, c) for r, c in doc.cells() if want in _row_keys(doc, r)]
    if not by_row:
        raise ExplainError(
            f"{doc.table}: no row {row!r}; rows: {_choices([r.label for r in doc.rows])}"
        )
    if setting is not None:
        by_row = [(r, c) for r, c in by_row if _norm(r.setting) == _norm(setting)]
        if not by_row:
            raise ExplainError(f"{doc.table}: row {row!r} has no setting {setting!r}")
    col = _norm(column)
    found = [(r, c) for r, c in by_row if col in _column_keys(doc, c)]
    if not found:
        headers = [doc.column(c.column).header for _, c in by_row]
        raise ExplainError(f"{doc.table}: no column {column!r}; columns: {_choices(headers)}")
    if len({(r.label, r.setting) for r, _ in found}) > 1:
        opts = [f"{r.label} [{r.setting or '-'}]" for r, _ in found]
        raise ExplainError(
            f"{doc.table}: {row!r} matches several rows ({', '.join(opts)}); "
            "name the row by its label or pass --setting"
        )
    return found[0][1]


def row_of(doc: TableDocument, cell: Cell) -> Row:
    return next(r for r in doc.rows if any(c.id == cell.id for c in r.cells))


# --------------------------------------------------------------------------- checks


def _state(path: str, sha256: str, root: Path) -> str:
    """``ok``, ``CHANGED since the table`` or ``missing``: the file against its sha256."""
    p = root / path
    if not p.is_file():
        return "missing"
    return "ok" if file_sha256(p) == sha256 else "CHANGED since the table"


def _values(rows: list[dict[str, Any]], metric: str) -> dict[str, float]:
    out = {}
    for r in rows:
        v = r.get(metric)
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            out[str(r["case_id"])] = float(v)
    return out


def _mean(values: list[float]) -> float | None:
    return None if not values else math.fsum(values) / len(values)


def _present(row: Mapping[str, Any], key: str) -> bool:
    v = row.get(key)
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def need_met(metric: Any, row: Mapping[str, Any]) -> bool:
    """Whether a scored dialogue meets ``metric``'s need, as its scores show it (as the
    tables count it: :func:`lecode.report.results.need_met`)."""
    from lecode.metrics.registry import need_witness

    stop = str(row["stop_reason"])
    if stop == "error":
        return False
    if metric.need in ("advice", "judgement") and stop != "advice":
        return False
    if metric.need == "dialogue":
        return True
    witness = need_witness(metric.need)
    return witness is not None and _present(row, witness)


def missing_reason(metric: Any, row: Mapping[str, Any]) -> str:
    """Why ``metric`` is missing in a scored dialogue, in its declaration's words."""
    met = need_met(metric, row) if metric.not_applicable else None
    return str(metric.missing_reason(str(row["stop_reason"]), need_met=met))


def recompute(doc: TableDocument, cell: Cell, root: Path) -> dict[str, Any] | None:
    """The cell's number (display scale) and n recomputed from the per-dialogue scores, and
    the dialogues where the metric is missing, for the aggregations of a score column
    (:data:`lecode.report.model.FROM_SCORES`); ``None`` for the others or without the scores.

    ``mean``: over the row's system; ``paired_difference``: ``a − b`` per dialogue both have,
    then the mean; ``cell_difference``: ``a``'s mean minus ``b``'s, each over its own
    dialogues (n: the smaller count).
    """
    row = row_of(doc, cell)
    if cell.aggregation not in FROM_SCORES or doc.run is None:
        return None
    path = root / doc.run.aggregate.path
    if not path.is_file():
        return None
    from lecode.metrics.registry import find
    from lecode.report.spec import system_key
    from lecode.score_io import read_scores

    by_system: dict[str, list[dict[str, Any]]] = {}
    for r in read_scores(path).iter_rows(named=True):
        by_system.setdefault(system_key(r["expert"], r["strategy"]), []).append(r)
    column = doc.column(cell.column)
    metric, scale = column.metric_key, float(column.scale or 1.0)
    if cell.aggregation in ("mean", "group_mean"):
        rows = by_system.get(row.systems[0], [])
        group = column.group()
        if group is not None:
            rows = [r for r in rows if _in_group(group, r.get(column.group_by or ""))]
        present = _values(rows, metric)
        mean, n = _mean(list(present.values())), len(present)
    else:
        if row.delta_of is None:
            raise ExplainError(f"{cell.id}: a {cell.aggregation} names no (a, b)")
        a, b = row.delta_of
        rows = by_system.get(a, [])
        own, other = _values(rows, metric), _values(by_system.get(b, []), metric)
        if cell.aggregation == "paired_difference":
            present = {k: own[k] - other[k] for k in own if k in other}
            mean, n = _mean(list(present.values())), len(present)
        else:
            present = own
            mean_a, mean_b = _mean(list(own.values())), _mean(list(other.values()))
            mean = None if mean_a is None or mean_b is None else mean_a - mean_b
            n = min(len(own), len(other))
    declared = find(metric)
    missing = [
        (
            str(r["case_id"]),
            str(r["stop_reason"]) if declared is None else missing_reason(declared, r),
        )
        for r in rows
        if str(r["case_id"]) not in present
    ]
    mean = None if mean is None else mean * scale
    value = cell.value
    agrees = (
        mean is None
        if value is None
        else mean is not None and abs(mean - float(value)) <= 2e-6 * max(1.0, abs(mean))
    )
    return {"mean": mean, "n": n, "missing": missing, "agrees": agrees}


def _in_group(group: Any, value: Any) -> bool:
    if value is None:
        return False
    if group.value is not None:
        return str(value) == group.value
    return bool(group.lo <= value and (group.hi is None or value <= group.hi))


# --------------------------------------------------------------------------- rendering


def _fmt(x: Any, digits: int = 6) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return str(x)


def _file_lines(pad: str, path: str, sha256: str, extra: str, root: Path, verify: bool) -> str:
    state = f"  [{_state(path, sha256, root)}]" if verify else ""
    return f"{pad}{path}{extra}\n{pad}  sha256 {sha256}{state}"


def _records(title: str, refs: Sequence[Any], root: Path, verify: bool) -> list[str]:
    if not refs:
        return [f"{title}: none"]
    total = sum(r.records for r in refs)
    lines = [f"{title} ({len(refs)} file{'s' * (len(refs) != 1)}, {total} records)"]
    pad = " " * (len(title) - len(title.lstrip()) + 2)
    for r in refs:
        lines.append(_file_lines(pad, r.path, r.sha256, f"  {r.records} records", root, verify))
    return lines


def _counts(d: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in d.items()) or "none"


def _value_line(cell: Cell) -> str:
    parts = [f"{cell.display.replace('*', '')} ({_fmt(cell.value)})"]
    if cell.ci_low is not None:
        parts.append(f"interval [{_fmt(cell.ci_low, 4)}, {_fmt(cell.ci_high, 4)}]")
    if cell.n is not None:
        parts.append(f"n/N = {cell.n}/{cell.N}")
    if cell.n_na:
        parts.append(f"does not apply to {cell.n_na} (n/a, not failures)")
    if cell.status == "empty":
        parts.append("(no dialogue in this group)")
    if cell.rank is not None:
        parts.append(f"rank {cell.rank}")
    if cell.p_adjusted is not None:
        parts.append(f"p {cell.p_value}, Holm p {cell.p_adjusted}")
    if not cell.applicable:
        parts.append("(does not apply)")
    return "  ".join(parts)


def _title(doc: TableDocument, cell: Cell) -> str:
    row = row_of(doc, cell)
    column = doc.column(cell.column)
    title = f"{doc.table} · {row.label}" + (f" [{row.setting}]" if row.setting else "")
    return (
        title + f" · {column.header}" + (f" ({column.key})" if column.key != column.header else "")
    )


def _system_lines(key: str, s: SystemInfo, root: Path, verify: bool) -> list[str]:
    out = [f"System {key} — {s.system.label} ({s.system.group})"]
    if s.jobs is not None:
        j = s.jobs
        out.append(
            f"  job spec digests: simulate {j.simulate}, match {j.match}, "
            f"judge {j.judge or 'none'}, score {j.score}"
        )
    if s.files is not None:
        f = s.files
        out.append("  per-dialogue scores of this system")
        out.append(_file_lines("    ", f.score.path, f.score.sha256, "", root, verify))
        out += _records(
            f"  transcripts (stop reasons: {_counts(s.stop_reasons)})", f.transcripts, root, verify
        )
        out += _records(f"  matches (status: {_counts(s.match_status)})", f.matches, root, verify)
        if f.judgements:
            out += _records(
                f"  judgements (status: {_counts(s.judge_status)})", f.judgements, root, verify
            )
        else:
            out.append("  judgements: none (no judge configured)")
    out.append("  LLM responses taken from the response store:")
    if not s.store:
        out.append("    none: no LLM call (offline agents only)")
    for role, u in s.store.items():
        out.append(f"    {role}: {u.from_store} of {u.responses} responses")
    if s.roles:
        out.append("  models (as they enter the job digests):")
    for role, r in s.roles.items():
        strategy = f" ({r.strategy})" if r.strategy else ""
        out.append(f"    {role}: {r.model}{strategy}")
        out.append(f"      {json.dumps(r.entry, ensure_ascii=False, sort_keys=True)}")
    if s.reported:
        out.append("  reported by the roles in the transcripts:")
        out += [f"    {k}: {v}" for k, v in s.reported.items()]
    if s.served:
        out.append("  model ids and system fingerprints the replies named, counted:")
        out += [f"    {line}" for line in served_lines(s.served)]
    return out


def explain_cell(
    doc: TableDocument, cell: Cell, *, root: str | Path = ".", verify: bool = True
) -> str:
    """The full, human-readable provenance of one cell."""
    root = Path(root)
    run = doc.run
    out = [_title(doc, cell), "", "Value", "  " + _value_line(cell), "", "Aggregation"]
    out.append(f"  {cell.description}")
    row = row_of(doc, cell)
    if row.delta_of is not None:
        out.append(f"  difference {row.delta_of[0]} − {row.delta_of[1]}")
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
    if doc.spec_digest:
        out.append(f"  built by the tables job with spec digest {doc.spec_digest}")
    if run is not None:
        out += ["", "Per-dialogue scores (all systems)"]
        out.append(_file_lines("  ", run.aggregate.path, run.aggregate.sha256, "", root, verify))
    for key in row.systems:
        s = doc.systems.get(key)
        if s is not None:
            out += ["", *_system_lines(key, s, root, verify)]
    if run is None:
        return "\n".join(out) + "\n"
    d = run.dataset
    out += ["", "Dataset"]
    for name, ref in (("test", d.test), ("train", d.train), ("shard index", d.index)):
        out.append(_file_lines("  ", ref.path, ref.sha256, f" ({name})", root, verify))
    out.append(
        f"  {d.n_cases} test cases in {len(d.shards)} shards"
        + (f" (first {d.limit} by id hash)" if d.limit else "")
    )
    if verify:
        bad = [s.path for s in d.shards if _state(s.path, s.sha256, root) != "ok"]
        out.append(f"  shards changed or missing: {', '.join(bad)}" if bad else "  shards: ok")
    if cell.aggregation in FROM_PAPER:
        out += ["", "Published numbers"]
        out.append(_file_lines("  ", run.paper.path, run.paper.sha256, "", root, verify))
    out += ["", "Report settings"]
    out.append("  " + json.dumps(run.settings.model_dump(mode="json"), sort_keys=True))
    out += ["", "Code", _git_line(run)]
    out += ["", "Packages", "  " + _counts(run.packages)]
    return "\n".join(out) + "\n"


def _git_line(run: Any) -> str:
    git = run.git
    if git.commit is None:
        return "  not built inside a git repository (no commit recorded)"
    dirty = {True: "yes", False: "no", None: "unknown"}[git.dirty]
    return (
        f"  commit {git.commit} (last change to {', '.join(git.scope)}); "
        f"uncommitted changes: {dirty}"
    )


def summary_text(doc: TableDocument, cell: Cell) -> str:
    """A short provenance of one cell (the HTML report shows it on hover and click)."""
    row = row_of(doc, cell)
    column = doc.column(cell.column)
    head = row.label + (f" [{row.setting}]" if row.setting else "")
    lines = [f"{head} · {column.header}: {_value_line(cell)}", cell.description]
    run = doc.run
    if run is not None:
        lines.append(f"scores {run.aggregate.path} sha256 {run.aggregate.sha256[:16]}…")
    for key in row.systems:
        s = doc.systems.get(key)
        if s is None:
            continue
        if s.files is not None:
            n_t = sum(f.records for f in s.files.transcripts)
            store = "; ".join(
                f"{r} {u.from_store}/{u.responses} from store" for r, u in s.store.items()
            )
            lines.append(
                f"{key}: {len(s.files.transcripts)} transcript files ({n_t} dialogues), "
                f"{len(s.files.matches)} match files" + (f"; {store}" if store else "; no LLM call")
            )
        if s.jobs is not None:
            lines.append(f"  simulate {s.jobs.simulate}, score {s.jobs.score}")
        for role, r in s.roles.items():
            lines.append(f"  {role} {r.model} ({r.entry.get('backend')})")
        served = {
            k: v
            for k, v in s.reported.items()
            if k.endswith(("reported_model", "system_fingerprint"))
        }
        if served:
            lines.append("  reported " + "; ".join(f"{k} {v}" for k, v in served.items()))
        lines += [f"  replies: {line}" for line in served_lines(s.served)]
    if run is not None:
        lines.append(f"test {run.dataset.test.path} sha256 {run.dataset.test.sha256[:16]}…")
        if run.git.commit:
            lines.append(f"git {run.git.commit[:12]}{' (dirty)' if run.git.dirty else ''}")
    lines.append(
        f'lecode explain {doc.table} "{row.label}" {column.header}'
        + (f' --setting "{row.setting}"' if row.setting else "")
    )
    return "\n".join(lines)


def html_summaries(docs: Mapping[str, TableDocument]) -> dict[str, str]:
    """``{cell id: summary}`` for every cell of ``docs``."""
    return {c.id: summary_text(doc, c) for doc in docs.values() for _, c in doc.cells()}


# --------------------------------------------------------------------------- --case


def explain_case(
    doc: TableDocument, case_id: str, *, system: str | None = None, root: str | Path = "."
) -> str:
    """One consultation for every system of ``doc`` (or one): transcript, the facts each
    question elicited, and the dialogue's scores."""
    from lecode.metrics.registry import with_tag
    from lecode.recordio import read_cases, read_matches, read_transcripts
    from lecode.report.spec import system_key
    from lecode.score_io import read_scores

    root = Path(root)
    run = doc.run
    if run is None:
        raise ExplainError(f"{doc.table}: the document names no input files")
    case, shard = None, None
    for ref in run.dataset.shards:
        found = [c for c in read_cases(root / ref.path) if c.id == case_id]
        if found:
            case, shard = found[0], ref.path
            break
    if case is None:
        raise ExplainError(f"case {case_id!r} is not in the evaluated test shards")
    keys = [system] if system else list(doc.systems)
    unknown = [k for k in keys if k not in doc.systems]
    if unknown:
        raise ExplainError(f"no system {unknown[0]!r}; systems: {_choices(list(doc.systems))}")
    score_rows: dict[str, dict[str, Any]] = {}
    if (root / run.aggregate.path).is_file():
        for r in read_scores(root / run.aggregate.path).iter_rows(named=True):
            if r["case_id"] == case_id:
                score_rows[system_key(r["expert"], r["strategy"])] = r
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
        s = doc.systems[key]
        files = s.files
        t = next(
            (
                t
                for p in (files.transcripts if files else ())
                for t in read_transcripts(root / p.path)
                if t.case_id == case_id
            ),
            None,
        )
        m = next(
            (
                m
                for p in (files.matches if files else ())
                for m in read_matches(root / p.path)
                if m.case_id == case_id
            ),
            None,
        )
        out += ["", f"== {key} — {s.system.label} =="]
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
                found_facts = list(per_q[q - 1])
                new = [i for i in found_facts if i not in seen]
                seen.update(found_facts)
                facts = ", ".join(f"[{i}]" + ("" if i in new else " (again)") for i in found_facts)
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
            vals: list[str] = []
            why: dict[str, list[str]] = {}
            for metric in with_tag("table3"):
                v = row.get(metric.key)
                shown = "—" if v is None else f"{float(v) * metric.scale:.{metric.digits}f}"
                vals.append(f"{metric.display_header} {shown}")
                if v is None:
                    reason = missing_reason(metric, row)
                    why.setdefault(reason, []).append(metric.header)
            out.append("  scores: " + "  ".join(vals))
            if why:
                parts = [f"{', '.join(hs)}: {reason}" for reason, hs in why.items()]
                out.append("  missing: " + "; ".join(parts))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- command line


def _cmd_explain(args: argparse.Namespace) -> int:
    import sys

    tables = Path(args.tables)
    try:
        if args.case:
            doc = load(tables, args.table or "table3")
            print(explain_case(doc, args.case, system=args.system, root=args.root), end="")
            return 0
        if not (args.table and args.row and args.column):
            print("lecode explain: give TABLE ROW COLUMN, or --case ID", file=sys.stderr)
            return 2
        doc = load(tables, args.table)
        cell = find_cell(doc, args.row, args.column, args.setting)
    except (ExplainError, DocumentError) as exc:
        print(f"lecode explain: {exc}", file=sys.stderr)
        return 2
    if args.json:
        row = row_of(doc, cell)
        record: dict[str, Any] = {
            "table": doc.table,
            "spec_digest": doc.spec_digest,
            "cell": {
                **TypeAdapter(Cell).dump_python(cell, mode="json"),
                "systems": list(row.systems),
                "delta_of": None if row.delta_of is None else list(row.delta_of),
            },
            "systems": {
                k: doc.systems[k].model_dump(mode="json") for k in row.systems if k in doc.systems
            },
            "run": None if doc.run is None else doc.run.model_dump(mode="json"),
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
        help="how a reported number was produced (jobs, inputs, hashes, models, code)",
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
