"""The dataset build's jobs: every spec and path, derived once from the settings
(:class:`CorpusPlan`, one study of :class:`lecode.pipeline.Plan`)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from pathlib import Path

from lecode import paths
from lecode.config.base import SettingsError
from lecode.config.corpus import CorpusSettings
from lecode.config.experiment import Settings
from lecode.corpus.roles_review import ROLES_FILE, RolesFileError, read_roles_file
from lecode.corpus.specs import (
    AgreementSpec,
    AnnotateSpec,
    AssembleSpec,
    ReviewExportSpec,
    RolesSpec,
    Stage1Spec,
    Stage2Spec,
)
from lecode.corpus.transcripts import duplicate_ids, transcript_files, transcript_ids
from lecode.dataset import id_hash
from lecode.fingerprint import digest_files, step_code
from lecode.plan.jobs import Job
from lecode.plan.roles import Roles
from lecode.shards import shard_name
from lecode.specs import FileRef, LLMRuntimeSpec, Role, stable_hash

ROOT = paths.CORPUS_ROOT
#: The pre-annotation steps in order, with the path pattern of each one's shard files.
STEPS: dict[str, tuple[type[AnnotateSpec], str]] = {
    "roles": (RolesSpec, paths.CORPUS_ROLES),
    "stage1": (Stage1Spec, paths.CORPUS_STAGE1),
    "stage2": (Stage2Spec, paths.CORPUS_STAGE2),
}
#: The offline annotator's fact matcher threshold (the lexical matcher's default).
FACT_THRESHOLD = 0.5
#: What the published dataset directory holds.
PUBLISHED = (
    "LeCoDe_trainset.jsonl",
    "LeCoDe_testset.jsonl",
    "split.json",
    "table2.md",
    "disagreements.csv",
)
AGREEMENT_FILES = ("annotation_agreement.md", "annotation_agreement.csv", "agreement.json")


def review_files(review_dir: str | Path, reviewer: str) -> list[Path]:
    d = Path(review_dir) / reviewer
    return sorted(d.glob("*.stage[12].csv")) if d.is_dir() else []


def present_reviewers(review_dir: str | Path) -> list[str]:
    """The directories of ``review_dir`` (one per reviewer), sorted; hidden ones skipped."""
    d = Path(review_dir)
    if not d.is_dir():
        return []
    return sorted(p.name for p in d.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


class CorpusPlan:
    """Specs, paths and jobs of the dataset build. ``problems``: what stops the build (listed
    by :meth:`check` when a job of it is first asked for)."""

    def __init__(self, settings: Settings, roles: Roles | None = None) -> None:
        self.settings = settings
        self.roles = roles or Roles(settings)
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
        self.problems += [str(p) for p in duplicate_ids(files)]
        self.ids = {f: [i for i, _ in transcript_ids(f)] for f in files}
        self.role_overrides: dict[str, dict[str, str]] = {}
        roles_file = Path(self.corpus.review_dir) / ROLES_FILE
        if roles_file.is_file():
            known = {i for ids in self.ids.values() for i in ids}
            try:
                found = read_roles_file(roles_file, known)
                self.role_overrides = {i: dict(r) for i, r in found.items()}
            except RolesFileError as exc:
                self.problems.append(str(exc))
        self.reviewers, self.adjudicators = self._reviewers()
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

    def _reviewers(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(reviewers in priority order, adjudicators): the configured ones, or every
        directory of review_dir; a directory configured nowhere stops the build."""
        present = present_reviewers(self.corpus.review_dir)
        adjudicators = self.corpus.adjudication.adjudicators
        configured = self.corpus.reviewers
        if configured is None:
            reviewers = [r for r in present if r not in adjudicators]
        else:
            reviewers = list(configured)
            left_out = [r for r in present if r not in configured and r not in adjudicators]
            if left_out:
                self.problems.append(
                    f"corpus.reviewers: {self.corpus.review_dir} holds reviews by {left_out} "
                    "that corpus.reviewers leaves out; list them (or set reviewers: null to "
                    "take every directory), or move their files away"
                )
        missing = [a for a in adjudicators if a not in present]
        if missing:
            self.problems.append(
                f"corpus.adjudication.adjudicators: no directory {missing} in "
                f"{self.corpus.review_dir}"
            )
        both = sorted(set(adjudicators) & set(reviewers))
        if both:
            self.problems.append(f"corpus.adjudication: {both} are both reviewer and adjudicator")
        final = self.corpus.final
        if final is not None:
            if final not in reviewers:
                self.problems.append(f"corpus.final: {final!r} is not one of the reviewers")
            else:
                reviewers.remove(final)
                reviewers.insert(0, final)
        return tuple(reviewers), tuple(adjudicators)

    @property
    def final_reviewer(self) -> str | None:
        return self.reviewers[0] if self.reviewers else None

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
        return self.roles.role(name), self.roles.runtime(name)

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
        for step, (cls, _) in STEPS.items():
            out[step] = {}
            for shard in self.shards:
                files = self.shard_files(shard)
                ids = {i for f in files for i in self.ids.get(f, [])}
                spec = cls(
                    shard=shard,
                    transcripts=tuple(FileRef.of(f) for f in files),
                    speaker_tags=self.corpus.speaker_tags,
                    role_confidence=self.corpus.role_confidence,
                    role_overrides=(
                        {i: r for i, r in sorted(self.role_overrides.items()) if i in ids}
                        if step == "roles"
                        else {}
                    ),
                    annotator=role,
                    templates=self.templates(step) if role is not None else {},
                    previous=previous[shard],
                    runtime=runtime,
                    cache=f"{ROOT}/cache",
                    code=step_code(cls.step),
                )
                out[step][shard] = spec
                previous[shard] = spec.digest()
        return out

    def set_digest(self, step: str) -> str:
        return stable_hash([s.digest() for s in self.annotate_specs[step].values()])

    def annotation_file(self, step: str, shard: str) -> str:
        """Named by the shard's own digest: a new or changed transcript reruns its shard."""
        digest = self.annotate_specs[step][shard].digest()
        return paths.format(STEPS[step][1], shard=shard, digest=digest)

    def annotation_files(self, step: str) -> list[str]:
        return [self.annotation_file(step, s) for s in self.shards]

    # -- review, assembly, agreement -----------------------------------------------------------

    @cached_property
    def review_export_spec(self) -> ReviewExportSpec:
        return ReviewExportSpec(
            pre=self.set_digest("stage2"),
            assign=self.corpus.assign,
            labelstudio_project=self.corpus.labelstudio_project,
            code=step_code(ReviewExportSpec.step),
        )

    @property
    def review_export_dir(self) -> str:
        return paths.format(paths.CORPUS_REVIEW, digest=self.review_export_spec.digest())

    @property
    def review_export_current(self) -> str:
        """The stable path of the current review export (a copy of the digest-named one)."""
        return self.corpus.review_export

    def reviews_of(self, reviewer: str) -> list[Path]:
        return review_files(self.corpus.review_dir, reviewer)

    @cached_property
    def assemble_spec(self) -> AssembleSpec:
        people = [*self.reviewers, *self.adjudicators]
        return AssembleSpec(
            pre=self.set_digest("stage2"),
            final=self.final_reviewer,
            reviews=tuple(FileRef.of(p) for r in people for p in self.reviews_of(r)),
            split=self.corpus.split,
            reviewers=self.reviewers,
            adjudicators=self.adjudicators,
            rule=self.corpus.adjudication.rule,
            code=step_code(AssembleSpec.step),
        )

    @property
    def assemble_dir(self) -> str:
        return paths.format(paths.CORPUS_DATASET, digest=self.assemble_spec.digest())

    @cached_property
    def agreement_spec(self) -> AgreementSpec:
        reviewers = self.reviewers
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
        return paths.format(paths.CORPUS_AGREEMENT, digest=self.agreement_spec.digest())

    @property
    def published(self) -> list[str]:
        return [f"{self.corpus.out_dir}/{name}" for name in PUBLISHED]

    def targets(self) -> list[str]:
        """What the ``dataset`` target builds."""
        out = [*self.published, self.review_export_current]
        if self.reviewers:
            out.append(self.agreement_dir)
        return out

    # -- jobs ----------------------------------------------------------------------------------

    def jobs(self) -> Iterator[Job]:
        self.check()
        previous: dict[str, str] = {}
        for step in STEPS:
            for shard, spec in self.annotate_specs[step].items():
                at = {"shard": shard, "digest": spec.digest()}
                if step == "roles":
                    inputs: dict[str, str | tuple[str, ...]] = {
                        "transcripts": tuple(str(f) for f in self.shard_files(shard))
                    }
                else:
                    inputs = {"previous": previous[shard]}
                out = self.annotation_file(step, shard)
                yield Job(spec, out, inputs, at, f"{step} {shard}")
                previous[shard] = out
        pre = {s: tuple(self.annotation_files(s)) for s in STEPS}
        yield Job(self.review_export_spec, self.review_export_dir, pre)
        yield Job(
            self.assemble_spec,
            self.assemble_dir,
            {**pre, "reviews": tuple(f.path for f in self.assemble_spec.reviews)},
        )
        if self.reviewers:
            yield Job(
                self.agreement_spec,
                self.agreement_dir,
                {
                    "stage1": pre["stage1"],
                    "stage2": pre["stage2"],
                    "reviews": tuple(f.path for f in self.agreement_spec.reviews),
                },
            )
