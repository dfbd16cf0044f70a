"""POST /v1/audio/speech's answer: the audio written as it is made, bytes (`stream_audio`) or SSE events
(`stream_sse`), in joined writes, and what a caller who hung up is answered. Apart from the request's
checks (`speech.py`) because it is the other half of the route: from the job started to the last byte.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import logging
import time
import traceback

import numpy as np
from aiohttp import web

from ..app_keys import SCHEDULER_KEY
from ..http_compat.hang_up import (
    caller_gone,
    end_within,
    send_within,
    stop_if_closed,
    until_caller_gone,
    until_closed,
)
from ..http_compat.request_body import read_body
from ..protocol import WorkerError
from ..ws_server.burst import BURST_BYTES
from .core import SpeechRun, engine_info
from .errors import REQUEST_ID_HEADER, name_request, openai_error, openai_errors, request_id
from .formats import AudioFormat, StreamEncoder
from .load_wait import wait_for_load
from .messages import SpeechAudioDelta, SpeechAudioDone, SpeechError
from .speech import encoder_for, prepare_speech

log = logging.getLogger(__name__)

SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


@openai_errors
async def create_speech(request: web.Request) -> web.StreamResponse:
    gone = functools.partial(until_caller_gone, request)  # (an inline ref_audio's wait for a decode slot)
    await wait_for_load(request)  # (an SDK's call during a restart takes longer, not a 503)
    speech, fmt, run = await prepare_speech(request, await read_body(request), gone)
    name_request(request, run.job.id)  # (its x-request-id: the job's id, as the log names it)
    sse = speech.stream_format == "sse"
    del speech  # (its inline ref_audio, decoded, out of the body budget: not kept while the audio streams)
    watch = asyncio.create_task(cancel_when_gone(request, run))
    try:
        if sse:
            return await stream_sse(request, run, fmt)
        return await stream_audio(request, run, fmt)
    finally:
        watch.cancel()
        run.cancel()  # a no-op once done; stops the engine when the caller hung up


async def cancel_when_gone(request: web.Request, run: SpeechRun) -> None:
    """Cancel `run` once its caller has gone (a request queued sends nothing: no failed write tells)."""
    await until_caller_gone(request)
    log.info("the caller of job %s hung up; its synthesis stops", run.job.id)
    await run.cancel_then_stop_at(until_closed(request))  # (a caller's FIN alone: it may yet read)


def answer_to_gone(response: web.StreamResponse) -> web.StreamResponse:
    """The answer to a caller that has gone: the response as it stands, or (none started: a whole-file
    format, a request still queued) ConnectionResetError, a 499 in the access log and metrics rather
    than an unstarted response aiohttp would send as an empty 200, or an error nobody reads."""
    if not response.prepared:
        raise ConnectionResetError("the caller hung up")
    return response


class JoinedWrites:
    """An answer's bytes made since its audio last waited, written together: one `write` once they
    hold BURST_BYTES, or when `flush` is called before anything that can wait (the next audio, an
    encoding on a thread), so nothing made waits unsent (as `/ws`'s bursts). The response starts at
    the first write: a failure before it is still an error response."""

    def __init__(self, request: web.Request, response: web.StreamResponse) -> None:
        self.request = request
        self.response = response
        self.waiting: list[bytes] = []
        self.size = 0

    async def add(self, data: bytes) -> None:
        if data:
            self.waiting.append(data)
            self.size += len(data)
            if self.size >= BURST_BYTES:
                await self.flush()

    async def flush(self) -> None:
        if self.waiting:
            if not self.response.prepared:
                await self.response.prepare(self.request)
            data, self.size = b"".join(self.waiting), 0
            self.waiting.clear()
            await send_within(self.request, self.response, data)

    async def feed(self, encoder: StreamEncoder, samples: np.ndarray) -> None:
        """`samples` encoded and added; what waits is written first when the encoding runs on a
        thread (opus: the loop could write meanwhile)."""
        if encoder.encodes_as_it_goes:
            await self.flush()
        await self.add(await encoder.feed_async(samples))


async def stream_audio(request: web.Request, run: SpeechRun, fmt: AudioFormat) -> web.StreamResponse:
    """The encoded audio, written as it is made (`JoinedWrites`). The response starts with the first
    write, so a failure before it is still a proper error response; after it the connection is cut
    (no half file)."""
    encoder = encoder_for(fmt, engine_info(request.app[SCHEDULER_KEY]).sample_rate)
    headers = {"Content-Type": fmt.content_type, REQUEST_ID_HEADER: request_id(request)}
    response = web.StreamResponse(headers=headers)
    writes = JoinedWrites(request, response)
    try:
        async for samples in run.audio(before_waiting=writes.flush):
            stop_if_closed(request)  # a whole-file format writes nothing until the end
            await writes.feed(encoder, samples)
        stop_if_closed(request)
        await writes.flush()  # the end is encoded on a thread (a whole flac file: the most time)
        tail = await encoder.finish_async()
        if not response.prepared:  # flac has none before the end: it answers whole
            response.content_length = len(tail)
            await response.prepare(request)
        await end_within(request, response, tail)
    except WorkerError as error:
        if caller_gone(request):
            return answer_to_gone(response)
        if not response.prepared:
            raise
        log.warning(
            "speech stream of job %s failed after it started (%s); cutting the connection", run.job.id, error
        )
        if request.transport is not None:
            request.transport.close()
    except ConnectionError as gone:
        log.info("the caller of job %s hung up; its synthesis stops", run.job.id)  # `create_speech` cancels
        forget_frames(gone)
        return answer_to_gone(response)
    finally:
        encoder.release()
        writes.waiting.clear()
        tail = b""  # noqa: F841 - this frame outlives the call in a hung-up caller's traceback
    return response


def forget_frames(error: BaseException) -> None:
    """A hung-up caller's error keeps the frames it passed through, and their audio, in a reference
    cycle (the connection's waiter holds the error) that only a full collection frees: let the frames
    go now."""
    traceback.clear_frames(error.__traceback__)


def speech_usage(text: str) -> dict[str, int]:
    """OpenAI's usage block: the text's characters as its tokens, no audio tokens; the total is their sum."""
    return {"input_tokens": len(text), "output_tokens": 0, "total_tokens": len(text)}


def sse_event(body: bytes) -> bytes:
    """One encoded message as a server-sent event."""
    return b"data: " + body + b"\n\n"


class SseEvents(JoinedWrites):
    """`JoinedWrites` of an SSE answer: what is added is a delta's audio, written as its event."""

    async def add(self, data: bytes) -> None:
        if data:  # flac has none before the end: a failure until then is an error response
            await super().add(sse_event(SpeechAudioDelta(base64.b64encode(data).decode()).encode()))


async def stream_sse(request: web.Request, run: SpeechRun, fmt: AudioFormat) -> web.StreamResponse:
    """`speech.audio.delta` events (base64 audio in the requested format), then `speech.audio.done`;
    a failure after the first event is an `error` event (OpenAI's error object), then the end."""
    sample_rate = engine_info(request.app[SCHEDULER_KEY]).sample_rate
    encoder = encoder_for(fmt, sample_rate)
    response = web.StreamResponse(headers={**SSE_HEADERS, REQUEST_ID_HEADER: request_id(request)})
    started = time.monotonic()
    events = SseEvents(request, response)
    try:
        async for samples in run.audio(before_waiting=events.flush):
            stop_if_closed(request)  # a whole-file format sends no delta until the end
            await events.feed(encoder, samples)
        stop_if_closed(request)
        await events.flush()  # the end is encoded on a thread too (a whole flac file: the most time)
        await events.add(await encoder.finish_async())
        await events.flush()
    except WorkerError as error:
        if caller_gone(request):
            return answer_to_gone(response)
        if not response.prepared and not events.waiting:
            raise
        try:
            await events.flush()  # the deltas made before the failure, then its event
            await end_within(request, response, sse_event(SpeechError(openai_error(error)[0]).encode()))
        except ConnectionError as gone:
            forget_frames(gone)
            return answer_to_gone(response)
        return response
    except ConnectionError as gone:
        log.info("the caller of job %s hung up; its synthesis stops", run.job.id)  # `create_speech` cancels
        forget_frames(gone)
        return answer_to_gone(response)
    finally:
        encoder.release()
    done = SpeechAudioDone(
        format=fmt.name,
        sample_rate=sample_rate,
        duration_sec=round(run.samples / sample_rate, 3),
        elapsed_sec=round(time.monotonic() - started, 3),
        usage=speech_usage(run.job.sections[0].text),
    )
    try:
        if not response.prepared:  # no audio at all
            await response.prepare(request)
        await end_within(request, response, sse_event(done.encode()))  # (one write with the end)
    except ConnectionError as gone:
        forget_frames(gone)
    return response
