"""NDJSON streaming: one JSON object per line, written and flushed the moment it exists.

A heartbeat line goes out whenever nothing else was written for the heartbeat interval, so idle
timeouts of proxies and RPC layers never fire while a long section runs. Once the stream has
started, a section's failure is an `error` line of the job's log (the scheduler writes it), never a
half-sent 500; a client that hangs up ends only its stream, not the job.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time

from aiohttp import web

from ..app_keys import NDJSON_STREAMS_KEY, SETTINGS_KEY
from ..jobs.model import AudioChunk, LogEntry
from ..jobs.subscription import Subscription
from ..protocol import Done, Heartbeat, SectionError, ShuttingDown

log = logging.getLogger(__name__)

# At most this many lines a write: a re-attach to a long finished job (a 1 000-section batch's 2 000
# lines) is not joined into one copy of its whole log.
BURST_LINES = 256
# And no more lines once a write holds this many bytes (aiohttp's own bound, past which a write waits for
# the socket to drain): 256 lines with a caller's long `wav_path`s were up to ≈ 1 MiB a write, held whole
# by a reader that does not read (a line at a time held at most 64 KiB and a line).
BURST_BYTES = 64 * 1024

NDJSON_HEADERS = {
    "Content-Type": "application/x-ndjson; charset=utf-8",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}


def ndjson_line(body: bytes) -> bytes:
    """One encoded event (a log entry's bytes are shared with the log file and /ws) as a line."""
    return body + b"\n"


async def open_stream(request: web.Request, status: int = 200) -> web.StreamResponse:
    response = web.StreamResponse(status=status, headers=NDJSON_HEADERS)
    await response.prepare(request)
    sock = request.transport.get_extra_info("socket") if request.transport else None
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return response


async def stream_job(request: web.Request, response: web.StreamResponse, subscription: Subscription) -> bool:
    """Write the job's log entries (with `seq`) until `done`, with heartbeats in the gaps, then end
    the response; at shutdown, after the drain, `end_streams` ends it early (re-attach with `after=`).

    False if the client hung up first: normal (it may re-attach with `after=`), so one info line is
    logged, the job goes on, and nothing more is written (the response was sent: no error body).
    """
    open_streams = request.app[NDJSON_STREAMS_KEY]
    open_streams.add(subscription)
    try:
        last_seq = await _pump(response, subscription, request.app[SETTINGS_KEY].heartbeat_interval)
        if last_seq is not None and open_streams.ended:
            await response.write(_shutdown_line(subscription.job.id, last_seq))
    except ConnectionError as exc:
        log.info("NDJSON client of job %s went away: %s", subscription.job.id, exc or type(exc).__name__)
        return False
    finally:
        open_streams.discard(subscription)
    with contextlib.suppress(ConnectionError):  # every line was sent: a client may close on `done`
        await response.write_eof()
    return True


def _shutdown_line(job_id: str, last_seq: int) -> bytes:
    """The last line of a stream the shutdown ends before `done`: a request-level `error` (`idx: null`,
    no `seq`: the stream's end, not the job's) that says where to re-attach. Without it, a line loop
    such as the user's `for line in resp` read the clean end as the whole job: 13 results of 39 and no
    error."""
    error = ShuttingDown(
        f"the worker is shutting down; job {job_id} goes on when it starts again: "
        f"re-attach with GET /jobs/{job_id}/events?after={last_seq}"
    )
    return ndjson_line(SectionError(idx=None, error=str(error)).encode())


class OpenStreams:
    """The NDJSON streams (and `stream: false` waits) open now, ended together at shutdown.

    Once ended, one that opens later ends at once: a job whose admission (run off the loop) was still
    under way as the drain ended the others would otherwise be waited on until aiohttp cut it."""

    def __init__(self) -> None:
        self._open: dict[Subscription, bool] = {}  # each one open: whether it is a stream (else a wait)
        self.ended = False

    def add(self, subscription: Subscription, *, stream: bool = True) -> None:
        """`stream=False`: a `stream: false` caller's wait, ended alike but not counted as a stream."""
        self._open[subscription] = stream
        if self.ended:
            subscription.finish()

    def discard(self, subscription: Subscription) -> None:
        self._open.pop(subscription, None)

    def __len__(self) -> int:
        return len(self._open)

    def end(self) -> tuple[int, int]:
        """End every stream and wait once it has sent what is queued for it; how many of each were open
        (the shutdown's log line said `stream: false` waits were streams)."""
        self.ended = True
        for subscription in list(self._open):
            subscription.finish()
        streams = sum(self._open.values())
        return streams, len(self._open) - streams


def end_streams(app: web.Application) -> tuple[int, int]:
    """Shutdown, after the drain: end every open stream once it has sent what is queued for it (no
    more lines will come before the restart), so the connections close at once instead of being
    cut when aiohttp's shutdown timeout runs out. Returns how many streams and `stream: false` waits
    were open."""
    return app[NDJSON_STREAMS_KEY].end()


async def _pump(
    response: web.StreamResponse, subscription: Subscription, heartbeat_interval: float
) -> int | None:
    """Write the log's entries as they come, those a wake-up brought in one write (a batch section's `ok`
    and the next one's `synth` come together: each was a `wait_for` task's turn of the loop and a `send`
    of its own); the last `seq` written when the stream ended before `done` (the subscription finished
    by the shutdown), None once `done` was written."""
    started = time.monotonic()
    iterator = subscription.__aiter__()
    last_seq: int | None = subscription.after
    try:
        while True:
            try:
                item: LogEntry | AudioChunk | None = await asyncio.wait_for(
                    iterator.__anext__(), timeout=heartbeat_interval
                )
            except TimeoutError:
                elapsed = round(time.monotonic() - started, 1)
                await response.write(ndjson_line(Heartbeat(elapsed).encode()))
                continue
            except StopAsyncIteration:
                break
            lines: list[bytes] = []
            size = 0
            while item is not None:  # (then what else this wake-up brought, taken without waiting)
                if isinstance(item, LogEntry):
                    line = item.line
                    lines += (line, b"\n")
                    size += len(line) + 1
                    last_seq = None if isinstance(item.event, Done) else item.seq
                item = subscription.ready() if len(lines) < 2 * BURST_LINES and size < BURST_BYTES else None
            if lines:
                await response.write(b"".join(lines))
    finally:
        subscription.close()
    return last_seq
