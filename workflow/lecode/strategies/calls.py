"""The vocabulary of strategy call plans: one LLM call (:class:`Call`) and the confidence gate
(:class:`Gate`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

#: What a call's reply must be. ``move``: a question or advice; ``question`` / ``advice``: that
#: kind only; ``yes_no``: YES or NO; ``score``: a confidence in 0..1; ``text``: free text kept
#: private to the expert (an opening plan); ``answer``: a client's answer.
Reply = Literal["move", "question", "advice", "yes_no", "score", "text", "answer"]
REPLIES: tuple[str, ...] = get_args(Reply)


@dataclass(frozen=True)
class Call:
    """One request: its ``purpose`` (the request's label in the response store, the logs and
    the mock), the template key it renders, the reply it expects, and optionally the template
    section spliced into the template's ``${closing}`` placeholder."""

    purpose: str
    template: str
    reply: Reply
    closing: str | None = None

    def __post_init__(self) -> None:
        if self.reply not in REPLIES:
            raise ValueError(f"call {self.purpose!r}: reply {self.reply!r} is not one of {REPLIES}")


@dataclass(frozen=True)
class Gate:
    """Before each unforced move, ``call`` asks whether the expert can advise now (``yes_no``
    or ``score`` against the model's threshold); then ``advise`` or ``ask`` makes the move.
    ``reask``: the template key re-asking an unreadable answer; ``reask_section``: its
    instruction section."""

    call: Call
    ask: Call
    advise: Call
    reask: str = "reask_confidence"

    @property
    def reask_section(self) -> str:
        return "score" if self.call.reply == "score" else "yes_no"
