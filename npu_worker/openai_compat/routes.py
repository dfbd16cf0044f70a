"""Route table of the OpenAI-compatible surface."""

from __future__ import annotations

import logging

from aiohttp import web

from ..app_keys import ERROR_SHAPES_KEY, SETTINGS_KEY
from ..http_compat.cors import PREFLIGHT_HEADERS_KEY
from ..http_compat.errors import expect_continue
from .errors import REQUEST_ID_HEADER, openai_refusal, request_id, unversioned_refusal
from .formats import available_formats
from .load_wait import LOAD_WAITERS_KEY, load_waiters
from .models_api import get_model, list_models
from .speech_batch import create_speech_batch
from .speech_stream import create_speech
from .stream_ws import handle_speech_stream
from .voices_api import delete_voice, expect_upload, list_voices, upload_voice

# What an OpenAI SDK calls for this surface's routes when its base_url lacks `/v1` (no native route
# starts so): refused in OpenAI's shape, a 404 saying where the routes are. `/models` is that path
# alone (ERROR_SHAPES_KEY): `/models.json` is the player's file namespace, `/modelsX` no SDK's path.
SDK_PATHS = ("/audio/", "/models", "/models/")


def is_openai_path(path: str) -> bool:
    """A path whose answers are this surface's: under `/v1/`, or an SDK path without it."""
    return path.startswith(("/v1/", "/audio/", "/models/")) or path == "/models"


def preflight_request_id(request: web.Request) -> dict[str, str]:
    """A CORS preflight's 204 on this surface's paths gets an id too (the middleware answers it, before
    any handler's wrapper; `cors.PREFLIGHT_HEADERS_KEY`: asked only of a preflight, where an
    `on_response_prepare` hook cost every answer of every route a call, benchmarks/SERVER_OVERHEAD.md,
    2026-12-07, stop 63). The stream socket's 101 names its own (`stream_ws.handle_speech_stream`)."""
    return {REQUEST_ID_HEADER: request_id(request)} if is_openai_path(request.path) else {}


def setup_openai(app: web.Application) -> None:
    """Register the routes on an app whose SCHEDULER_KEY, SETTINGS_KEY and LIMITS_KEY are set.

    The encodable formats are probed here, as the app is built (it encodes a short tone in each), so the
    first request does not pay for it; the log says what this libsndfile can do as the app starts (said
    here, it came before `serve`'s start line, which waits for the app: a setting it refuses is its one
    line alone)."""
    formats = ", ".join(available_formats())

    async def say_formats(app: web.Application) -> None:
        logging.getLogger(__name__).info("speech formats: %s", formats)

    app.on_startup.append(say_formats)
    app.setdefault(PREFLIGHT_HEADERS_KEY, []).append(preflight_request_id)
    app[LOAD_WAITERS_KEY] = load_waiters(app[SETTINGS_KEY].max_connections)
    app[ERROR_SHAPES_KEY]["/v1/"] = openai_refusal
    app[ERROR_SHAPES_KEY].update(dict.fromkeys(SDK_PATHS, unversioned_refusal))
    app.router.add_post("/v1/audio/speech", create_speech, expect_handler=expect_continue)
    app.router.add_post("/v1/audio/speech/batch", create_speech_batch, expect_handler=expect_continue)
    app.router.add_get("/v1/audio/speech/stream", handle_speech_stream)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/v1/models/{model:.+}", get_model)  # a ZipVoice id is folder/file
    app.router.add_get("/v1/audio/voices", list_voices)
    app.router.add_post("/v1/audio/voices", upload_voice, expect_handler=expect_upload)
    app.router.add_delete("/v1/audio/voices/{name}", delete_voice)
