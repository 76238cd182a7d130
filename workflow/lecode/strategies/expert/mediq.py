"""MediQ-style gate: before each unforced move a YES/NO call asks whether the facts suffice to
advise; YES advises (advice-only prompt), NO asks one question."""

from lecode.strategies.calls import Call, Gate
from lecode.strategies.declarations import ExpertStrategy

STRATEGY = ExpertStrategy(
    name="mediq",
    templates={
        "confidence": "expert/mediq_confidence",
        "ask": "expert/mediq_ask",
        "advise": "expert/advise_only",
        "reask": "expert/reask",
        "reask_confidence": "expert/reask_confidence",
    },
    forced=Call("advise", "advise", "advice"),
    gate=Gate(
        call=Call("confidence", "confidence", "yes_no"),
        ask=Call("ask", "ask", "question"),
        advise=Call("advise", "advise", "advice"),
    ),
)
