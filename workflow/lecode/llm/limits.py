"""Requests in flight per endpoint inside one job, adapted to what the endpoint shows.

Every model entry on the same endpoint (same base URL; a ``#fragment``, such as the LoRA
adapter of a vLLM entry, is not part of it) shares one limit: at first the smallest
``concurrency`` among those entries. Across jobs, Snakemake's ``--resources api=K`` bounds how
many simulation jobs run at once, so an endpoint sees at most ``K * concurrency`` requests in
flight. Waiting is per event loop, so a runtime survives several ``asyncio.run`` calls in one
process; what is learnt about an endpoint (its limit, whether it answers) holds for the job.

What the job learns, per endpoint:

- **A slow server that queues** (a llama.cpp server answers one request at a time): a request
  waits for its reply while the server makes progress, i.e. its timeout counts from the later
  of its sending and the endpoint's last reply (at most ``timeout * limit`` in all), so a
  request queued behind others is not abandoned and sent again while the server works through
  the queue. When a request still times out while others to the same endpoint are in flight,
  the server cannot keep up with that many: the limit is halved (to 1 when the endpoint has not
  answered at all yet), once per limit, for the rest of the job, and the log says so.
- **A dead endpoint**: while the endpoint has not answered at all in this job, three attempts
  that found no server (connection refused, reset, not HTTP), or two timeouts of a request
  alone in flight, mark it *unreachable*: every request to it then fails at once, naming the
  URL and the first failure, instead of each dialogue retrying in turn.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass
from pathlib import Path

#: Attempts that found no server (connection failures), in a job where the endpoint never
#: answered, that make it unreachable ...
UNREACHABLE_AFTER = 3
#: ... and timeouts of a request that was alone in flight.
UNREACHABLE_AFTER_TIMEOUTS = 2
#: Seconds between two filesystem calls of a job about one endpoint's progress file: a job
#: notes a reply at most this often and reads the other jobs' at most this often (or 8 times
#: per request timeout, if that is shorter), so the cost of a reply does not depend on how
#: many replies there are.
SHARE_EVERY = 1.0


@dataclass
class Ticket:
    """One attempt's slot: when it was sent, under which limit, and how many others were in
    flight then."""

    sent: float
    limit: int
    generation: int


@dataclass
class EndpointState:
    """What one job knows about one endpoint (shared by its event loops)."""

    declared: int
    limit: int
    generation: int = 0
    last_reply: float = float("-inf")
    answered: bool = False
    failed_attempts: int = 0
    lone_timeouts: int = 0
    first_failure: str = ""
    unreachable: str | None = None
    unreachable_kind: str = "connection"  # the failure class given to the requests refused
    # the progress file: when this job last wrote and read it (monotonic), what it read
    shared_at: float = float("-inf")
    read_at: float = float("-inf")
    others_reply: float = float("-inf")
    path: Path | None = None
    share_every: float = SHARE_EVERY


class _Slots:
    """The requests of one event loop in flight to one endpoint, and the requests waiting for
    a slot in the order they asked (FIFO). A released slot is handed to one waiter; nothing
    wakes a waiter that cannot proceed, so the cost of a request does not grow with the
    number of dialogues waiting."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.waiters: deque[asyncio.Future[bool]] = deque()


class EndpointLimits:
    """``progress_dir``: where the jobs of a run note each endpoint's last reply (one empty
    file per endpoint, its modification time, written and read at most every
    :data:`SHARE_EVERY` seconds per job), so that a job sees the progress a server makes on
    the other jobs' requests; None: this job's replies only.

    ``wakeups`` counts the waiting requests woken (each is woken once: handed a slot, or
    refused when the endpoint is given up); ``file_calls`` the filesystem calls made on
    progress files."""

    def __init__(self, progress_dir: str | Path | None = None) -> None:
        self.progress_dir = None if progress_dir is None else Path(progress_dir)
        self.started = time.monotonic()
        self._states: dict[str, EndpointState] = {}
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Slots]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()
        self._made_dir = False
        self.wakeups = 0
        self.file_calls = 0

    def declare(self, endpoint: str, limit: int, timeout: float | None = None) -> None:
        """Register an endpoint; the smallest declared limit wins. ``timeout``: the entry's
        request timeout; progress is shared at least 8 times per timeout, however short."""
        endpoint = _address(endpoint)
        every = SHARE_EVERY if timeout is None else min(SHARE_EVERY, timeout / 8)
        with self._lock:
            state = self._states.get(endpoint)
            if state is None:
                state = self._states[endpoint] = EndpointState(declared=limit, limit=limit)
            elif limit < state.declared:
                state.declared = limit
                state.limit = min(state.limit, limit)
            state.share_every = min(state.share_every, every)

    def limit(self, endpoint: str) -> int:
        """The number of requests the endpoint may have in flight now."""
        state = self._states.get(_address(endpoint))
        return 1 if state is None else state.limit

    def state(self, endpoint: str) -> EndpointState:
        endpoint = _address(endpoint)
        with self._lock:
            state = self._states.get(endpoint)
            if state is None:
                state = self._states[endpoint] = EndpointState(declared=1, limit=1)
            return state

    def _slots(self, endpoint: str) -> _Slots:
        loop = asyncio.get_running_loop()
        slots = self._by_loop.get(loop)
        if slots is None:
            slots = self._by_loop.setdefault(loop, {})
        got = slots.get(endpoint)
        if got is None:
            got = slots[endpoint] = _Slots()
        return got

    def in_flight(self, endpoint: str) -> int:
        """Requests of the running loop in flight to the endpoint."""
        return self._slots(_address(endpoint)).in_flight

    async def acquire(self, endpoint: str) -> Ticket | None:
        """Wait for a free slot, behind the requests that asked before (the limit may shrink
        while waiting); None, without a slot, once the endpoint is unreachable."""
        endpoint = _address(endpoint)
        state, slots = self.state(endpoint), self._slots(endpoint)
        if state.unreachable is not None:
            return None
        if slots.in_flight < state.limit and not slots.waiters:
            slots.in_flight += 1
        else:
            waiter: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            slots.waiters.append(waiter)
            try:
                granted = await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled() and waiter.result():
                    # the slot was handed over as this request was cancelled: pass it on
                    slots.in_flight -= 1
                    self._hand_over(state, slots)
                elif not waiter.done():
                    slots.waiters.remove(waiter)
                raise
            if not granted:
                return None
        return Ticket(sent=time.monotonic(), limit=state.limit, generation=state.generation)

    async def release(self, endpoint: str) -> None:
        """Give the slot back: to the first waiter while the (possibly shrunk) limit allows;
        once the endpoint is unreachable, every waiter is woken once and refused."""
        endpoint = _address(endpoint)
        slots = self._slots(endpoint)
        slots.in_flight -= 1
        self._hand_over(self.state(endpoint), slots)

    def _hand_over(self, state: EndpointState, slots: _Slots) -> None:
        if state.unreachable is not None:
            while slots.waiters:
                waiter = slots.waiters.popleft()
                if not waiter.done():
                    self.wakeups += 1
                    waiter.set_result(False)
            return
        while slots.waiters and slots.in_flight < state.limit:
            waiter = slots.waiters.popleft()
            if waiter.done():  # cancelled while waiting
                continue
            slots.in_flight += 1
            self.wakeups += 1
            waiter.set_result(True)

    def deadline(self, endpoint: str, ticket: Ticket, timeout: float) -> float:
        """When an attempt times out (``time.monotonic`` clock): ``timeout`` after the later of
        its sending and the endpoint's last reply (to any job of the run), at most
        ``timeout * limit`` after sending."""
        since = max(ticket.sent, self.last_reply(endpoint))
        return min(since + timeout, ticket.sent + timeout * max(1, ticket.limit))

    def last_reply(self, endpoint: str) -> float:
        """When the endpoint last answered this job or, by its progress file, another job
        (``time.monotonic`` clock; -inf: never). The file is read at most every
        :data:`SHARE_EVERY` seconds: another job's progress is seen that much later."""
        state = self.state(endpoint)
        path = self._progress_file(endpoint, state)
        if path is None:
            return state.last_reply
        now = time.monotonic()
        if now - state.read_at >= state.share_every:
            state.read_at = now
            self.file_calls += 1
            try:
                age = time.time() - path.stat().st_mtime
            except OSError:
                pass
            else:
                state.others_reply = now - age
        return max(state.last_reply, state.others_reply)

    def replied(self, endpoint: str) -> None:
        """The endpoint answered (any HTTP status): it is up and making progress. The other
        jobs are told at most every :data:`SHARE_EVERY` seconds."""
        state = self.state(endpoint)
        now = state.last_reply = time.monotonic()
        state.answered = True
        if now - state.shared_at < state.share_every:
            return
        path = self._progress_file(endpoint, state)
        if path is None:
            return
        state.shared_at = now
        try:
            if not self._made_dir:
                self.file_calls += 1
                path.parent.mkdir(parents=True, exist_ok=True)
                self._made_dir = True
            self.file_calls += 1
            path.touch()
        except OSError:
            self.progress_dir = None  # not writable: this job's replies only

    def _progress_file(self, endpoint: str, state: EndpointState) -> Path | None:
        if self.progress_dir is None:
            return None
        if state.path is None:
            name = hashlib.sha256(_address(endpoint).encode()).hexdigest()[:16]
            state.path = self.progress_dir / f"{name}.last-reply"
        return state.path

    def timed_out(self, endpoint: str, ticket: Ticket) -> str | None:
        """An attempt timed out. With other requests in flight, back off: the limit is halved
        (to 1 while the endpoint never answered), once per limit; returns what to log."""
        endpoint = _address(endpoint)
        state = self.state(endpoint)
        others = self._slots(endpoint).in_flight - 1
        if others <= 0 or ticket.generation != state.generation or state.limit <= 1:
            return None
        before = state.limit
        answered = self.last_reply(endpoint) >= self.started
        state.limit = max(1, before // 2) if answered else 1
        state.generation += 1
        return (
            f"endpoint {endpoint}: a request timed out while {others} other request(s) to it "
            f"were in flight, so the server queues requests it cannot serve in time; sending at "
            f"most {state.limit} at a time from now on in this job (concurrency was {before})"
        )

    def found_no_server(self, endpoint: str, kind: str, detail: str) -> str | None:
        """An attempt failed without an answer (``kind`` ``connection`` or ``timeout``). While
        the endpoint never answered in this job (nor, by the progress file, another job since
        this one started), :data:`UNREACHABLE_AFTER` connection failures,
        or :data:`UNREACHABLE_AFTER_TIMEOUTS` timeouts of a request alone in flight, mark it
        unreachable; returns the reason when this attempt did (the requests waiting for a slot
        are then released by :meth:`release`)."""
        endpoint = _address(endpoint)
        state = self.state(endpoint)
        if state.unreachable is not None or self.last_reply(endpoint) >= self.started:
            return None  # given up already, or it answered in this run: not dead
        if kind == "timeout":
            if self._slots(endpoint).in_flight > 1:
                return None  # queued behind others: no sign that nothing answers
            state.lone_timeouts += 1
        else:
            state.failed_attempts += 1
        state.first_failure = state.first_failure or detail
        if (
            state.failed_attempts >= UNREACHABLE_AFTER
            or state.lone_timeouts >= UNREACHABLE_AFTER_TIMEOUTS
        ):
            n = state.failed_attempts + state.lone_timeouts
            state.unreachable_kind = kind if n == state.lone_timeouts else "connection"
            state.unreachable = (
                f"endpoint unreachable: {n} attempt(s) in this job got no answer (first: "
                f"{state.first_failure}) and none was answered; not tried again in this job"
            )
        return state.unreachable

    def unreachable(self, endpoint: str) -> str | None:
        """Why the endpoint is given up for this job, None while it is not."""
        state = self._states.get(_address(endpoint))
        return None if state is None else state.unreachable


def _address(endpoint: str) -> str:
    """The endpoint without a ``#fragment`` (one server, several adapters)."""
    return endpoint.split("#", 1)[0]
