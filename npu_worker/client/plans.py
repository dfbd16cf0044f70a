"""The two batch plans of the pipeline client, as steps a driver performs (`sync.py`, `aio.py`).

A plan is a generator that yields steps (`Call` a JSON endpoint, `Follow` an NDJSON stream into the
collector, `Sleep`, `Deliver` an event to `on_progress`) and is sent each step's outcome, or has the
step's `TransportError`/`WorkerHTTPError` thrown into it; it returns the result. Apart from
`common.py` because this is the one place that decides when to retry, re-attach, poll and give up.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from npu_worker.client.common import (
    BatchCollector,
    ClientError,
    EngineFailed,
    InvalidArgument,
    NotConnected,
    TransportError,
    WorkerHTTPError,
    WorkerProtocolError,
    done_event,
    events_path,
    job_path,
    result_events,
    status_event,
)

TERMINAL_STATUSES = frozenset({"done", "cancelled"})
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


@dataclass(frozen=True)
class Call:
    """A JSON request; the driver sends back the parsed body (a dict). `at_once`: the worker answers it
    at once (a poll), so its answer is awaited for the answer timeout only, not the read timeout."""

    method: str
    path: str
    body: Any = None
    at_once: bool = False


@dataclass(frozen=True)
class Follow:
    """Open an NDJSON stream and feed its lines to the collector until `done` or the stream ends;
    the driver sends back what broke it (an exception) or None. `at_once`: as for `Call` (a re-attach;
    its lines may then be as far apart as the read timeout allows)."""

    method: str
    path: str
    body: Any = None
    at_once: bool = False


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Deliver:
    """Pass one event to `collector.accept` (the async driver awaits what `on_progress` returns)."""

    event: dict[str, Any]


Step = Call | Follow | Sleep | Deliver
Plan = Generator[Step, Any, dict[str, Any]]


def backoff(failures: int, delay: float) -> float:
    """Seconds before retry number `failures` (0: at once), doubling from `delay`, at most MAX_BACKOFF."""
    return 0.0 if failures == 0 else min(delay * 2 ** (failures - 1), MAX_BACKOFF)


def retryable(error: ClientError) -> bool:
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
        return f"the worker still answered {self.said!r} after {self.waited:.3g} s of waiting (wait_limit)"


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
            f" {self.patience.clock() - self.since:.3g} s"
        )
        if asked_to_wait(error) and self.patience.spent():
            tried += f", the last {self.patience.waited:.3g} s answered 'not now' (wait_limit)"
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


def synth_plan(
    body: dict[str, Any],
    attempts: int,
    delay: float,
    wait_limit: float = WAIT_LIMIT,
    clock: Callable[[], float] = time.monotonic,
) -> Plan:
    """POST /synth, sent again while the worker says "not now" as a submission is (`submitted`): it
    waited for no `Loading` (a `synth` right after a restart failed at once, while a batch waited)."""
    patience = Patience(wait_limit, delay, clock)
    answer: dict[str, Any] = yield from submitted(Call("POST", "/synth", body), attempts, delay, patience)
    return answer


def streaming_plan(
    collector: BatchCollector,
    body: dict[str, Any],
    attempts: int,
    delay: float,
    wait_limit: float = WAIT_LIMIT,
) -> Plan:
    """POST /synth_batch as NDJSON and follow it to `done`, re-attaching at the last `seq` seen.

    `failures` counts re-attaches in a row that brought nothing new; past `attempts` it gives up.
    A worker that answers "not now" with a `Retry-After` is waited for instead, up to `wait_limit`.
    """
    patience = Patience(wait_limit, delay, collector.clock)
    before = collector.last_seq
    problem = yield from submitted(Follow("POST", "/synth_batch", body), attempts, delay, patience)
    failures = 0
    while collector.done is None:
        if collector.job_id is None:
            raise TransportError(  # answered: a worker answers once the job is queued
                f"the batch stream broke before its start event ({problem or 'EOF'}); the worker answered, so"
                " it may have queued the batch: GET /jobs lists it (sent again, it would run twice)"
            )
        if stall := collector.stalled():
            raise stall
        failures = 0 if collector.last_seq > before else failures + 1
        before = collector.last_seq
        problem, failures = yield from _reattach(collector, failures, attempts, delay, problem, patience)
    return collector.result()


def engine_failed(job_id: str) -> Generator[Step, Any, None]:
    """Raise `EngineFailed` when the worker's /health says it failed to start (500, `fail`: its engine
    did not load, or its kept jobs could not be read): restarted so, it answers a re-attach with heartbeats and a poll with `interrupted` for ever, and
    the client waited for ever (a worker of today refuses them with a 500: asked then too). Asked only
    after a restart's signs (a refused connection, a "not now", a stream silent past the read timeout,
    an `interrupted` job, a 500); any other answer, or none, is no verdict."""
    try:
        yield Call("GET", "/health", at_once=True)
    except WorkerHTTPError as exc:
        if exc.status == 500 and exc.body.get("status") == "fail":
            raise EngineFailed(
                f"job {job_id}: the worker failed to start ({exc.body.get('error')}), so it runs"
                " no job; the job runs once a worker that loads takes it up"
            ) from None
    except TransportError:
        return


def _reattach(
    collector: BatchCollector, failures: int, attempts: int, delay: float, problem: Any, patience: Patience
) -> Generator[Step, Any, tuple[Any, int]]:
    """Follow `/jobs/{id}/events?after=<last seq>`, retrying while the worker is unreachable or booting;
    while it says "not now" with a `Retry-After` (loading after a restart), waiting as it asks."""
    assert collector.job_id is not None
    lost = f"job {collector.job_id}: stream lost after event {collector.last_seq}"
    asked = False  # the last try was answered "not now": its wait is done, no back-off on top
    # The last try was refused or answered with a refusal, or the stream went silent past the read
    # timeout (a host rebooted or hung sends no reset): the worker may have restarted meanwhile. After
    # a silence the first re-attach was sent at once and, to a worker whose engine failed, followed its
    # heartbeats for ever.
    restarted = isinstance(problem, TimeoutError)
    while failures <= attempts:
        wait = 0.0 if asked else backoff(failures, delay)
        if wait:
            yield Sleep(wait)
        if restarted:
            yield from engine_failed(collector.job_id)
        again = Follow("GET", events_path(collector.job_id, collector.last_seq), at_once=True)
        try:
            answer = yield again
            patience.reset()
            return answer, failures
        except (TransportError, WorkerHTTPError) as exc:
            asked = asked_to_wait(exc)  # a 429 too: "not now" as its Retry-After says
            restarted = isinstance(exc, NotConnected | WorkerHTTPError)
            if not asked and not retryable(exc):
                if isinstance(exc, WorkerHTTPError) and exc.status == 500:
                    yield from engine_failed(collector.job_id)  # a worker that failed to start refuses so
                raise
            problem = exc
            if asked and patience.spent():
                raise TransportError(f"{lost}; {patience.gave_up()}") from None
            if asked:
                assert isinstance(exc, WorkerHTTPError)
                yield from patience.wait(exc)
                continue
        failures += 1
    # None: each stream the worker answered ended (EOF) before `done` and brought nothing new
    why = problem or "each stream ended before its done event, with nothing new"
    raise TransportError(f"{lost}; re-attaching failed {failures} times: {why}")


def poll_json(
    path: str, attempts: int, delay: float, patience: Patience | None = None, method: str = "GET"
) -> Generator[Step, Any, dict[str, Any]]:
    """GET `path` as JSON, retrying transport failures and 502/503/504 up to `attempts` times, and
    a "not now" with a `Retry-After` (a worker loading after a restart) as long as `patience` allows.
    `method`: another request that may be sent again (DELETE)."""
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
            yield Sleep(backoff(failures, delay))


def poll_job(
    path: str, job_id: str, attempts: int, delay: float, patience: Patience
) -> Generator[Step, Any, dict[str, Any]]:
    """`poll_json` of a job's status or result; a 500 sends it to /health (`engine_failed`): a worker
    that failed to start refuses its kept jobs with its failure."""
    try:
        answer: dict[str, Any] = yield from poll_json(path, attempts, delay, patience)
    except WorkerHTTPError as exc:
        if exc.status == 500:
            yield from engine_failed(job_id)
        raise
    return answer


def cancel_plan(
    job_id: str, delay: float, wait_limit: float = WAIT_LIMIT, clock: Callable[[], float] = time.monotonic
) -> Plan:
    """DELETE the job, again while the worker says "not now" with a `Retry-After`, up to `wait_limit`:
    a worker that restarted answers every `/jobs` request `Loading` until it has read its kept jobs
    and loaded its engine (minutes on an NPU), then runs the job; a cancel refused once (Ctrl-C's)
    left it running unattended. Anything else fails at once (the caller is told the job may run on)."""
    answer = yield from poll_json(job_path(job_id), 0, delay, Patience(wait_limit, delay, clock), "DELETE")
    return answer


def polling_plan(
    collector: BatchCollector,
    body: dict[str, Any],
    interval: float,
    attempts: int,
    delay: float,
    wait_limit: float = WAIT_LIMIT,
) -> Plan:
    """POST /synth_batch?async=1, poll the status until the job ends, then deliver its result.

    `on_progress` gets a `status` event with the accepted body (its `job_id`) and whenever the polled
    status changes, then each section's final event and `done` (and a `waiting` event for each wait a
    "not now" with `Retry-After` asks for).
    """
    patience = Patience(wait_limit, delay, collector.clock)
    accepted = yield from submitted(Call("POST", "/synth_batch?async=1", body), attempts, delay, patience)
    if not isinstance(accepted.get("job_id"), str) or not accepted["job_id"]:
        raise WorkerProtocolError(f"the worker accepted the batch without a job_id: {accepted}"[:300])
    collector.job_id, collector.total = accepted["job_id"], accepted.get("total")
    job = job_path(collector.job_id)
    # Told at once, as the stream's `start` is: until the first poll was answered (a worker loading
    # after a restart: up to wait_limit), `on_progress` knew no job, and Ctrl-C cancelled none.
    seen: tuple[Any, ...] = (accepted.get("status"), accepted.get("done"), accepted.get("current_idx"))
    yield Deliver(status_event(accepted))
    while True:
        status = yield from poll_job(f"{job}/status", collector.job_id, attempts, delay, patience)
        state = _of_job(status, collector.job_id)
        key = (state, status.get("done"), status.get("current_idx"))
        if key != seen:
            seen = key
            yield Deliver(status_event(status))
        if state in TERMINAL_STATUSES:
            break
        if state == "interrupted":  # kept across a restart, not taken up yet
            yield from engine_failed(collector.job_id)
        if stall := collector.stalled():
            raise stall
        yield Sleep(interval)
    while True:  # a 202 (the status body) until the result is there: in a cluster it may lag the status
        result = yield from poll_job(f"{job}/result", collector.job_id, attempts, delay, patience)
        if _of_job(result, collector.job_id) in TERMINAL_STATUSES:
            break
        if stall := collector.stalled():  # a result that never comes (a cluster's lost write)
            raise stall
        yield Sleep(interval)
    for event in result_events(result):
        yield Deliver(event)
    yield Deliver(done_event(result, collector.total))
    return collector.result()


def _of_job(body: dict[str, Any], job_id: str) -> str:
    """`body`'s status; WorkerProtocolError unless it is a body of job `job_id` (not a proxy's page,
    which polling would otherwise read as a job still under way, for ever) whose status is a word (a
    list there was a TypeError out of the client, a traceback and exit 1 from `batch --poll`)."""
    status = body.get("status")
    if body.get("job_id") != job_id or not isinstance(status, str):
        raise WorkerProtocolError(f"the worker answered no status of job {job_id}: {body}"[:300])
    return status
