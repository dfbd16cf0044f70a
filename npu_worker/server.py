"""Serving the app on a socket (`npu-worker serve`): the listener, the access log, the process settings.

The socket is bound before the app starts (an address in use is `ListenFailed`, one line), the access
log never shows a `?token=`, and `run` sets what the process needs (GIL switch interval, allocator
thresholds, the open-file limit, a throttle on asyncio's failed-`accept()` reports) and drains on a
signal. The bounds every connection is held to (header deadline, connection cap and eviction, unread
replies, parser refusals) are `connection_guard.py`'s, installed here through `GuardedHandler`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import resource
import signal
import sys
import time
from typing import Any
from urllib.parse import quote, unquote_plus

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from . import heap
from .app_keys import CLOSING_SOCKETS_KEY
from .config import Settings
from .connection_guard import ConnectionGuard, GuardedHandler, watch_requests_made
from .held_signals import hup_unless_ignored, stops_ignored_after
from .http_compat.errors import CLOSE_AFTER_KEY, path_refusals
from .http_compat.hang_up import counted_status
from .http_compat.metrics import METRICS_KEY, WorkerMetrics
from .printable import printable
from .shutdown_bodies import finish_bodies_at_shutdown

log = logging.getLogger(__name__)
# How long a thread may hold the GIL while another waits for it (CPython's default: 5 ms). The engine
# thread wants the GIL briefly for every espeak buffer and chunk while the loop sends frames; at 5 ms
# each side could stall the other for that long, 1 ms cut the server's CPU and /ws tail
# (benchmarks/SERVER_OVERHEAD.md).
SWITCH_INTERVAL_SECONDS = 0.001
SECRET_QUERY_KEYS = ("token",)
LOGGED_TARGET_CHARS = 512  # of a request's path and query in the access log
LOGGED_METHOD_CHARS = 20
# What aiohttp buffers of a request body no handler is reading yet (a request pipelined behind a long
# answer: a running job's events): reading pauses past twice this. aiohttp 3.14's 256 KiB let such a
# body hold over 512 KiB a connection outside the body budget; a body being read raises it
# (`request_body.read_body`), so only the unread ones are held to it.
READ_BUFSIZE = 64 * 1024
# coreutils `timeout` passes one SIGTERM on twice, to the worker and to its process group, microseconds
# apart: a repeat this soon is that same stop (a drain), not an operator's second one (exit at once)
REPEATED_SIGTERM_SECONDS = 1.0
LINGER_SECONDS = 1.0
# asyncio accepts up to `backlog` sockets per loop turn before any is closed: a burst of that many
# descriptors on top of the open connections, so it is kept small (keep max_connections + this + the
# engine's own files below `ulimit -n`).
ACCEPT_BACKLOG = 128
RESERVED_FILES = 256  # besides the connections: the engine's libraries and models, logs, the state dir


def redacted_path(request: web.BaseRequest) -> str:
    """The path and query as logged: the value of any token-like parameter is replaced by `***`, and
    the whole cut at LOGGED_TARGET_CHARS (an 8 KB request line, its query quoted again, was a 22 KB log
    line: any caller could fill the disk 200 times faster than with ordinary requests). The path's
    controls are escaped (`printable`): the pure-Python parser let ESC and CR through into the line."""
    raw_query = request.rel_url.raw_query_string
    target = printable(request.rel_url.raw_path)
    if raw_query:
        pairs = []
        # `;` splits too: yarl reads `a=1;token=t` as one value of `a`, which was logged whole
        for piece in re.split("[&;]", raw_query):
            key, equals, value = (unquote_plus(part) for part in piece.partition("="))
            secret = equals and any(word in key.lower() for word in SECRET_QUERY_KEYS)
            shown = "***" if secret else _quoted(value)
            pairs.append(f"{_quoted(key)}{equals}{shown}")
        target = f"{target}?{'&'.join(pairs)}"
    if len(target) > LOGGED_TARGET_CHARS:
        return f"{target[:LOGGED_TARGET_CHARS]}...(+{len(target) - LOGGED_TARGET_CHARS} chars)"
    return target


def _quoted(text: str) -> str:
    """`text` percent-encoded, a byte that is not UTF-8 (which the pure-Python parser lets through,
    decoded as a lone surrogate) included: `quote` raised on it, in the access log."""
    try:
        return quote(text.encode("utf-8", "surrogateescape"), safe="")
    except UnicodeEncodeError:  # a surrogate no byte became (sent as UTF-8 of its own): as its code
        return quote(text.encode("utf-8", "surrogatepass"), safe="")


class RedactingAccessLogger(AbstractAccessLogger):
    """One line per request, like aiohttp's default, without the secrets a browser puts in URLs.

    aiohttp calls it once a response is finished (its last byte written), so it is also where a
    kept-alive connection starts waiting for its next request's headers again: it stays `enabled`
    whatever the log level, and writes (and formats) its line only when INFO is logged.
    """

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        # The line's fields only when it is written: at `--log-level warning` they were still read and
        # the path redacted on the loop, 1–3 µs a request, 13 µs with a query string
        # (benchmarks/SERVER_OVERHEAD.md, 2026-12-06)
        if self.logger.isEnabledFor(logging.INFO):
            self.logger.info(
                '%s "%s %s HTTP/%d.%d" %d %d %.3fs',
                request.remote,
                printable(request.method[:LOGGED_METHOD_CHARS]),  # any token with the pure-Python parser
                redacted_path(request),
                request.version.major,
                request.version.minor,
                counted_status(request, response),  # a caller's hang-up: 499, as `/metrics` counts it
                response.body_length,
                time,
            )
        protocol = request.protocol
        if isinstance(protocol, GuardedHandler):
            unread = bool(request.get(CLOSE_AFTER_KEY)) or not request.content.is_eof()
            protocol.answer_written(closes=not response.keep_alive, body_unread=unread)
            if response.keep_alive:
                protocol.response_finished()  # (a connection the answer closes is not waited on)


class Listener:
    """The app served on one TCP socket through GuardedHandler; `close()` stops it."""

    def __init__(self, runner: web.AppRunner, server: asyncio.base_events.Server, guard: ConnectionGuard):
        self.runner = runner
        self.server = server
        self.guard = guard

    @property
    def port(self) -> int:
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        self.server.close()
        await self.runner.cleanup()


class ListenFailed(Exception):
    """The worker cannot take connections on the address it was given (said without a traceback)."""


def _watch_connections(app: web.Application, metrics: WorkerMetrics, guard: ConnectionGuard) -> None:
    """`/metrics`' open and lingering connections: the guard's, and the refused or failed WebSockets that
    linger on a duplicate of their socket (`ClosingSockets`, outside the guard: in no gauge before)."""
    closing = app.get(CLOSING_SOCKETS_KEY)

    def sockets_lingering() -> int:
        return closing.lingering if closing is not None else 0

    metrics.watch_connections(
        lambda: len(guard.open) + sockets_lingering(), lambda: len(guard.lingering) + sockets_lingering()
    )


async def listen(
    app: web.Application, settings: Settings, *, host: str, port: int, shutdown_timeout: float = 60.0
) -> Listener:
    """Serve `app` on host:port; `shutdown_timeout`: what open connections get after the app's drain."""
    # lingering_time: after an early answer (413, 408), unread body is drained for 1 s, not aiohttp's 10;
    # read_bufsize: READ_BUFSIZE.
    handler_options: dict[str, Any] = dict(
        access_log_class=RedactingAccessLogger, lingering_time=LINGER_SECONDS, read_bufsize=READ_BUFSIZE
    )
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=shutdown_timeout, **handler_options)
    guard = ConnectionGuard(settings.max_connections, settings.header_timeout)
    guard.refusal = path_refusals(app)
    metrics = app.get(METRICS_KEY)
    if metrics is not None:
        guard.on_close = metrics.connection_closed
        guard.on_unparsable = metrics.count_unparsable
        _watch_connections(app, metrics, guard)
    loop = asyncio.get_running_loop()

    def make_handler() -> GuardedHandler:
        assert runner.server is not None  # set up before the socket accepts (start_serving below)
        return GuardedHandler(runner.server, guard=guard, loop=loop, **handler_options)

    try:  # bound first: an address in use is said before the engine loads and jobs resume
        server = await loop.create_server(
            make_handler, host, port, reuse_address=True, backlog=ACCEPT_BACKLOG, start_serving=False
        )
    except OSError as exc:  # an address in use, a host that does not resolve: the operator's to fix
        raise ListenFailed(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        await runner.setup()
    except BaseException:
        server.close()
        raise
    assert runner.server is not None
    watch_requests_made(runner.server)
    finish_bodies_at_shutdown(runner.server)
    await server.start_serving()
    if port == 0:  # the start line said port 0: which one the system chose is nowhere else; said once it
        # listens (said once bound, it refused a caller who read the line for the 50-100 ms of the setup)
        chosen = sorted({str(sock.getsockname()[1]) for sock in server.sockets})
        log.info("--port 0: listening on port %s", ", ".join(chosen))
    else:  # (the start line says where it will listen: an address in use is refused after it)
        log.info("listening on http://%s:%s", f"[{host}]" if ":" in host else host, port)
    return Listener(runner, server, guard)


def fit_open_file_limit(max_connections: int) -> None:
    """Raise the soft open-file limit to what `--max-connections` needs, where the hard limit allows;
    else say what to change. Out of descriptors, `accept()` lets no one in (`/health` included)."""
    needed = max_connections + ACCEPT_BACKLOG + RESERVED_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    if target < needed:
        log.warning(
            "--max-connections %d needs about %d open files, but the limit is %d (ulimit -n): lower "
            "--max-connections or raise the limit, or connections will be refused when it is reached",
            max_connections,
            needed,
            target,
        )


class AcceptFailureThrottle(logging.Filter):
    """asyncio logs each `accept()` that finds no free descriptor, with its traceback, up to a hundred
    times a loop turn (a 26 MB log in 20 s): one line per interval, with how many were held back."""

    def __init__(self, interval: float = 10.0) -> None:
        super().__init__()
        self.interval, self.last, self.held = interval, -interval, 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("socket.accept() out of system resource"):
            return True
        now = time.monotonic()
        if now - self.last < self.interval:
            self.held += 1
            return False
        record.msg, record.args, record.exc_info = (
            "accept() found no free file descriptor (%d more since the last report): raise ulimit -n or "
            "lower --max-connections",
            (self.held,),
            None,
        )
        self.last, self.held = now, 0
        return True


def run(app: web.Application, settings: Settings, *, shutdown_timeout: float = 60.0) -> None:
    """Serve until SIGINT/SIGTERM (what `npu-worker serve` runs); then stop accepting, let the app
    drain (its on_shutdown), and close what is still open after `shutdown_timeout`; SIGINT, SIGTERM and
    SIGHUP are ignored from then on (`stops_ignored_after`: the same stop)."""
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    heap.keep_freed_memory()  # each request's audio buffers reuse memory instead of faulting in pages
    fit_open_file_limit(settings.max_connections)
    logging.getLogger("asyncio").addFilter(AcceptFailureThrottle())

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        first: list[tuple[signal.Signals, float]] = []  # the signal that began the stop, and when

        def on_signal(sig: signal.Signals) -> None:
            if stop.is_set() and sig == signal.SIGHUP:  # a closed terminal often sends two: no hurry
                return
            if stop.is_set() and sig == signal.SIGTERM == first[0][0]:
                if time.monotonic() - first[0][1] < REPEATED_SIGTERM_SECONDS:  # `timeout`'s second copy
                    log.info("SIGTERM again at once: the same stop (timeout(1) sends it twice); draining")
                    return
            if stop.is_set():  # a second SIGINT or SIGTERM: the operator will not wait for the drain
                log.warning("%s again: exiting now, without waiting for the drain", sig.name)
                os._exit(1)  # jobs survive it as they survive kill -9: their logs resume at the next start
            log.info("%s: shutting down", sig.name)
            first.append((sig, time.monotonic()))
            stop.set()

        # SIGHUP too (a closed terminal, a supervisor's stop): drained like SIGTERM, not killed outright;
        # unless whoever started us ignored it (`nohup`): that asked for it to stay ignored.
        # Heard before the socket is bound and the app starts: a signal meanwhile is a drain once it has
        # (a SIGINT was a KeyboardInterrupt traceback, a SIGTERM ended the worker at once)
        heard = (signal.SIGINT, signal.SIGTERM, *hup_unless_ignored())
        for sig in heard:
            loop.add_signal_handler(sig, on_signal, sig)
        listener = await listen(
            app, settings, host=settings.host, port=settings.port, shutdown_timeout=shutdown_timeout
        )
        try:
            await stop.wait()
        finally:
            await listener.close()
            stops_ignored_after(loop, heard)

    asyncio.run(main())
