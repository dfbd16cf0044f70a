"""Route table of the OpenAI-compatible surface."""

from __future__ import annotations

from aiohttp import web

from .speech import create_speech, create_speech_batch, list_models
from .stream_ws import handle_speech_stream
from .voices_api import delete_voice, list_voices, upload_voice


def setup_openai(app: web.Application) -> None:
    """Register the routes on an app whose SCHEDULER_KEY, SETTINGS_KEY and LIMITS_KEY are set."""
    app.router.add_post("/v1/audio/speech", create_speech)
    app.router.add_post("/v1/audio/speech/batch", create_speech_batch)
    app.router.add_get("/v1/audio/speech/stream", handle_speech_stream)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/v1/audio/voices", list_voices)
    app.router.add_post("/v1/audio/voices", upload_voice)
    app.router.add_delete("/v1/audio/voices/{name}", delete_voice)
