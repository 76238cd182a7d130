"""SFT (paper section 3.5): the training data of each variant and the LoRA training jobs
(:class:`SFTPlan`)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from lecode import paths
from lecode.config.base import SettingsError
from lecode.config.experiment import Settings
from lecode.fingerprint import step_code
from lecode.plan.hashes import prompt_hashes, template_hashes
from lecode.plan.jobs import Job
from lecode.plan.roles import Roles, published_adapter
from lecode.sft.specs import SFTDataSpec, SFTTrainSpec
from lecode.specs import FileRef

#: Templates the SFT samples are rendered with (the zero-shot expert's turn and forced advice).
SFT_EXPERT_TEMPLATES = ("expert/zero_shot", "expert/advise_only")
SFT_WRITER_TEMPLATES = ("sft/keyfact_questions", "sft/keyfact_e_questions", "sft/reask")


class SFTPlan:
    """Specs, paths and jobs of the SFT study."""

    def __init__(self, settings: Settings, roles: Roles) -> None:
        self.settings = settings
        self.roles = roles

    def training_digest(self, variant: str) -> str:
        """What identifies the adapter of ``variant`` this workflow trains and publishes
        (:attr:`Roles.training_digest` of the composed plan)."""
        return self.sft_train_spec(variant).digest()

    @cached_property
    def _sft_data(self) -> dict[str, SFTDataSpec]:
        s = self.settings
        sft = s.sft
        train = FileRef.of(s.dataset.train)
        max_turns = sft.max_turns or s.simulation.max_turns
        expert = prompt_hashes(SFT_EXPERT_TEMPLATES)
        out: dict[str, SFTDataSpec] = {}
        for v in sft.variants:
            if v == "direct":
                out[v] = SFTDataSpec(
                    variant=v,
                    train=train,
                    max_turns=max_turns,
                    templates=expert,
                    code=step_code(SFTDataSpec.step),
                )
                continue
            writer = self.roles.role(sft.writer) if sft.writer else None
            matcher = self.roles.role(s.matcher.model)
            templates = dict(expert)
            if writer is not None:
                templates.update(prompt_hashes(SFT_WRITER_TEMPLATES))
            if matcher.is_llm:
                templates.update(template_hashes("matcher", "default", matcher.entry))
            out[v] = SFTDataSpec(
                variant=v,
                train=train,
                max_turns=max_turns,
                writer=writer,
                matcher=matcher,
                max_leak=sft.max_leak,
                templates=templates,
                code=step_code(SFTDataSpec.step),
                runtime=self.roles.runtime(*(r.name for r in (writer, matcher) if r is not None)),
            )
        return out

    @property
    def sft_variants(self) -> tuple[str, ...]:
        return tuple(self.settings.sft.variants)

    def sft_data_spec(self, variant: str) -> SFTDataSpec:
        try:
            return self._sft_data[variant]
        except KeyError:
            raise KeyError(f"SFT variant {variant!r} is not in sft.variants") from None

    def sft_data_file(self, variant: str) -> str:
        return paths.format(paths.SFT_DATA, sftd=self.sft_data_spec(variant).digest())

    def sft_data_files(self) -> list[str]:
        out = []
        for v in self.sft_variants:
            d = self.sft_data_spec(v).digest()
            out += [paths.format(p, sftd=d) for p in (paths.SFT_DATA, paths.SFT_STATS)]
        return out

    def sft_train_spec(self, variant: str) -> SFTTrainSpec:
        hyper = self.settings.sft.train
        if hyper.base_model is None:
            raise SettingsError(
                "sft.train.base_model: training needs the base model's local directory "
                "(e.g. models/Qwen2.5-7B-Instruct; configs/sft.yaml sets it)"
            )
        return SFTTrainSpec(
            variant=variant,
            data=self.sft_data_spec(variant).digest(),
            base_model=hyper.base_model,
            hyper=hyper,
            code=step_code(SFTTrainSpec.step),
        )

    def sft_published(self, variant: str) -> str:
        return published_adapter(self.settings, variant)

    def published_adapters(self) -> list[str]:
        """What the ``sft_adapters`` target builds: every variant trained and published
        (SettingsError naming ``sft.train.base_model`` when it is not set)."""
        for v in self.sft_variants:
            self.sft_train_spec(v)
        return [self.sft_published(v) for v in self.sft_variants]

    def publish_inputs(self, variant: str) -> dict[str, str]:
        """What ``publish_lora`` copies for ``variant``: the trained adapter and its
        provenance."""
        sftt = self.sft_train_spec(variant).digest()
        return {
            "adapter": paths.format(paths.SFT_ADAPTER, sftt=sftt),
            "provenance": paths.format(paths.SFT_PROVENANCE, sftt=sftt),
        }

    # -- jobs ----------------------------------------------------------------------------------

    def jobs(self) -> Iterator[Job]:
        for v in self.sft_variants:
            spec = self.sft_data_spec(v)
            for role in (spec.writer, spec.matcher):
                if role is not None and self.roles.adapter_inputs(role.name):
                    which = "writer" if role is spec.writer else "matcher"
                    raise SettingsError(
                        f"models.{role.name} (the SFT data's {which}) is served by a vLLM "
                        "server that serves the adapters trained on this data; let another "
                        "model entry write or validate the questions"
                    )
            yield Job(
                spec,
                self.sft_data_file(v),
                {"train": spec.train.path},
                {"sftd": spec.digest()},
                v,
            )
        if self.settings.sft.train.base_model is None:
            return  # no training is planned; the sft_adapters target names the setting
        for v in self.sft_variants:
            train = self.sft_train_spec(v)
            yield Job(
                train,
                paths.format(paths.SFT_ADAPTER, sftt=train.digest()),
                {"data": self.sft_data_file(v)},
                {"sftt": train.digest()},
                v,
            )
