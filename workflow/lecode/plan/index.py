"""Finding a step's declaration and a job of the composed plan (for the rules and the script
every step rule runs; no step imports this)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from lecode.fingerprint import step_module
from lecode.plan.jobs import Job, Step, StudyPlan

JobKey = tuple[str, tuple[tuple[str, str], ...]]


def step_of(step: str) -> Step[Any]:
    """The declaration of step ``step`` (its module's ``STEP``)."""
    module = importlib.import_module(step_module(step))
    declared = getattr(module, "STEP", None)
    if not isinstance(declared, Step):
        raise TypeError(f"{module.__name__}: no STEP = Step(...) declaration")
    if declared.name != step:
        raise TypeError(
            f"{module.__name__}: STEP declares step {declared.name!r}, not {step!r} "
            "(a step's spec names the module it is declared in)"
        )
    return declared


def study_of(step: str) -> str:
    """The study that declares step ``step``: ``lecode.<study>.steps.<step>``."""
    return step_module(step).split(".")[1]


class JobIndex:
    """Every study's jobs by (step, wildcards), each study's listed on its first lookup (a
    study that no requested job belongs to is never listed: the dataset build does not read
    the test set, an evaluation run does not read transcripts)."""

    def __init__(self, studies: Mapping[str, Callable[[], StudyPlan]]) -> None:
        self._studies = studies
        self._jobs: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], Job]] = {}

    def of_study(self, study: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], Job]:
        found = self._jobs.get(study)
        if found is None:
            found = {}
            for job in self._studies[study]().jobs():
                if job.key in found:
                    raise ValueError(f"two jobs of step {job.step} at {dict(job.wildcards)}")
                found[job.key] = job
            self._jobs[study] = found
        return found

    def find(self, step: str, wildcards: Mapping[str, str]) -> Job | None:
        key = (step, tuple(sorted(wildcards.items())))
        return self.of_study(study_of(step)).get(key)

    def of_step(self, step: str) -> Iterator[Job]:
        return (j for j in self.of_study(study_of(step)).values() if j.step == step)
