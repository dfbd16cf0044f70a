"""The pipeline client on the standard library only (urllib), for scripts and threads.

Every call takes `base=` (default: `TTS_WORKER_BASE`, else http://127.0.0.1:7768). Sections that fail
are reported in the result and through `on_progress`; transport failures raise `TransportError`, and a
request the worker refuses as a whole raises `WorkerHTTPError`.
"""

from __future__ import annotations

import http.client
import os
import time
from collections.abc import Callable, Iterable
from typing import Any

from npu_worker.client.collector import BatchCollector, ProgressCallback
from npu_worker.client.common import (
    ANSWER_TIMEOUT,
    LINE_LIMIT,
    batch_body,
    line_too_slow,
    parse_line,
    synth_body,
)
from npu_worker.client.errors import ClientError, TransportError, WorkerHTTPError
from npu_worker.client.plans import cancel_plan, polling_plan, streaming_plan, synth_plan
from npu_worker.client.retrying import SUBMIT_ATTEMPTS, SUBMIT_DELAY, WAIT_LIMIT
from npu_worker.client.steps import Deliver, Follow, Plan, Sleep
from npu_worker.client.sync_http import Deadline, Http

_BROKEN = (OSError, http.client.HTTPException, ValueError)


def health(*, base: str | None = None, token: str | None = None, timeout: float = 10.0) -> dict[str, Any]:
    """GET /health (a 503 while the worker loads raises WorkerHTTPError with the loading body)."""
    return Http(base, token, timeout).json("GET", "/health")[1]


def synth(
    text: str,
    output_path: str | os.PathLike[str],
    *,
    base: str | None = None,
    lang: str = "ko",
    speed_factor: float = 1.0,
    ref_wav: str | None = None,
    token: str | None = None,
    timeout: float = 600.0,
    on_progress: ProgressCallback | None = None,
    wait_limit: float = WAIT_LIMIT,
    on_answer: Callable[[], object] | None = None,
    on_reading: Callable[[Callable[[], None]], object] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """POST /synth: one text to one wav. A failed synthesis is a 200 body with `status: "fail"`.

    A worker that answers "not now" with a `Retry-After` (503 `Loading` after a start, 429 `QueueFull`)
    is asked again when it says, up to `wait_limit` seconds in a row, as a batch's submission is;
    `on_progress` (if given) gets a `waiting` event (idx -1) before each wait. `on_answer` (if given)
    is called the moment the worker's answer has been read whole, before it is decoded: the synthesis
    is over then, its wav written or not. `on_reading` (if given) is called with `cut` once the worker's
    answer has begun (its head: the synthesis is over), before its body is read: `cut()` (a signal
    handler may call it) ends that read at once, as `AnswerCut`, unless the body was whole. `npu-worker
    synth` holds its stops from there: held from `on_answer`, a stop as the body was read, or in the
    instant after, unwound the client with the answer in hand."""
    body = synth_body(text, output_path, lang, speed_factor, ref_wav, **extra)
    plan = synth_plan(body, SUBMIT_ATTEMPTS, SUBMIT_DELAY, wait_limit)
    http_ = Http(base, token, timeout, on_answer=on_answer, on_reading=on_reading)
    return _run(plan, http_, BatchCollector(on_progress))


def cancel_job(
    job_id: str,
    *,
    base: str | None = None,
    token: str | None = None,
    timeout: float = 10.0,
    on_progress: ProgressCallback | None = None,
    wait_limit: float = WAIT_LIMIT,
) -> dict[str, Any]:
    """DELETE /jobs/{id}: stop a batch (the sections it finished keep their files). Returns the job's
    status with `cancel_requested` (false when it had already ended); an unknown job raises
    WorkerHTTPError (404 `JobNotFound`). A worker that answers "not now" with a `Retry-After` (loading
    after a restart) is asked again when it says, up to `wait_limit`, each wait a `waiting` event."""
    plan = cancel_plan(job_id, SUBMIT_DELAY, wait_limit)
    return _run(plan, Http(base, token, timeout), BatchCollector(on_progress))


def _drain(
    response: http.client.HTTPResponse, collector: BatchCollector, line_timeout: float
) -> BaseException | None:
    """Feed a stream's lines to the collector until `done` or EOF; returns what broke it, if anything
    (a TimeoutError when a line took over `line_timeout` as a whole, as the silence it is)."""
    with response:
        while collector.done is None:
            with Deadline(response, line_timeout) as deadline:
                try:
                    raw = response.readline(LINE_LIMIT + 1)
                except _BROKEN as exc:
                    broken: BaseException | None = exc
                else:
                    broken = None
            if deadline.passed:  # what it read is cut short, or the socket is: re-attached
                return TimeoutError(line_too_slow(line_timeout))
            if broken is not None:
                return broken
            if not raw:
                return None
            event = parse_line(raw)
            if event is not None:
                if gap := collector.gap(event):
                    return gap
                collector.accept(event)  # outside the try: a failing callback is the caller's error
            if stall := collector.stalled():  # each line, heartbeats too: noticed within their interval
                raise stall
    return None


def _run(plan: Plan, http_: Http, collector: BatchCollector) -> dict[str, Any]:
    """Perform the core's steps over urllib until the plan returns its result. A plan given up on (Ctrl-C
    in `npu-worker batch`, a callback's error) is closed here, its generators in order: left to the
    garbage collector, they were closed at the interpreter's exit in any order, and Python printed
    `Exception ignored in: <generator object polling_plan …> ValueError: generator already executing`
    after the batch's last line."""
    outcome: Any = None
    error: ClientError | None = None
    try:
        while True:
            try:
                step = plan.throw(error) if error is not None else plan.send(outcome)
            except StopIteration as stop:
                return stop.value
            outcome, error = None, None
            if isinstance(step, Sleep):
                time.sleep(step.seconds)
            elif isinstance(step, Deliver):
                collector.accept(step.event)
            elif isinstance(step, Follow):
                try:
                    response = http_.open(step.method, step.path, step.body, step.at_once)
                except (TransportError, WorkerHTTPError) as exc:
                    error = exc
                    continue
                outcome = _drain(response, collector, http_.timeout)
            else:
                try:
                    outcome = http_.json(step.method, step.path, step.body, step.at_once)[1]
                except (TransportError, WorkerHTTPError) as exc:
                    error = exc
    except ClientError as exc:
        exc.partial_result = collector.partial()
        raise
    except KeyboardInterrupt as stop:  # (its traceback named no job: the caller could not stop it)
        if (left := collector.left_running()) is not None:
            stop.add_note(left)
        raise
    finally:
        plan.close()


def synth_batch_streaming(
    sections: Iterable[dict[str, Any]],
    on_progress: ProgressCallback | None = None,
    *,
    base: str | None = None,
    lang: str = "ko",
    speed_factor: float = 1.0,
    ref_wav: str | None = None,
    token: str | None = None,
    read_timeout: float = 120.0,
    answer_timeout: float = ANSWER_TIMEOUT,
    reattach_attempts: int = 10,
    reattach_delay: float = 0.5,
    wait_limit: float = WAIT_LIMIT,
    stall_limit: float | None = None,
    report_stream_lost: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """POST /synth_batch (NDJSON) and follow it to `done`, re-attaching if the stream breaks.

    `on_progress(idx, event)` is called once per event (idx -1 for events without one), each logged
    event exactly once even across re-attaches. Returns `{"sections", "wav_paths", "errors", ...}`.
    `read_timeout` bounds the wait for each whole line (a peer that trickles bytes sends none); the
    worker's heartbeats, one each 10 s, keep a live stream busy.
    A re-attach waits at most `answer_timeout` for the worker to answer: one that stopped answering
    is given up after about `read_timeout` + (attempts + 2) * `answer_timeout` + the back-off (one: `/health`). One
    that answers "not now" with a `Retry-After` (a 503 `Loading` after a restart, a 429 `QueueFull`)
    is asked again when it says, up to `wait_limit` seconds in a row, without spending the attempts;
    `on_progress` gets a `waiting` event (idx -1) before each wait.
    `report_stream_lost=True`: `on_progress` also gets a `stream_lost` event (idx -1, no `seq`: `job_id`,
    `after`, `error`) when the stream breaks before `done`, before the re-attach; off by default, so a
    callback that reads `event["seq"]` on every event but `waiting` keeps working.
    `stall_limit` (seconds; none by default): give up, raising `Stalled`, once the job has gone that
    long without a new event while the worker keeps it running (heartbeats are no progress; a hung
    engine). Its job is not cancelled. Set it above the slowest section the worker may take, plus its
    turn behind others' sections: an honest section takes minutes on a CPU.
    """
    collector = BatchCollector(on_progress, stall_limit=stall_limit, report_stream_lost=report_stream_lost)
    body = batch_body(sections, lang, speed_factor, ref_wav, **extra)
    plan = streaming_plan(collector, body, reattach_attempts, reattach_delay, wait_limit)
    return _run(plan, Http(base, token, read_timeout, answer_timeout, "read_timeout"), collector)


def synth_batch_polling(
    sections: Iterable[dict[str, Any]],
    on_progress: ProgressCallback | None = None,
    *,
    base: str | None = None,
    lang: str = "ko",
    speed_factor: float = 1.0,
    ref_wav: str | None = None,
    token: str | None = None,
    poll_interval: float = 1.0,
    timeout: float = 60.0,
    answer_timeout: float = ANSWER_TIMEOUT,
    reattach_attempts: int = 10,
    reattach_delay: float = 0.5,
    wait_limit: float = WAIT_LIMIT,
    stall_limit: float | None = None,
    report_stream_lost: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """The same batch in polling mode (`?async=1`), for environments that buffer streamed responses.

    `on_progress` gets a `status` event with the accepted body (its `job_id`, before any poll is
    answered) and whenever the polled status changes, then each section's final event and `done`
    once the job has finished. Same return value as `synth_batch_streaming`.
    `timeout` bounds each wait on the socket and each whole answer's body; a poll's answer is awaited
    to begin at most `answer_timeout`.
    A "not now" with a `Retry-After` is waited for up to `wait_limit`, as in `synth_batch_streaming`;
    `stall_limit` as there, progress being a change of the polled status (`done`, `current_idx`).
    `report_stream_lost=True`: a poll that fails (a worker down) and is retried is a `stream_lost` event
    (`"polling": true`), as a lost stream is in `synth_batch_streaming`, and the next poll answered is
    a `status` event even when nothing moved.
    """
    collector = BatchCollector(on_progress, stall_limit=stall_limit, report_stream_lost=report_stream_lost)
    body = batch_body(sections, lang, speed_factor, ref_wav, **extra)
    plan = polling_plan(collector, body, poll_interval, reattach_attempts, reattach_delay, wait_limit)
    return _run(plan, Http(base, token, timeout, answer_timeout), collector)
