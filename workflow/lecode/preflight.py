"""Checks that need the machine, run before any job can spend money: by the Snakefile when it
builds the DAG and by ``lecode check``, through the one function :func:`preflight`, so both
refuse the same configurations with the same message. Also the JSON schema of ``params.yaml``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lecode.config.base import SettingsError
from lecode.config.experiment import Settings
from lecode.config.sections import REPLAY_ENV

#: Violations of a dataset file shown before the rest are counted.
SHOWN_VIOLATIONS = 5
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "params.schema.json"


def preflight(
    settings: Settings,
    environ: Mapping[str, str] | None = None,
    *,
    keys: bool = True,
    models: Iterable[str] | None = None,
    layers: Sequence[str | Path] = (),
) -> None:
    """Dataset files readable, non-empty and valid LeCoDe JSONL; the sentinel's stored
    judgements present when the sentinel runs; one protocol per table (no two snapshots of a
    protocol model; with ``layers``, the configuration files in merge order, defaults first, no
    file that changes a protocol setting an earlier one set: :mod:`lecode.config.protocol`);
    with ``keys``, the API key variable of every model in ``models`` (default: every LLM model a
    role uses) set, unless in replay mode. Raises :class:`SettingsError` naming each setting."""
    from lecode.config.protocol import layer_problems, load_layers, snapshot_problems

    problems = [*layer_problems(load_layers(layers)), *snapshot_problems(settings)]
    problems += [*data_problems(settings), *sentinel_problems(settings)]
    problems += questions_file_problems(settings)
    if keys:
        names = settings.llm_models() if models is None else models
        problems += key_problems(settings, names, environ)
    _raise(problems)


def check_keys(
    settings: Settings, models: Iterable[str], environ: Mapping[str, str] | None = None
) -> None:
    """The API keys of ``models`` only (the Snakefile's check of the jobs it scheduled)."""
    _raise(list(key_problems(settings, models, environ)))


def _raise(problems: list[str]) -> None:
    if problems:
        raise SettingsError("the experiment cannot run:\n" + "\n".join(f"  {p}" for p in problems))


def count_records(path: str | Path) -> int:
    """Non-blank lines of a JSONL file (a cheap count; ``lecode validate`` parses them)."""
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


def data_problems(settings: Settings) -> Iterator[str]:
    """The dataset files are readable, hold consultations and are valid (naming the setting)."""
    from lecode.dataset import validate_file

    for key in ("test", "train"):
        path = getattr(settings.dataset, key)
        try:
            n = count_records(path)
        except OSError as exc:
            yield f"dataset.{key}: cannot read {path}: {exc.strerror or exc}"
            continue
        if n == 0:
            if key == "test" or _needs_train(settings):
                yield f"dataset.{key}: {path} holds no consultations"
            continue
        violations = validate_file(path)
        for v in violations[:SHOWN_VIOLATIONS]:
            yield f"dataset.{key}: {v}"
        if len(violations) > SHOWN_VIOLATIONS:
            yield (
                f"dataset.{key}: {len(violations) - SHOWN_VIOLATIONS} more problem(s) "
                f"(lecode validate {path} lists them all)"
            )


def _needs_train(settings: Settings) -> bool:
    return any(
        getattr(settings.models[e.model], "agent", None) == "retrieval" for e in settings.experts
    )


def questions_file_problems(settings: Settings) -> list[str]:
    """The reliability study's hand-written questions file, when it has one, is valid."""
    r = settings.reliability
    if not r.enabled or r.questions_file is None:
        return []
    from lecode.reliability.hand import HandQuestionsError, read_hand_questions

    try:
        read_hand_questions(r.questions_file, r.questions)
    except HandQuestionsError as exc:
        return [f"reliability.questions_file: {exc}"]
    return []


def sentinel_problems(settings: Settings) -> Iterator[str]:
    """With a judge and the sentinel on, its anchors and stored judgements must exist: a
    mistyped path would otherwise silently leave every judge unrecorded."""
    cfg = settings.judge_sentinel
    if settings.judge is None or not cfg.enabled:
        return
    if not Path(cfg.anchors).is_file():
        yield f"judge_sentinel.anchors: {cfg.anchors} does not exist"
    if not Path(cfg.stored).is_file():
        yield (
            f"judge_sentinel.stored: {cfg.stored} does not exist (a mistyped path? to start "
            'a new record write {"judges": {}} there; or set judge_sentinel.enabled: false)'
        )


def key_problems(
    settings: Settings, models: Iterable[str], environ: Mapping[str, str] | None = None
) -> Iterator[str]:
    """The API key variable of each of ``models`` is set (nothing is needed in replay mode,
    where every response comes from the store)."""
    env = os.environ if environ is None else environ
    if settings.replay(env):
        return
    for name in dict.fromkeys(models):
        m = settings.models[name]
        var = getattr(m, "api_key_env", None)
        if m.is_llm and var and not env.get(var):
            yield (
                f"models.{name}.api_key_env: environment variable {var} is not set "
                f"(set it, or regenerate from stored responses with {REPLAY_ENV}=1)"
            )


def json_schema() -> dict[str, Any]:
    """The JSON schema of ``params.yaml``, generated from :class:`Settings`."""
    schema = Settings.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "lecode experiment parameters (params.yaml)"
    return schema
