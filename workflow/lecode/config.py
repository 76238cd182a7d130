"""Experiment parameters: load ``params.yaml``, validate it, and derive per-job configurations.

The schema (``workflow/schemas/params.schema.yaml``) checks shapes; :func:`check_semantics`
checks what a schema cannot (that every role names a defined model that can play it).
Each simulation job's *effective configuration* is hashed into its output path, so changing
one expert's settings reruns only that expert's jobs, on a fresh clone too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from lecode.dataset import file_sha256

PACKAGE_DIR = Path(__file__).resolve().parent
WORKFLOW_DIR = PACKAGE_DIR.parent
SCHEMA_PATH = WORKFLOW_DIR / "schemas" / "params.schema.yaml"
PROMPTS_DIR = WORKFLOW_DIR / "prompts"

#: Settings that never change a model's outputs and so stay out of configuration hashes.
RUNTIME_ONLY_KEYS = frozenset({"label", "group", "concurrency", "timeout", "max_retries", "price"})


class ParamsError(ValueError):
    """``params.yaml`` is invalid; the message names the setting."""


def _where(path: Iterable[Any]) -> str:
    parts = [str(p) for p in path]
    return ".".join(parts) if parts else "<top level>"


def validate(params: dict[str, Any]) -> dict[str, Any]:
    """Validate against the schema and the semantic rules; returns ``params`` unchanged."""
    schema = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"  {_where(e.absolute_path)}: {e.message}" for e in errors[:20]]
        raise ParamsError("params.yaml is invalid:\n" + "\n".join(lines))
    check_semantics(params)
    return params


def check_semantics(params: dict[str, Any]) -> None:
    models = params["models"]
    problems: list[str] = []

    def need(where: str, name: str) -> dict[str, Any] | None:
        if name not in models:
            problems.append(f"  {where}: model {name!r} is not defined under models:")
            return None
        return models[name]

    seen: set[tuple[str, str]] = set()
    for i, e in enumerate(params["experts"]):
        m = need(f"experts[{i}].model", e["model"])
        key = (e["model"], e["strategy"])
        if key in seen:
            problems.append(f"  experts[{i}]: {e['model']}/{e['strategy']} is listed twice")
        seen.add(key)
        if m is None:
            continue
        offline = m["backend"] == "offline"
        if offline and m.get("agent") not in ("human_replay", "retrieval"):
            problems.append(f"  experts[{i}]: offline agent {m.get('agent')!r} is not an expert")
        if offline != (e["strategy"] == "baseline"):
            problems.append(
                f"  experts[{i}].strategy: offline experts use 'baseline' and LLM experts an "
                f"LLM strategy; got {e['strategy']!r} for backend {m['backend']!r}"
            )
    roles = [("client", "fact_lookup"), ("matcher", "lexical")]
    for role, offline_agent in roles:
        m = need(f"{role}.model", params[role]["model"])
        if m is not None and m["backend"] == "offline" and m.get("agent") != offline_agent:
            problems.append(
                f"  {role}.model: offline agent {m.get('agent')!r} cannot be the {role}"
            )
    if params.get("judge"):
        m = need("judge.model", params["judge"]["model"])
        if m is not None and m["backend"] == "offline":
            problems.append("  judge.model: the judge must be an LLM (no offline judge exists)")
    if problems:
        raise ParamsError("params.yaml is inconsistent:\n" + "\n".join(problems))


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = (
            deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
        )
    return out


def load_params(path: str | Path = "params.yaml", *extra: str | Path) -> dict[str, Any]:
    """Load ``path`` with any extra config files merged over it (like ``--configfile``)."""
    params: dict[str, Any] = {}
    for p in (path, *extra):
        data = yaml.safe_load(Path(p).read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ParamsError(f"{p}: top level must be a mapping")
        params = deep_merge(params, data)
    return validate(params)


def stable_hash(obj: Any, length: int = 10) -> str:
    """Short sha256 of the canonical JSON of ``obj``."""
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:length]


def file_hashes(paths: Iterable[Path]) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in sorted(set(paths))}


def code_hash(*relative: str) -> str:
    """Hash of package source files (or folders) whose change must rerun a step's jobs."""
    files: list[Path] = []
    for rel in relative:
        p = PACKAGE_DIR / rel
        files.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


#: The code that decides a step's outputs (hashed into that step's configuration).
SIMULATION_CODE = ("simulate.py", "agents", "text.py")
MATCHING_CODE = ("agents", "text.py")
SCORING_CODE = ("scoring.py", "metrics", "text.py")
REPORT_CODE = ("report", "stats.py", "provenance.py", "explain.py")


def model_identity(model_cfg: dict[str, Any]) -> dict[str, Any]:
    """The part of a model entry that can change its outputs."""
    return {k: v for k, v in sorted(model_cfg.items()) if k not in RUNTIME_ONLY_KEYS}


def _templates(role: str, model_cfg: dict[str, Any], strategy: str) -> dict[str, str]:
    if model_cfg["backend"] == "offline":
        return {}
    from lecode.agents.llm_roles import template_files

    return file_hashes(template_files(role, strategy))


def simulation_config(params: dict[str, Any], expert: str, strategy: str) -> dict[str, Any]:
    """Everything that determines the transcripts of one expert x strategy."""
    models = params["models"]
    client = params["client"]
    em, cm = models[expert], models[client["model"]]
    cfg: dict[str, Any] = {
        "expert": {"name": expert, **model_identity(em)},
        "strategy": strategy,
        "expert_templates": _templates("expert", em, strategy),
        "client": {"name": client["model"], **model_identity(cm)},
        "client_strategy": client["strategy"],
        "client_templates": _templates("client", cm, client["strategy"]),
        "max_turns": params["simulation"]["max_turns"],
        "code": code_hash(*SIMULATION_CODE),
    }
    if em["backend"] == "offline" and em.get("agent") == "retrieval":
        cfg["train_sha256"] = file_sha256(params["dataset"]["train"])
    return cfg


def matcher_config(params: dict[str, Any]) -> dict[str, Any]:
    name = params["matcher"]["model"]
    m = params["models"][name]
    return {
        "name": name,
        **model_identity(m),
        "templates": _templates("matcher", m, "default"),
        "code": code_hash(*MATCHING_CODE),
    }


def judge_config(params: dict[str, Any]) -> dict[str, Any] | None:
    if not params.get("judge"):
        return None
    name = params["judge"]["model"]
    m = params["models"][name]
    return {"name": name, **model_identity(m), "templates": _templates("judge", m, "default")}


def systems(params: dict[str, Any]) -> list[dict[str, str]]:
    """The table rows: one per configured expert x strategy, with display label and group."""
    out = []
    for e in params["experts"]:
        m = params["models"][e["model"]]
        default_group = "Baselines (ours)" if m["backend"] == "offline" else "LLMs"
        out.append(
            {
                "expert": e["model"],
                "strategy": e["strategy"],
                "label": e.get("label") or m.get("label") or f"{e['model']}/{e['strategy']}",
                "group": e.get("group") or m.get("group") or default_group,
            }
        )
    return out
