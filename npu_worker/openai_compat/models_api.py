"""GET /v1/models and /v1/models/{model}: what `model` a speech request may name (the engine's model,
its backend, OpenAI's speech model names as aliases), and the check every speech request's `model` goes
through."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from ..app_keys import SCHEDULER_KEY
from ..http_compat.bodies import json_response
from ..protocol import BadRequest
from .bodies import Model, ModelList
from .core import engine_info
from .errors import openai_errors, openai_refusal, with_param

if TYPE_CHECKING:  # the job core loads when an app is built, not when it is imported
    from ..jobs.scheduler import Scheduler

# OpenAI's speech models, all the one engine here, so a client written for OpenAI works unchanged: its
# guide sends `instructions` and streams SSE only with `gpt-4o-mini-tts` (or a dated snapshot of it).
MODEL_ALIASES = (
    "tts-1",
    "tts-1-hd",
    "gpt-4o-mini-tts",
    "gpt-4o-mini-tts-2025-12-15",
    "gpt-4o-mini-tts-2025-03-20",
)


def model_ids(scheduler: Scheduler) -> list[str]:
    info = engine_info(scheduler)
    return list(dict.fromkeys([info.model, info.backend, *MODEL_ALIASES]))


def check_model(scheduler: Scheduler, model: str | None) -> None:
    accepted = model_ids(scheduler)
    if model is not None and model not in accepted:
        raise with_param(
            BadRequest(f"model {model[:80]!r} is not served; use one of {', '.join(accepted)}"), "model"
        )


@openai_errors
async def list_models(request: web.Request) -> web.Response:
    ids = model_ids(request.app[SCHEDULER_KEY])
    return json_response(ModelList(data=[Model(i) for i in ids]))


@openai_errors
async def get_model(request: web.Request) -> web.Response:
    """One model of `list_models` (SDKs' `models.retrieve`); another is a 404, as an unknown path."""
    name = request.match_info["model"]
    ids = model_ids(request.app[SCHEDULER_KEY])
    if name not in ids:
        error = BadRequest(f"model {name[:80]!r} is not served; use one of {', '.join(ids)}")
        return openai_refusal(with_param(error, "model"), 404)
    return json_response(Model(name))
