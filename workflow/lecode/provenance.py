"""Provenance of every reported number, written as JSON next to each table.

``reports/tables/<table>.provenance.json`` holds one document per table::

    {"schema": 1, "table": "table3",
     "run":     {git, dataset, params, metric_stack, scores, report, paper},
     "systems": {"<expert>/<strategy>": {files, hashes, config hashes, store use, models}},
     "cells":   [one record per cell: id, row, column, value, n/N, aggregation, system refs]}

``run`` is what every cell shares (the git state of the code, the dataset files and their
hashes, the parameter subset, the metric stack); ``systems`` is what one table row was computed
from (per-dialogue scores, transcripts, matches, judgements, each with its sha256, how many
responses came from the response store, and the models as configured and as served). A cell
names its system(s), so ``run`` + ``systems[cell.system]`` + the cell is its full provenance.
:mod:`lecode.explain` prints it; the HTML report shows it on click.

Nothing here depends on the time of the run: rebuilding the tables from the same inputs, code
and environment writes byte-identical provenance. The git commit recorded is therefore the last
commit that changed the code, configuration or data (:data:`GIT_SCOPE`), not ``HEAD``: a
commit that only records ``dvc.lock`` or the metrics leaves it unchanged.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from lecode import config as cfgmod
from lecode.recordio import atomic_write_text, read_judgements, read_matches, read_transcripts

SCHEMA_VERSION = 1
SUFFIX = ".provenance.json"
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
#: Tables in the long CSV format of :func:`lecode.report.render.render_csv`.
METRIC_TABLES = ("table3", "paired", "table6", "table7", "comparison")
#: Top-level settings that can move a reported number (the rest is runtime only).
PARAM_SECTIONS = ("dataset", "simulation", "metrics", "report", "client", "matcher", "judge")
ROLE_ORDER = ("expert", "client", "matcher", "judge")


# --------------------------------------------------------------------------- files and git


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_ref(path: str | Path, **extra: Any) -> dict[str, Any]:
    """``{"path", "sha256", **extra}``; sha256 is ``None`` when the file does not exist."""
    p = Path(path)
    return {"path": str(path), "sha256": sha256_file(p) if p.is_file() else None, **extra}


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


def git_state(root: str | Path = ".", scope: Sequence[str] = GIT_SCOPE) -> dict[str, Any]:
    """The last commit that touched ``scope`` and whether ``scope`` has uncommitted changes.

    Read-only (no index refresh). ``commit`` and ``dirty`` are ``None`` outside a git
    repository; untracked files that git does not ignore count as changes.
    """
    root = Path(root)
    present = [s for s in scope if (root / s).exists()]
    out: dict[str, Any] = {"commit": None, "dirty": None, "scope": list(scope)}
    if _git(root, "rev-parse", "--is-inside-work-tree") is None or not present:
        return out
    commit = _git(root, "log", "-1", "--format=%H", "--", *present)
    status = _git(root, "status", "--porcelain", "--untracked-files=normal", "--", *present)
    if commit is not None and commit.strip():
        out["commit"] = commit.strip()
    out["dirty"] = None if status is None else bool(status.strip())
    return out


# --------------------------------------------------------------------------- metric stack


def metric_stack(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """Versions and hashes behind ROUGE-L and BERTScore, with the settings that move them."""
    from lecode.metrics.advice import fingerprint_model_dir, metric_stack_versions, resolve_model

    out: dict[str, Any] = dict(metric_stack_versions())
    rouge = dict(metrics.get("rouge") or {})
    out["rouge"] = {
        "tokenizer": rouge.get("tokenizer", "jieba"),
        "punctuation": rouge.get("punctuation", "keep"),
    }
    bert = dict(metrics.get("bertscore") or {})
    if not bert.get("enabled", True):
        out["bertscore"] = {"enabled": False}
        return out
    entry: dict[str, Any] = {
        "model": bert.get("model"),
        "num_layers": bert.get("num_layers"),
        "idf": False,
        "rescale_with_baseline": False,
    }
    try:
        entry["model_sha256"] = fingerprint_model_dir(resolve_model(str(bert.get("model"))))
    except (ValueError, OSError) as exc:
        entry["model_sha256"] = None
        entry["error"] = str(exc)
    out["bertscore"] = entry
    return out


# --------------------------------------------------------------------------- records


def record_owner(path: str | Path) -> tuple[str, str, list[str]]:
    """``(expert, strategy, hashes)`` from a ``results/<kind>/<expert>/<strategy>/...`` path.

    ``hashes`` are the remaining directory names (configuration hashes, shard set) in order.
    """
    parts = Path(path).parts
    for i, part in enumerate(parts):
        if part in ("transcripts", "matches", "judgements", "scores") and i + 3 < len(parts):
            return parts[i + 1], parts[i + 2], list(parts[i + 3 : -1])
    raise ValueError(f"{path}: not a results/<kind>/<expert>/<strategy>/... path")


def _usage(records: Iterable[Any], roles: Counter[str], cached: Counter[str]) -> None:
    for rec in records:
        for role, u in rec.usage.items():
            roles[role] += u.calls
            cached[role] += u.cached


def _distinct(values: Iterable[dict[str, str]]) -> dict[str, Any]:
    """Merge dicts; a key with several values keeps them all (sorted)."""
    seen: dict[str, set[str]] = {}
    for d in values:
        for k, v in d.items():
            seen.setdefault(k, set()).add(v)
    return {k: sorted(v)[0] if len(v) == 1 else sorted(v) for k, v in sorted(seen.items())}


def system_records(
    key: tuple[str, str],
    transcripts: Sequence[str],
    matches: Sequence[str],
    judgements: Sequence[str],
) -> dict[str, Any]:
    """Files (with hashes and dialogue counts), store use and reported provenance of a system."""
    calls: Counter[str] = Counter()
    cached: Counter[str] = Counter()
    stops: Counter[str] = Counter()
    prov: list[dict[str, str]] = []
    files: dict[str, list[dict[str, Any]]] = {"transcripts": [], "matches": [], "judgements": []}
    for path in transcripts:
        ts = read_transcripts(path)
        _usage(ts, calls, cached)
        stops.update(t.stop_reason for t in ts)
        prov.extend(t.provenance for t in ts)
        files["transcripts"].append(file_ref(path, dialogues=len(ts)))
    match_status: Counter[str] = Counter()
    for path in matches:
        ms = read_matches(path)
        _usage(ms, calls, cached)
        match_status.update(m.status for m in ms)
        files["matches"].append(file_ref(path, dialogues=len(ms)))
    judge_status: Counter[str] = Counter()
    for path in judgements:
        js = read_judgements(path)
        _usage(js, calls, cached)
        judge_status.update(j.status for j in js)
        files["judgements"].append(file_ref(path, dialogues=len(js)))
    roles = sorted(set(calls) | set(cached), key=lambda r: (r not in ROLE_ORDER, r))
    return {
        **files,
        "stop_reasons": dict(sorted(stops.items())),
        "match_status": dict(sorted(match_status.items())),
        "judge_status": dict(sorted(judge_status.items())),
        "store": {r: {"responses": calls[r], "from_store": cached[r]} for r in roles},
        "reported": _distinct(prov),
    }


# --------------------------------------------------------------------------- models


def _template_hashes(role: str, model: Mapping[str, Any], strategy: str) -> dict[str, str]:
    if model.get("backend", "offline") == "offline":
        return {}
    from lecode.agents.llm_roles import template_files

    try:
        paths = template_files(role, strategy)
    except Exception as exc:  # noqa: BLE001 - recorded, never fatal for a report
        return {"error": str(exc)}
    return {p.relative_to(cfgmod.PROMPTS_DIR).as_posix(): sha256_file(p) for p in sorted(paths)}


def _partition(name: str, model: Mapping[str, Any], models: Mapping[str, Any]) -> str | None:
    """The response-store partition of an LLM model entry (as the LLM client names it)."""
    from lecode.llm.keys import model_identity, partition_name
    from lecode.llm.spec import ModelSpec

    try:
        spec = ModelSpec.from_config(name, model)
    except Exception:  # noqa: BLE001 - not an LLM entry the client could build
        return None
    if spec.backend == "vllm" and spec.serve is None and spec.server:
        server = models.get(spec.server) or {}
        if server.get("model_path"):
            spec = replace(spec, identity=f"vllm://{server['model_path']}")
    return partition_name(model_identity(spec.name, spec.identity_url, spec.served_model))


def served_identities(store_dir: str | Path, partition: str) -> dict[str, Any]:
    """Model ids and system fingerprints the endpoint returned, over the stored responses of
    one model identity (every request stored for it, not only this table's)."""
    from lecode.llm.store import SEGMENT_GLOB, decode_line

    models: Counter[str] = Counter()
    fingerprints: Counter[str] = Counter()
    seen: set[str] = set()
    folder = Path(store_dir) / partition
    for seg in sorted(folder.glob(SEGMENT_GLOB)) if folder.is_dir() else []:
        data = seg.read_bytes()
        # Like the store: complete lines only (a torn last line is ignored), first copy wins.
        for line in data[: data.rfind(b"\n") + 1].split(b"\n")[:-1]:
            decoded = decode_line(line)
            if decoded is None or decoded[0] in seen:
                continue
            seen.add(decoded[0])
            response = json.loads(decoded[1]).get("response") or {}
            models[str(response.get("model") or "")] += 1
            fingerprints[str(response.get("system_fingerprint") or "")] += 1
    return {
        "partition": partition,
        "stored_responses": len(seen),
        "served_models": {k or "(not reported)": v for k, v in sorted(models.items())},
        "system_fingerprints": {k or "(not reported)": v for k, v in sorted(fingerprints.items())},
    }


def describe_model(
    role: str,
    name: str,
    strategy: str,
    params: Mapping[str, Any],
    *,
    store_dir: str | Path | None = None,
) -> dict[str, Any]:
    """A role's model as configured (identity, decoding, prompt template hashes) and, for LLM
    entries, as served (from the response store)."""
    models = params.get("models") or {}
    model = dict(models.get(name) or {})
    out: dict[str, Any] = {
        "name": name,
        "strategy": strategy,
        "backend": model.get("backend"),
        "config": cfgmod.model_identity(model),
        "templates": _template_hashes(role, model, strategy),
    }
    if model.get("backend", "offline") != "offline":
        partition = _partition(name, model, models)
        if partition is not None and store_dir is not None:
            out["served"] = served_identities(store_dir, partition)
    return out


# --------------------------------------------------------------------------- params


def used_models(params: Mapping[str, Any]) -> list[str]:
    names = [e["model"] for e in params.get("experts") or []]
    names += [params[r]["model"] for r in ("client", "matcher", "judge") if params.get(r)]
    return list(dict.fromkeys(names))


def params_subset(params: Mapping[str, Any]) -> dict[str, Any]:
    """The settings that can move a reported number: the ``PARAM_SECTIONS``, the experts and
    the model entries they use (runtime-only keys such as prices stay in: they are harmless)."""
    models = params.get("models") or {}
    out: dict[str, Any] = {k: params.get(k) for k in PARAM_SECTIONS if k in params}
    out["experts"] = params.get("experts")
    out["models"] = {n: models[n] for n in used_models(params) if n in models}
    if params.get("llm"):
        out["llm"] = params["llm"]
    return out


def expected_hashes(params: Mapping[str, Any], expert: str, strategy: str) -> dict[str, str]:
    """The simulation and matcher configuration hashes these params give one system."""
    p = dict(params)
    return {
        "simulation": cfgmod.stable_hash(cfgmod.simulation_config(p, expert, strategy)),
        "matcher": cfgmod.stable_hash(cfgmod.matcher_config(p)),
    }


def params_check(
    params: Mapping[str, Any], key: tuple[str, str], in_paths: Mapping[str, str]
) -> dict[str, Any]:
    """Whether ``params`` (with the code in use) give the configuration hashes found in the
    input paths, i.e. whether the recorded parameters are the ones that produced the files."""
    try:
        expected = expected_hashes(params, *key)
    except Exception as exc:  # noqa: BLE001 - recorded as a failed check
        return {"reproduced": None, "error": str(exc)}
    seen = {k: in_paths[k] for k in expected if k in in_paths}
    return {
        "reproduced": all(expected[k] == v for k, v in seen.items()),
        "expected": {k: expected[k] for k in seen},
        "in_paths": seen,
    }


# --------------------------------------------------------------------------- documents


def _key(expert: str, strategy: str) -> str:
    return f"{expert}/{strategy}"


def _by_system(paths: Iterable[str]) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for p in paths:
        e, s, _ = record_owner(p)
        out.setdefault((e, s), []).append(str(p))
    return out


def _list(files: Any, name: str) -> list[str]:
    value = getattr(files, name, None)
    if value is None:
        return []
    return [str(value)] if isinstance(value, str | Path) else [str(v) for v in value]


def _one(files: Any, name: str) -> str | None:
    items = _list(files, name)
    return items[0] if items else None


def systems_block(
    files: Any,
    systems: Sequence[Mapping[str, str]],
    params: Mapping[str, Any],
    *,
    store_dir: str | Path | None,
) -> dict[str, Any]:
    """``systems`` of a provenance document, keyed ``expert/strategy``."""
    ts = _by_system(_list(files, "transcripts"))
    ms = _by_system(_list(files, "matches"))
    js = _by_system(_list(files, "judgements"))
    scores = _by_system(_list(files, "system_scores"))
    client = params.get("client") or {}
    matcher = params.get("matcher") or {}
    judge = params.get("judge") or {}
    out: dict[str, Any] = {}
    for s in systems:
        key = (s["expert"], s["strategy"])
        block: dict[str, Any] = {
            "expert": s["expert"],
            "strategy": s["strategy"],
            "label": s.get("label", _key(*key)),
            "group": s.get("group", ""),
        }
        t_paths = ts.get(key, [])
        if t_paths:
            _, _, hashes = record_owner(t_paths[0])
            block["config_hash"] = {"simulation": hashes[0], "shard_set": hashes[-1]}
            if ms.get(key):
                block["config_hash"]["matcher"] = record_owner(ms[key][0])[2][1]
            if js.get(key):
                block["config_hash"]["judge"] = record_owner(js[key][0])[2][1]
            if scores.get(key):
                block["config_hash"]["scoring"] = record_owner(scores[key][0])[2][1]
            block["params_check"] = params_check(params, key, block["config_hash"])
        block["scores"] = [file_ref(p) for p in scores.get(key, [])]
        block.update(system_records(key, t_paths, ms.get(key, []), js.get(key, [])))
        experts = [e for e in params.get("experts") or [] if (e["model"], e["strategy"]) == key]
        block["params"] = {"expert": experts[0] if experts else None}
        models = {
            "expert": describe_model(
                "expert", s["expert"], s["strategy"], params, store_dir=store_dir
            )
        }
        if client:
            models["client"] = describe_model(
                "client", client["model"], client.get("strategy", ""), params, store_dir=store_dir
            )
        if matcher:
            models["matcher"] = describe_model(
                "matcher", matcher["model"], "default", params, store_dir=store_dir
            )
        if judge:
            models["judge"] = describe_model(
                "judge", judge["model"], "default", params, store_dir=store_dir
            )
        block["models"] = models
        out[_key(*key)] = block
    return out


def run_block(
    files: Any, params: Mapping[str, Any], *, params_source: str, root: str | Path = "."
) -> dict[str, Any]:
    """What every cell of every table shares."""
    dataset: dict[str, Any] = {}
    for name in ("test", "train"):
        path = _one(files, name)
        if path is not None:
            dataset[name] = file_ref(path)
    index = _one(files, "index")
    if index is not None:
        info = json.loads(Path(index).read_text(encoding="utf-8"))
        dataset["shards"] = file_ref(
            index,
            shard_set=Path(index).parent.name,
            n_cases=info.get("n_cases"),
            n_shards=info.get("n_shards"),
            limit=(info.get("source") or {}).get("limit"),
        )
    out: dict[str, Any] = {
        "git": git_state(root),
        "dataset": dataset,
        "params": params_subset(params),
        "params_source": params_source,
        "metric_stack": metric_stack(params.get("metrics") or {}),
    }
    scores = _one(files, "scores")
    if scores is not None:
        out["scores"] = file_ref(scores)
    paper = _one(files, "paper")
    if paper is not None:
        out["paper"] = file_ref(paper)
    return out


def cell_id(table: str, label: str, setting: str, metric: str) -> str:
    """The id of a cell, as in the HTML report's ``data-cell`` attributes."""
    return f"{table}|{label}|{setting}|{metric}"


def _num(text: str) -> float | int | None:
    if text == "":
        return None
    value = float(text)
    return int(value) if value.is_integer() and "." not in text and "e" not in text else value


def _aggregation(kind: str, metric: str, scale: float, settings: Mapping[str, Any]) -> str:
    boot = (
        f"percentile bootstrap over dialogues ({settings.get('resamples')} resamples, "
        f"seed {settings.get('seed')}, {settings.get('confidence')} interval)"
    )
    factor = "" if scale == 1 else f", ×{scale:g}"
    if kind == "system":
        return (
            f"mean of {metric} over the n test dialogues where it is present{factor} "
            f"(missing = failed dialogue, no advice or no judge; never zero); {boot}"
        )
    if kind == "delta":
        return (
            f"mean paired difference of {metric} over the n dialogues both systems have"
            f"{factor}; {boot}; two-sided paired bootstrap p, Holm-adjusted over the table"
        )
    if kind == "paper":
        return "the published value (data/paper_numbers.csv), not computed here"
    return "ours minus the published value"


def _partners(
    table: str, row: Mapping[str, str], labels: Mapping[str, str], settings: Mapping[str, Any]
) -> list[str]:
    own = _key(row["expert"], row["strategy"])
    if row["kind"] != "delta":
        return [own] if row["expert"] else []
    if table == "paired":
        ref = row["label"].rsplit(" − ", 1)[-1]
        return [own, labels.get(ref, ref)]
    # Tables 6/7: the delta row is FS - ZS of one expert model (its strategy is left empty).
    return [
        _key(row["expert"], str(settings.get("few_shot", "few_shot"))),
        _key(row["expert"], str(settings.get("zero_shot", "zero_shot"))),
    ]


def metric_cells(
    csv_path: str | Path,
    systems: Mapping[str, Any],
    settings: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """One record per cell of a long-format table CSV."""
    from lecode.report.spec import EXTRA_METRICS, METRICS

    scale = {m.key: m.scale for m in (*METRICS, *EXTRA_METRICS)}
    labels = {b["label"]: k for k, b in systems.items()}
    cells = []
    with open(csv_path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            table, metric = row["table"], row["metric"]
            refs = _partners(table, row, labels, settings)
            cells.append(
                {
                    "id": cell_id(table, row["label"], row["setting"], metric),
                    "table": table,
                    "row": row["label"],
                    "setting": row["setting"],
                    "group": row["group"],
                    "kind": row["kind"],
                    "systems": refs,
                    "column": row["header"],
                    "metric": metric,
                    "scale": scale.get(metric, 1.0),
                    "value": _num(row["value"]),
                    "ci_low": _num(row["ci_low"]),
                    "ci_high": _num(row["ci_high"]),
                    "n": _num(row["n"]),
                    "N": _num(row["N"]),
                    "rank": _num(row["rank"]),
                    "p_value": _num(row["p_value"]),
                    "p_adjusted": _num(row["p_adjusted"]),
                    "display": row["display"],
                    "aggregation": _aggregation(
                        row["kind"], metric, scale.get(metric, 1.0), settings
                    ),
                }
            )
    return cells


def stats_cells(csv_path: str | Path, table: str) -> list[dict[str, Any]]:
    """One record per cell of Table 2 (dataset statistics)."""
    cells: list[dict[str, Any]] = []
    with open(csv_path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        columns = [c for c in reader.fieldnames or [] if c not in ("statistic", "name")]
        for row in reader:
            for col in columns:
                cells.append(
                    {
                        "id": cell_id(table, row["name"], "", f"{row['statistic']}:{col}"),
                        "table": table,
                        "row": row["name"],
                        "statistic": row["statistic"],
                        "setting": "",
                        "kind": "dataset",
                        "systems": [],
                        "column": col,
                        "value": _num(row[col]),
                        "aggregation": (
                            f"{row['name']} over the {col} split"
                            if col != "total"
                            else f"{row['name']} over train and test together"
                        )
                        + " of the configured dataset files (run.dataset)",
                    }
                )
    return cells


def usage_cells(csv_path: str | Path, systems: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One record per cell of the usage table (sums of the records' usage ledgers)."""
    labels = {b["label"]: k for k, b in systems.items()}
    cells: list[dict[str, Any]] = []
    with open(csv_path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            for col in (
                "dialogues",
                "calls",
                "cached",
                "retries",
                "prompt_tokens",
                "completion_tokens",
                "cost",
            ):
                ref = labels.get(row["label"])
                cells.append(
                    {
                        "id": cell_id("usage", row["label"], row["role"], col),
                        "table": "usage",
                        "row": row["label"],
                        "setting": row["role"],
                        "kind": "usage",
                        "systems": [ref] if ref else sorted(systems),
                        "column": col,
                        "value": _num(row.get(col, "")),
                        "aggregation": f"sum of {col} of role {row['role']} over the usage "
                        "ledgers of the transcripts, matches and judgements",
                    }
                )
    return cells


def build_documents(
    tables_dir: str | Path,
    files: Any,
    systems: Sequence[Mapping[str, str]],
    params: Mapping[str, Any],
    *,
    params_source: str = "snakemake config",
    root: str | Path = ".",
) -> dict[str, dict[str, Any]]:
    """The provenance document of every table found in ``tables_dir`` (by its CSV)."""
    llm = dict(params.get("llm") or {})
    store_dir = llm.get("store_dir", "store/responses")
    run = run_block(files, params, params_source=params_source, root=root)
    report = dict(params.get("report") or {})
    settings = {**report, **dict(report.get("bootstrap") or {})}
    settings.pop("bootstrap", None)
    run["report"] = settings
    sys_block = systems_block(files, systems, params, store_dir=store_dir)
    out: dict[str, dict[str, Any]] = {}
    folder = Path(tables_dir)
    for csv_path in sorted(folder.glob("*.csv")):
        name = csv_path.stem
        if name in METRIC_TABLES:
            cells = metric_cells(csv_path, sys_block, settings)
            used = sorted({k for c in cells for k in c["systems"]})
        elif name == "table2":
            cells, used = stats_cells(csv_path, name), []
        elif name == "usage":
            cells = usage_cells(csv_path, sys_block)
            used = sorted({k for c in cells for k in c["systems"]})
        else:
            continue
        out[name] = {
            "schema": SCHEMA_VERSION,
            "table": name,
            "files": {
                ext: file_ref(folder / f"{name}.{ext}")
                for ext in ("md", "csv", "tex")
                if (folder / f"{name}.{ext}").is_file()
            },
            "run": run,
            "systems": {k: sys_block[k] for k in used if k in sys_block},
            "cells": cells,
        }
    return out


def dumps(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=False) + "\n"


def write_provenance(
    tables_dir: str | Path,
    files: Any,
    systems: Sequence[Mapping[str, str]],
    params: Mapping[str, Any],
    *,
    params_source: str = "snakemake config",
    root: str | Path = ".",
) -> list[Path]:
    """Write ``<table>.provenance.json`` next to each table; returns the written paths."""
    docs = build_documents(
        tables_dir, files, systems, params, params_source=params_source, root=root
    )
    written = []
    for name, doc in docs.items():
        path = Path(tables_dir) / f"{name}{SUFFIX}"
        atomic_write_text(path, dumps(doc))
        written.append(path)
    return written


def load(tables_dir: str | Path, table: str) -> dict[str, Any]:
    path = Path(tables_dir) / f"{table}{SUFFIX}"
    if not path.is_file():
        have = sorted(p.name[: -len(SUFFIX)] for p in Path(tables_dir).glob(f"*{SUFFIX}"))
        raise FileNotFoundError(
            f"{path}: no provenance for table {table!r}"
            + (f" (tables with provenance: {', '.join(have)})" if have else "")
        )
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def load_all(tables_dir: str | Path) -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted(Path(tables_dir).glob(f"*{SUFFIX}")):
        out[path.name[: -len(SUFFIX)]] = json.loads(path.read_text(encoding="utf-8"))
    return out
