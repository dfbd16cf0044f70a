"""How one request of the pipeline client is sent again: after a back-off while the worker cannot be
reached, after its `Retry-After` while it says "not now" (`Patience`), and given up in words (`Tries`).
Apart from `plans.py`, which decides what a batch asks, because a submission, a poll and a cancel
retry alike."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from npu_worker.client.common import seconds_said
from npu_worker.client.errors import (
    ClientError,
    InvalidArgument,
    NotConnected,
    TransportError,
    WorkerHTTPError,
    WorkerProtocolError,
)
from npu_worker.client.steps import Call, Deliver, Follow, Sleep, Step

# Worker answers that mean "not now" rather than "never": a re-attach or a poll is tried again.
RETRYABLE_STATUSES = frozenset({502, 503, 504})
SUBMIT_RETRY_STATUSES = frozenset({429, 503})  # "not now": nothing was queued (see `not_now`)
MAX_BACKOFF = 5.0
MAX_RETRY_AFTER = 30.0  # a worker's Retry-After is followed up to this many seconds
# Seconds in a row a worker that answers "not now" with a Retry-After is waited for: a first ZipVoice
# start on an NPU compiles its decoder for minutes (20-101 s a bucket, five buckets).
WAIT_LIMIT = 900.0
# A single call's tries and first back-off (`synth`, a cancel): the batch calls' defaults.
SUBMIT_ATTEMPTS, SUBMIT_DELAY = 10, 0.5
MIN_WAIT = 0.05  # the least a wait lasts: `Retry-After: 0` with `reattach_delay=0` is no busy loop


def backoff(failures: int, delay: float) -> float:
    """Seconds before retry number `failures` (0: at once), doubling from `delay`, at most MAX_BACKOFF."""
    return 0.0 if failures == 0 else min(delay * 2 ** (failures - 1), MAX_BACKOFF)


def retryable(error: ClientError) -> bool:
    """Worth sending again: not a WorkerProtocolError, whose answer would come the same again (a
    proxy's page for a poll was asked for eleven times, 37 s, before it was said)."""
    if isinstance(error, WorkerProtocolError):
        return False
    return isinstance(error, TransportError) or (
        isinstance(error, WorkerHTTPError) and error.status in RETRYABLE_STATUSES
    )


def not_now(error: ClientError) -> bool:
    """A submission the worker refused for the moment, so nothing was queued: 429 (its queue is full)
    or 503 (loading, shutting down, its state or queue unavailable); any other refusal is final."""
    return isinstance(error, WorkerHTTPError) and error.status in SUBMIT_RETRY_STATUSES


def asked_to_wait(error: BaseException) -> bool:
    """A 429 or 503 with `Retry-After`: the worker is there and says when to ask again (it loads its
    engine or reads its kept jobs, its queue is full, it shuts down for a restart). Unlike a worker
    that cannot be reached, it is waited for without spending `attempts`, up to the wait limit."""
    return isinstance(error, WorkerHTTPError) and not_now(error) and error.retry_after is not None


@dataclass
class Patience:
    """How long the worker has said "not now, retry after" in a row, against `limit` seconds on `clock`.

    Counted from its first "not now" of the row on the clock, so the time its answers took counts too
    (only the sleeps were counted: a worker that took 0.2 s to say `Loading` and asked for 0.05 s was
    asked 12 times for a limit of 0.5 s, 2.4 s of answers). Each wait is its `Retry-After` (at least `floor`,
    the back-off's first delay, and MIN_WAIT, so `Retry-After: 0` is no busy loop and the limit is
    reached; at most MAX_RETRY_AFTER, never past the limit), and is told to `on_progress` first as an
    unlogged `waiting` event (the CLI prints it): a worker that compiles for minutes is not silence."""

    limit: float = WAIT_LIMIT
    floor: float = 0.5
    clock: Callable[[], float] = time.monotonic
    since: float | None = None  # when the first "not now" of this row came
    said: str = ""  # the last "not now" in the worker's words

    def __post_init__(self) -> None:
        if not math.isfinite(self.limit) or self.limit < 0:  # a negative one was taken as 0, unsaid
            raise InvalidArgument(f"wait_limit must be a finite number of seconds ≥ 0, not {self.limit:g}")

    @property
    def waited(self) -> float:
        return 0.0 if self.since is None else self.clock() - self.since

    def spent(self) -> bool:
        return self.waited >= self.limit - 1e-6  # a wait cut to end at the limit ends it, rounded or not

    def wait(self, error: WorkerHTTPError) -> Generator[Step, Any, None]:
        assert error.retry_after is not None
        if self.since is None:
            self.since = self.clock()
        waited = self.waited
        wanted = max(error.retry_after, self.floor, MIN_WAIT)
        seconds = max(0.0, min(wanted, MAX_RETRY_AFTER, self.limit - waited))
        self.said = str(error.body.get("error") or error)
        event = {"event": "waiting", "status": error.status, "error": self.said, "retry_after": seconds}
        yield Deliver({**event, "waited": round(waited, 3), "wait_limit": self.limit})
        yield Sleep(seconds)

    def reset(self) -> None:
        """The worker answered: a later "not now" starts a new count."""
        self.since = None

    def gave_up(self) -> str:
        return f"the worker still answered {self.said!r} after {seconds_said(self.waited)} s of waiting (wait_limit)"


class Tries:
    """The requests of one call (a submission, a poll, a cancel) and since when, to say when it is given
    up what was tried and for how long: polling gave up with the worker's last words only."""

    def __init__(self, step: Call | Follow, patience: Patience) -> None:
        self.step, self.patience = step, patience
        self.count, self.since = 0, patience.clock()

    def given_up(self, error: ClientError) -> ClientError:
        """`error`, with what was tried when it was more than one request."""
        if self.count < 2:
            return error
        tried = (
            f"{self.step.method} {self.step.path}: given up after {self.count} tries in"
            f" {seconds_said(self.patience.clock() - self.since)} s"
        )
        if asked_to_wait(error) and self.patience.spent():
            tried += f", the last {seconds_said(self.patience.waited)} s answered 'not now' (wait_limit)"
        given_up: ClientError
        if isinstance(error, WorkerHTTPError):  # its status and error name as they were
            given_up = WorkerHTTPError(error.status, error.body, error.retry_after, tried=tried)
        else:
            given_up = type(error)(f"{tried}; the last: {error}")
        given_up.__cause__ = error
        return given_up


def submitted(
    step: Call | Follow, attempts: int, delay: float, patience: Patience
) -> Generator[Step, Any, Any]:
    """Send a submission, again after the worker's `Retry-After` while it answers "not now" (up to the
    wait limit), or after the back-off, at most `attempts` more times, when it says no `Retry-After`
    or, having said "not now", refuses the connection (it restarts: a load that crashed, a shutdown;
    nothing was sent; that ended the batch with exit 2). A connection that breaks once made is not
    retried: the worker may have queued the batch, and sending it twice would make it twice; nor is
    a refused first one (no worker there: said at once)."""
    failures = 0
    said_not_now = False
    tries = Tries(step, patience)
    while True:
        try:
            tries.count += 1
            answer = yield step
            patience.reset()
            return answer
        except NotConnected as exc:
            failures += 1
            if not said_not_now or failures > attempts:
                raise tries.given_up(exc)  # noqa: B904 - `exc` itself, or with `exc` as its cause
            yield Sleep(backoff(failures, delay))
        except WorkerHTTPError as exc:
            said_not_now = said_not_now or not_now(exc)
            if asked_to_wait(exc) and not patience.spent():
                yield from patience.wait(exc)
                continue
            failures += 1
            if not not_now(exc) or failures > attempts or asked_to_wait(exc):
                raise tries.given_up(exc)  # noqa: B904 - `exc` itself, or with `exc` as its cause
            yield Sleep(backoff(failures, delay))


def poll_json(
    path: str,
    attempts: int,
    delay: float,
    patience: Patience | None = None,
    method: str = "GET",
    lost: Callable[[BaseException], dict[str, Any]] | None = None,
) -> Generator[Step, Any, dict[str, Any]]:
    """GET `path` as JSON, retrying transport failures and 502/503/504 up to `attempts` times, and
    a "not now" with a `Retry-After` (a worker loading after a restart) as long as `patience` allows.
    `method`: another request that may be sent again (DELETE). `lost`: the event delivered at the first
    failure retried (`batch --poll` said nothing through its retries while a worker was down)."""
    patience = Patience(floor=delay) if patience is None else patience
    failures = 0
    call = Call(method, path, at_once=True)
    tries = Tries(call, patience)
    while True:
        try:
            tries.count += 1
            answer: dict[str, Any] = yield call
            patience.reset()
            return answer
        except (TransportError, WorkerHTTPError) as exc:
            if asked_to_wait(exc) and not patience.spent():
                assert isinstance(exc, WorkerHTTPError)
                yield from patience.wait(exc)
                continue
            failures += 1
            if not retryable(exc) or failures > attempts or asked_to_wait(exc):
                raise tries.given_up(exc)  # noqa: B904 - `exc` itself, or with `exc` as its cause
            if lost is not None and failures == 1:
                yield Deliver(lost(exc))
            yield Sleep(backoff(failures, delay))
