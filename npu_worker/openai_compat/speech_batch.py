"""POST /v1/audio/speech/batch (vLLM-Omni's form): several speech requests in one body, each
item's audio or error in one JSON answer, written once every item is made.

Each item goes through the single request's checks and queueing (`speech.prepare_speech`); bounded in
items and characters, since every item's audio is held until the answer is written."""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Coroutine
from typing import Any

import numpy as np
from aiohttp import web

from .. import wire
from ..app_keys import DECODE_SLOTS_KEY, LIMITS_KEY, SCHEDULER_KEY, SETTINGS_KEY
from ..http_compat.hang_up import connection_closed, send_within, until_caller_gone, until_closed
from ..http_compat.request_body import read_body
from ..incidents import internal_error
from ..protocol import BadRequest, InvalidAudio, TextTooLong, TooManySections, WorkerError
from ..voice_upload import INLINE_REF_AUDIO, upload_wav
from .bodies import SpeechBatchResult, SpeechItem
from .core import SpeechRun, engine_info
from .errors import REQUEST_ID_HEADER, openai_error, openai_errors, request_id, with_param
from .formats import encode_whole
from .load_wait import wait_for_load
from .models_api import check_model
from .request import DecodedAudio, InlineAudio, SpeechBatchBody, SpeechBody, SpeechRequest, parse_ref_audio
from .speech import (
    fields_at_fault,
    loaded_rate,
    named_voice,
    pick_format,
    prepare_speech,
    synth_params,
    upload_limits,
)
from .speech_stream import forget_frames

log = logging.getLogger(__name__)

BATCH_MAX_ITEMS = 64  # every item's audio is held until the answer is written: bound the memory
BATCH_TEXT_FACTOR = 4  # a batch's inputs together: at most 4 x --max-text-chars characters


async def batch_item(
    request: web.Request,
    index: int,
    items: list[Any],
    decoded: DecodedAudio | None = None,
    runs: dict[int, SpeechRun] | None = None,
) -> SpeechItem:
    """One item (taken out of `items`, so its inline `ref_audio` leaves memory once decoded): its
    audio base64-encoded, or its error (OpenAI's error object); never raises. An unexpected failure is
    that item's `InternalError` (logged), never the batch's end with the other items left running.
    `decoded`: the default inline audio, decoded once for every item that takes it. `runs`: where its
    run is kept once queued, for a caller's FIN to cancel its job (`all_unless_hung_up`)."""
    try:
        if not isinstance(items[index], dict):  # a string item is not a body to read as JSON
            raise not_an_object(taken(items, index), index)
        speech, fmt, run = await prepare_speech(request, taken(items, index), decoded=decoded)
        if runs is not None:
            runs[index] = run
        del speech  # (its inline ref_audio, decoded: not kept while the item is spoken)
        try:
            chunks = [samples async for samples in run.audio()]
        finally:
            run.cancel()
        sample_rate = engine_info(request.app[SCHEDULER_KEY]).sample_rate
        audio = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
        # The whole file at once: a wav's header then says its real length (a stream's cannot).
        fmt = pick_format(fmt.name, sample_rate)  # (picked before the engine had loaded: its rate now)
        data = await asyncio.to_thread(encode_whole, audio, sample_rate, fmt)
    except WorkerError as error:
        return SpeechItem(index=index, status="error", error=openai_error(error)[0])
    except Exception as exc:  # noqa: BLE001 - one item's bug is its own error, the others go on
        unexpected = internal_error(log, exc, "in item %d of a speech batch", index)
        return SpeechItem(index=index, status="error", error=openai_error(unexpected)[0])
    return SpeechItem(
        index=index,
        status="success",
        format=fmt.name,
        sample_rate=sample_rate,
        duration_sec=round(run.samples / sample_rate, 3),
        audio_data=base64.b64encode(data).decode(),
    )


def not_an_object(item: Any, index: int) -> WorkerError:
    """The BadRequest of an item that is no JSON object, naming where it is in the body as a refusal
    of the whole body does (`- at `$.items[1]``, `param` `items`): it said only "Expected `object`,
    got `int`", `param` null, and the caller could not tell which item (or field) was meant."""
    try:
        wire.convert(item, SpeechBody)
    except WorkerError as error:
        return with_param(BadRequest(f"{error.message} - at `$.items[{index}]`"), "items")
    raise AssertionError(f"an item of type {type(item).__name__} was read as a speech body")


def taken(items: list[Any], index: int) -> Any:
    """`items[index]`, no longer in `items`: the one reference left is the parser's, which drops it
    once parsed (a batch body holds up to --max-body-bytes of base64 `ref_audio`, out of the body
    budget once read)."""
    item, items[index] = items[index], None
    return item


async def all_unless_hung_up(
    request: web.Request, items: list[Coroutine[Any, Any, SpeechItem]], runs: dict[int, SpeechRun]
) -> list[SpeechItem]:
    """Every item's result, or ConnectionResetError once the caller has gone: the answer is written
    only at the end, so no failed write would tell. Whatever ends the wait (a hang-up, an item that
    raised after all, this handler cancelled) stops every item still running and waits for it to stop:
    none goes on keeping the engine busy for nobody. A caller that only ended its sending side (a FIN)
    has its items' jobs cancelled (`stop_at_fin`), and reads the answer where every one ran to its end
    all the same (their cancels came too late, as a single speech request's caller reads its file)."""
    tasks = [asyncio.ensure_future(item) for item in items]
    del items
    gone = asyncio.ensure_future(until_caller_gone(request))
    cut: list[asyncio.Task[SpeechItem]] = []  # the items the FIN found running
    try:
        waiting: set[asyncio.Future[Any]] = set(tasks)
        while waiting:
            done, waiting = await asyncio.wait(waiting | {gone}, return_when=asyncio.FIRST_COMPLETED)
            if gone in done and (cut or connection_closed(request)):
                log.info("the caller of a speech batch hung up; its items stop")
                raise ConnectionResetError("the caller hung up")
            if gone in done:
                cut = stop_at_fin(tasks, runs)
                gone = asyncio.ensure_future(until_closed(request))
            for task in done:
                if task in tasks and not task.cancelled():  # (one the FIN stopped unqueued: in `cut`)
                    task.result()  # (an item raises nothing but a bug: it is the batch's 500 then)
            waiting.discard(gone)
        if any(task.cancelled() or task.result().status != "success" for task in cut):
            raise ConnectionResetError("the caller hung up")  # (an item its FIN stopped)
        return [task.result() for task in tasks]
    finally:
        gone.cancel()
        for task in tasks:
            task.cancel()  # a no-op once done
        await asyncio.gather(*tasks, return_exceptions=True)


def stop_at_fin(
    tasks: list[asyncio.Task[SpeechItem]], runs: dict[int, SpeechRun]
) -> list[asyncio.Task[SpeechItem]]:
    """The caller's FIN: each running item's job cancelled, its audio left to come to its `done` (a
    cancel too late stops nothing), an item not queued yet stopped; the items that were running."""
    log.info("the caller of a speech batch ended its sending side; its items' jobs are cancelled")
    running = [task for task in tasks if not task.done()]
    for index, task in enumerate(tasks):
        run = runs.get(index)
        if task.done():
            continue
        if run is None:
            task.cancel()
        else:
            run.scheduler.cancel(run.job.id)
    return running


async def check_defaults(
    request: web.Request, speech: SpeechRequest, decoded: DecodedAudio | None = None
) -> None:
    """The reference voice and language of the defaults, checked once as a stream's configuration is:
    a default `language` the engine lacks, a `ref_audio` path it refuses or inline audio that does not
    decode is one 400 naming the field, not the same error for every item (each decoding it again)."""
    params = await synth_params(request.app, speech, lambda: until_caller_gone(request), decoded)
    with fields_at_fault(speech, params):
        await request.app[SCHEDULER_KEY].check_params(params)


async def default_audio(request: web.Request, value: str | None) -> DecodedAudio | None:
    """The default inline `ref_audio` decoded once, for every item that takes it, whatever transcript
    or language it gives (each such item decoded it again, up to 64 times, when the transcripts
    differed: a voice is stored per audio and transcript): InvalidAudio is one 400."""
    audio = parse_ref_audio(value)
    if not isinstance(audio, InlineAudio):
        return None
    limits, data = upload_limits(request.app), audio.data
    gone = lambda: until_caller_gone(request)  # noqa: E731
    try:
        wav = await request.app[DECODE_SLOTS_KEY].run(
            upload_wav, data, limits, INLINE_REF_AUDIO, holding=len(data), gone=gone
        )
    except InvalidAudio as error:
        raise with_param(error, "ref_audio") from None
    return DecodedAudio(data, wav)


def item_limit(app: web.Application) -> tuple[int, str]:
    """The most items a batch may have, and the setting that makes it lower than BATCH_MAX_ITEMS in
    the refusal's words: "3 items, the limit is 2" named no bound the caller could find (the docs
    said 64)."""
    limit, bound_by = app[SETTINGS_KEY].batch_bound("items")
    return (limit, bound_by) if limit < BATCH_MAX_ITEMS else (BATCH_MAX_ITEMS, "")


def _refuse_too_much(app: web.Application, items: list[Any]) -> None:
    """More items than the queue or --max-sections takes, or more characters together than
    BATCH_TEXT_FACTOR texts hold: refused whole (`param` items) before any item is looked at."""
    limit, bound_by = item_limit(app)
    if len(items) > limit:
        raise with_param(TooManySections(f"{len(items)} items, the limit is {limit}{bound_by}"), "items")
    texts = [item.get("input") for item in items if isinstance(item, dict)]
    characters = sum(len(text) for text in texts if isinstance(text, str))
    bound = BATCH_TEXT_FACTOR * app[LIMITS_KEY].max_text_chars
    if characters > bound:
        message = f"the items have {characters} characters together, the limit is {bound}"
        raise with_param(TextTooLong(message), "items")


@openai_errors
async def create_speech_batch(request: web.Request) -> web.StreamResponse:
    """vLLM-Omni's batch: `items` (each a speech request), top-level fields as defaults for each."""
    await wait_for_load(request)  # as one speech request waits
    body: SpeechBatchBody = wire.decode(await read_body(request), SpeechBatchBody)
    items = body.items
    _refuse_too_much(request.app, items)
    scheduler = request.app[SCHEDULER_KEY]
    scheduler.check_accepting()  # a node that serves none: one refusal, not one per item
    check_model(scheduler, body.model)  # a default every item would fail on: one 400
    if body.response_format is not None:
        pick_format(body.response_format, loaded_rate(scheduler))
    if body.voice_is_used():
        await named_voice(scheduler, body.voice_name())
    decoded = await default_audio(request, body.ref_audio) if body.takes_default_audio() else None
    if body.speaks_as_defaults():
        await check_defaults(request, body.defaults_request(), decoded)
    merged = body.merged_items()
    del body, items  # (each item's fields now only in `merged`, taken out as each item is parsed)
    runs: dict[int, SpeechRun] = {}
    made = [batch_item(request, i, merged, decoded, runs) for i in range(len(merged))]
    results = await all_unless_hung_up(request, made, runs)
    del decoded, made
    failed = sum(result.status != "success" for result in results)
    answer = SpeechBatchResult(
        results=results, total=len(results), succeeded=len(results) - failed, failed=failed
    )
    # Every item's audio in one body (up to about 120 MB): written under the same deadline as a file,
    # so a caller that never reads it does not keep it in memory for as long as its socket is open.
    encoded = wire.encode(answer)
    del results, answer
    headers = {"Content-Type": "application/json; charset=utf-8", REQUEST_ID_HEADER: request_id(request)}
    response = web.StreamResponse(headers=headers)
    response.content_length = len(encoded)
    await response.prepare(request)
    try:
        await send_within(request, response, encoded)
        await response.write_eof()
    except ConnectionError as gone:
        log.info("the caller of a speech batch went away before its answer was read: %s", gone)
        forget_frames(gone)
    finally:
        encoded = b""  # noqa: F841 - this frame outlives the call in a hung-up caller's traceback
    return response
