"""One protocol per table: the settings every row of a table shares (client, matcher, judge,
BERTScore, and the question writers that feed the SFT and reliability rows).

Two ways of breaking it are refused (:func:`lecode.preflight.preflight` runs both):

* a configuration file layered over another (``--configfile a.yaml b.yaml``, ``lecode check
  --params ...``) that changes a protocol setting the earlier file set: the later file's rows
  would sit in the same tables as the earlier file's rows, produced under other settings
  (:func:`layer_problems`). An overlay may add rows, models and studies, or narrow them;
* two snapshots of one model in protocol roles (the client ``qwen-max-2024-09-19`` and the
  SFT writer ``qwen-max-2025-01-25``): one of them is not the model the other rows were
  produced with (:func:`snapshot_problems`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lecode.config.base import SettingsError, identity
from lecode.config.experiment import Settings
from lecode.config.models import model_entry
from lecode.config.sections import BertScoreSettings

#: Which table rows each protocol role's settings reach.
ROLE_TABLES = {
    "client": "Tables 3, 6, 7 and Figure 7",
    "matcher": "Tables 3, 6, 7 and Figure 7",
    "judge": "Tables 3, 6, 7 and Figure 7",
    "sft.writer": "the SFT rows of Table 3 and Figure 7",
    "reliability.question_writer": "Table 4",
    "reliability.judge": "Table 4",
}
#: BERTScore fields that change scores (threads and memory do not).
_BERTSCORE_RUNTIME = ("threads", "mem_mb")
_DATED = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{4}|\d{8})$")


def snapshot_family(model_id: str) -> str:
    """``qwen-max-2024-09-19`` -> ``qwen-max``; ``gpt-3.5-turbo-1106`` -> ``gpt-3.5-turbo``."""
    return _DATED.sub("", model_id)


def protocol_roles(data: Mapping[str, Any]) -> dict[str, str]:
    """Role -> model entry name of every protocol role the (merged, raw) configuration sets."""
    out: dict[str, str] = {}
    for role in ("client", "matcher", "judge"):
        section = data.get(role)
        if isinstance(section, Mapping) and isinstance(section.get("model"), str):
            out[role] = section["model"]
    for section, key in (("sft", "writer"), ("reliability", "question_writer")):
        value = (data.get(section) or {}).get(key)
        if isinstance(value, str):
            out[f"{section}.{key}"] = value
    rel = data.get("reliability") or {}
    if rel.get("enabled") and isinstance(rel.get("judge"), str):
        out["reliability.judge"] = rel["judge"]
    return out


def _entry_identity(name: str, raw: Any) -> dict[str, Any]:
    try:
        return identity(model_entry(name, raw))
    except SettingsError:  # an invalid entry: Settings.parse names its problem
        return dict(raw) if isinstance(raw, Mapping) else {"": raw}


def _bertscore_identity(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        return {}
    try:
        return identity(BertScoreSettings(**raw))
    except (TypeError, ValueError):
        return {k: v for k, v in raw.items() if k not in _BERTSCORE_RUNTIME}


def protocol_settings(data: Mapping[str, Any]) -> dict[str, Any]:
    """Setting path -> value of every protocol setting ``data`` holds: the role names, the
    identity fields of each role's model entry, and BERTScore's scoring fields."""
    out: dict[str, Any] = {}
    models = data.get("models") or {}
    for role, name in protocol_roles(data).items():
        out[role if "." in role else f"{role}.model"] = name
        if name in models:
            for k, v in _entry_identity(name, models[name]).items():
                out[f"models.{name}.{k}"] = v
    bertscore = (data.get("metrics") or {}).get("bertscore")
    for k, v in _bertscore_identity(bertscore).items():
        if k != "enabled":
            out[f"metrics.bertscore.{k}"] = v
    return out


def _rows(data: Mapping[str, Any]) -> list[str]:
    out = []
    for e in data.get("experts") or ():
        if isinstance(e, Mapping):
            model = (data.get("models") or {}).get(e.get("model"), {})
            label = e.get("label") or (model.get("label") if isinstance(model, Mapping) else None)
            out.append(str(label or f"{e.get('model')}/{e.get('strategy')}"))
    return out


def _shown(items: Sequence[str], limit: int = 8) -> str:
    head = ", ".join(items[:limit])
    return head + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _whose(setting: str, roles: Mapping[str, str]) -> str:
    """The protocol role(s) a setting path belongs to (``models.qwen-max.model`` -> client,
    matcher)."""
    if setting.startswith("metrics.bertscore"):
        return "BERTScore"
    if setting.startswith("models."):
        name = setting.split(".")[1]
        return ", ".join(r for r, n in roles.items() if n == name) or "a protocol role"
    return setting.removesuffix(".model")


def layer_problems(layers: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """``layers``: (file name, its mapping) in the order they are merged, the defaults
    (``params.yaml``) first. Each file after the second must not change a protocol setting
    the files before it set (the defaults may be changed: they are no experiment's protocol).
    Each problem names the file, the setting, both values and the rows."""
    from lecode.config.experiment import deep_merge

    problems: list[str] = []
    if len(layers) < 3:
        return problems
    merged = deep_merge(dict(layers[0][1]), layers[1][1])
    set_by = [layers[1][0]]
    for name, data in layers[2:]:
        after = deep_merge(merged, data)
        before_protocol, after_protocol = protocol_settings(merged), protocol_settings(after)
        roles = protocol_roles(merged)
        changed = [
            k for k, v in before_protocol.items() if k in after_protocol and after_protocol[k] != v
        ]
        for k in changed:
            problems.append(
                f"{name}: {k} is {after_protocol[k]!r} where {' + '.join(set_by)} has "
                f"{before_protocol[k]!r} ({_whose(k, roles)} of {_table_of(k, roles)}): the rows "
                f"{_shown(_rows(after))} would be produced under other {_whose(k, roles)} "
                f"settings than the rows {_shown(_rows(merged))}; an overlay may add or narrow, "
                "never change a protocol setting"
            )
        merged = after
        set_by.append(name)
    return problems


def _table_of(setting: str, roles: Mapping[str, str]) -> str:
    if setting.startswith("metrics.bertscore"):
        return "Tables 3, 6, 7 and Figure 7"
    whose = [r for r in roles if r == setting.removesuffix(".model")]
    if setting.startswith("models."):
        name = setting.split(".")[1]
        whose = [r for r, n in roles.items() if n == name]
    return "; ".join(dict.fromkeys(ROLE_TABLES.get(r, "its table") for r in whose)) or "a table"


def load_layers(paths: Iterable[str | Path]) -> list[tuple[str, Mapping[str, Any]]]:
    """Each configuration file with its mapping (unreadable files are :meth:`Settings.load`'s
    to report: they are skipped here)."""
    import yaml

    out: list[tuple[str, Mapping[str, Any]]] = []
    for p in paths:
        try:
            data = yaml.safe_load(Path(p).read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, Mapping):
            out.append((str(p), data))
    return out


def snapshot_problems(settings: Settings) -> Iterator[str]:
    """Protocol roles played by two snapshots of one model (same endpoint, same model id up to
    its date): every row of a table must meet the same client, matcher, judge and writer."""
    seen: dict[tuple[str, str], tuple[str, str, str]] = {}
    roles = protocol_roles(settings.model_dump())
    for role, name in roles.items():
        entry = settings.models.get(name)
        model_id = getattr(entry, "model", None)
        if entry is None or not entry.is_llm or not model_id:
            continue
        key = (getattr(entry, "base_url", None) or entry.backend, snapshot_family(model_id))
        if key in seen and seen[key][2] != model_id:
            other_role, other_name, other_id = seen[key]
            yield (
                f"models.{name}.model: {role} is {model_id!r}, another snapshot of "
                f"{other_id!r} (models.{other_name}, the {other_role}); the rows of "
                f"{ROLE_TABLES[role]} would meet two versions of one model: use one entry"
            )
        seen.setdefault(key, (role, name, model_id))
