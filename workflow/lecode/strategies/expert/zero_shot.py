"""Zero-shot: each turn one call that asks a question or advises (提问：/建议：); the forced
advice uses the advice-only prompt."""

from lecode.strategies.calls import Call
from lecode.strategies.declarations import ExpertStrategy

STRATEGY = ExpertStrategy(
    name="zero_shot",
    templates={
        "turn": "expert/zero_shot",
        "advise": "expert/advise_only",
        "reask": "expert/reask",
    },
    turn=Call("turn", "turn", "move"),
    forced=Call("advise", "advise", "advice"),
)
