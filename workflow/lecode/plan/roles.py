"""The roles of an experiment: which model entry plays a role, how a job reaches it, and for
LoRA adapters served by vLLM which adapter an entry selects and what identifies it (its
training, the hash of its files, or its path), decided when the DAG is built. Every study
casts its roles here."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from lecode import paths
from lecode.config.experiment import Settings
from lecode.config.models import ModelEntry, VLLMEntry
from lecode.specs import LLMRuntimeSpec, Role


def tree_sha256(root: str | Path) -> str:
    """sha256 over (path relative to ``root``, bytes) of every file under ``root``, sorted by
    relative path (files are read in blocks: adapters can be large)."""
    root = Path(root)
    files = sorted((p.relative_to(root).as_posix(), p) for p in root.rglob("*") if p.is_file())
    h = hashlib.sha256()
    for rel, path in files:
        h.update(rel.encode("utf-8") + b"\0")
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        h.update(b"\0")
    return h.hexdigest()


def _same_path(a: str, b: str) -> bool:
    return os.path.normpath(os.path.abspath(a)) == os.path.normpath(os.path.abspath(b))


def published_adapter(settings: Settings, variant: str) -> str:
    """Where the SFT adapter of ``variant`` is published (``publish_lora``'s output)."""
    return paths.format(
        paths.SFT_PUBLISHED, publish_dir=settings.sft.train.publish_dir, variant=variant
    )


class Roles:
    """The model entries of one configuration as roles, with their adapters' identities.

    ``training_digest``: the digest of the training that publishes an SFT variant's adapter
    (the SFT study sets it; without it a trained adapter is identified as untrained)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        #: what the adapter identities could not establish (the Snakefile prints these)
        self.warnings: list[str] = []
        self._adapter_ids: dict[str, str | None] = {}
        self.training_digest: Callable[[str], str] | None = None

    def role(self, name: str) -> Role:
        return Role(
            name=name, entry=self.settings.models[name], adapter=self.adapter_identity(name)
        )

    def runtime(self, *names: str) -> LLMRuntimeSpec:
        """Model entries the job may need: its roles and the vLLM servers of LoRA entries."""
        models = self.settings.models
        needed = [n for n in names if models[n].is_llm]
        for n in list(needed):
            entry = models[n]
            if isinstance(entry, VLLMEntry) and entry.server:
                needed.append(entry.server)
        adapters = {n: self.adapter_identity(n) for n in needed}
        return LLMRuntimeSpec(
            llm=self.settings.llm,
            models={n: self.served_entry(n) for n in dict.fromkeys(needed)},
            max_turns=self.settings.simulation.max_turns,
            adapters={n: a for n, a in adapters.items() if a is not None},
        )

    def adapter_path(self, name: str) -> str | None:
        """The adapter directory entry ``name`` selects: a vLLM entry with ``server:`` whose
        ``model`` is a key of that server's ``lora:`` mapping; else None."""
        entry = self.settings.models.get(name)
        if not isinstance(entry, VLLMEntry) or entry.server is None:
            return None
        server = self.settings.models.get(entry.server)
        if not isinstance(server, VLLMEntry):
            return None
        return server.lora.get(entry.model or name)

    @property
    def sft_training(self) -> bool:
        """Whether this run trains and publishes the SFT adapters (``sft.train.enabled``, the
        GPU opt-in; the settings check that it comes with a base model)."""
        t = self.settings.sft.train
        return t.enabled and t.base_model is not None

    def publish_target(self, path: str) -> str | None:
        """The configured SFT variant whose ``publish_lora`` output ``path`` is, whether or not
        this run trains it; else None."""
        for v in self.settings.sft.variants:
            if _same_path(path, published_adapter(self.settings, v)):
                return v
        return None

    def published_variant(self, path: str) -> str | None:
        """The configured SFT variant whose ``publish_lora`` output ``path`` is, when this run
        trains it (a DAG output); else None."""
        return self.publish_target(path) if self.sft_training else None

    def not_run(self, name: str) -> str | None:
        """Why the rows of entry ``name`` are not run: its adapter is one this workflow
        publishes (``<sft.train.publish_dir>/<variant>-sft``), and this run does not train
        (``sft.train.enabled`` is off); else None."""
        path = self.adapter_path(name)
        if path is None or self.sft_training or self.publish_target(path) is None:
            return None
        return "their adapters are trained only in a run with sft.train.enabled: true (GPU)"

    def adapter_identity(self, name: str) -> str | None:
        """What names the adapter entry ``name`` serves, decided when the DAG is built:
        ``train:<sft_train digest>`` for an adapter the workflow trains and publishes (known
        before training: data, base model, hyperparameters, training code);
        ``sha256:<hash of its files>`` for another adapter directory; ``path:<dir>`` (with a
        warning) when that directory does not exist. None for entries without an adapter."""
        if name in self._adapter_ids:
            return self._adapter_ids[name]
        path = self.adapter_path(name)
        identity: str | None = None
        if path is not None:
            variant = self.publish_target(path)
            trained = (
                variant is not None
                and self.settings.sft.train.base_model is not None
                and self.training_digest is not None
            )
            if variant is not None and trained:
                # also when this run does not train it (its rows are not run): the training
                # that would publish it
                assert self.training_digest is not None
                identity = "train:" + self.training_digest(variant)
            elif variant is not None:
                identity = "untrained:" + path
            elif Path(path).is_dir():
                identity = "sha256:" + tree_sha256(path)
            else:
                identity = "path:" + path
                self.warnings.append(
                    f"models.{name}: its adapter {path} does not exist and no rule of this "
                    "workflow produces it; it is identified by its path until it exists"
                )
        self._adapter_ids[name] = identity
        return identity

    def adapter_inputs(self, *names: str) -> list[str]:
        """The published SFT adapters (``publish_lora`` outputs) that the vLLM servers of the
        entries ``names`` serve: a server takes every ``--lora-modules`` when it starts, so a
        job that may start it waits for all of them. Adapters the DAG does not produce are no
        inputs (they must exist)."""
        models = self.settings.models
        out: list[str] = []
        for n in names:
            entry = models.get(n)
            if not isinstance(entry, VLLMEntry):
                continue
            server = models.get(entry.server or n)
            if not isinstance(server, VLLMEntry):
                continue
            for path in server.lora.values():
                variant = self.published_variant(path)
                if variant is not None:
                    out.append(published_adapter(self.settings, variant))
        return sorted(dict.fromkeys(out))

    def adapter_warnings(self, names: list[str], *, replay: bool) -> list[str]:
        """What to tell before a run about the adapters of entries ``names``: adapters
        identified by their path (missing, and not produced by the DAG), and, unless the run
        replays stored responses, published adapters of an earlier training (a run that
        evaluates them replaces them first)."""
        for name in names:
            self.adapter_identity(name)
        out = [f"warning: {line}" for line in dict.fromkeys(self.warnings)]
        if replay:
            return out
        for name in names:
            identity = self.adapter_identity(name) or ""
            path = self.adapter_path(name)
            if not identity.startswith("train:") or self.not_run(name) is not None or not path:
                continue
            current = identity.removeprefix("train:")
            prov = Path(path) / "lecode_provenance.json"
            try:
                trained = json.loads(prov.read_text())["spec"] if prov.is_file() else None
            except (OSError, ValueError, KeyError):
                trained = "an unreadable provenance"
            if trained is not None and trained != current:
                out.append(
                    f"models.{name} serves {path}, which was trained by {trained}; the current "
                    f"sft settings train {current}, which a run that evaluates it trains and "
                    "publishes first (docs/sft.md)"
                )
        return out

    def adapter_files(self, *names: str | None) -> dict[str, tuple[str, ...]]:
        """A job's ``adapters`` input: the published adapters of :meth:`adapter_inputs` for the
        entries ``names`` (None skipped), or nothing."""
        found = self.adapter_inputs(*(n for n in names if n is not None))
        return {"adapters": tuple(found)} if found else {}

    def served_entry(self, name: str) -> ModelEntry:
        """Entry ``name`` as its vLLM server is started: without the adapters this run does not
        train (they do not exist, and their rows are not run), so the base model's rows run."""
        entry = self.settings.models[name]
        if not isinstance(entry, VLLMEntry) or not entry.lora or self.sft_training:
            return entry
        lora = {k: p for k, p in entry.lora.items() if self.publish_target(p) is None}
        return entry if lora == entry.lora else entry.model_copy(update={"lora": lora})
