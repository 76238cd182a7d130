"""Fault injection by rate, deterministic per request.

An HTTP fault hits attempt ``a`` of a request body with digest ``d`` when
``u(kind, d, a) < rate`` (``u`` a hash mapped to [0, 1)), so a retried request is drawn anew and
the same run against a fresh server injects the same faults. Content faults (a well-formed HTTP
response with unusable text) are drawn once per body, so a re-ask (a different body) is drawn
anew.

HTTP faults: ``rate_limit`` (429 with Retry-After: 0), ``server_error`` (500), ``timeout``
(the reply comes after ``slow_seconds``), ``malformed_body`` (truncated JSON), ``empty`` (a
completion without text), ``unauthorized_echo`` (401 whose body echoes the Authorization
header, to test redaction). ``roles`` restricts HTTP faults to requests of those roles and
``match`` to requests whose message text contains that string (e.g. one case's initial query),
so a test can make a fault persistent for exactly one role of one dialogue.

Content faults: ``no_marker`` (expert reply without 提问/建议), ``preamble`` (an expert
move opened by a short phrase before its marker, ``好的，我了解了。`` or ``明白。``),
``judge_out_of_range`` (a score of 11), ``matcher_bad_index`` (a fact index past the list),
``bad_json`` (matcher/judge prose instead of JSON).

Misbehaving client (content faults of the client role, see
:meth:`lecode.mock.players.Players.client`): ``client_leaks`` (every fact of the case in
one answer, more than the 3 the protocol allows), ``client_invents`` (an invented sentence no
fact supports, :data:`~lecode.mock.players.INVENTED`), ``client_withholds`` (不知道 although
the question names a fact), ``client_contradicts`` (the named fact negated). ``judge_drift``
moves every judge score down by 3 (floored at 1).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

HTTP_FAULTS = (
    "rate_limit",
    "server_error",
    "timeout",
    "malformed_body",
    "empty",
    "unauthorized_echo",
)
CONTENT_FAULTS = (
    "no_marker",
    "preamble",
    "judge_out_of_range",
    "matcher_bad_index",
    "bad_json",
    # a misbehaving simulated client (what lecode.audit is meant to catch)
    "client_leaks",
    "client_invents",
    "client_withholds",
    "client_contradicts",
    # a judge whose scores drifted (what the judge-drift sentinel is meant to catch)
    "judge_drift",
)


def unit(*parts: object) -> float:
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass
class FaultConfig:
    rates: dict[str, float] = field(default_factory=dict)
    slow_seconds: float = 3.0
    roles: frozenset[str] | None = None  # restrict HTTP faults to these roles
    match: str | None = None  # ... and to requests whose message text contains this

    def __post_init__(self) -> None:
        unknown = set(self.rates) - set(HTTP_FAULTS) - set(CONTENT_FAULTS)
        if unknown:
            raise ValueError(f"unknown fault kinds: {sorted(unknown)}")

    def http_fault(self, role: str, digest: str, attempt: int, text: str = "") -> str | None:
        if self.roles is not None and role not in self.roles:
            return None
        if self.match is not None and self.match not in text:
            return None
        for kind in HTTP_FAULTS:
            rate = self.rates.get(kind, 0.0)
            if rate > 0 and unit(kind, digest, attempt) < rate:
                return kind
        return None

    def content_fault(self, kind: str, digest: str) -> bool:
        rate = self.rates.get(kind, 0.0)
        return rate > 0 and unit(kind, digest) < rate
