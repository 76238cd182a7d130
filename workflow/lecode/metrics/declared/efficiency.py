"""Clarification efficiency: AT, the number of clarifying questions a dialogue asked.

Direction: the paper prints AT without a direction in Table 3 but as ``Avg T ↓`` in Table 6.
We follow Table 6: AT is ranked lower-is-better, and every table header shows it as ``AT↓`` so
the choice is visible. A system asking no question at all would then rank best on AT; read AT
together with R and WR.
"""

from __future__ import annotations

from lecode.metrics.declaration import Dialogue, Example, MetricDeclaration


def _turns(d: Dialogue) -> int:
    return d.transcript.n_questions


DECLARED: tuple[MetricDeclaration, ...] = (
    MetricDeclaration(
        key="turns",
        header="AT",
        scale=1.0,
        direction="lower",
        section="efficiency",
        value_type=int,
        need="dialogue",
        compute=_turns,
        tags=("table3", "table6", "summary"),
        # A dialogue that did not fail always has AT: only a failure leaves it missing.
        missing="failed dialogue",
        order=50,
        description="clarifying questions asked (initial query and final advice excluded)",
        example=Example(expected=3, why="three question-answer pairs before the advice"),
    ),
)
