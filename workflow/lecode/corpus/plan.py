"""Every spec and path of the dataset build, derived once from the settings (the rules of
``workflow/rules/dataset.smk`` ask this object, the steps read the specs it writes)."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from lecode.config.base import SettingsError
from lecode.config.experiment import Settings
from lecode.corpus.settings import CorpusSettings
from lecode.corpus.specs import (
    AgreementSpec,
    AnnotateSpec,
    AssembleSpec,
    ReviewExportSpec,
    RolesSpec,
    Stage1Spec,
    Stage2Spec,
)
from lecode.corpus.transcripts import transcript_files
from lecode.dataset import id_hash
from lecode.fingerprint import digest_files, step_code
from lecode.shards import shard_name
from lecode.specs import FileRef, LLMRuntimeSpec, Role, stable_hash

ROOT = "results/corpus"
STEPS: dict[str, type[AnnotateSpec]] = {
    "roles": RolesSpec,
    "stage1": Stage1Spec,
    "stage2": Stage2Spec,
}
#: The offline annotator's fact matcher threshold (the lexical matcher's default).
FACT_THRESHOLD = 0.5
#: What the published dataset directory holds.
PUBLISHED = ("LeCoDe_trainset.jsonl", "LeCoDe_testset.jsonl", "split.json", "table2.md")
AGREEMENT_FILES = ("annotation_agreement.md", "annotation_agreement.csv", "agreement.json")


def review_files(review_dir: str | Path, reviewer: str) -> list[Path]:
    d = Path(review_dir) / reviewer
    return sorted(d.glob("*.stage[12].csv")) if d.is_dir() else []


class CorpusPlan:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.corpus: CorpusSettings = settings.corpus
        self.shards = [shard_name(k) for k in range(self.corpus.n_shards)]
        self.problems: list[str] = []
        try:
            files = transcript_files(self.corpus.transcripts)
        except FileNotFoundError:
            files = []
            self.problems.append(
                f"corpus.transcripts: directory {self.corpus.transcripts!r} does not exist"
            )
        if not files and not self.problems:
            self.problems.append(
                f"corpus.transcripts: no transcript files in {self.corpus.transcripts!r}"
            )
        self.files = files
        name = self.corpus.annotator
        if name is not None:
            entry = settings.models.get(name)
            if entry is None:
                raise SettingsError(f"corpus.annotator: model {name!r} is not defined under models")
            if not entry.is_llm:
                raise SettingsError(
                    f"corpus.annotator: {name!r} is an offline agent; name an LLM entry or "
                    "null for the built-in rules"
                )

    def check(self) -> None:
        if self.problems:
            raise SettingsError("the dataset cannot be built:\n  " + "\n  ".join(self.problems))

    # -- annotation steps ----------------------------------------------------------------------

    def shard_files(self, shard: str) -> list[Path]:
        k = self.shards.index(shard)
        return [f for f in self.files if id_hash(f.name) % len(self.shards) == k]

    def _annotator(self) -> tuple[Role | None, LLMRuntimeSpec]:
        name = self.corpus.annotator
        if name is None:
            return None, LLMRuntimeSpec()
        entry = self.settings.models[name]
        models = {name: entry}
        server = getattr(entry, "server", None)  # a vLLM entry served by another entry's server
        if server is not None and server in self.settings.models:
            models[server] = self.settings.models[server]
        runtime = LLMRuntimeSpec(
            llm=self.settings.llm,
            models=models,
            max_turns=self.settings.simulation.max_turns,
        )
        return Role(name=name, entry=entry), runtime

    @staticmethod
    def templates(step: str) -> dict[str, str]:
        from lecode.corpus.llm_annotator import ANNOTATOR_TEMPLATES
        from lecode.llm.templates import PROMPTS_DIR

        out = {}
        for purpose in (step, "reask"):
            p = PROMPTS_DIR.resolve() / f"{ANNOTATOR_TEMPLATES[purpose]}.txt"
            out[f"{ANNOTATOR_TEMPLATES[purpose]}.txt"] = digest_files([p], p.parent)
        return out

    @cached_property
    def annotate_specs(self) -> dict[str, dict[str, AnnotateSpec]]:
        role, runtime = self._annotator()
        out: dict[str, dict[str, AnnotateSpec]] = {}
        previous: dict[str, str | None] = dict.fromkeys(self.shards)
        for step, cls in STEPS.items():
            out[step] = {}
            for shard in self.shards:
                spec = cls(
                    shard=shard,
                    transcripts=tuple(FileRef.of(f) for f in self.shard_files(shard)),
                    annotator=role,
                    templates=self.templates(step) if role is not None else {},
                    previous=previous[shard],
                    runtime=runtime,
                    code=step_code(cls.step),
                )
                out[step][shard] = spec
                previous[shard] = spec.digest()
        return out

    def set_digest(self, step: str) -> str:
        return stable_hash([s.digest() for s in self.annotate_specs[step].values()])

    def annotation_file(self, step: str, shard: str) -> str:
        return f"{ROOT}/{step}/{self.set_digest(step)}/{shard}.jsonl"

    def annotation_pattern(self, step: str) -> str:
        return f"{ROOT}/{step}/{self.set_digest(step)}/{{shard}}.jsonl"

    def annotation_files(self, step: str) -> list[str]:
        return [self.annotation_file(step, s) for s in self.shards]

    # -- review, assembly, agreement -----------------------------------------------------------

    @cached_property
    def review_export_spec(self) -> ReviewExportSpec:
        return ReviewExportSpec(
            pre=self.set_digest("stage2"), code=step_code(ReviewExportSpec.step)
        )

    @property
    def review_export_dir(self) -> str:
        return f"{ROOT}/review/{self.review_export_spec.digest()}"

    def reviews_of(self, reviewer: str) -> list[Path]:
        return review_files(self.corpus.review_dir, reviewer)

    @cached_property
    def assemble_spec(self) -> AssembleSpec:
        final = self.corpus.final_reviewer
        return AssembleSpec(
            pre=self.set_digest("stage2"),
            final=final,
            reviews=tuple(FileRef.of(p) for p in (self.reviews_of(final) if final else [])),
            split=self.corpus.split,
            code=step_code(AssembleSpec.step),
        )

    @property
    def assemble_dir(self) -> str:
        return f"{ROOT}/dataset/{self.assemble_spec.digest()}"

    @cached_property
    def agreement_spec(self) -> AgreementSpec:
        reviewers = self.corpus.reviewers
        return AgreementSpec(
            pre=self.set_digest("stage2"),
            reviewers=reviewers,
            reviews=tuple(FileRef.of(p) for r in reviewers for p in self.reviews_of(r)),
            rouge=self.settings.metrics.rouge,
            fact_threshold=FACT_THRESHOLD,
            code=step_code(AgreementSpec.step),
        )

    @property
    def agreement_dir(self) -> str:
        return f"{ROOT}/agreement/{self.agreement_spec.digest()}"

    @property
    def published(self) -> list[str]:
        return [f"{self.corpus.out_dir}/{name}" for name in PUBLISHED]

    def targets(self) -> list[str]:
        """What the ``dataset`` target builds."""
        out = [*self.published, self.review_export_dir]
        if self.corpus.reviewers:
            out.append(self.agreement_dir)
        return out
