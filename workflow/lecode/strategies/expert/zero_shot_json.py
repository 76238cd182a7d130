"""Zero-shot with JSON replies (``{"action": "ask"|"advise", "content": ...}``), sent with the
JSON response format."""

from lecode.strategies.calls import Call
from lecode.strategies.declarations import ExpertStrategy

STRATEGY = ExpertStrategy(
    name="zero_shot_json",
    templates={
        "turn": "expert/zero_shot_json",
        "advise": "expert/advise_only_json",
        "reask": "expert/reask_json",
    },
    turn=Call("turn", "turn", "move"),
    forced=Call("advise", "advise", "advice"),
    reply_format="json",
)
