"""build_app(settings): wires engine, scheduler, HTTP views, the WebSocket channel and the player page."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from .app_keys import LIMITS_KEY, SCHEDULER_KEY, SETTINGS_KEY
from .config import Settings
from .http_compat import setup_http
from .http_compat.errors import error_middleware
from .ws_server import setup_ws

if TYPE_CHECKING:
    from .engine.base import Engine


def client_dir() -> Path | None:
    """The player's static files: inside the installed wheel, else the source checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "client_js", here.parent / "client_js"):
        if (candidate / "index.html").is_file():
            return candidate
    return None


STATIC_ROUTE = r"/{name:[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.(js|mjs|css|html|svg|png|json)}"
STATIC_TYPES = {".js": "text/javascript", ".mjs": "text/javascript"}


def _static_handler(directory: Path):  # noqa: ANN202 - aiohttp handler factory
    """Serve the player's files by plain name only (no sub-paths, so nothing outside can be reached)."""

    async def serve(request: web.Request) -> web.StreamResponse:
        name = request.match_info.get("name", "index.html")
        path = directory / name
        response = web.FileResponse(path)
        content_type = STATIC_TYPES.get(path.suffix)
        if content_type:
            response.content_type = content_type
        response.headers["Cache-Control"] = "no-cache"
        return response

    return serve


def build_app(settings: Settings, engine: Engine | None = None) -> web.Application:
    """The whole worker as an aiohttp Application; `engine` overrides the configured backend (tests)."""
    app = web.Application(client_max_size=settings.max_body_bytes, middlewares=[error_middleware])
    app[SETTINGS_KEY] = settings
    app[LIMITS_KEY] = settings.limits

    async def run_scheduler(app: web.Application) -> AsyncIterator[None]:
        """Engine and scheduler live exactly as long as the running app (built on start-up, off the
        loop where it does I/O; stopped and closed on clean-up)."""
        from .engine.factory import create_engine
        from .jobs.scheduler import Scheduler

        built = engine if engine is not None else await asyncio.to_thread(create_engine, settings)
        if settings.queue == "local":
            scheduler = await asyncio.to_thread(Scheduler, built, settings)
        else:  # several workers share jobs through Redis (needs the `redis` extra)
            from .jobs.cluster.scheduler import ClusterScheduler

            scheduler = await asyncio.to_thread(ClusterScheduler, built, settings)
        app[SCHEDULER_KEY] = scheduler
        await scheduler.start()
        yield
        await scheduler.stop()

    app.cleanup_ctx.append(run_scheduler)
    setup_http(app)
    setup_ws(app)
    directory = client_dir()
    if directory is not None:
        app.router.add_get("/", _static_handler(directory), name="player-index")
        app.router.add_get(STATIC_ROUTE, _static_handler(directory), name="player-file")
    return app
