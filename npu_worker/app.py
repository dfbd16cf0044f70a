"""build_app(settings): wires engine, scheduler, HTTP views, the WebSocket channel and the player page."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from .app_keys import (
    BODY_BUDGET_KEY,
    CLOSING_SOCKETS_KEY,
    DECODE_SLOTS_KEY,
    ERROR_SHAPES_KEY,
    LIMITS_KEY,
    NDJSON_STREAMS_KEY,
    SCHEDULER_KEY,
    SETTINGS_KEY,
    START_ID_KEY,
    WS_SESSIONS_KEY,
)
from .body_budget import BodyBudget
from .config import Settings
from .connection_guard import guard_middleware
from .connection_hooks import close_unframed_http10
from .decode_slots import DecodeSlots
from .http_compat import setup_http
from .http_compat.cors import cors_middleware, setup_cors
from .http_compat.errors import error_middleware
from .http_compat.file_ranges import file_answer
from .http_compat.metrics import metrics_middleware, setup_metrics
from .http_compat.ndjson import OpenStreams, end_streams
from .http_compat.started import note_started
from .http_compat.unrouted_expect import refuse_continue_unrouted
from .openai_compat import setup_openai
from .ws_server import close_sockets, setup_ws
from .ws_server.opening import ClosingSockets, OpenSockets
from .ws_server.schedule import schedule_sizes

if TYPE_CHECKING:
    from .engine.base import Engine
    from .jobs.scheduler import Scheduler

log = logging.getLogger("npu_worker")


def client_dir() -> Path | None:
    """The player's static files: inside the installed wheel, else the source checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "client_js", here.parent / "client_js"):
        if (candidate / "index.html").is_file():
            return candidate
    return None


STATIC_ROUTE = r"/{name:[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.(js|mjs|css|html|svg|png|json)}"
STATIC_TYPES = {".js": "text/javascript", ".mjs": "text/javascript"}
# The page and its files: never framed (clickjacking), scripts, workers, the worklet and styles only
# from this origin, while `?worker=` may point the page's fetch and socket at any http(s)/ws(s) worker.
PAGE_HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'self'; connect-src 'self' http: https: ws: wss:; "
    "img-src 'self' data:; base-uri 'none'; object-src 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _static_handler(directory: Path):  # noqa: ANN202 - aiohttp handler factory
    """Serve the player's files by plain name only (no sub-paths, so nothing outside can be reached)."""

    async def serve(request: web.Request) -> web.StreamResponse:
        name = request.match_info.get("name", "index.html")
        path = directory / name
        if not await asyncio.to_thread(path.is_file):
            raise web.HTTPNotFound()  # the middleware answers with the JSON error body
        response = await file_answer(request, path, {"Cache-Control": "no-cache", **PAGE_HEADERS})
        content_type = STATIC_TYPES.get(path.suffix)
        if content_type and isinstance(response, web.FileResponse):
            response.content_type = content_type
        return response

    return serve


def build_app(settings: Settings, engine: Engine | None = None) -> web.Application:
    """The whole worker as an aiohttp Application; `engine` overrides the configured backend (tests)."""
    # outermost first; the guard's is first so nothing runs under the header deadline once headers are in
    middlewares = [guard_middleware, metrics_middleware, cors_middleware, error_middleware]
    app = web.Application(client_max_size=settings.max_body_bytes, middlewares=middlewares)
    scheduler = _new_scheduler(settings, engine)
    _keep_state(app, settings, scheduler)
    app.cleanup_ctx.append(_run_scheduler)
    app.on_cleanup.append(_end_closing)
    app.on_shutdown.append(_drain)
    app.on_response_prepare.append(close_unframed_http10)
    app.on_response_prepare.append(note_started)  # a failure after it ends that answer (started.py)
    setup_metrics(app, scheduler)
    setup_cors(app)
    _add_routes(app)
    return app


def _new_scheduler(settings: Settings, engine: Engine | None) -> Scheduler:
    """The local queue's scheduler or the Redis cluster's, chosen by `--queue`; neither starts yet."""
    from .jobs.scheduler import Scheduler  # the job core (and numpy) load when an app is built

    if settings.queue == "local":
        scheduler = Scheduler(engine, settings)  # cheap; the engine and the engine thread start below
    else:  # several workers share jobs through Redis (needs the `redis` extra); connects in start()
        from .jobs.cluster.scheduler import ClusterScheduler

        scheduler = ClusterScheduler(engine, settings)
    # The WebSocket chunk sizes depend on the engine's real sample rate, known once its model is loaded.
    scheduler.load_checks.append(lambda info: schedule_sizes(settings.chunk_schedule_ms, info.sample_rate))
    return scheduler


def _keep_state(app: web.Application, settings: Settings, scheduler: Scheduler) -> None:
    """The state every view shares, each under its typed key (app_keys.py)."""
    app[SETTINGS_KEY] = settings
    app[START_ID_KEY] = secrets.token_hex(8)
    app[SCHEDULER_KEY] = scheduler
    app[LIMITS_KEY] = settings.limits
    app[BODY_BUDGET_KEY] = budget = BodyBudget(settings.body_budget_bytes)
    app[DECODE_SLOTS_KEY] = DecodeSlots(settings.voice_decodes, settings.voice_decode_wait, budget)
    app[NDJSON_STREAMS_KEY] = OpenStreams()
    app[WS_SESSIONS_KEY] = OpenSockets()  # both socket routes' (`/ws`, the OpenAI speech stream)
    app[CLOSING_SOCKETS_KEY] = ClosingSockets()
    app[ERROR_SHAPES_KEY] = {}


async def _run_scheduler(app: web.Application) -> AsyncIterator[None]:
    """The engine (built here unless given), the journal and the engine thread live exactly as long
    as the running app: built and started on start-up, stopped and closed on clean-up."""
    scheduler, settings = app[SCHEDULER_KEY], app[SETTINGS_KEY]
    await scheduler.start()
    yield
    await scheduler.stop(settings.shutdown_grace)


async def _drain(app: web.Application) -> None:
    """Shutdown (SIGTERM): the listening sockets are closed; let the running section finish."""
    log.info("shutdown: no longer accepting connections")
    await app[SCHEDULER_KEY].drain(app[SETTINGS_KEY].shutdown_grace)
    streams, waits = end_streams(app)
    if streams:
        log.info("shutdown: ended %d NDJSON streams (their clients re-attach with after=)", streams)
    if waits:
        log.info("shutdown: ended %d waits for a whole job (/synth, stream:false batches)", waits)
    closed, ended = await close_sockets(app)
    if ended:
        log.info(
            "shutdown: closed %d WebSocket sockets (1001); %d had a request still running,"
            " ended with QueueFull",
            closed,
            ended,
        )
    elif closed:  # it said "a request still running was ended" with none running
        log.info("shutdown: closed %d WebSocket sockets (1001); none had a request running", closed)


async def _end_closing(app: web.Application) -> None:
    """Clean-up: the refusals' closes in flight and the connections still lingering end with the app."""
    await app[CLOSING_SOCKETS_KEY].close()


def _add_routes(app: web.Application) -> None:
    """Every route: HTTP's, the sockets', OpenAI's and the player page's (when its files are there)."""
    refuse_continue_unrouted(app.router)  # a 404 or 405 comes instead of `100 Continue`
    setup_http(app)
    setup_ws(app)
    setup_openai(app)
    directory = client_dir()
    if directory is not None:
        app.router.add_get("/", _static_handler(directory), name="player-index")
        app.router.add_get(STATIC_ROUTE, _static_handler(directory), name="player-file")
