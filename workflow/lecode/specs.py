"""Per-job specifications: everything that decides one job's outputs, and nothing else.

Each step gets a typed spec derived from :class:`lecode.config.experiment.Settings` by
:class:`lecode.pipeline.Plan`. A spec's :meth:`~JobSpec.digest` (sha256 of its canonical JSON,
runtime-only settings left out) is the directory its outputs live in, the key of its
journal, and what provenance records; the rule hands the spec's JSON to the job
(``params: spec=...``), and the job reads nothing else of the configuration.

Runtime-only settings (concurrency, timeouts, prices, labels of a model, the response store's
place) are fields marked :data:`~lecode.config.base.RUNTIME_ONLY`, in the specs (``runtime``)
and in the sections they hold; :func:`~lecode.config.base.identity` leaves them out of every
digest, so changing them reruns nothing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from lecode.config.base import Section
from lecode.config.base import identity as identity_data
from lecode.config.models import ModelEntry
from lecode.config.sections import (
    LLMSettings,
    SimulationSettings,
)

SPEC_VERSION = 1


def stable_hash(obj: Any, length: int = 10) -> str:
    """Short sha256 of the canonical JSON of ``obj``."""
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:length]


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class FileRef(Section):
    """A file the job reads, named by its content."""

    path: str
    sha256: str

    @classmethod
    def of(cls, path: str | Path) -> FileRef:
        return cls(path=str(path), sha256=file_sha256(path))


class Role(Section):
    """A role played by a named model entry (its runtime-only keys do not enter digests).
    ``adapter``: for a vLLM entry served as a LoRA adapter, the adapter's identity
    (:meth:`lecode.plan.roles.Roles.adapter_identity`); None otherwise."""

    name: str
    entry: ModelEntry
    adapter: str | None = None

    @property
    def is_llm(self) -> bool:
        return self.entry.is_llm


def roles_in(data: Any) -> list[Role]:
    """Every role a spec's data holds, at any depth (a replicate's spec holds the simulation's,
    the matcher's and the judge's): the models a job with that spec calls."""
    found: list[Role] = []

    def walk(x: Any) -> None:
        if isinstance(x, Role):
            found.append(x)
        elif isinstance(x, Section):
            for name in type(x).model_fields:
                walk(getattr(x, name))
        elif isinstance(x, dict):
            if set(x) == set(Role.model_fields):
                found.append(Role.model_validate(x))
            else:
                for v in x.values():
                    walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)

    walk(data)
    return found


def roles_in_param(value: Any) -> list[Role]:
    """The roles of a rule's ``params: spec`` value: a spec's JSON holds them; other values
    (a digest that only marks a rerun) hold none."""
    if not isinstance(value, str) or not value.lstrip().startswith("{"):
        return []
    return roles_in(json.loads(value))


class LLMRuntimeSpec(Section):
    """How a job reaches LLMs: the store, retries, and every model entry it may need (a LoRA
    entry needs its server's entry). Never part of a digest."""

    llm: LLMSettings = LLMSettings()
    models: dict[str, ModelEntry] = {}
    max_turns: int = SimulationSettings.model_fields["max_turns"].default
    #: adapter identity of each entry served as a LoRA adapter (enters its request keys)
    adapters: dict[str, str] = {}


S = TypeVar("S", bound="JobSpec")


class JobSpec(Section):
    """Base of every step's spec."""

    step: ClassVar[str]

    version: int = SPEC_VERSION
    code: str

    def identity(self) -> dict[str, Any]:
        """The canonical content of the digest: runtime-only fields left out."""
        return {"step": self.step, **identity_data(self)}

    def digest(self) -> str:
        return stable_hash(self.identity())

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls: type[S], text: str) -> S:
        return cls.model_validate_json(text)
