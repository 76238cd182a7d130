"""The per-dialogue score record, generated from the metric registry.

:class:`DialogueScores` has the dialogue's identity (case, expert, strategy, number of facts,
stop reason) and one optional field per declared metric (:data:`lecode.metrics.registry.METRICS`,
in registry order, typed by its ``value_type``). ``None`` means missing (shown as n/N), never
zero. Sharding, simulation, matching and judging do not import this module, so a new metric
reruns scoring and what follows only.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, create_model

from lecode.metrics.registry import METRICS
from lecode.records import StopReason

#: The identity columns of a score record and their types, before the metric columns.
IDENTITY: dict[str, type] = {
    "case_id": str,
    "expert": str,
    "strategy": str,
    "n_facts": int,
    "stop_reason": str,
}


class ScoreRecord(BaseModel):
    """Identity of one scored dialogue; :class:`DialogueScores` adds the metric fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    case_id: str
    expert: str
    strategy: str
    n_facts: int
    stop_reason: StopReason


_metric_fields: dict[str, Any] = {m.key: (m.value_type | None, None) for m in METRICS}

DialogueScores: type[ScoreRecord] = create_model(
    "DialogueScores",
    __base__=ScoreRecord,
    __module__=__name__,
    __doc__="Every metric of one dialogue. ``None`` means missing (shown as n/N), never zero.",
    **_metric_fields,
)
