"""SFT (paper section 3.5): the training data of each variant and the LoRA training jobs."""

from __future__ import annotations

from functools import cached_property

from lecode import paths
from lecode.config.base import SettingsError
from lecode.config.experiment import Settings
from lecode.fingerprint import step_code
from lecode.plan.core import prompt_hashes, template_hashes
from lecode.specs import FileRef, SFTDataSpec, SFTTrainSpec

#: Templates the SFT samples are rendered with (the zero-shot expert's turn and forced advice).
SFT_EXPERT_TEMPLATES = ("expert/zero_shot", "expert/advise_only")
SFT_WRITER_TEMPLATES = ("sft/keyfact_questions", "sft/keyfact_e_questions", "sft/reask")


class SFTPlan:
    """The SFT part of :class:`lecode.plan.Plan`."""

    settings: Settings

    @cached_property
    def _sft_data(self) -> dict[str, SFTDataSpec]:
        s = self.settings
        sft = s.sft
        train = FileRef.of(s.dataset.train)
        max_turns = sft.max_turns or s.simulation.max_turns
        expert = prompt_hashes(SFT_EXPERT_TEMPLATES)
        out = {}
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
            writer = self.role(sft.writer) if sft.writer else None
            matcher = self.role(s.matcher.model)
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
                runtime=self.runtime(*(r.name for r in (writer, matcher) if r is not None)),
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

    def sft_data_dir(self, variant: str) -> str:
        return paths.format(paths.SFT_DATA_DIR, sftd=self.sft_data_spec(variant).digest())

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

    def sft_train_dir(self, variant: str) -> str:
        return paths.format(paths.SFT_TRAIN_DIR, sftt=self.sft_train_spec(variant).digest())

    def sft_published(self, variant: str) -> str:
        return paths.format(
            paths.SFT_PUBLISHED, publish_dir=self.settings.sft.train.publish_dir, variant=variant
        )
