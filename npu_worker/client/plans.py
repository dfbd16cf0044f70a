"""The batch plans of the pipeline client (and `synth`'s and a cancel's), as steps a driver performs.

See `steps.py` for what a plan yields; this is the one place that decides what a batch asks next:
submit, follow its stream and re-attach at the last `seq`, poll its status and then its result, and
when a restart's signs send it to `/health`. How each request is retried is `retrying.py`'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from npu_worker.client.collector import (
    TERMINAL_STATUSES,
    BatchCollector,
    done_event,
    result_events,
    status_event,
)
from npu_worker.client.common import check_count, check_seconds, events_path, job_path, seconds_said
from npu_worker.client.errors import (
    AnswerCut,
    EngineFailed,
    NotConnected,
    TransportError,
    WorkerHTTPError,
    WorkerProtocolError,
)
from npu_worker.client.retrying import (
    WAIT_LIMIT,
    Patience,
    asked_to_wait,
    backoff,
    poll_json,
    retryable,
    submitted,
)
from npu_worker.client.steps import Call, Deliver, Follow, Plan, Sleep, Step
from npu_worker.worker_words import one_line

# A submission sent whose answer never came whole (none began, or it broke off). The words said "the
# worker answered", untrue of an answer that never began.
MAY_HAVE_QUEUED = (
    "the worker queues a batch before it answers, so it may have queued the batch: GET /jobs lists it"
    " (sent again, it would run twice)"
)
# Answers only a gateway between the client and the worker gives (the worker answers neither): a proxy
# that gave up waiting for the worker's answer, or lost its connection, after passing the request on.
GATEWAY_STATUSES = frozenset({502, 504})
# A stream's submission a gateway held or gave up on: polling's answers are short and come at once.
POLLING_GOES_THROUGH = (
    "; a proxy that holds a stream until its end lets polling through (batch --poll, synth_batch_polling)"
)


def synth_plan(
    body: dict[str, Any],
    attempts: int,
    delay: float,
    wait_limit: float = WAIT_LIMIT,
    clock: Callable[[], float] = time.monotonic,
) -> Plan:
    """POST /synth, sent again while the worker says "not now" as a submission is (`submitted`): it
    waited for no `Loading` (a `synth` right after a restart failed at once, while a batch waited).
    A gateway's 502 or 504 is an `AnswerCut`: the synthesis may have run, its wav written or not (it
    was a bare `HTTP 504: <html>…`, as if the worker had refused it)."""
    patience = Patience(wait_limit, delay, clock)
    step = Call("POST", "/synth", body)
    try:
        answer: dict[str, Any] = yield from submitted(step, attempts, delay, patience)
    except WorkerHTTPError as exc:
        if (cut := gateway_gave_up(step, exc)) is None:
            raise
        raise cut from exc
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
    check_count("reattach_attempts", attempts)
    check_seconds("reattach_delay", delay, zero_allowed=True)
    patience = Patience(wait_limit, delay, collector.clock)
    before = collector.last_seq
    problem = yield from submitted_once(
        Follow("POST", "/synth_batch", body), attempts, delay, patience, POLLING_GOES_THROUGH
    )
    failures, lost_at = 0, collector.clock()
    while collector.done is None:
        if collector.job_id is None:
            raise TransportError(  # answered: a worker answers once the job is queued
                f"the batch stream broke before its start event ({problem or 'EOF'}); {MAY_HAVE_QUEUED}"
                + POLLING_GOES_THROUGH
            )
        if stall := collector.stalled():
            raise stall
        failures = 0 if collector.last_seq > before else failures + 1
        if failures == 0:  # the stream brought something: lost now
            lost_at = collector.clock()
            yield Deliver(stream_lost(collector, problem))
        before = collector.last_seq
        problem, failures = yield from _reattach(
            collector, failures, attempts, delay, problem, patience, lost_at
        )
    return collector.result()


def stream_lost(collector: BatchCollector, problem: Any) -> dict[str, Any]:
    """The unlogged `stream_lost` event: the stream broke before `done` (a worker killed, or shutting
    down: its `ShuttingDown` line's words are in `error`), and the client re-attaches after `after`.
    Without it a caller's progress froze for the whole re-attach with no word why."""
    if problem is None:
        said = "the stream ended before its done event"
    elif isinstance(problem, TransportError | TimeoutError) and str(problem):
        said = str(problem)
    else:  # a broken connection: its class says more than its words (often none)
        said = f"the connection broke ({type(problem).__name__}{f': {problem}' if str(problem) else ''})"
    return {"event": "stream_lost", "job_id": collector.job_id, "after": collector.last_seq, "error": said}


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
                f"job {one_line(job_id)}: the worker failed to start ({one_line(exc.body.get('error'))}), so it runs"
                " no job; the job runs once a worker that loads takes it up"
            ) from None
    except TransportError:
        return


def _reattach(
    collector: BatchCollector,
    failures: int,
    attempts: int,
    delay: float,
    problem: Any,
    patience: Patience,
    lost_at: float,
) -> Generator[Step, Any, tuple[Any, int]]:
    """Follow `/jobs/{id}/events?after=<last seq>`, retrying while the worker is unreachable or booting;
    while it says "not now" with a `Retry-After` (loading after a restart), waiting as it asks. Given
    up, it says for how long since the stream was lost (at `lost_at` on the collector's clock)."""
    assert collector.job_id is not None
    lost = f"job {one_line(collector.job_id)}: stream lost after event {collector.last_seq}"
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
    tried = f"re-attaching failed {failures} times in {seconds_said(collector.clock() - lost_at)} s"
    raise TransportError(f"{lost}; {tried}: {why}")


def poll_job(
    path: str,
    job_id: str,
    attempts: int,
    delay: float,
    patience: Patience,
    lost: Callable[[BaseException], dict[str, Any]] | None = None,
) -> Generator[Step, Any, dict[str, Any]]:
    """`poll_json` of a job's status or result; a 500 sends it to /health (`engine_failed`): a worker
    that failed to start refuses its kept jobs with its failure."""
    try:
        answer: dict[str, Any] = yield from poll_json(path, attempts, delay, patience, lost=lost)
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


def submitted_once(
    step: Call | Follow, attempts: int, delay: float, patience: Patience, advice: str = ""
) -> Generator[Step, Any, Any]:
    """A batch's submission (`submitted`); sent and its answer never whole (`AnswerCut`: none began,
    or it broke off), the error says the batch may be queued. It was a bare "no whole answer" (or
    "Remote end closed connection without response" from a stream's): `batch` run again made the
    lecture twice. So does a gateway's 502 or 504 (`AnswerCut` too): it was a bare `HTTP 504: <html>…`
    while the job ran on. `advice` is added to those words."""
    try:
        return (yield from submitted(step, attempts, delay, patience))
    except AnswerCut as exc:
        raise TransportError(f"{exc}; {MAY_HAVE_QUEUED}{advice}") from exc
    except WorkerHTTPError as exc:
        if (cut := gateway_gave_up(step, exc)) is None:
            raise
        raise AnswerCut(f"{cut}; {MAY_HAVE_QUEUED}{advice}") from exc


def gateway_gave_up(step: Call | Follow, error: WorkerHTTPError) -> AnswerCut | None:
    """For a 502 or 504 (a gateway's: the worker answers neither), an `AnswerCut` that says so: the
    request went on to the worker, whose answer never came; None for the worker's own refusals. The
    tries before it are said as the error said them (a 502 after `Loading` waits dropped the note)."""
    if error.status not in GATEWAY_STATUSES:
        return None
    gateway = (
        f"HTTP {error.status} from a gateway between the client and the worker (the worker answers no"
        f" {error.status}), so the worker's answer never came"
    )
    if error.tried:
        return AnswerCut(f"{error.tried}; the last answer: {gateway}")
    return AnswerCut(f"{step.method} {step.path}: {gateway}")


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
    check_count("reattach_attempts", attempts)
    check_seconds("reattach_delay", delay, zero_allowed=True)
    check_seconds("poll_interval", interval, zero_allowed=True)
    patience = Patience(wait_limit, delay, collector.clock)
    accepted = yield from submitted_once(
        Call("POST", "/synth_batch?async=1", body), attempts, delay, patience
    )
    if not isinstance(accepted.get("job_id"), str) or not accepted["job_id"]:
        raise WorkerProtocolError(f"the worker accepted the batch without a job_id: {accepted}"[:300])
    collector.job_id, collector.total = accepted["job_id"], accepted.get("total")
    job_id = accepted["job_id"]
    poller = _Poller(collector, job_id, job_path(job_id), interval, attempts, delay, patience)
    # Told at once, as the stream's `start` is: until the first poll was answered (a worker loading
    # after a restart: up to wait_limit), `on_progress` knew no job, and Ctrl-C cancelled none.
    seen: tuple[Any, ...] = (accepted.get("status"), accepted.get("done"), accepted.get("current_idx"))
    yield Deliver(status_event(accepted))
    yield from _status_until_ended(poller, seen)
    result = yield from _result_once_there(poller)
    for event in result_events(result):
        yield Deliver(event)
    yield Deliver(done_event(result, collector.total))
    return collector.result()


@dataclass
class _Poller:
    """One polled job and how to poll it; `lost_said`: a poll's first failure retried was said
    (`stream_lost`), so its end is said too."""

    collector: BatchCollector
    job_id: str
    job: str  # its path
    interval: float
    attempts: int
    delay: float
    patience: Patience
    lost_said: bool = False

    def lost(self, problem: BaseException) -> dict[str, Any]:
        """The `stream_lost` event of a failed poll that is retried, noted as said."""
        self.lost_said = True
        return {**stream_lost(self.collector, problem), "polling": True}

    def poll(self, what: str) -> Generator[Step, Any, dict[str, Any]]:
        """The job's `status` or `result` answer (`poll_job`)."""
        path = f"{self.job}/{what}"
        return (yield from poll_job(path, self.job_id, self.attempts, self.delay, self.patience, self.lost))


def _status_until_ended(poller: _Poller, seen: tuple[Any, ...]) -> Generator[Step, Any, None]:
    """Poll the status until the job ends, delivering each change (and the first answer after a loss
    that was said); a job kept across a restart sends the plan to /health, one stalled ends it."""
    collector = poller.collector
    while True:
        status = yield from poller.poll("status")
        state = _of_job(status, poller.job_id)
        key = (state, status.get("done"), status.get("current_idx"))
        # a change, or the first answer after a loss it said
        if key != seen or poller.lost_said and collector.report_stream_lost:
            poller.lost_said = False
            seen = key
            yield Deliver(status_event(status))
        if state in TERMINAL_STATUSES:
            return
        if state == "interrupted":  # kept across a restart, not taken up yet
            yield from engine_failed(poller.job_id)
        if stall := collector.stalled():
            raise stall
        yield Sleep(poller.interval)


def _result_once_there(poller: _Poller) -> Generator[Step, Any, dict[str, Any]]:
    """The ended job's result: a 202 (the status body) until it is there, since in a cluster it may
    lag the status; a result that never comes (a cluster's lost write) ends in a stall."""
    while True:
        result = yield from poller.poll("result")
        if _of_job(result, poller.job_id) in TERMINAL_STATUSES:
            return result
        if stall := poller.collector.stalled():
            raise stall
        yield Sleep(poller.interval)


def _of_job(body: dict[str, Any], job_id: str) -> str:
    """`body`'s status; WorkerProtocolError unless it is a body of job `job_id` (not a proxy's page,
    which polling would otherwise read as a job still under way, for ever) whose status is a word (a
    list there was a TypeError out of the client, a traceback and exit 1 from `batch --poll`)."""
    status = body.get("status")
    if body.get("job_id") != job_id or not isinstance(status, str):
        raise WorkerProtocolError(f"the worker answered no status of job {one_line(job_id)}: {body}"[:300])
    return status
