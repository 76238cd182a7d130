"""Who plays each role (``experts:``, ``client:``, ``matcher:``, ``judge:``) and the table rows
they make. Strategy names are checked against the declared strategies
(:func:`strategy_names`), never listed in a type, so the schema does not enumerate them."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from lecode import strategies
from lecode.config.base import RUNTIME_ONLY, Name, Section

#: What an offline expert plays (it has no strategy of its own).
BASELINE = "baseline"


def strategy_names(role: str) -> tuple[str, ...]:
    """The declared LLM strategies of ``role`` (``expert`` or ``client``), by file name."""
    return strategies.names(role)


def _expert_strategy(name: str) -> str:
    known = (BASELINE, *strategy_names("expert"))
    if name not in known:
        raise ValueError(f"unknown expert strategy {name!r}; declared: {', '.join(known)}")
    return name


def _client_strategy(name: str) -> str:
    known = strategy_names("client")
    if name not in known:
        raise ValueError(f"unknown client strategy {name!r}; declared: {', '.join(known)}")
    return name


ExpertStrategy = Annotated[str, AfterValidator(_expert_strategy)]
ClientStrategy = Annotated[str, AfterValidator(_client_strategy)]


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
