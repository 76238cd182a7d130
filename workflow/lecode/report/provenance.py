"""The provenance every table cell shares: what the tables job read, from its spec.

:func:`table_provenance` turns the tables job's :class:`~lecode.report.specs.TablesSpec` and the
inputs it loaded into a :class:`~lecode.report.document.Provenance`: the run (git state of
the code, package versions, the dataset files, shard index and shards, the published numbers,
the aggregate scores, each with its sha256, and the report settings) and, per system, the
spec digests of its simulate, match, judge and score jobs, its roles' model entries (as they
enter the digests), its files with their sha256 and number of records, and what its records
say (stop reasons, evaluation status, responses taken from the response store, what the roles
reported about themselves). Every path and digest comes from the spec; nothing is recovered
from a path or a label. The tables builder attaches it to each table's document
(:mod:`lecode.report.document`), beside cells built with their own provenance.

Nothing here depends on the time of the run: rebuilding the tables from the same inputs, code
and environment writes byte-identical documents. The git commit recorded is therefore the last
commit that changed the code, configuration or data (:data:`GIT_SCOPE`), not ``HEAD``: a
commit that only records ``dvc.lock`` or the metrics leaves it unchanged.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lecode import paths
from lecode.config.base import IDENTITY
from lecode.evaluation.specs import SystemFiles
from lecode.records import Judgement, Matches, Transcript
from lecode.report.document import (
    DatasetInfo,
    GitState,
    JobDigests,
    Provenance,
    RecordsFile,
    RoleInfo,
    RunInfo,
    StoreUse,
    SystemFileRefs,
    SystemInfo,
)
from lecode.report.served import served_by_role
from lecode.report.specs import ReportSpec
from lecode.specs import FileRef, Role, file_sha256

if TYPE_CHECKING:
    from lecode.report.inputs import ReportInputs

#: Paths whose last commit and uncommitted changes identify the code that produced a table.
GIT_SCOPE = (
    "Snakefile",
    "workflow",
    "profiles",
    "params.yaml",
    "data",
    "dvc.yaml",
    "pyproject.toml",
    "requirements.lock",
    "Makefile",
)
#: Packages whose versions can move a reported number (besides the metric stack's).
PACKAGES = ("numpy", "polars", "pydantic")
ROLE_ORDER = ("expert", "client", "matcher", "judge")


# --------------------------------------------------------------------------- git and packages


def _git(root: Path, *args: str) -> str | None:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "--no-optional-locks", *args],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout


def git_state(root: str | Path = ".", scope: Sequence[str] = GIT_SCOPE) -> GitState:
    """The last commit that touched ``scope`` and whether ``scope`` has uncommitted changes.

    Read-only (no index refresh). ``commit`` and ``dirty`` are ``None`` outside a git
    repository; untracked files that git does not ignore count as changes.
    """
    root = Path(root)
    present = [s for s in scope if (root / s).exists()]
    if _git(root, "rev-parse", "--is-inside-work-tree") is None or not present:
        return GitState(commit=None, dirty=None, scope=tuple(scope))
    commit = _git(root, "log", "-1", "--format=%H", "--", *present)
    status = _git(root, "status", "--porcelain", "--untracked-files=normal", "--", *present)
    return GitState(
        commit=commit.strip() if commit and commit.strip() else None,
        dirty=None if status is None else bool(status.strip()),
        scope=tuple(scope),
    )


def package_versions() -> dict[str, str]:
    """Python, the metric stack (jieba and its dictionary's sha256, rouge-score, bert-score,
    transformers, torch) and the numerical packages, from package metadata."""
    from lecode.metrics.advice import metric_stack_versions

    out = {"python": platform.python_version(), **metric_stack_versions()}
    for dist in PACKAGES:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return dict(sorted(out.items()))


# --------------------------------------------------------------------------- run


def _records_file(path: str, n: int) -> RecordsFile:
    return RecordsFile(path=path, sha256=file_sha256(path), records=n)


def run_info(spec: ReportSpec, data: ReportInputs, *, root: str | Path = ".") -> RunInfo:
    index = data.index
    _, fields = paths.parse(spec.index)
    shards = tuple(
        _records_file(paths.format(paths.SHARD, shardset=fields["shardset"], shard=name), int(n))
        for name, n in sorted((index.get("shards") or {}).items())
    )
    return RunInfo(
        git=git_state(root),
        packages=package_versions(),
        dataset=DatasetInfo(
            train=spec.train,
            test=spec.test,
            index=FileRef.of(spec.index),
            shards=shards,
            n_cases=data.n_expected,
            limit=(index.get("source") or {}).get("limit"),
        ),
        paper=spec.paper,
        aggregate=FileRef.of(spec.aggregate),
        settings=spec.settings,
    )


# --------------------------------------------------------------------------- systems


def _role(role: Role, strategy: str | None = None) -> RoleInfo:
    return RoleInfo(
        model=role.name,
        strategy=strategy,
        entry=role.entry.model_dump(mode="json", context=IDENTITY),
    )


def _distinct(values: Iterable[dict[str, str]]) -> dict[str, str | list[str]]:
    """Merge dicts; a key with several values keeps them all (sorted)."""
    seen: dict[str, set[str]] = {}
    for d in values:
        for k, v in d.items():
            seen.setdefault(k, set()).add(str(v))
    return {k: sorted(v)[0] if len(v) == 1 else sorted(v) for k, v in sorted(seen.items())}


def _role_rank(role: str) -> tuple[int, str]:
    return (ROLE_ORDER.index(role) if role in ROLE_ORDER else len(ROLE_ORDER), role)


def system_info(x: SystemFiles, spec: ReportSpec, data: ReportInputs) -> SystemInfo:
    """One system's jobs, roles, files and what its records say."""
    roles = {"expert": _role(spec.roles[f"expert:{x.system.expert}"], x.system.strategy)}
    for name in ("client", "matcher", "judge"):
        if name in spec.roles and (name != "judge" or x.judge is not None):
            roles[name] = _role(spec.roles[name])
    if x.not_run is not None:  # no jobs, no files: Table 3's note says why
        return SystemInfo(system=x.system, roles=roles)
    ts = {p: data.transcript_files[p] for p in x.transcripts}
    ms = {p: data.match_files[p] for p in x.matches}
    js = {p: data.judgement_files[p] for p in x.judgements}
    calls: Counter[str] = Counter()
    cached: Counter[str] = Counter()
    records: list[Transcript | Matches | Judgement] = [
        *(t for r in ts.values() for t in r),
        *(m for r in ms.values() for m in r),
        *(j for r in js.values() for j in r),
    ]
    for rec in records:
        for role, u in rec.usage.items():
            calls[role] += u.calls
            cached[role] += u.cached
    order = sorted(calls, key=_role_rank)
    all_ts = [t for records in ts.values() for t in records]
    return SystemInfo(
        system=x.system,
        jobs=JobDigests(simulate=x.simulate, match=x.match, judge=x.judge, score=x.score),
        roles=roles,
        files=SystemFileRefs(
            score=FileRef.of(x.score_file),
            transcripts=tuple(_records_file(p, len(r)) for p, r in ts.items()),
            matches=tuple(_records_file(p, len(r)) for p, r in ms.items()),
            judgements=tuple(_records_file(p, len(r)) for p, r in js.items()),
        ),
        store={r: StoreUse(responses=calls[r], from_store=cached[r]) for r in order},
        stop_reasons=dict(sorted(Counter(t.stop_reason for t in all_ts).items())),
        match_status=dict(sorted(Counter(m.status for r in ms.values() for m in r).items())),
        judge_status=dict(sorted(Counter(j.status for r in js.values() for j in r).items())),
        reported=_distinct(t.provenance for t in all_ts),
        served=served_by_role(all_ts),
    )


def table_provenance(spec: ReportSpec, data: ReportInputs, *, root: str | Path = ".") -> Provenance:
    """The provenance the tables job attaches to every table (see the module docstring)."""
    from lecode.report.spec import system_key

    return Provenance(
        spec_digest=spec.digest(),
        run=run_info(spec, data, root=root),
        systems={
            system_key(x.system.expert, x.system.strategy): system_info(x, spec, data)
            for x in spec.systems
        },
    )
