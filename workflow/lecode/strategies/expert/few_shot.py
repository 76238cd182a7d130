"""Few-shot: two demonstration consultations in the turn template's system message. Its
``[turn]`` section closes a normal turn and its ``[advise]`` section the forced advice, so every
call, forced advice and re-asks included, shows the demonstrations."""

from lecode.strategies.calls import Call
from lecode.strategies.declarations import ExpertStrategy

STRATEGY = ExpertStrategy(
    name="few_shot",
    templates={"turn": "expert/few_shot", "reask": "expert/reask"},
    turn=Call("turn", "turn", "move", closing="turn"),
    forced=Call("advise", "turn", "advice", closing="advise"),
)
