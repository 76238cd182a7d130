"""Who plays each role (``experts:``, ``client:``, ``matcher:``, ``judge:``) and the table rows
they make."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from lecode.config.base import RUNTIME_ONLY, Name, Section

#: What an offline expert plays (it has no strategy of its own).
BASELINE = "baseline"


#: An expert or client strategy: a declared name (:mod:`lecode.strategies`), checked with the
#: rest of the experiment (:mod:`lecode.config.experiment`), so job specs do not depend on the
#: strategy registry and the schema does not enumerate the names.
ExpertStrategy = str
ClientStrategy = str


class ExpertRole(Section):
    model: Name
    strategy: ExpertStrategy
    label: Annotated[str | None, RUNTIME_ONLY] = Field(
        None, description="the table row's name (unique)"
    )
    group: Annotated[str | None, RUNTIME_ONLY] = None
    paper_label: Annotated[str | None, RUNTIME_ONLY] = Field(
        None, description="the paper's row to compare with"
    )


class ClientRole(Section):
    model: Name
    strategy: ClientStrategy = "first_person_dialogue"


class EvaluatorRole(Section):
    """The fact matcher or the judge: a model entry, nothing else."""

    model: Name


class System(Section):
    """One table row: an expert model played with one strategy."""

    expert: str
    strategy: str
    label: str
    group: str
    paper_label: str | None = None
