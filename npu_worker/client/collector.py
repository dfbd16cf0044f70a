"""The batch collector of the pipeline client: the one place that takes a batch's events.

It is fed the events of one batch in the order they arrive — from the first NDJSON stream, from
re-attached streams, or from polled results — and decides which are new (by the job log's `seq`),
calls `on_progress`, and builds the result the user's helper sketch returns:
`{"sections": [...], "wav_paths": [...]}`.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from npu_worker.client.common import job_path
from npu_worker.client.errors import InvalidArgument, Stalled, TransportError, WorkerProtocolError
from npu_worker.worker_words import one_line

ProgressCallback = Callable[[int, dict[str, Any]], Any]

# Events that are not entries of the job log: keepalives, the polling mode's status snapshots, and the
# client's own `waiting` (the worker answered "not now" with a Retry-After: it loads, its queue is full)
# and `stream_lost` (the stream broke before `done`: the client re-attaches).
UNLOGGED_EVENTS = frozenset({"heartbeat", "status", "waiting", "stream_lost"})
NO_PROGRESS_EVENTS = frozenset({"heartbeat", "stream_lost"})  # they move the job on by nothing
# The client's own words, never a worker's: a stream line so named would be said as the client's
# (`npu-worker batch` printed a worker's "stream lost … re-attaching" while nothing was lost, a
# worker's `waiting` line as a "not now" wait the client never made, and a `status` line as a polled
# snapshot: a job state the client never read from `/jobs/{id}/status`, counted as progress).
CLIENT_EVENTS = frozenset({"stream_lost", "waiting", "status"})
TERMINAL_STATUSES = frozenset({"done", "cancelled"})  # a job's status once it has ended (its result is there)


@dataclass
class BatchCollector:
    """Feeds each event of a batch to `on_progress` exactly once and gathers the result.

    Logged events carry `seq` (1-based, the job log's order); anything at or below the last seen `seq`
    is a replay and is dropped. A polled result's sections carry no `seq`: they are numbered by arrival.
    Heartbeats (and polled status snapshots) are not logged: they are passed on — callers use them to
    keep RPC layers alive — and never counted.
    """

    on_progress: ProgressCallback | None = None
    job_id: str | None = None
    last_seq: int = 0
    total: int | None = None
    started: dict[str, Any] | None = None
    done: dict[str, Any] | None = None
    ok: dict[int, dict[str, Any]] = field(default_factory=dict)
    errors: dict[int, dict[str, Any]] = field(default_factory=dict)
    delivered: int = 0
    skipped: tuple[int, int] | None = None  # the last skip of seq seen (last seen, then the next one)
    # The client's own `stream_lost` event is delivered only when asked for (`npu-worker batch` does): a
    # callback written before it existed reads `event["seq"]` on every event but `waiting` (KeyError).
    report_stream_lost: bool = False
    # Seconds the job may go without progress (None: no bound; see `stalled`), and the clock it is read on.
    stall_limit: float | None = None
    clock: Callable[[], float] = time.monotonic
    progressed_at: float = field(init=False)
    polled: dict[str, Any] | None = None  # polling: the last status delivered (its `ok` and `fail` counts)

    def __post_init__(self) -> None:
        if self.stall_limit is not None and not (math.isfinite(self.stall_limit) and self.stall_limit > 0):
            raise InvalidArgument(
                f"stall_limit must be a finite number of seconds > 0, not {self.stall_limit:g}"
            )
        self.progressed_at = self.clock()

    def stalled(self) -> Stalled | None:
        """Why the run ends now: its job has made no progress for `stall_limit` seconds. Progress is a
        new logged event, a changed polled status, or a `waiting` (a worker that loads is bounded by
        `wait_limit` instead). No bound by default: an honest section takes minutes on a CPU (up to
        2 000 characters of text), and a batch waits its turn behind other callers' sections."""
        if self.stall_limit is None or self.clock() - self.progressed_at < self.stall_limit:
            return None
        return Stalled(
            f"job {one_line(self.job_id)}: no progress for {self.stall_limit:g} s (stall_limit) after event"
            f" {self.last_seq}, while the worker kept it running"
        )

    def gap(self, event: dict[str, Any]) -> TransportError | None:
        """Why a stream's `event` cannot be taken yet: its `seq` skips entries (the worker's log numbers
        them one by one, so the skipped ones were lost on the way); the stream is then re-attached after
        the last seq seen, which sends them again. The same skip once more is the log's own (a Redis log
        with a planted entry moves on past it) and is taken. WorkerProtocolError for a line that is no
        event, or a logged event without its `seq`: numbered by arrival, each re-attach that sent one
        counted as progress, so a worker that sent such a line and hung up was asked again at once,
        for ever (thousands of requests a second)."""
        kind, seq = event.get("event"), event.get("seq")
        if not isinstance(kind, str):
            raise WorkerProtocolError(f"the worker sent a line that is no event: {event}"[:300])
        if kind in CLIENT_EVENTS:
            raise WorkerProtocolError(
                f"the worker sent a line named as the client's own {kind}: {event}"[:300]
            )
        if kind in UNLOGGED_EVENTS:
            return None
        if kind == "error" and seq is None and event.get("idx") is None:
            # the stream's own failure (a bug of the worker's, `InternalError`), not the job's: the job
            # goes on, so the stream is re-attached after the last seq seen
            return TransportError(f"the stream failed: {one_line(event.get('error'))}"[:300])
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            raise WorkerProtocolError(
                f"the worker sent a {one_line(kind)} event without its seq: {event}"[:300]
            )
        if seq <= self.last_seq + 1:
            return None
        if self.skipped == (self.last_seq, seq):
            return None
        self.skipped = (self.last_seq, seq)
        return TransportError(f"the stream skipped from seq {self.last_seq} to {seq}")

    def accept(self, event: dict[str, Any]) -> Any:
        """Record `event` if new; returns what `on_progress` returned (an awaitable in async callers)."""
        kind = event.get("event")
        if kind == "stream_lost" and not self.report_stream_lost:
            return None
        if kind == "status":
            self.polled = event
        if kind not in UNLOGGED_EVENTS:
            seq = event.get("seq")
            seq = self.last_seq + 1 if not isinstance(seq, int) else seq
            if seq <= self.last_seq:
                return None
            self.last_seq = seq
            self._record(kind, event)
        if kind not in NO_PROGRESS_EVENTS:  # a status is delivered only when it changed
            self.progressed_at = self.clock()
        self.delivered += 1
        if self.on_progress is None:
            return None
        idx = event.get("idx")
        return self.on_progress(idx if isinstance(idx, int) else -1, event)

    def _record(self, kind: Any, event: dict[str, Any]) -> None:
        if kind == "start":
            job_id = event.get("job_id")
            if not isinstance(job_id, str) or not job_id:
                raise WorkerProtocolError(f"the worker sent a start without a job_id: {event}"[:300])
            self.started = event
            self.job_id = job_id
            self.total = event.get("total", self.total)
        elif kind == "progress" and event.get("status") == "ok":
            idx = event.get("idx")
            if not isinstance(idx, int) or isinstance(idx, bool):
                raise WorkerProtocolError(
                    f"the worker sent a section's ok without an integer idx: {event}"[:300]
                )
            self.ok[idx] = event
            self.errors.pop(idx, None)
        elif kind == "error":
            idx = event.get("idx")
            self.errors[idx if isinstance(idx, int) else -1] = event
        elif kind == "done":
            self.done = event

    def result(self) -> dict[str, Any]:
        """The sketch's `{"sections", "wav_paths"}` (ok sections in idx order) plus what else is known."""
        sections = [self.ok[idx] for idx in sorted(self.ok)]
        return {
            "sections": sections,
            "wav_paths": [event.get("wav_path") for event in sections],
            "errors": [self.errors[idx] for idx in sorted(self.errors)],
            "job_id": self.job_id,
            "total": self.total,
            "ok_count": len(self.ok),
            "fail_count": len(self.errors),
            "done": self.done,
        }

    def left_running(self) -> str | None:
        """What a Ctrl-C in the caller (a pipeline's `KeyboardInterrupt`) is told of the job it leaves:
        it runs on, writing its wavs, and its id was said nowhere; None where no job runs for it. One a
        poll said had ended, its result not fetched yet, is said so (it was "left running"). The id is
        the worker's word: quoted (`repr`) and its path percent-encoded, as sent, so a hostile worker's
        escape sequence or line break never reaches the caller's traceback raw."""
        if self.job_id is None or self.done is not None:
            return None
        job, path = repr(self.job_id), job_path(self.job_id)
        # (a word only: the accepted body's is unchecked, and a list's `in` raised TypeError in place
        # of the caller's KeyboardInterrupt)
        ended = (self.polled or {}).get("status")
        if isinstance(ended, str) and ended in TERMINAL_STATUSES:
            return (
                f"npu_worker.client: job {job} had ended ({ended}) before its result was fetched:"
                f" GET {path}/result has it"
            )
        return (
            f"npu_worker.client: job {job} was left running (it writes its wavs on):"
            f" cancel_job({job}), DELETE {path}, stops it"
        )

    def partial(self) -> dict[str, Any] | None:
        """What had come of a batch given up on (`ClientError.partial_result`); None where no job was made.
        Polling sees the sections only with the result, so its counts are the last polled status's: they
        were 0 and 0 where sections had been made."""
        if self.job_id is None:
            return None
        made = self.result()
        if self.polled is not None and not self.ok and not self.errors:
            for key, said in (("ok_count", "ok"), ("fail_count", "fail")):
                count = self.polled.get(said)
                made[key] = (
                    count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None
                )
        return made


def result_events(result_body: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-section events of a `/jobs/{id}/result` body, tagged with their kind when it is missing."""
    sections = result_body.get("sections") or []
    if not isinstance(sections, list) or not all(isinstance(section, dict) for section in sections):
        raise WorkerProtocolError("the worker sent a result whose sections are no list of objects")
    events = []
    for section in sections:
        event = dict(section)
        event.setdefault("event", "error" if event.get("status") == "fail" else "progress")
        if not isinstance(event["event"], str):  # a list was a TypeError out of the collector
            raise WorkerProtocolError(f"the worker sent a result section that is no event: {event}"[:300])
        if event["event"] in CLIENT_EVENTS:  # passed on as the client's own, as a stream line was
            raise WorkerProtocolError(
                f"the worker sent a result section named as the client's own {event['event']}: {event}"[:300]
            )
        events.append(event)
    return events


def status_event(status_body: dict[str, Any]) -> dict[str, Any]:
    """A polled `/jobs/{id}/status` body (or the accepted one) as an unlogged `status` event (whatever
    `event` the body holds: a list there was a TypeError out of the collector)."""
    return {**status_body, "event": "status"}


def done_event(result_body: dict[str, Any], total: int | None) -> dict[str, Any]:
    """The `done` event of a polled job, built from its `/result` body."""
    sections = result_events(result_body)
    fails = sum(1 for event in sections if event["event"] == "error")
    return {
        "event": "done",
        "total": result_body.get("total", total if total is not None else len(sections)),
        "ok_count": len(sections) - fails,
        "fail_count": fails,
        "elapsed_total_sec": result_body.get("elapsed_total_sec"),
        "cancelled": result_body.get("status") == "cancelled",
    }


async def maybe_await(value: Any) -> None:
    """Lets async callers pass either a plain function or a coroutine function as `on_progress`."""
    if inspect.isawaitable(value):
        await value
