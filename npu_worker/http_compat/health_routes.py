"""`/health` and `/ready`: what the worker runs and whether a request would be served now (split out of
`routes.py`, whose `setup_http` routes them)."""

from __future__ import annotations

import statistics

from aiohttp import web

from .. import PROTOCOL_VERSION, __version__
from ..app_keys import SCHEDULER_KEY, SETTINGS_KEY, START_ID_KEY
from ..engine.factory import reported_backend
from ..errors import InternalError, StateUnavailable, WorkerError, counted
from ..protocol import Loading, NodeRestarting, QueueFull, QueueUnavailable
from .bodies import RETRY_AFTER, DecoderCallCounts, Health, Ready, TtfaFigures, json_response


def _ttfa_figures(values: list[float]) -> TtfaFigures:
    """The window's p50 and p95: its 99 cut points computed once for both (each figure sorted it again)."""
    if len(values) < 2:
        only = round(values[0], 1) if values else None
        return TtfaFigures(only, only, len(values))
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return TtfaFigures(round(cuts[49], 1), round(cuts[94], 1), len(values))


async def health(request: web.Request) -> web.Response:
    scheduler = request.app[SCHEDULER_KEY]
    settings = request.app[SETTINGS_KEY]
    queue = await scheduler.queue_health()  # first: it refreshes the cluster view the rest reads
    info = scheduler.info
    body = Health(
        # load_error first: kept jobs that could not be read leave the engine's info, yet nothing is served
        status="fail" if scheduler.load_error else ("ok" if info else "loading"),
        loaded=info is not None,
        load_seconds=scheduler.load_seconds,
        load_phase=scheduler.load_phase,
        backend=info.backend if info else reported_backend(settings.backend),
        device=info.device if info else None,
        ref_wav=settings.ref_wav,
        version=PROTOCOL_VERSION,
        package_version=__version__,
        sample_rate=info.sample_rate if info else None,
        model=info.model if info else None,
        precision=info.precision if info else None,
        fallback_reason=info.fallback_reason if info else None,
        placement={name: dict(place) for name, place in info.placement.items()} if info else None,
        queue=scheduler.queue_size(),
        jobs_running=scheduler.jobs_running(),
        ttfa_ms=_ttfa_figures(scheduler.ttfa_ms),
        start_id=request.app[START_ID_KEY],
        **queue,
    )
    if info is not None and (languages := scheduler.spoken_languages()) is not None:
        body.languages = languages  # (`bench --lang` refuses one not listed before its run)
    calls = scheduler.decoder_calls
    if calls is not None:  # segments on the CPU overflow decoder, which `device` does not show
        body.decoder_calls = DecoderCallCounts(calls.total, calls.cpu_overflow)
    if body.redis == "unreachable":  # the shared queue is down: this node cannot take requests
        body.failed(body.error if isinstance(body.error, str) else "QueueUnavailable: Redis is unreachable")
        return _not_now(json_response(body, status=503), QueueUnavailable)
    if isinstance(scheduler.load_error, NodeRestarting):  # a Redis node's loop starts again soon
        body.failed(str(scheduler.load_error))
        return _not_now(json_response(body, status=503), NodeRestarting)
    if scheduler.load_error is not None:
        body.failed(str(scheduler.load_error), scheduler.load_error.fallback)
        return json_response(body, status=500)
    if info is None:  # a load balancer's or a client's poll: when to ask again, as a refused request says
        return _not_now(json_response(body, status=503), Loading)
    return json_response(body)


def _not_now(response: web.Response, kind: type[WorkerError]) -> web.Response:
    """`response` with the `Retry-After` a refusal of `kind` carries (`bodies.RETRY_AFTER`)."""
    response.headers["Retry-After"] = str(RETRY_AFTER[kind])
    return response


async def ready(request: web.Request) -> web.Response:
    """200 only when a request would be served now (loaded, queue below its bound, not shutting down);
    a 503 carries the `Retry-After` a request refused for the same reason would (none after a failed
    load: waiting does not help)."""
    scheduler = request.app[SCHEDULER_KEY]
    bound = request.app[SETTINGS_KEY].max_queue
    queue = await scheduler.queue_health()  # a Redis queue: refreshes the cluster-wide depth
    waiting = scheduler.queue_size()
    reason, kind = None, None
    if queue.get("redis") == "unreachable":
        reason, kind = "the shared queue (Redis) is unreachable", QueueUnavailable
    elif queue.get("redis") == "full":  # every submit would be a 503 QueueUnavailable
        reason, kind = "Redis is full (its maxmemory is reached)", QueueUnavailable
    elif isinstance(scheduler.load_error, NodeRestarting):  # a loop of a Redis node ended on a bug
        reason, kind = f"the worker cannot serve: {scheduler.load_error}", NodeRestarting
    # Not the engine's: a local worker's kept jobs were not read.
    elif isinstance(scheduler.load_error, (InternalError, StateUnavailable)):
        reason = f"the worker cannot serve: {scheduler.load_error}"
    elif scheduler.load_error is not None:
        reason = f"the engine failed to load: {scheduler.load_error}"
    elif not scheduler.loaded:
        reason, kind = scheduler.loading().message.removesuffix("; retry shortly"), Loading
    elif scheduler.draining:  # a request now is a 429 QueueFull (a restarted worker takes it)
        reason, kind = "shutting down", QueueFull
    elif waiting >= bound:
        said = counted(waiting, "section", "sections")
        reason, kind = f"the queue is full ({said} waiting, bound {bound})", QueueFull
    response = json_response(Ready(reason is None, reason, waiting), status=200 if reason is None else 503)
    return _not_now(response, kind) if kind is not None else response
