"""``lecode plan``: the jobs of the configured experiment, and with ``--diff REF`` which of them
a run would redo after a run finished at git ref ``REF``, and why.

Every job writes under the digests of its spec and of everything upstream, so a job reruns
exactly when its output path differs. Both plans are built by the code of this package: the one
of ``REF`` from ``REF``'s ``params.yaml`` while the fingerprints and prompt templates are read
from ``REF``'s ``workflow/`` directory (:func:`lecode.fingerprint.reading`), the other from the
working tree. The reasons come from replaying each change on its own over ``REF``: a changed
file (module, script or prompt template, as the fingerprints see it) or a changed setting
(a top-level key of ``params.yaml`` or one entry under ``models``) is a reason of every job
whose path it moves.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lecode import fingerprint as fp

#: what the fingerprints and template digests read under ``workflow/``
TRACKED_DIRS = ("lecode", "scripts", "prompts")


class DiffError(ValueError):
    """The ref, a params file or the settings at the ref cannot be read; the message says which."""


# --------------------------------------------------------------------------- the jobs


@dataclass(frozen=True)
class PlannedOutput:
    """One job: its step, what tells it apart from the step's other jobs, and its output (a
    path named by the digests of its spec and of everything upstream)."""

    step: str
    label: str
    output: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.step, self.label)


def planned_jobs(plan: Any) -> list[PlannedOutput]:
    """The jobs of the targets ``all`` (tables, figures, HTML report) of ``plan``
    (:class:`lecode.pipeline.Plan`): the evaluation's, with the Table 4 study, the replicate
    runs and the sentinel when they are enabled, and the report's. SFT jobs run for their own
    targets; a trained adapter shows in the jobs that use it."""
    studies = ("evaluation", "reliability", "noise", "sentinel", "report")
    return [PlannedOutput(j.step, j.label, j.output) for s in studies for j in plan.study_jobs(s)]


def build_settings(data: Mapping[str, Any], source: str) -> Any:
    from lecode.config.experiment import Settings

    return Settings.parse(data, source=source)


def plan_outputs(
    data: Mapping[str, Any], tree: fp.CodeTree, source: str
) -> dict[tuple[str, str], str]:
    """``{(step, label): output}`` of the experiment configured by ``data``, with the code and
    prompt templates of ``tree``."""
    from lecode.pipeline import Plan

    with fp.reading(tree):
        plan = Plan(build_settings(data, source))
        return {j.key: j.output for j in planned_jobs(plan)}


# --------------------------------------------------------------------------- the two trees


def git(repo: Path, *args: str) -> bytes:
    run = subprocess.run(["git", *args], cwd=repo, capture_output=True, check=False)
    if run.returncode != 0:
        message = run.stderr.decode("utf-8", "replace").strip()
        raise DiffError(f"git {' '.join(args)}: {message}")
    return run.stdout


def repo_root(where: Path) -> Path:
    return Path(git(where, "rev-parse", "--show-toplevel").decode().strip())


def extract_workflow(repo: Path, ref: str, dest: Path) -> Path:
    """``REF``'s ``workflow/{lecode,scripts,prompts}`` under ``dest``; returns ``dest/workflow``."""
    present = [
        f"workflow/{d}"
        for d in TRACKED_DIRS
        if git(repo, "ls-tree", "--name-only", ref, f"workflow/{d}").strip()
    ]
    if not present:
        raise DiffError(f"{ref}: holds no workflow/lecode package")
    archive = git(repo, "archive", "--format=tar", ref, "--", *present)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest / "workflow"


def load_params(texts: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The files' mappings merged in order, as ``Settings.load`` and Snakemake merge them."""
    import yaml

    from lecode.config.experiment import deep_merge

    merged: dict[str, Any] = {}
    for name, text in texts:
        data = yaml.safe_load(text) or {}
        if not isinstance(data, dict):
            raise DiffError(f"{name}: the top level must be a mapping")
        merged = deep_merge(merged, data)
    return merged


def params_at(repo: Path, ref: str, files: Iterable[str], cwd: Path) -> dict[str, Any]:
    texts = []
    for f in files:
        rel = Path(f).resolve().relative_to(repo) if Path(f).is_absolute() else None
        spec = f"{ref}:{rel.as_posix()}" if rel else f"{ref}:./{f}"
        texts.append((f"{f} at {ref}", git(cwd, "show", spec).decode("utf-8")))
    return load_params(texts)


def params_now(files: Iterable[str]) -> dict[str, Any]:
    texts = []
    for f in files:
        path = Path(f)
        if not path.is_file():
            raise DiffError(f"{f}: no such params file")
        texts.append((f, path.read_text(encoding="utf-8")))
    return load_params(texts)


def _fingerprint_of(tree: fp.CodeTree, rel: str) -> str | None:
    """What the fingerprints see of ``rel``: the normalised digest of a Python file, the bytes
    of any other (a prompt template); None when it does not exist."""
    raw = tree.read(rel)
    if raw is None:
        return None
    return fp.normalised_digest(raw, rel) if rel.endswith(".py") else raw.hex()


def changed_files(ref: fp.CodeTree, now: fp.CodeTree) -> tuple[list[str], list[str]]:
    """(files whose fingerprint differs, files that differ only in comments, docstrings or
    layout), relative to ``workflow/``."""
    rels: set[str] = set()
    for d in TRACKED_DIRS:
        for tree in (ref, now):
            base = tree.root / d
            rels |= {
                p.relative_to(tree.root).as_posix()
                for p in base.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts
            }
    changed: list[str] = []
    cosmetic: list[str] = []
    for rel in sorted(rels):
        if ref.read(rel) == now.read(rel):
            continue
        same = _fingerprint_of(ref, rel) == _fingerprint_of(now, rel)
        (cosmetic if same else changed).append(rel)
    return changed, cosmetic


def setting_items(data: Mapping[str, Any]) -> dict[str, Any]:
    """``params.yaml`` cut into the units reasons name: each top-level key, and each entry of
    ``models`` on its own (``models.<name>``)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "models" and isinstance(value, dict):
            out.update({f"models.{name}": entry for name, entry in value.items()})
        else:
            out[key] = value
    return out


_ABSENT = object()


def changed_keys(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted keys below two values that differ (``temperature``, ``bootstrap.seed``); the
    empty list when one of them is not a mapping."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return []
    out = []
    for k in sorted(old.keys() | new.keys(), key=str):
        a, b = old.get(k, _ABSENT), new.get(k, _ABSENT)
        if a == b:
            continue
        below = changed_keys(a, b, f"{prefix}{k}.")
        out += below or [f"{prefix}{k}"]
    return out


def with_item(data: Mapping[str, Any], item: str, value: Any) -> dict[str, Any]:
    """``data`` with the setting ``item`` set to ``value`` (removed when absent)."""
    out = dict(data)
    if item.startswith("models.") and isinstance(out.get("models", {}), dict):
        models = dict(out.get("models") or {})
        name = item.removeprefix("models.")
        if value is _ABSENT:
            models.pop(name, None)
        else:
            models[name] = value
        out["models"] = models
    elif value is _ABSENT:
        out.pop(item, None)
    else:
        out[item] = value
    return out


# --------------------------------------------------------------------------- the diff


@dataclass
class StepRerun:
    """What reruns of one step and why."""

    step: str
    jobs: int
    of: int
    #: jobs not planned at the ref at all (a new system, a new shard...)
    new: int = 0
    #: changed modules (``lecode.x.y``) and scripts (``scripts/x.py``) of its own closure
    code: list[str] = field(default_factory=list)
    #: upstream steps whose changed code it follows
    after: list[str] = field(default_factory=list)
    #: changed modules that no step imports and a job's spec names itself (a strategy)
    chosen: list[str] = field(default_factory=list)
    #: changed prompt templates (``prompts/<role>/<name>.txt``)
    prompts: list[str] = field(default_factory=list)
    #: changed settings (top-level keys of params.yaml, ``models.<name>``)
    settings: list[str] = field(default_factory=list)


@dataclass
class RerunDiff:
    ref: str
    commit: str
    #: files whose fingerprint differs (relative to workflow/)
    files: list[str]
    #: files that differ only in comments, docstrings or layout
    cosmetic: list[str]
    settings: list[str]
    #: the changed keys within each changed setting (``models.x``: ``temperature``)
    setting_keys: dict[str, list[str]]
    steps: list[StepRerun]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def file_label(rel: str) -> str:
    """``lecode/metrics/clarification.py`` -> ``lecode.metrics.clarification``; other files
    keep their path."""
    if rel.startswith("lecode/") and rel.endswith(".py"):
        return rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return rel


def compute_diff(ref: str, params: list[str], *, cwd: Path | None = None) -> RerunDiff:
    """Which jobs of the experiment configured by ``params`` rerun after a run at ``ref``."""
    cwd = Path.cwd() if cwd is None else cwd
    repo = repo_root(cwd)
    try:
        commit = git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode()
    except DiffError:
        raise DiffError(f"{ref}: not a commit of the repository at {repo}") from None
    commit = commit.strip()
    with tempfile.TemporaryDirectory(prefix="lecode-diff-") as tmp:
        ref_tree = fp.CodeTree(extract_workflow(repo, commit, Path(tmp)))
        now_tree = fp.CodeTree(repo / "workflow")
        files, cosmetic = changed_files(ref_tree, now_tree)
        ref_data = params_at(repo, commit, params, cwd)
        now_data = params_now(params)
        ref_items, now_items = setting_items(ref_data), setting_items(now_data)
        settings = sorted(
            k
            for k in ref_items.keys() | now_items.keys()
            if ref_items.get(k, _ABSENT) != now_items.get(k, _ABSENT)
        )
        try:
            base = plan_outputs(ref_data, ref_tree, f"{' + '.join(params)} at {ref}")
        except ValueError as exc:
            raise DiffError(
                f"the settings at {ref} cannot be planned by this code:\n{exc}"
            ) from None
        now = plan_outputs(now_data, now_tree, " + ".join(params))

        # each change replayed on its own over the ref: the jobs whose outputs it moves
        moved: dict[str, set[tuple[str, str]]] = {}
        unattributed: list[str] = []
        for rel in files:
            tree = ref_tree.with_files_from(now_tree, [rel])
            alone = plan_outputs(ref_data, tree, f"the settings at {ref}")
            moved[rel] = {k for k, out in alone.items() if base.get(k) != out}
        for item in settings:
            data = with_item(ref_data, item, now_items.get(item, _ABSENT))
            try:
                alone = plan_outputs(data, ref_tree, f"{item} alone")
            except ValueError:
                unattributed.append(item)  # valid only together with another change
                continue
            moved[item] = {k for k, out in alone.items() if base.get(k) != out}
        step_files = {s: set(now_tree.step_files(s)) | set(ref_tree.step_files(s)) for s, _ in now}

    # what no change explains alone: the settings that act only together (a new expert and
    # its model entry), else every changed setting
    together = unattributed + [i for i in settings if i in moved and not moved[i]]
    rerun = [k for k, out in now.items() if base.get(k) != out]
    by_step: dict[str, StepRerun] = {}
    totals: dict[str, int] = {}
    for step, _ in now:
        totals[step] = totals.get(step, 0) + 1
    for key in rerun:
        step = key[0]
        entry = by_step.setdefault(step, StepRerun(step=step, jobs=0, of=totals[step]))
        entry.jobs += 1
        entry.new += key not in base
        reasons = [c for c, keys in moved.items() if key in keys] or together or settings
        for reason in reasons:
            if reason in settings:
                _add(entry.settings, reason)
            elif reason.startswith("prompts/"):
                _add(entry.prompts, reason)
            elif reason in step_files[step]:
                _add(entry.code, file_label(reason))
            elif upstream := sorted(s for s, fs in step_files.items() if reason in fs):
                for u in upstream:
                    _add(entry.after, f"{u} ({file_label(reason)})")
            else:
                _add(entry.chosen, file_label(reason))
    order = list(dict.fromkeys(step for step, _ in now))
    steps = sorted(by_step.values(), key=lambda r: order.index(r.step))
    return RerunDiff(
        ref=ref,
        commit=commit,
        files=files,
        cosmetic=cosmetic,
        settings=settings,
        setting_keys={
            k: changed_keys(ref_items.get(k, _ABSENT), now_items.get(k, _ABSENT)) for k in settings
        },
        steps=steps,
    )


def _add(values: list[str], value: str) -> None:
    if value not in values:
        values.append(value)


# --------------------------------------------------------------------------- output


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def render_diff(diff: RerunDiff) -> str:
    lines = [f"Compared with {diff.ref} ({diff.commit[:12]}):"]
    if diff.files:
        lines.append("  changed code and prompts: " + ", ".join(map(file_label, diff.files)))
    if diff.settings:
        named = [
            f"{k} ({', '.join(diff.setting_keys[k])})" if diff.setting_keys.get(k) else k
            for k in diff.settings
        ]
        lines.append("  changed settings: " + ", ".join(named))
    if diff.cosmetic:
        lines.append(
            f"  {_plural(len(diff.cosmetic), 'file')} changed only in comments, docstrings or "
            "layout (no job reruns for them): " + ", ".join(map(file_label, diff.cosmetic))
        )
    if not diff.steps:
        lines.append("Nothing reruns: every job's output is the one a run at the ref wrote.")
        return "\n".join(lines)
    lines.append("Would rerun:")
    for r in diff.steps:
        why = []
        if r.code:
            why.append("code " + ", ".join(r.code))
        if r.chosen:
            why.append("code chosen per job " + ", ".join(r.chosen))
        if r.prompts:
            why.append("prompts " + ", ".join(p.removeprefix("prompts/") for p in r.prompts))
        if r.settings:
            why.append("settings " + ", ".join(r.settings))
        if r.after:
            why.append("after " + ", ".join(r.after))
        new = f", {r.new} new" if r.new else ""
        lines.append(f"  {r.step}: {r.jobs} of {_plural(r.of, 'job')}{new}: " + "; ".join(why))
    return "\n".join(lines)


def render_plan(jobs: list[PlannedOutput]) -> str:
    counts: dict[str, int] = {}
    for j in jobs:
        counts[j.step] = counts.get(j.step, 0) + 1
    lines = [f"  {step}: {_plural(n, 'job')}" for step, n in counts.items()]
    return "\n".join([f"{_plural(len(jobs), 'job')} planned:", *lines])


def _cmd_plan(args: argparse.Namespace) -> int:
    from lecode.config.base import SettingsError

    try:
        if args.diff is not None:
            diff = compute_diff(args.diff, args.params)
            print(json.dumps(diff.to_json(), indent=2) if args.json else render_diff(diff))
            return 0
        from lecode.pipeline import Plan

        jobs = planned_jobs(Plan(build_settings(params_now(args.params), " + ".join(args.params))))
    except (DiffError, SettingsError, fp.FingerprintError) as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([asdict(j) for j in jobs], indent=2))
    else:
        print(render_plan(jobs))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "plan",
        help="the jobs of the configured experiment; with --diff REF, those that would rerun "
        "after a run at git ref REF, and why",
    )
    p.add_argument("--params", action="append", default=None)
    p.add_argument(
        "--diff",
        nargs="?",
        const="HEAD",
        default=None,
        metavar="REF",
        help="compare the working tree with this git ref (default HEAD)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_plan)
