"""The four role interfaces: expert, client simulator, fact matcher and judge.

Every implementation (offline baseline or LLM-backed) satisfies one of these protocols, so the
DAG and the consultation loop never change when a role's implementation does. All methods are
async so that LLM-backed roles can run many dialogues concurrently inside one job; offline
roles simply return.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from lecode.records import Case, JudgeScores, RoleUsage, Served, Transcript, Turn

RoleName = Literal["expert", "client", "matcher", "judge"]


class RoleError(Exception):
    """A role could not produce a valid output (e.g. malformed reply after re-asking).

    ``kind`` becomes the dialogue's stop reason or the record's error text.
    """

    def __init__(self, message: str, kind: Literal["parse_error", "error"] = "parse_error"):
        super().__init__(message)
        self.kind = kind


@dataclass
class UsageMeter:
    """Collects per-role usage of one dialogue (calls, cache hits, retries, tokens, cost)."""

    by_role: dict[str, RoleUsage] = field(default_factory=dict)
    #: per role, the model ids and system fingerprints the endpoints' replies named
    served: dict[str, Served] = field(default_factory=dict)

    def add(self, role: str, usage: RoleUsage) -> None:
        self.by_role[role] = self.by_role.get(role, RoleUsage()) + usage

    def add_served(self, role: str, model: str, fingerprint: str) -> None:
        """Count one reply's reported model id and fingerprint (``""``: not reported)."""
        self.served[role] = self.served.get(role, Served()).counted(model, fingerprint)


@dataclass(frozen=True)
class ExpertMove:
    """An expert's turn: ask a clarifying question, advise, or abstain (end without advice)."""

    kind: Literal["question", "advice", "abstain"]
    text: str


class ExpertDialogue(Protocol):
    """One dialogue of an expert, holding whatever that dialogue needs to remember.

    ``history`` holds the turns so far (the first is the client's initial query). When
    ``must_advise`` is true (``max_turns`` questions asked) the expert must return advice.
    """

    async def next_move(
        self, history: Sequence[Turn], *, must_advise: bool, meter: UsageMeter
    ) -> ExpertMove: ...


@runtime_checkable
class Expert(Protocol):
    """Asks clarifying questions, then advises; one object serves many dialogues at once, each
    started with :meth:`start`.

    An LLM expert sees only ``case.initial_query`` and the history; the human-replay baseline
    deliberately reads the recorded dialogue.
    """

    name: str

    def start(self, case: Case) -> ExpertDialogue: ...


class CaseExpert:
    """An expert whose move depends only on the case and the history: :meth:`start` binds
    the case to :meth:`next_move`."""

    name: str

    def start(self, case: Case) -> ExpertDialogue:
        return _CaseDialogue(self, case)

    async def next_move(
        self, case: Case, history: Sequence[Turn], *, must_advise: bool, meter: UsageMeter
    ) -> ExpertMove:
        raise NotImplementedError


@dataclass(frozen=True)
class _CaseDialogue:
    expert: CaseExpert
    case: Case

    async def next_move(
        self, history: Sequence[Turn], *, must_advise: bool, meter: UsageMeter
    ) -> ExpertMove:
        return await self.expert.next_move(self.case, history, must_advise=must_advise, meter=meter)


class ClientDialogue(Protocol):
    """One dialogue of a client, holding whatever that dialogue needs to remember.

    ``history`` holds the turns so far, ending with the lawyer's ``question``.
    """

    async def answer(self, history: Sequence[Turn], question: str, *, meter: UsageMeter) -> str: ...


@runtime_checkable
class Client(Protocol):
    """Simulated client: answers from the case's atomic facts, or exactly ``不知道``; one object
    serves many dialogues at once, each started with :meth:`start`."""

    name: str

    def start(self, case: Case) -> ClientDialogue: ...


class CaseClient:
    """A client whose answer depends only on the case and the history: :meth:`start` binds the
    case to :meth:`answer`."""

    name: str

    def start(self, case: Case) -> ClientDialogue:
        return _CaseClientDialogue(self, case)

    async def answer(
        self, case: Case, history: Sequence[Turn], question: str, *, meter: UsageMeter
    ) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class _CaseClientDialogue:
    client: CaseClient
    case: Case

    async def answer(self, history: Sequence[Turn], question: str, *, meter: UsageMeter) -> str:
        return await self.client.answer(self.case, history, question, meter=meter)


@runtime_checkable
class Matcher(Protocol):
    """Returns, per (question, answer) pair, the 0-based indices of the facts it elicited."""

    name: str

    async def match(
        self, case: Case, pairs: Sequence[tuple[str, str]], *, meter: UsageMeter
    ) -> list[list[int]]: ...


@runtime_checkable
class Judge(Protocol):
    """Scores a dialogue's final advice on the paper's five dimensions plus overall (1-10)."""

    name: str

    async def judge(
        self, case: Case, transcript: Transcript, *, meter: UsageMeter
    ) -> JudgeScores: ...
