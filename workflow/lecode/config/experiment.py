"""The whole experiment (``params.yaml``): the sections, parsed once, with the checks a schema
cannot express (every role names a model that can play it, labels unique).

Every section and every model entry forbids unknown keys, so a typo such as ``temprature``
is an error, never a silently ignored setting. Defaults are defined in the section models and
nowhere else. Checks that need the machine (dataset files, API key variables, the sentinel's
stored judgements) are :func:`lecode.preflight.preflight`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from lecode.config.base import Name, ParamsFileError, Section, SettingsError
from lecode.config.corpus import CorpusSettings
from lecode.config.models import OFFLINE_ROLES, ModelEntry, VLLMEntry
from lecode.config.roles import BASELINE, ClientRole, EvaluatorRole, ExpertRole, System
from lecode.config.sections import (
    CmdSettings,
    DatasetSettings,
    LLMSettings,
    MetricsSettings,
    ReliabilitySettings,
    ReplicateSettings,
    ReportSettings,
    SentinelSettings,
    SFTSettings,
    SimulationSettings,
    replay_forced,
)
from lecode.config.strategy_names import declared_strategies


class Settings(Section):
    """The whole experiment."""

    dataset: DatasetSettings
    models: dict[Name, ModelEntry] = Field(min_length=1)
    experts: tuple[ExpertRole, ...] = Field(min_length=1)
    client: ClientRole
    matcher: EvaluatorRole
    judge: EvaluatorRole | None = None
    simulation: SimulationSettings = SimulationSettings()
    metrics: MetricsSettings
    report: ReportSettings = ReportSettings()
    llm: LLMSettings = LLMSettings()
    cmd: CmdSettings = CmdSettings()
    sft: SFTSettings = SFTSettings()
    reliability: ReliabilitySettings = ReliabilitySettings()
    replicates: ReplicateSettings = ReplicateSettings()
    judge_sentinel: SentinelSettings = SentinelSettings()
    corpus: CorpusSettings = CorpusSettings()

    @model_validator(mode="after")
    def _semantics(self) -> Settings:
        problems = list(_semantic_problems(self))
        if problems:
            raise ValueError("\n".join(problems))
        return self

    # -- parsing ---------------------------------------------------------------------------

    @classmethod
    def parse(cls, data: Mapping[str, Any], source: str = "params.yaml") -> Settings:
        """Validate ``data``; every problem is reported with the setting's dotted path."""
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            raise SettingsError(format_errors(exc, source, data)) from None

    @classmethod
    def load(cls, path: str | Path = "params.yaml", *extra: str | Path) -> Settings:
        """``path`` with any extra files merged over it, as ``snakemake --configfile`` does."""
        import yaml  # here, not at the top: jobs get their spec as JSON and never read YAML

        merged: dict[str, Any] = {}
        for p in (path, *extra):
            try:
                data = yaml.safe_load(Path(p).read_text(encoding="utf-8")) or {}
            except OSError as exc:
                raise ParamsFileError(f"{p}: cannot read: {exc.strerror or exc}") from None
            except yaml.YAMLError as exc:
                raise ParamsFileError(f"{p}: not valid YAML: {exc}") from None
            if not isinstance(data, dict):
                raise ParamsFileError(f"{p}: the top level must be a mapping")
            merged = deep_merge(merged, data)
        return cls.parse(merged, source=" + ".join(str(p) for p in (path, *extra)))

    # -- derived ---------------------------------------------------------------------------

    def systems(self) -> list[System]:
        """The table rows in configuration order, with display label and group."""
        out = []
        for e in self.experts:
            m = self.models[e.model]
            default_group = "Baselines (ours)" if not m.is_llm else "LLMs"
            out.append(
                System(
                    expert=e.model,
                    strategy=e.strategy,
                    label=e.label or m.label or f"{e.model}/{e.strategy}",
                    group=e.group or m.group or default_group,
                    paper_label=e.paper_label or m.paper_label,
                )
            )
        return out

    def role_models(self) -> list[str]:
        """Every model name a role uses (experts, client, matcher, judge, and the reliability
        study's when it is enabled), in order, once."""
        names = [e.model for e in self.experts] + [self.client.model, self.matcher.model]
        if self.judge is not None:
            names.append(self.judge.model)
        r = self.reliability
        if r.enabled:
            names += [c.model for c in r.clients] or [self.client.model]
            names += [n for n in (r.question_writer, r.judge) if n is not None]
        return list(dict.fromkeys(names))

    def llm_models(self) -> list[str]:
        return [n for n in self.role_models() if self.models[n].is_llm]

    def replay(self, environ: Mapping[str, str] | None = None) -> bool:
        return self.llm.replay or replay_forced(environ)


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = (
            deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
        )
    return out


def format_errors(exc: ValidationError, source: str, data: Any = None) -> str:
    lines: list[str] = []
    for err in exc.errors()[:30]:
        loc = _setting_path(err["loc"], data)
        where = ".".join(loc) or "<top level>"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown setting (a typo?)"
        if not loc:  # semantic problems: each names its own setting
            lines.extend(f"  {line}" for line in msg.splitlines())
            continue
        lines.append(f"  {where}: {msg}")
    return f"{source} is invalid:\n" + "\n".join(lines)


def _setting_path(loc: tuple[Any, ...], data: Any) -> list[str]:
    """``loc`` without the union-member tags pydantic inserts (``openai``, ``retrieval``),
    found by walking the input: a tag is a part that is no key of the data at that point."""
    out: list[str] = []
    for part in loc:
        if isinstance(data, dict):
            if part in data:
                data = data[part]
            elif part in (data.get("backend"), data.get("agent")):
                continue
            else:
                data = None
        elif isinstance(data, (list, tuple)) and isinstance(part, int) and part < len(data):
            data = data[part]
            out[-1:] = [f"{out[-1]}[{part}]"] if out else [f"[{part}]"]
            continue
        else:
            data = None
        out.append(str(part))
    return out


def strategy_names(role: str) -> tuple[str, ...]:
    """The declared LLM strategies of ``role`` (``expert`` or ``client``), by file name."""
    return declared_strategies(role)


def _strategy_problems(s: Settings) -> Iterable[str]:
    """Every strategy named is declared (offline experts play ``baseline``)."""
    expert = (BASELINE, *strategy_names("expert"))
    client = strategy_names("client")

    def unknown(where: str, role: str, name: str, known: tuple[str, ...]) -> str:
        return f"{where}: unknown {role} strategy {name!r}; declared: {', '.join(known)}"

    for i, e in enumerate(s.experts):
        if e.strategy not in expert:
            yield unknown(f"experts[{i}].strategy", "expert", e.strategy, expert)
    if s.client.strategy not in client:
        yield unknown("client.strategy", "client", s.client.strategy, client)
    for i, c in enumerate(s.reliability.clients):
        for k, name in enumerate(c.strategies):
            if name not in client:
                yield unknown(f"reliability.clients[{i}].strategies[{k}]", "client", name, client)


def _semantic_problems(s: Settings) -> Iterable[str]:
    """What a schema cannot say: every role names a model that can play it, labels unique."""

    def entry(where: str, name: str) -> Any:
        if name not in s.models:
            raise_ = f"{where}: model {name!r} is not defined under models"
            problems.append(raise_)
            return None
        return s.models[name]

    problems: list[str] = list(_strategy_problems(s))
    if problems:  # the checks below assume declared strategies
        return problems
    seen: dict[tuple[str, str], int] = {}
    for i, e in enumerate(s.experts):
        m = entry(f"experts[{i}].model", e.model)
        key = (e.model, e.strategy)
        if key in seen:
            problems.append(f"experts[{i}]: {e.model}/{e.strategy} repeats experts[{seen[key]}]")
        seen.setdefault(key, i)
        if m is None:
            continue
        if not m.is_llm and OFFLINE_ROLES[m.agent] != "expert":
            problems.append(f"experts[{i}].model: offline agent {m.agent!r} is not an expert")
        elif (not m.is_llm) != (e.strategy == BASELINE):
            problems.append(
                f"experts[{i}].strategy: offline experts play 'baseline' and LLM experts an "
                f"LLM strategy; got {e.strategy!r} for backend {m.backend!r}"
            )
    for role in ("client", "matcher"):
        m = entry(f"{role}.model", getattr(s, role).model)
        if m is not None and not m.is_llm and OFFLINE_ROLES[m.agent] != role:
            problems.append(f"{role}.model: offline agent {m.agent!r} cannot be the {role}")
    if s.judge is not None:
        m = entry("judge.model", s.judge.model)
        if m is not None and not m.is_llm:
            problems.append("judge.model: the judge must be an LLM (no offline judge exists)")
    for name, m in s.models.items():
        if isinstance(m, VLLMEntry) and m.server is not None:
            host = s.models.get(m.server)
            if not isinstance(host, VLLMEntry) or host.model_path is None:
                problems.append(
                    f"models.{name}.server: {m.server!r} is not a vllm entry with a model_path"
                )
    problems.extend(_reliability_problems(s))
    problems.extend(_sft_problems(s))
    for i, name in enumerate(s.replicates.experts):
        if name not in {e.model for e in s.experts}:
            problems.append(f"replicates.experts[{i}]: {name!r} is not the model of an expert")
    if not problems:
        labels: dict[str, int] = {}
        for i, sys_ in enumerate(s.systems()):
            if sys_.label in labels:
                problems.append(
                    f"experts[{i}]: label {sys_.label!r} is also the label of "
                    f"experts[{labels[sys_.label]}]; every table row needs its own label "
                    "(set experts[].label)"
                )
            labels.setdefault(sys_.label, i)
    return problems


def _reliability_problems(s: Settings) -> Iterable[str]:
    """The reliability section names models that can play its roles."""
    r = s.reliability
    for i, c in enumerate(r.clients):
        m = s.models.get(c.model)
        if m is None:
            yield f"reliability.clients[{i}].model: model {c.model!r} is not defined under models"
        elif not m.is_llm and OFFLINE_ROLES[m.agent] != "client":  # type: ignore[union-attr]
            yield f"reliability.clients[{i}].model: offline agent {m.agent!r} is not a client"  # type: ignore[union-attr]
    if r.question_writer is not None and r.questions_file is not None:
        yield (
            "reliability.questions_file: the questions come from a file or from "
            f"reliability.question_writer ({r.question_writer!r}), not both"
        )
    models = [c.model for c in r.clients]
    if len(set(models)) != len(models):
        yield f"reliability.clients: {models} names a model twice"
    for key in ("judge", "question_writer"):
        name = getattr(r, key)
        if name is None:
            continue
        m = s.models.get(name)
        if m is None:
            yield f"reliability.{key}: model {name!r} is not defined under models"
        elif not m.is_llm:
            yield f"reliability.{key}: {name!r} is an offline agent; name an LLM model entry"


def _sft_problems(s: Settings) -> Iterable[str]:
    """What the ``sft:`` section names that the rest of the configuration cannot provide."""
    sft = s.sft
    if len(set(sft.variants)) != len(sft.variants):
        yield f"sft.variants: {list(sft.variants)} repeats a variant"
    if sft.train.enabled and sft.train.base_model is None:
        yield (
            "sft.train.enabled: training needs sft.train.base_model, the base model's local "
            "directory (e.g. models/Qwen2.5-7B-Instruct)"
        )
    if sft.writer is not None:
        entry = s.models.get(sft.writer)
        if entry is None:
            yield f"sft.writer: model {sft.writer!r} is not defined under models"
        elif not entry.is_llm:
            yield (
                f"sft.writer: {sft.writer!r} is an offline agent; name an LLM model entry, or "
                "null for the built-in template writer"
            )
