"""The two batch plans of the pipeline client, as steps a driver performs (`sync.py`, `aio.py`).

A plan is a generator that yields steps (`Call` a JSON endpoint, `Follow` an NDJSON stream into the
collector, `Sleep`, `Deliver` an event to `on_progress`) and is sent each step's outcome, or has the
step's `TransportError`/`WorkerHTTPError` thrown into it; it returns the result. Apart from
`common.py` because this is the one place that decides when to retry, re-attach, poll and give up.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from npu_worker.client.common import (
    BatchCollector,
    ClientError,
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


def submitted(step: Call | Follow, attempts: int, delay: float) -> Generator[Step, Any, Any]:
    """Send a submission, again after the worker's `Retry-After` (else the back-off) while it answers
    "not now", at most `attempts` more times. A broken connection is not retried: the worker may have
    queued the batch, and sending it twice would make it twice."""
    failures = 0
    while True:
        try:
            return (yield step)
        except WorkerHTTPError as exc:
            failures += 1
            if not not_now(exc) or failures > attempts:
                raise
            wait = exc.retry_after if exc.retry_after is not None else backoff(failures, delay)
            yield Sleep(min(wait, MAX_RETRY_AFTER))


def streaming_plan(collector: BatchCollector, body: dict[str, Any], attempts: int, delay: float) -> Plan:
    """POST /synth_batch as NDJSON and follow it to `done`, re-attaching at the last `seq` seen.

    `failures` counts re-attaches in a row that brought nothing new; past `attempts` it gives up.
    """
    before = collector.last_seq
    problem = yield from submitted(Follow("POST", "/synth_batch", body), attempts, delay)
    failures = 0
    while collector.done is None:
        if collector.job_id is None:
            raise TransportError(f"the batch stream broke before its start event: {problem or 'EOF'}")
        failures = 0 if collector.last_seq > before else failures + 1
        before = collector.last_seq
        problem, failures = yield from _reattach(collector, failures, attempts, delay, problem)
    return collector.result()


def _reattach(
    collector: BatchCollector, failures: int, attempts: int, delay: float, problem: Any
) -> Generator[Step, Any, tuple[Any, int]]:
    """Follow `/jobs/{id}/events?after=<last seq>`, retrying while the worker is unreachable or booting."""
    assert collector.job_id is not None
    while failures <= attempts:
        wait = backoff(failures, delay)
        if wait:
            yield Sleep(wait)
        again = Follow("GET", events_path(collector.job_id, collector.last_seq), at_once=True)
        try:
            return (yield again), failures
        except (TransportError, WorkerHTTPError) as exc:
            if not retryable(exc):
                raise
            problem = exc
        failures += 1
    raise TransportError(
        f"job {collector.job_id}: stream lost after event {collector.last_seq}; "
        f"re-attaching failed {failures} times: {problem}"
    )


def poll_json(path: str, attempts: int, delay: float) -> Generator[Step, Any, dict[str, Any]]:
    """GET `path` as JSON, retrying transport failures and 502/503/504 up to `attempts` times."""
    failures = 0
    while True:
        try:
            answer: dict[str, Any] = yield Call("GET", path, at_once=True)
            return answer
        except (TransportError, WorkerHTTPError) as exc:
            failures += 1
            if not retryable(exc) or failures > attempts:
                raise
            yield Sleep(backoff(failures, delay))


def polling_plan(
    collector: BatchCollector, body: dict[str, Any], interval: float, attempts: int, delay: float
) -> Plan:
    """POST /synth_batch?async=1, poll the status until the job ends, then deliver its result.

    `on_progress` gets a `status` event whenever the polled status changes, then each section's final
    event and `done`.
    """
    accepted = yield from submitted(Call("POST", "/synth_batch?async=1", body), attempts, delay)
    if not isinstance(accepted.get("job_id"), str) or not accepted["job_id"]:
        raise WorkerProtocolError(f"the worker accepted the batch without a job_id: {accepted}"[:300])
    collector.job_id, collector.total = accepted["job_id"], accepted.get("total")
    job = job_path(collector.job_id)
    seen: tuple[Any, ...] = ()
    while True:
        status = yield from poll_json(f"{job}/status", attempts, delay)
        _of_job(status, collector.job_id)
        key = (status.get("status"), status.get("done"), status.get("current_idx"))
        if key != seen:
            seen = key
            yield Deliver(status_event(status))
        if status.get("status") in TERMINAL_STATUSES:
            break
        yield Sleep(interval)
    while True:  # a 202 (the status body) until the result is there: in a cluster it may lag the status
        result = yield from poll_json(f"{job}/result", attempts, delay)
        if _of_job(result, collector.job_id) in TERMINAL_STATUSES:
            break
        yield Sleep(interval)
    for event in result_events(result):
        yield Deliver(event)
    yield Deliver(done_event(result, collector.total))
    return collector.result()


def _of_job(body: dict[str, Any], job_id: str) -> Any:
    """`body`'s status; WorkerProtocolError unless it is a body of job `job_id` (not a proxy's page,
    which polling would otherwise read as a job still under way, for ever)."""
    if body.get("job_id") != job_id:
        raise WorkerProtocolError(f"the worker answered no status of job {job_id}: {body}"[:300])
    return body.get("status")
