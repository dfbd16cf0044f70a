"""Handlers of the v1 endpoints: parse at the edge, submit to the scheduler, render its events."""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import re
from typing import TYPE_CHECKING, BinaryIO

from aiohttp import web

from .. import openapi
from ..app_keys import LIMITS_KEY, NDJSON_STREAMS_KEY, SCHEDULER_KEY
from ..config import parse_bool
from ..errors import SHUTTING_DOWN_REASON
from ..jobs.model import DONE, Job, KeptJob, LogEntry
from ..printable import printable
from ..protocol import (
    BadRequest,
    BatchRequest,
    Done,
    JobNotFound,
    Progress,
    QueueFull,
    SectionError,
    SectionRequest,
    parse_batch_request,
    parse_synth_request,
)
from .bodies import (
    Cancelled,
    JobList,
    JobResult,
    JobStatus,
    Queued,
    SynthFailed,
    SynthResult,
    json_response,
)
from .byte_range import Unsatisfiable, asked_range, range_field
from .errors import error_response, expect_continue, expect_within
from .hang_up import HangUpWatch, done_all_the_same, send_within
from .health_routes import health, ready
from .ndjson import open_stream, stream_job
from .query import query_value
from .request_body import read_body

if TYPE_CHECKING:
    from ..jobs.scheduler import Scheduler

AFTER_PATTERN = re.compile(r"[0-9]{1,18}", re.ASCII)
# what the pattern takes, said: "must be an integer" was told to -1, which is one
INDEX_WORDS = (
    "the section index must be a section's idx in plain digits: 0, 1, 2 and on,"
    " at most 10 digits, with no sign or leading zero"
)
INDEX_PATTERN = re.compile(r"0|[1-9][0-9]{0,9}", re.ASCII)  # as a section's idx is written: one URL each
log = logging.getLogger(__name__)
FILE_PIECE_BYTES = 256 * 1024  # a section's wav is sent in pieces of this size


def _query_flag(request: web.Request, name: str) -> bool:
    """A yes/no query parameter (`config.parse_bool`'s words; absent or empty: no). Anything else is
    refused before any work starts: `?async=False` once meant yes, and a caller who waits for a stream
    must not get a job id instead."""
    raw = query_value(request, name) or ""
    try:
        if raw != raw.strip():  # a query word is exact (parse_bool forgives a flag's stray spaces)
            raise ValueError(raw)
        return parse_bool(raw)
    except ValueError:
        raise BadRequest(f"{name} must be 1 or 0 (true/false, yes/no, on/off), got {raw[:40]!r}") from None


async def _wait_done(
    request: web.Request, scheduler: Scheduler, job: Job, cancel_if_caller_goes: bool = False
) -> bool:
    """Until the job's `done` (True). False when the worker shuts down first (its streams are ended
    after the drain, this one with them: a kept batch resumes at the restart); `stream_lost` when its
    events end without one otherwise (with `--queue redis`, a Redis that lost the job, or engine nodes
    that all failed to load): never an answer that reads as a cancel.

    `cancel_if_caller_goes` (a `/synth`): its job is cancelled once its caller has gone (`HangUpWatch`,
    told by the connection): a caller's RPC timeout must not keep the engine busy with a long text
    nobody will read. In this task: a second task polling beside it, and a wait for either, cost each
    call two tasks and their wake-ups (benchmarks/SERVER_OVERHEAD.md, 2026-12-05 late night)."""
    subscription = scheduler.subscribe(job)
    waiting = request.app[NDJSON_STREAMS_KEY]
    waiting.add(subscription, stream=False)
    cancel = functools.partial(_cancel_for_hang_up, scheduler, job)
    watch = HangUpWatch(request, cancel) if cancel_if_caller_goes else None
    try:
        while True:
            item = subscription.ready()  # what one wake-up brought
            if item is None:
                try:
                    item = await anext(subscription)
                except StopAsyncIteration:
                    break
            if isinstance(item, LogEntry) and isinstance(item.event, Done):
                return True
        if job.refusal is not None:  # refused at its quiet admission (`Scheduler.submit`)
            raise job.refusal
    except asyncio.CancelledError:
        if cancel_if_caller_goes:
            scheduler.cancel(job.id)
        raise
    finally:
        if watch is not None:
            watch.end()
        waiting.discard(subscription)
        subscription.close()
    if scheduler.draining:
        return False
    raise scheduler.stream_lost(job)


def _cancel_for_hang_up(scheduler: Scheduler, job: Job) -> bool:
    """A `/synth`'s job cancelled for its caller's hang-up; False while it is not live yet (still
    admitted off the loop, `quiet_admission`): tried again at the next look."""
    if not scheduler.cancel(job.id):
        return False
    if job.sections and job.all_ended:  # (its section's end logged, the job's not yet: nothing stops)
        log.info("the /synth caller of job %s hung up as its section ended, too late to stop it", job.id)
    else:
        log.info("the /synth caller of job %s hung up; its synthesis stops", job.id)
    return True


def _answers_at_done(job: Job) -> None:
    """The handler reads only the job's `done`: its other events need not wake the loop each."""
    job.answers_at_done = True


async def synth(request: web.Request) -> web.Response:
    scheduler = request.app[SCHEDULER_KEY]
    parsed = parse_synth_request(await read_body(request), request.app[LIMITS_KEY])
    batch = BatchRequest((SectionRequest(0, parsed.text, parsed.output_path),), parsed.params, audio=False)
    # The engine as the job is accepted (submit checks it before any await, so it is this one): with
    # a Redis queue the view of the engines may be empty for a moment by the time the job ends.
    info = scheduler.info
    job = await scheduler.submit(batch, preview=True, on_created=_answers_at_done, quiet_admission=True)
    assert info is not None  # submit raised Loading otherwise
    done = await _wait_done(request, scheduler, job, cancel_if_caller_goes=True)
    final = job.sections[0].final if job.sections else None
    if final is None and not done and not (job.sections and job.sections[0].taken):
        raise QueueFull(SHUTTING_DOWN_REASON)  # still admitted off the loop as the shutdown ended the wait
    if not isinstance(final, Progress):
        message = final.error if isinstance(final, SectionError) else "Cancelled: the request was cancelled"
        failed = SynthFailed("fail", message, None, None, engine=info.backend, device=info.device)
        return json_response(failed)
    assert final.wav_path is not None  # a /synth section always names its file
    done_all_the_same(request)  # (a hang-up's cancel that came too late to stop it: no 499)
    duration = final.duration_sec or 0.0
    elapsed = final.elapsed_sec or 0.0
    body = SynthResult(
        output=final.wav_path,
        wav_path=final.wav_path,
        duration_sec=duration,
        sample_rate=info.sample_rate,
        elapsed_sec=elapsed,
        rtf=round(elapsed / duration, 4) if duration else None,
        engine=info.backend,
        device=info.device,
    )
    if final.cached:
        body.cached = True
    return json_response(body)


async def expect_batch(request: web.Request) -> web.StreamResponse | None:
    """`Expect: 100-continue` on /synth_batch: a bad `?async=` is refused before the caller is told to
    send its body (it was told `100 Continue`, sent a lecture's body, then met the 400)."""
    try:
        _query_flag(request, "async")
    except BadRequest as exc:
        return await expect_within(request, exc)
    return await expect_continue(request)


async def synth_batch(request: web.Request) -> web.StreamResponse:
    scheduler = request.app[SCHEDULER_KEY]
    queued = _query_flag(request, "async")
    batch = parse_batch_request(await read_body(request), request.app[LIMITS_KEY])
    job = await scheduler.submit(batch, preview=False)
    if queued:
        return json_response(Queued(job_id=job.id, total=job.total))
    if not batch.stream:
        if not await _wait_done(request, scheduler, job):
            # The worker shuts down with the batch unfinished: it is kept and resumes at the restart.
            # Its result so far, as `GET /jobs/{id}/result` says it, with 202: not done, poll for it
            # (the connection was cut without a word, and the caller never learnt the job's id).
            log.info("shutdown: answered the waiting caller of job %s with its result so far", job.id)
            return json_response(JobResult.of(job), status=202)
        # "ok" when the batch ran to its end (failed sections are counted); else as /jobs/{id}/result
        # says, e.g. "cancelled" when a DELETE stopped it, never an "ok" for work that was not done.
        return json_response(JobResult.of(job, status="ok" if job.status == DONE else None))
    response = await open_stream(request)
    # A dropped stream does not cancel the job: the client re-attaches with /jobs/{id}/events.
    await stream_job(request, response, scheduler.subscribe(job))
    return response


async def _job(request: web.Request, *, to_run: bool = False) -> Job | KeptJob:
    """The job as kept: a finished one's status only (its sections and log stay on disk). `to_run`:
    an answer that waits on its run (status, result, events), refused when it will never run here."""
    scheduler = request.app[SCHEDULER_KEY]
    scheduler.check_jobs_readable()
    job_id = request.match_info["job_id"]
    if not job_id.isprintable():  # no job's (16 hex digits): its 404 may not quote it raw (`printable`)
        raise JobNotFound(f"no job {printable(job_id)}")
    job = await asyncio.get_running_loop().run_in_executor(None, scheduler.find_job, job_id)
    if job is None or job.preview:
        raise scheduler.job_not_found(job_id)
    if to_run:
        scheduler.check_runnable(job)
    return job


async def _whole_job(request: web.Request, *, to_run: bool = False) -> Job:
    """The job with its sections and log (a finished one's read again from its folder)."""
    job = await _job(request, to_run=to_run)
    return await asyncio.get_running_loop().run_in_executor(None, request.app[SCHEDULER_KEY].stored_job, job)


async def job_status(request: web.Request) -> web.Response:
    return json_response(JobStatus.of(await _job(request, to_run=True)))


async def job_result(request: web.Request) -> web.Response:
    job = await _whole_job(request, to_run=True)
    if not job.finished:
        return json_response(JobStatus.of(job), status=202)
    return json_response(JobResult.of(job))


async def job_events(request: web.Request) -> web.StreamResponse:
    scheduler = request.app[SCHEDULER_KEY]
    job = await _job(request, to_run=True)  # then a finished one's log only, shared by its slow readers
    if not (isinstance(job, Job) and not job.finished):  # (a live one is its own replay: no read, no hop)
        job = await asyncio.get_running_loop().run_in_executor(None, scheduler.replayed_job, job)
    raw_after = query_value(request, "after")
    raw_after = "0" if raw_after is None else raw_after  # `?after=` is refused, not 0
    if not AFTER_PATTERN.fullmatch(raw_after):  # int() would also take "1_000", " 7" and "٣"
        return error_response(BadRequest(after_refused(raw_after)))
    after = int(raw_after)
    response = await open_stream(request)
    if request.method == "HEAD":  # (routed with GET) no lines: a HEAD answer has no body
        await response.write_eof()
        return response
    subscription = scheduler.subscribe(job, after=after)
    await stream_job(request, response, subscription)
    return response


def after_refused(raw: str) -> str:
    """Why `after` is no seq: 20 digits said only `a non-negative decimal integer`, which they are."""
    if raw.isascii() and raw.isdigit():
        return f"after must be at most 18 digits (a seq), not {len(raw)}"
    return "after must be a non-negative decimal integer (a seq)"


async def job_cancel(request: web.Request) -> web.Response:
    job = await _job(request)
    scheduler = request.app[SCHEDULER_KEY]
    stopping = await asyncio.get_running_loop().run_in_executor(None, scheduler.cancel, job.id)
    return json_response(Cancelled.of_job(job, stopping))


async def job_list(request: web.Request) -> web.Response:
    scheduler = request.app[SCHEDULER_KEY]
    scheduler.check_jobs_readable()
    jobs = await asyncio.get_running_loop().run_in_executor(None, scheduler.recent_jobs, 100)
    return json_response(JobList([JobStatus.of(job) for job in jobs]))


async def section_audio(request: web.Request) -> web.StreamResponse:
    """A finished section's wav, from whichever node holds it (its file, or Redis)."""
    wav = await _section_wav(request)
    if isinstance(wav, web.Response):
        return wav
    return await _send_file(request, wav)  # (Redis's copy too, read a piece at a time)


async def _section_wav(request: web.Request) -> web.Response | BinaryIO:
    """The section's wav, open, or the refusal; the job read whole to find it is let go before the send
    (a caller reading nothing held it, a batch's every text, a copy per connection: +449 MiB for 100)."""
    job = await _whole_job(request)
    raw_idx = request.match_info["idx"]
    if not INDEX_PATTERN.fullmatch(raw_idx):  # int() would also take "+0", " 0", "0_0" and "٠"
        return error_response(BadRequest(INDEX_WORDS))
    return await request.app[SCHEDULER_KEY].section_audio(job, int(raw_idx))


async def _send_file(request: web.Request, file: BinaryIO) -> web.StreamResponse:
    """Send an open file (closed after) in pieces, each once the client has taken the one before:
    a caller that does not read holds one piece of the worker's memory, not the whole file, and only
    until the piece's write deadline (`send_within`), not for as long as it keeps the socket open.
    One byte range asked for is that range, 206 (`byte_range.py`)."""
    try:
        size = file.seek(0, io.SEEK_END)  # (a file's length, or Redis's copy's as looked up: no read)
        file.seek(0)
        try:
            part = asked_range(range_field(request.headers), request.headers.get("If-Range"), size)
        except Unsatisfiable:  # no bytes: no `Content-Type: audio/wav` (it named an empty body a wav)
            unsatisfiable = web.Response(status=416, headers={"Accept-Ranges": "bytes"})
            unsatisfiable.headers["Content-Range"] = f"bytes */{size}"
            return unsatisfiable
        response = web.StreamResponse(headers={"Content-Type": "audio/wav", "Accept-Ranges": "bytes"})
        if part is not None:
            start, total, size = part[0], size, part[1]
            response.set_status(206)
            response.headers["Content-Range"] = f"bytes {start}-{start + size - 1}/{total}"
            await asyncio.to_thread(file.seek, start)
        response.content_length = size
        await response.prepare(request)
        if request.method == "HEAD":  # the length is the answer: nothing to read
            size = 0
        while size > 0 and (piece := await asyncio.to_thread(file.read, min(FILE_PIECE_BYTES, size))):
            size -= len(piece)
            await send_within(request, response, piece)  # waits while the client's socket is full
        if size > 0:  # the file was cut short in place while sent: the answer cannot be whole, and a
            response.force_close()  # connection kept open had its client wait for the rest, unsent
    finally:
        file.close()
    await response.write_eof()
    return response


async def openapi_json(request: web.Request) -> web.Response:
    return web.Response(body=openapi.document_json(), content_type="application/json", charset="utf-8")


def setup_http(app: web.Application) -> None:
    app.router.add_get("/health", health)
    app.router.add_get("/ready", ready)
    app.router.add_get("/openapi.json", openapi_json)
    app.router.add_post("/synth", synth, expect_handler=expect_continue)
    app.router.add_post("/synth_batch", synth_batch, expect_handler=expect_batch)
    app.router.add_get("/jobs", job_list)
    app.router.add_get("/jobs/{job_id}/status", job_status)
    app.router.add_get("/jobs/{job_id}/result", job_result)
    app.router.add_get("/jobs/{job_id}/events", job_events)
    app.router.add_get("/jobs/{job_id}/sections/{idx}/audio", section_audio)
    app.router.add_delete("/jobs/{job_id}", job_cancel)
