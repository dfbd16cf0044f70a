"""GET/POST /v1/audio/voices and DELETE /v1/audio/voices/{name}: the named-voice library over HTTP."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp import BodyPartReader, web
from aiohttp.http_exceptions import HttpProcessingError

from ..app_keys import DECODE_SLOTS_KEY, SCHEDULER_KEY, SETTINGS_KEY
from ..body_budget import BodyHold
from ..http_compat.bodies import json_response
from ..http_compat.errors import CLOSE_AFTER_KEY, expect_within
from ..http_compat.hang_up import until_caller_gone
from ..http_compat.request_body import PIECE_OVERHEAD, body_deadline, held_body
from ..printable import printable
from ..protocol import BadRequest, BodyTooLarge, InvalidAudio, VoiceExists, WorkerError
from ..voice_names import DEFAULT_VOICE, check_voice_name
from .bodies import CreatedVoice, VoiceDeleted, VoiceEntry, VoiceList
from .core import (
    engine_voice,
    engine_voice_catalog,
    refuse_until_engine_voices_known,
    speaks_default_voice,
    voice_library,
)
from .errors import openai_errors, with_param
from .load_wait import wait_for_load
from .speech import upload_limits

UPLOAD_FIELDS = ("audio_sample", "name", "ref_text")
# OpenAI's SDK has no argument for the transcript (`voices.create(audio_sample, consent, name)`): a
# caller who followed its signature is told how to send one.
MISSING_FIELD_WORDS = {
    "ref_text": "ref_text is required: the transcript of audio_sample (the words spoken in it), a form "
    "field beside it (OpenAI's SDK has no argument for it: extra_body={'ref_text': ...})",
}
# What OpenAI's SDK sends beside them (`audio.voices.create`): `consent`, the id of a consent recording
# (OpenAI's own check, accepted and not kept), and `type`, which must be `audio_sample` if sent.
SDK_FIELDS = ("consent", "type")
MAX_TEXT_FIELD_BYTES = 8192
FORM_ROOM = 64 * 1024  # the form's boundaries and part headers, beyond its fields' bytes


def upload_cap(voice_max_bytes: int) -> int:
    """The most bytes a voice upload's body may declare: the audio, the other fields, the form's own."""
    return voice_max_bytes + len(UPLOAD_FIELDS + SDK_FIELDS) * MAX_TEXT_FIELD_BYTES + FORM_ROOM


def declared_over_cap(request: web.Request) -> WorkerError | None:
    """The refusal of a `Content-Length` no upload within the limits has (None: within the cap)."""
    cap = upload_cap(request.app[SETTINGS_KEY].voice_max_bytes)
    if request.content_length is None or request.content_length <= cap:
        return None
    return BodyTooLarge(
        f"the body is {request.content_length} bytes; a voice upload's limit is {cap} "
        "(--voice-max-bytes and room for the form's other fields)"
    )


def refuse_declared_over_cap(request: web.Request) -> None:
    """BodyTooLarge on the header for a `Content-Length` no upload within the limits has: the upload
    read on until `--body-timeout` (a 408 a minute later) before its parts' limits could refuse it."""
    if (too_large := declared_over_cap(request)) is not None:
        request[CLOSE_AFTER_KEY] = True  # the body stays unread
        raise too_large


async def expect_upload(request: web.Request) -> web.StreamResponse | None:
    """`Expect: 100-continue` on a voice upload: the access rules and the upload's cap, before the
    caller is told to send its body. A `Content-Length` over the cap was told to go on (then closed on,
    its body unread), or, past the body budget, a 503 that said to send it again shortly."""
    return await expect_within(request, declared_over_cap(request))


@openai_errors
async def list_voices(request: web.Request) -> web.Response:
    """Every usable voice: `default` (unless the engine has none), uploads, extra directories, and the
    engine's own (espeak)."""
    scheduler = request.app[SCHEDULER_KEY]
    library = voice_library(scheduler)
    skip = () if speaks_default_voice(scheduler) else (DEFAULT_VOICE,)

    def describe() -> list[dict[str, Any]]:
        voices = [voice.describe() for voice in library.all() if voice.name not in skip]
        return voices + engine_voice_catalog(scheduler)

    entries = [VoiceEntry(**entry) for entry in await asyncio.to_thread(describe)]
    return json_response(VoiceList(voices=[entry.name for entry in entries], data=entries))


async def _read_part(part: BodyPartReader, limit: int, field: str, hold: BodyHold) -> bytes:
    """A part's bytes, refused as soon as it passes `limit` (never buffered beyond it), held in the
    worker's body budget as they arrive."""
    pieces: list[bytes] = []  # joined once at the end: a growing buffer's reallocations left holes
    size = 0
    try:
        while piece := await part.read_chunk(64 * 1024):
            hold.grow(len(piece) + PIECE_OVERHEAD)
            pieces.append(piece)
            size += len(piece)
            if size > limit:
                error = (
                    InvalidAudio(f"{field} exceeds {limit} bytes")
                    if field == "audio_sample"
                    else BadRequest(f"{field} is too long")
                )
                raise with_param(error, field)
    except BaseException:
        pieces.clear()  # freed now, not when a collection breaks the error's traceback cycle
        raise
    return b"".join(pieces)


async def read_upload(request: web.Request, hold: BodyHold) -> dict[str, bytes]:
    """The form's three fields; a body aiohttp's multipart reader cannot parse (no boundary, a part
    header over its line limit, a malformed part) is the caller's mistake, a 400, not a 500."""
    if not request.content_type.startswith("multipart/"):
        raise BadRequest("send multipart/form-data with audio_sample, name and ref_text")
    try:
        return await _read_form(request, hold)
    except UnicodeEncodeError:  # aiohttp encodes the boundary: Python's words named no header
        raise BadRequest(
            "the multipart body cannot be read: its Content-Type's boundary is not UTF-8"
        ) from None
    except (ValueError, HttpProcessingError) as exc:
        # (escaped: aiohttp's words may quote the Content-Type, a byte no UTF-8 encoder takes in it)
        reason = printable(" ".join(str(getattr(exc, "message", "") or exc).split())[:200])
        raise BadRequest(f"the multipart body cannot be read: {reason}") from None


async def _read_form(request: web.Request, hold: BodyHold) -> dict[str, bytes]:
    max_bytes = request.app[SETTINGS_KEY].voice_max_bytes
    fields: dict[str, bytes] = {}
    reader = await request.multipart()
    try:
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader) or part.name not in UPLOAD_FIELDS + SDK_FIELDS:
                raise BadRequest(f"unexpected form field; send only {', '.join(UPLOAD_FIELDS)}")
            if part.name in fields:  # so a form is at most five parts, however long the stream
                raise with_param(BadRequest(f"{part.name} is sent twice"), part.name)
            limit = max_bytes if part.name == "audio_sample" else MAX_TEXT_FIELD_BYTES
            fields[part.name] = await _read_part(part, limit, part.name, hold)
            if part.name == "type" and _text(fields, "type") != "audio_sample":  # before a prompt's fields
                raise with_param(BadRequest("only voices from an audio_sample are made here"), "type")
    except BaseException:
        fields.clear()  # (the parts read so far: freed now, as `_read_part` frees its own)
        raise
    for field in UPLOAD_FIELDS:
        if field not in fields:
            raise with_param(BadRequest(MISSING_FIELD_WORDS.get(field, f"{field} is required")), field)
    return fields


def _text(fields: dict[str, bytes], field: str) -> str:
    try:
        return fields[field].decode("utf-8").strip()
    except UnicodeDecodeError:
        raise with_param(BadRequest(f"{field} is not UTF-8"), field) from None


@openai_errors
async def upload_voice(request: web.Request) -> web.Response:
    refuse_declared_over_cap(request)
    await wait_for_load(request)  # (as a speech request: bounded, a hang-up or the shutdown ends it)
    refuse_until_engine_voices_known(request.app[SCHEDULER_KEY])  # (its name is checked against them)
    async with body_deadline(request), held_body(request) as hold:
        fields = await read_upload(request, hold)
    name = _text(fields, "name")
    try:
        check_voice_name(name)
    except BadRequest as error:
        raise with_param(error, "name") from None
    scheduler = request.app[SCHEDULER_KEY]
    if await engine_voice(scheduler, name) is not None:  # stored voices come first: it would hide it
        raise with_param(
            VoiceExists(f"{name!r} is one of the engine's own voices; choose another name"), "name"
        )
    library = voice_library(scheduler)
    try:
        voice = await request.app[DECODE_SLOTS_KEY].run(  # bounded: a small file can be seconds of CPU
            library.add,
            name,
            fields["audio_sample"],
            _text(fields, "ref_text"),
            upload_limits(request.app),
            holding=sum(map(len, fields.values())),  # (in the body budget while it waits for a slot)
            gone=lambda: until_caller_gone(request),  # (nothing decoded, nor stored, for a caller gone)
        )
    except InvalidAudio as error:
        raise with_param(error, "audio_sample") from None
    entry = await asyncio.to_thread(voice.describe)
    return json_response(CreatedVoice(**entry, id=name, created_at=int(time.time())), status=201)


@openai_errors
async def delete_voice(request: web.Request) -> web.Response:
    """The name read as the upload and the speech routes read it (blanks around it dropped), so the
    name an upload took is the name that deletes it."""
    name = request.match_info["name"].strip()
    await wait_for_load(request)  # (as a speech request; past the wait the delete goes on)
    scheduler = request.app[SCHEDULER_KEY]
    await asyncio.to_thread(voice_library(scheduler).delete, name, scheduler.voice_user)
    return json_response(VoiceDeleted(id=name, name=name))
