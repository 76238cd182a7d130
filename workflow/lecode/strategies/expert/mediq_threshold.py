"""MediQ with a numeric gate: a 0-1 confidence each unforced turn, compared with the model
entry's ``threshold_confidence`` (default 0.8); at or above it the expert advises."""

from lecode.strategies.calls import Call, Gate
from lecode.strategies.declarations import ExpertStrategy

STRATEGY = ExpertStrategy(
    name="mediq_threshold",
    templates={
        "confidence": "expert/mediq_confidence_score",
        "ask": "expert/mediq_ask",
        "advise": "expert/advise_only",
        "reask": "expert/reask",
        "reask_confidence": "expert/reask_confidence",
    },
    forced=Call("advise", "advise", "advice"),
    gate=Gate(
        call=Call("confidence_score", "confidence", "score"),
        ask=Call("ask", "ask", "question"),
        advise=Call("advise", "advise", "advice"),
    ),
)
