"""Typed aiohttp AppKeys: the only way views reach shared state (no module-level globals)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from aiohttp import web

from .body_budget import BodyBudget
from .config import Settings
from .decode_slots import DecodeSlots
from .protocol import Limits, WorkerError

if TYPE_CHECKING:  # the job core (and numpy) load when the app starts, not when it is imported
    from .http_compat.ndjson import OpenStreams
    from .jobs.scheduler import Scheduler
    from .ws_server.opening import ClosingSockets, OpenSockets

SETTINGS_KEY = web.AppKey("settings", Settings)
# this start of the worker, /health's `start_id`: a client told a restart (loaded again since) by it
START_ID_KEY = web.AppKey("start_id", str)
SCHEDULER_KEY: web.AppKey[Scheduler] = web.AppKey("scheduler")
LIMITS_KEY = web.AppKey("limits", Limits)
# Request-body bytes held at once, every body and unfinished WebSocket message (`--body-budget-bytes`).
BODY_BUDGET_KEY = web.AppKey("body_budget", BodyBudget)
# Voice uploads and inline `ref_audio` decoded at once (`--voice-decodes`, `--voice-decode-wait`).
DECODE_SLOTS_KEY = web.AppKey("decode_slots", DecodeSlots)
# Error bodies of another shape for the routes under a path prefix, a key ending in `/`, or at a path,
# any other key (an unknown path or a wrong method there, which no handler sees): `/v1/` → OpenAI's,
# and the paths an OpenAI SDK calls without `/v1` (`openai_compat.routes.SDK_PATHS`), set by `setup_openai`.
ERROR_SHAPES_KEY: web.AppKey[dict[str, Callable[[WorkerError, int], web.Response]]] = web.AppKey(
    "error_shapes"
)
# The NDJSON streams open now (their subscriptions): ended at shutdown once nothing more will come.
NDJSON_STREAMS_KEY: web.AppKey[OpenStreams] = web.AppKey("ndjson_streams")


# The WebSocket sessions open now (`/ws` and the OpenAI speech stream): told and closed (1001) at
# shutdown, after the drain.
WS_SESSIONS_KEY: web.AppKey[OpenSockets] = web.AppKey("ws_sessions")
# The sockets being closed for their message (a refusal, a failed socket) and their lingering connections:
# ended at clean-up.
CLOSING_SOCKETS_KEY: web.AppKey[ClosingSockets] = web.AppKey("closing_sockets")
