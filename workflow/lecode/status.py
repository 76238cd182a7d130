"""``lecode status``: how far the configured experiment is, also while a run is in progress.

Per system (expert x strategy), from the files the workflow writes as it goes:

- **dialogues** done / total: the test cases (after ``dataset.limit``) finished in the system's
  dialogue journal (``store/dialogues/<expert>/<strategy>/<simulate digest>.jsonl``,
  :meth:`lecode.evaluation.plan.EvaluationPlan.journal`), which every simulate job appends
  to as each dialogue ends;
- **shards** with their transcripts, matches and judgements written (``-`` without a judge);
- **failed**: failures by kind (:func:`lecode.progress.failure_kind`): dialogues of the journal
  that ended in ``parse_error``, dialogues of finished transcript shards that ended in an
  ``error`` (these are never journaled), matches and judgements of finished shards without a
  result (prefixed ``match:`` / ``judge:``);
- **spent**: the cost recorded in the usage of those dialogues, matches and judgements (a
  store hit counts what the stored response cost), against **forecast**, the upper bound that
  ``lecode forecast`` gives for the system (its expert, the client, matcher and judge).

Then the shard jobs Snakemake is running: its ``.snakemake/incomplete`` markers (one per
output of a started, unfinished job) with the last ``progress`` line of each job's log, and
whether a Snakemake process holds the working directory's lock. Snakemake's lock files name
no process, and a run killed with ``kill -9`` leaves them behind: the lock counts as held only
while a Snakemake process works in this directory (its command names ``snakemake``, its working
directory is this one; read from ``/proc``). Lock files without one are *stale*: status says so
and what to do (``snakemake --unlock``), and the incomplete markers are those of the
interrupted run.
"""

from __future__ import annotations

import base64
import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lecode import paths
from lecode.progress import PREFIX, failure_kind

if TYPE_CHECKING:
    from lecode.config.experiment import Settings


@dataclass
class SystemStatus:
    label: str
    expert: str
    strategy: str
    total: int
    done: int = 0
    shards: int = 0
    transcripts: int = 0
    matches: int = 0
    judgements: int | None = None  # None: no judge configured
    failed: Counter[str] = field(default_factory=Counter)
    spent: float = 0.0
    forecast: float | None = None


@dataclass
class RunningJob:
    step: str  # simulate | match | judge
    output: str
    system: str
    shard: str
    last_progress: str | None


@dataclass
class Status:
    params: str
    cases: int
    n_shards: int
    systems: list[SystemStatus]
    running: list[RunningJob]
    locked: bool  # lock files exist under .snakemake/locks
    holders: list[int] = field(default_factory=list)  # PIDs of Snakemake processes working here

    @property
    def lock_stale(self) -> bool:
        """Lock files that no live Snakemake process holds (a killed run left them)."""
        return self.locked and not self.holders


@dataclass
class _Entry:
    """What status needs of one record: its case, outcome and cost."""

    case_id: str
    outcome: str  # stop_reason (transcripts) or status (matches, judgements)
    error: str | None
    cost: float


def _entry(line: bytes, outcome_field: str) -> _Entry | None:
    try:
        d = json.loads(line)
        usage = d.get("usage") or {}
        return _Entry(
            case_id=str(d["case_id"]),
            outcome=str(d[outcome_field]),
            error=d.get("error"),
            cost=sum(float((u or {}).get("cost") or 0.0) for u in usage.values()),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # a torn or invalid line (the journal's reader warns about those)


class Reader:
    """Reads journals and finished outputs, remembering what it read: a journal is
    append-only, so the next read (``--watch``) parses only the lines added since; a finished
    output is written once (atomically), so it is parsed again only when it changed. Lines are
    read with ``json`` (not the typed records): a status of a large run must stay quick."""

    def __init__(self) -> None:
        # journal path -> (bytes consumed, case id -> entry)
        self._journals: dict[str, tuple[int, dict[str, _Entry]]] = {}
        # output path -> ((size, mtime), entries)
        self._files: dict[str, tuple[tuple[int, int], list[_Entry]]] = {}

    def journal(self, path: str) -> dict[str, _Entry]:
        """The journal's entries by case id (a later line for a case wins)."""
        offset, entries = self._journals.get(path, (0, {}))
        try:
            size = os.path.getsize(path)
        except OSError:
            return {}
        if size < offset:  # rewritten: read it again
            offset, entries = 0, {}
        if size > offset:
            with open(path, "rb") as fh:
                fh.seek(offset)
                data = fh.read(size - offset)
            end = data.rfind(b"\n") + 1  # a last line without its newline may still grow
            for line in data[:end].split(b"\n"):
                if line.strip():
                    e = _entry(line, "stop_reason")
                    if e is not None:
                        entries[e.case_id] = e
            offset += end
        self._journals[path] = (offset, entries)
        return entries

    def output(self, path: str, outcome_field: str) -> list[_Entry] | None:
        """The entries of a finished output, ``None`` when it does not exist (yet)."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        stamp = (st.st_size, st.st_mtime_ns)
        cached = self._files.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        with open(path, "rb") as fh:
            lines = fh.read().split(b"\n")
        entries = [e for ln in lines if ln.strip() if (e := _entry(ln, outcome_field))]
        self._files[path] = (stamp, entries)
        return entries


def system_status(
    plan: Any,
    system: Any,
    case_ids: set[str],
    forecast: float | None = None,
    reader: Reader | None = None,
) -> SystemStatus:
    """The status of one system of ``plan`` (:class:`lecode.evaluation.plan.EvaluationPlan`)."""
    reader = reader or Reader()
    e, s = system.expert, system.strategy
    st = SystemStatus(
        label=system.label,
        expert=e,
        strategy=s,
        total=len(case_ids),
        shards=len(plan.shards),
        judgements=0 if plan.jcfg else None,
        forecast=forecast,
    )
    for case_id, t in reader.journal(plan.journal(e, s)).items():
        if case_id not in case_ids:
            continue
        st.done += 1
        st.spent += t.cost
        kind = failure_kind(t.outcome, t.error)
        if kind:
            st.failed[kind] += 1
    for shard in plan.shards:
        transcripts = reader.output(plan.transcript(e, s, shard), "stop_reason")
        if transcripts is not None:
            st.transcripts += 1
            for t in transcripts:  # failed dialogues are in the shard, never in the journal
                if t.outcome == "error" and t.case_id in case_ids:
                    st.spent += t.cost
                    st.failed[failure_kind(t.outcome, t.error) or "error"] += 1
        matches = reader.output(plan.match(e, s, shard), "status")
        if matches is not None:
            st.matches += 1
            for m in matches:
                st.spent += m.cost
                kind = failure_kind(m.outcome, m.error)
                if kind and m.error != "the dialogue itself failed":  # counted as a dialogue
                    st.failed[f"match:{kind}"] += 1
        if plan.jcfg:
            judgements = reader.output(plan.judgement(e, s, shard), "status")
            if judgements is not None:
                assert st.judgements is not None
                st.judgements += 1
                for j in judgements:
                    st.spent += j.cost
                    kind = failure_kind(j.outcome, j.error)
                    if kind and not (j.error or "").startswith("no advice"):
                        st.failed[f"judge:{kind}"] += 1
    return st


def incomplete_outputs(root: str | Path = ".") -> list[str]:
    """The outputs Snakemake marked incomplete (jobs started and not finished) under
    ``root/.snakemake/incomplete``: each marker's name is the output path in URL-safe base64,
    split into ``@``-prefixed parts where it is longer than a file name may be."""
    base = Path(root) / ".snakemake" / "incomplete"
    out = []
    for dirpath, _, files in os.walk(base):
        rel = Path(dirpath).relative_to(base).parts
        for name in files:
            if name == "migration_underway":
                continue
            encoded = "".join(p.lstrip("@") for p in (*rel, name))
            try:
                out.append(base64.urlsafe_b64decode(encoded.encode()).decode())
            except (ValueError, UnicodeDecodeError):
                continue
    return sorted(out)


def snakemake_locked(root: str | Path = ".") -> bool:
    """Whether the working directory has Snakemake lock files (held, or left by a killed run:
    :func:`snakemake_processes` tells)."""
    locks = Path(root) / ".snakemake" / "locks"
    return locks.is_dir() and any(locks.iterdir())


def _is_snakemake(argv: Sequence[str]) -> bool:
    """A Snakemake command line: ``snakemake ...``, ``python .../bin/snakemake ...`` or
    ``python -m snakemake ...`` (not the jobs it starts: their scripts have other names)."""
    head = list(argv[:3])
    if any(Path(a).name == "snakemake" for a in head):
        return True
    return any(a == "-m" and b == "snakemake" for a, b in zip(head, head[1:], strict=False))


def snakemake_processes(root: str | Path = ".", proc: str | Path = "/proc") -> list[int]:
    """PIDs of the Snakemake processes whose working directory is ``root`` (Linux ``/proc``;
    processes whose details cannot be read are skipped)."""
    target = Path(root).resolve()
    out: list[int] = []
    try:
        entries = list(Path(proc).iterdir())
    except OSError:
        return out
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if not _is_snakemake([a.decode("utf-8", "replace") for a in argv if a]):
                continue
            if Path(os.readlink(entry / "cwd")).resolve() == target:
                out.append(int(entry.name))
        except OSError:
            continue
    return sorted(out)


def last_progress(log_path: str | Path, tail_bytes: int = 65536) -> str | None:
    """The last progress line of a job's log (its text after the logger's prefix)."""
    try:
        with open(log_path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - tail_bytes))
            data = fh.read().decode("utf-8", "replace")
    except OSError:
        return None
    marker = f" {PREFIX} "
    for line in reversed(data.splitlines()):
        i = line.find(marker)
        if i >= 0:
            return line[i + 1 :].strip()
    return None


_STEPS = {"transcript": ("simulate", paths.TRANSCRIPT), "match": ("match", paths.MATCH)}
_STEPS["judgement"] = ("judge", paths.JUDGEMENT)


def running_jobs(root: str | Path = ".") -> list[RunningJob]:
    """The simulate, match and judge jobs whose outputs are marked incomplete."""
    out = []
    for output in incomplete_outputs(root):
        try:
            kind, fields = paths.parse(output)
        except ValueError:
            continue
        if kind not in _STEPS:
            continue
        step, pattern = _STEPS[kind]
        log_path = Path(root) / paths.format(paths.log(pattern), **fields)
        out.append(
            RunningJob(
                step=step,
                output=output,
                system=f"{fields['expert']}/{fields['strategy']}",
                shard=fields["shard"],
                last_progress=last_progress(log_path),
            )
        )
    return out


def system_forecasts(settings: Settings) -> dict[tuple[str, str], float]:
    """``lecode forecast``'s total cost per system: its expert, the client, matcher and judge
    (upper bound)."""
    from lecode.forecast import forecast

    out = {}
    for expert in settings.experts:
        fc = forecast(settings, experts=[expert])
        out[(expert.model, expert.strategy)] = sum(r["cost"] for r in fc.rows())
    return out


def collect(
    params_files: Sequence[str],
    *,
    forecasts: Mapping[tuple[str, str], float] | None = None,
    reader: Reader | None = None,
) -> Status:
    """The status of the experiment configured by ``params_files``, read in the working
    directory (the project's root, where the workflow runs)."""
    from lecode.config.experiment import Settings
    from lecode.dataset import load_cases
    from lecode.pipeline import Plan
    from lecode.shards import select

    settings = Settings.load(params_files[0], *params_files[1:])
    plan = Plan(settings).evaluation
    cases = select(load_cases(settings.dataset.test), settings.dataset.limit)
    ids = {c.id for c in cases}
    if forecasts is None:
        forecasts = system_forecasts(settings)
    reader = reader or Reader()
    return Status(
        params=" + ".join(params_files),
        cases=len(ids),
        n_shards=len(plan.shards),
        systems=[
            system_status(plan, x, ids, forecasts.get((x.expert, x.strategy)), reader)
            for x in plan.systems
        ],
        running=running_jobs("."),
        locked=snakemake_locked("."),
        holders=snakemake_processes("."),
    )


def _run_state(st: Status) -> str:
    if st.holders:
        pids = ", ".join(str(p) for p in st.holders)
        return f"running (lock held, PID {pids}), {len(st.running)} job(s) running"
    left = f" ({len(st.running)} job(s) left incomplete)" if st.running else ""
    if st.lock_stale:
        return (
            f"not running{left}, but a stale lock remains in .snakemake/locks (no Snakemake "
            "process works in this directory on this host: a run was killed); run "
            "`snakemake --unlock`, then the workflow again (incomplete jobs are rerun, "
            "finished dialogues kept)"
        )
    return "not running" + left


def render(st: Status) -> str:
    where = f"{st.params}: {st.cases} test cases in {st.n_shards} shards; Snakemake "
    lines = [where + _run_state(st)]
    head = (
        f"{'system':28s} {'dialogues':>17s} {'transcripts':>11s} {'matches':>8s} "
        f"{'judged':>8s} {'spent':>10s} {'forecast':>10s}  failed"
    )
    lines.append(head)
    done = total = 0
    spent = forecast = 0.0
    for s in st.systems:
        pct = 100.0 * s.done / s.total if s.total else 100.0
        judged = "-" if s.judgements is None else f"{s.judgements}/{s.shards}"
        fc = "-" if s.forecast is None else f"{s.forecast:.4f}"
        failed = ", ".join(f"{k} {n}" for k, n in sorted(s.failed.items())) or "-"
        lines.append(
            f"{s.label[:28]:28s} {f'{s.done}/{s.total} ({pct:.1f}%)':>17s} "
            f"{f'{s.transcripts}/{s.shards}':>11s} {f'{s.matches}/{s.shards}':>8s} "
            f"{judged:>8s} {s.spent:10.4f} {fc:>10s}  {failed}"
        )
        done += s.done
        total += s.total
        spent += s.spent
        forecast += s.forecast or 0.0
    share = f" ({100.0 * spent / forecast:.1f}%)" if forecast else ""
    lines.append(
        f"total: {done}/{total} dialogues, spent {spent:.4f} of forecast {forecast:.4f}{share}"
    )
    if st.running:
        lines.append("running:" if st.holders else "incomplete (interrupted run):")
        for j in st.running:
            lines.append(
                f"  {j.step} {j.system} shard {j.shard}: "
                + (j.last_progress or "no progress line yet")
            )
    return "\n".join(lines)
