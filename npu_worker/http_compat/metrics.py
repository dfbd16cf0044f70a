"""Prometheus metrics at `GET /metrics` (text exposition format, prometheus_client).

Counted as things happen: HTTP requests by route and status, jobs and sections by outcome, errors by
their stable name, TTFA and per-section engine time as histograms, engine busy seconds. Read when
scraped: sections waiting, jobs with work left, the engine and device that really run. Each app has its
own registry, so several workers in one process (tests) never share counters.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from aiohttp import web
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .. import PROTOCOL_VERSION, __version__
from ..app_keys import BODY_BUDGET_KEY
from ..body_budget import BodyBudget
from ..jobs.model import Job
from ..jobs.observer import SchedulerObserver
from ..protocol import Done, Event, Progress, SectionError
from .bodies import ERROR_COUNTED_KEY
from .errors import Handler
from .hang_up import counted_status
from .lane_tallies import LaneTallies, TalliedCounter, TalliedHistogram

if TYPE_CHECKING:  # the job core loads when an app is built, not when it is imported
    from ..jobs.scheduler import Scheduler

TTFA_BUCKETS = (0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0)
# aiohttp's C parser knows ~40 methods; its pure-Python one (AIOHTTP_NO_EXTENSIONS, a platform without
# the extension) takes any token: `FOO1`, `FOO2`... each a new series. Others are `OTHER`.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"})
STATE_ROUTES = ("/health", "/ready")  # their 5xx `error` is no caller's error: not in npu_worker_errors
# Each counter and histogram would also expose a `*_created` series (its creation time, in seconds since
# 1970) that reads like a count beside the documented ones: off, for the whole process (the library's only way).
disable_created_metrics()
SECTION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)


def error_name(text: str) -> str:
    """The stable name that starts an `error` string (`"QueueFull: ..."` → `QueueFull`)."""
    name = text.split(":", 1)[0].strip()
    return name if name.isidentifier() and len(name) <= 40 else "Unknown"


def job_outcome(done: Done) -> str:
    if done.cancelled:
        return "cancelled"
    if done.fail_count == 0:
        return "ok"
    return "failed" if done.ok_count == 0 else "partial"


class _StateCollector(Collector):
    """Gauges read from the scheduler at scrape time (no bookkeeping to drift)."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler

    def collect(self) -> Iterator[Metric]:
        scheduler = self.scheduler
        queue = GaugeMetricFamily("npu_worker_queue_sections", "Sections waiting for the engine")
        queue.add_metric([], scheduler.queue_size())
        yield queue
        active = GaugeMetricFamily("npu_worker_jobs_active", "Jobs with work left (previews included)")
        active.add_metric([], scheduler.jobs_running())
        yield active
        kept = GaugeMetricFamily(
            "npu_worker_job_bytes",
            "Bytes jobs keep now in the state dir: records, logs, default outputs (--jobs-max-bytes)",
        )
        kept.add_metric([], scheduler.job_bytes.total)
        yield kept
        removed = CounterMetricFamily(
            "npu_worker_jobs_removed",
            "Finished jobs removed, by reason: retention (--job-retention, --max-jobs-kept) or room "
            "(--jobs-max-bytes)",
            labels=["reason"],
        )
        for reason, count in scheduler.removals.counts.items():
            removed.add_metric([reason], count)
        yield removed
        loaded = GaugeMetricFamily("npu_worker_engine_loaded", "1 once the engine has loaded")
        loaded.add_metric([], 1 if scheduler.loaded else 0)
        yield loaded
        info = scheduler.info
        engine = GaugeMetricFamily(
            "npu_worker_engine_info",
            "The engine that really runs (device after fallback)",
            labels=["backend", "device", "model", "precision"],
        )
        if info is not None:
            engine.add_metric([info.backend, info.device, info.model, info.precision], 1)
        yield engine
        build = GaugeMetricFamily(
            "npu_worker_build_info", "Package and protocol version", labels=["version", "protocol"]
        )
        build.add_metric([__version__, PROTOCOL_VERSION], 1)
        yield build


class _BodyBudgetCollector(Collector):
    """The body budget (`body_budget.py`), read at scrape time: what it holds, what it dropped and refused."""

    def __init__(self, budget: BodyBudget) -> None:
        self.budget = budget

    def collect(self) -> Iterator[Metric]:
        held = GaugeMetricFamily(
            "npu_worker_body_bytes_held",
            "Request-body bytes held now while they arrive, and waiting for a decode slot (--body-budget-bytes)",
        )
        held.add_metric([], self.budget.held)
        yield held
        bodies = CounterMetricFamily(
            "npu_worker_bodies_over_budget",
            "Bodies (WebSocket messages, waits for a decode slot) the body budget dropped to make room (dropped) or refused "
            "for want of room (refused)",
            labels=["outcome"],
        )
        bodies.add_metric(["dropped"], self.budget.dropped)
        bodies.add_metric(["refused"], self.budget.refused)
        yield bodies


class _BusyCollector(Collector):
    """`npu_worker_engine_busy_seconds`: the sum of `npu_worker_section_seconds`, read when scraped. The
    same seconds were counted twice on the engine lane a section, a Counter's `inc` (5 Python calls
    under its lock) beside the histogram's `observe`."""

    def __init__(self, tallies: LaneTallies) -> None:
        self.tallies = tallies

    def collect(self) -> Iterator[Metric]:
        _, busy = self.tallies.histogram("npu_worker_section_seconds")
        yield CounterMetricFamily(
            "npu_worker_engine_busy_seconds",
            "Seconds the engine spent on sections",
            value=busy,
        )  # no `_created`: none of the others has one (`disable_created_metrics` above)


class WorkerMetrics(SchedulerObserver):
    """The scheduler's observer and the HTTP counters, in one registry per app."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        # Counted on the engine lanes a section and a job, and on the loop an answer: by each thread in plain
        # numbers, summed when scraped (lane_tallies.py), not by prometheus_client's objects (a lock and
        # ≈ 9 calls a count: `labels`' generator, `inc`'s checks; benchmarks/SERVER_OVERHEAD.md, stop 63).
        self.tallies = LaneTallies(
            counters={
                "npu_worker_http_requests": ("method", "route", "status"),
                "npu_worker_jobs": ("kind", "outcome"),
                "npu_worker_sections": ("outcome",),
            },
            histograms={
                "npu_worker_ttfa_seconds": TTFA_BUCKETS,
                "npu_worker_section_seconds": SECTION_BUCKETS,
            },
        )
        self._here = self.tallies.here
        r.register(
            TalliedCounter(self.tallies, "npu_worker_http_requests", "HTTP requests by route and status")
        )
        r.register(TalliedCounter(self.tallies, "npu_worker_jobs", "Finished jobs by kind and outcome"))
        r.register(TalliedCounter(self.tallies, "npu_worker_sections", "Finished sections by outcome"))
        self.errors = Counter(
            "npu_worker_errors", "Errors by stable name (requests and sections)", ["name"], registry=r
        )
        r.register(
            TalliedHistogram(self.tallies, "npu_worker_ttfa_seconds", "Submission to first audio, per job")
        )
        r.register(TalliedHistogram(self.tallies, "npu_worker_section_seconds", "Engine time per section"))
        r.register(_BusyCollector(self.tallies))
        self.closed = Counter(
            "npu_worker_connections_closed",
            "Connections the connection guard closed (evicted: waiting for headers; reclaimed: an idle "
            "socket; slow_body: a request body still arriving; header_timeout) or refused (every "
            "connection in use), by reason",
            ["reason"],
            registry=r,
        )
        self._open_connections: Callable[[], int] = lambda: 0
        self._lingering_connections: Callable[[], int] = lambda: 0
        Gauge("npu_worker_connections_open", "Open connections", registry=r).set_function(
            lambda: self._open_connections()
        )
        Gauge(
            "npu_worker_connections_lingering",
            "Open connections closing after their answer while the caller still sends (counted in open)",
            registry=r,
        ).set_function(lambda: self._lingering_connections())
        r.register(_StateCollector(scheduler))

    def connection_closed(self, reason: str) -> None:
        self.closed.labels(reason).inc()

    def watch_connections(self, count: Callable[[], int], lingering: Callable[[], int]) -> None:
        """The serving socket's count of open connections and of those among them closing after their
        answer (`lingering_close`) (server.listen), read at scrape time."""
        self._open_connections, self._lingering_connections = count, lingering

    # -- SchedulerObserver ---------------------------------------------------------------------

    def event(self, job: Job, event: Event) -> None:
        match event:  # (class patterns: no `isinstance` calls a preview)
            case Progress(status="ok", cached=cached):
                self._here.counts.count("npu_worker_sections", ("cached" if cached else "ok",))
            case SectionError(error=error):
                self._here.counts.count("npu_worker_sections", ("error",))
                self.errors.labels(error_name(error)).inc()
            case Done():
                kind = "preview" if job.preview else "batch"
                self._here.counts.count("npu_worker_jobs", (kind, job_outcome(event)))

    def first_audio(self, job: Job, seconds: float) -> None:
        self._here.counts.observe("npu_worker_ttfa_seconds", seconds)

    def section_ran(self, job: Job, seconds: float) -> None:
        self._here.counts.observe("npu_worker_section_seconds", seconds)  # (and the busy seconds, its sum)

    # -- HTTP ----------------------------------------------------------------------------------

    def count_response(self, request: web.Request, status: int, body: bytes | None) -> None:
        resource = request.match_info.route.resource
        route = resource.canonical if resource is not None else "unmatched"
        method = request.method if request.method in METHODS else "OTHER"
        self._here.counts.count("npu_worker_http_requests", (method, route, str(status)))
        if route in STATE_ROUTES:  # they report the worker's state at each poll; no request failed
            return
        if status >= 400 and body:
            try:
                error = json.loads(body).get("error") or ""
            except (ValueError, AttributeError):
                return
            if isinstance(error, str) and error:  # the v1 body: "Name: message"
                self.errors.labels(error_name(error)).inc()
            elif isinstance(error, dict) and isinstance(error.get("code"), str):  # OpenAI's: its code
                self.errors.labels(error["code"]).inc()

    def count_error(self, error: str) -> None:
        """A request-level `error` event on a WebSocket (`"QueueFull: ..."`): by its stable name."""
        self.errors.labels(error_name(error)).inc()

    def count_unparsable(self, status: int) -> None:
        """A request aiohttp's parser refused (no method or route to name: connection_guard.GuardedHandler)."""
        self._here.counts.count("npu_worker_http_requests", ("UNKNOWN", "unmatched", str(status)))
        self.errors.labels("BadRequest").inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


METRICS_KEY = web.AppKey("metrics", WorkerMetrics)


@web.middleware
async def metrics_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Count every answer, refusals included (it wraps the access and error middleware)."""
    metrics = request.app.get(METRICS_KEY)
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        if metrics is not None:
            metrics.count_response(request, exc.status, None)
        raise
    if metrics is not None:
        body = response.body if isinstance(response, web.Response) else None
        status = counted_status(request, response)  # a caller's hang-up: 499, not the 200 it never read
        if response.get(ERROR_COUNTED_KEY) or status != response.status:  # counted as its event: the
            body = None  # section's error, the job's cancel (a hang-up is no error, as on other routes)
        metrics.count_response(request, status, body if isinstance(body, bytes) else None)
    return response


async def metrics_view(request: web.Request) -> web.Response:
    body = request.app[METRICS_KEY].exposition()
    response = web.Response(body=body)
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    return response


def setup_metrics(app: web.Application, scheduler: Scheduler) -> WorkerMetrics:
    """Attach the metrics to the scheduler and serve them at /metrics."""
    metrics = WorkerMetrics(scheduler)
    metrics.registry.register(_BodyBudgetCollector(app[BODY_BUDGET_KEY]))
    scheduler.observer = metrics
    app[METRICS_KEY] = metrics
    app.router.add_get("/metrics", metrics_view, name="metrics")
    return metrics
