"""The pipeline client on aiohttp, for callers that already run an event loop (the voice MCP server).

Same calls and results as `npu_worker.client.sync`; `on_progress` may be a plain function or a
coroutine function. Pass `session=` to reuse a connection pool; otherwise each call opens its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
from aiohttp.http_exceptions import LineTooLong

from npu_worker.client.collector import BatchCollector, ProgressCallback, maybe_await
from npu_worker.client.common import (
    ANSWER_TIMEOUT,
    BODY_LIMIT,
    ERROR_BODY_LIMIT,
    HEAD_CUT,
    LINE_LIMIT,
    STOPPED_READING,
    answer_of,
    answer_too_slow,
    auth_headers,
    batch_body,
    check_seconds,
    encode_body,
    error_body_of,
    line_too_slow,
    over_limit,
    parse_line,
    resolve_base,
    retry_after_of,
    synth_body,
)
from npu_worker.client.errors import (
    AnswerCut,
    ClientError,
    NotConnected,
    TransportError,
    WorkerHTTPError,
    WorkerProtocolError,
    unreached,
)
from npu_worker.client.plans import cancel_plan, polling_plan, streaming_plan, synth_plan
from npu_worker.client.retrying import SUBMIT_ATTEMPTS, SUBMIT_DELAY, WAIT_LIMIT
from npu_worker.client.steps import Deliver, Follow, Plan, Sleep

_BROKEN = (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError)


class _Http:
    """`timeout` bounds each wait on the socket; a call the worker answers at once (`at_once`: a
    re-attach, a poll) waits at most `answer_timeout` for its answer to begin."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        base: str | None,
        token: str | None,
        timeout: float,
        answer_timeout: float | None = None,
        timeout_name: str = "timeout",
    ):
        check_seconds(timeout_name, timeout)
        if answer_timeout is not None:
            check_seconds("answer_timeout", answer_timeout)
        self.session = session
        self.base = resolve_base(base)
        self.headers = auth_headers(token)
        self.timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout, sock_read=timeout)
        self.seconds = timeout  # also each whole line of a stream, and each whole body, must come within it
        self.answer_timeout = timeout if answer_timeout is None else min(timeout, answer_timeout)
        self.on_answer: Callable[[], object] | None = None  # `json`'s 2xx answer read whole (`synth`'s)
        self.on_reading: Callable[[Callable[[], None]], object] | None = None  # its head in (`synth`'s)

    async def open(
        self, method: str, path: str, body: Any = None, at_once: bool = False
    ) -> aiohttp.ClientResponse:
        """The response with its status checked; the caller reads and releases it."""
        url = self.base + path
        data, headers = None, self.headers
        if body is not None:  # encoded here: aiohttp's json= would send nan as `NaN`
            data, headers = encode_body(body), {**self.headers, "Content-Type": "application/json"}
        # The head, whole within the timeout (`sock_read` bounds each read only: a trickled head held it)
        seconds = self.answer_timeout if at_once else self.seconds
        try:
            async with asyncio.timeout(seconds) as deadline:
                response = await self.session.request(  # the worker never redirects: a 3xx is its answer
                    method,
                    url,
                    data=data,
                    headers=headers,
                    timeout=self.timeout,
                    allow_redirects=False,
                    raise_for_status=False,  # a caller's session may say True: its refusals are read here
                )
            if response.status >= 300:
                async with response:
                    raw = await self._error_body(method, url, response)
                retry_after = retry_after_of(
                    response.headers.get("Retry-After"), response.headers.get("Date")
                )
                raise WorkerHTTPError(response.status, error_body_of(raw), retry_after)
            return response
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            if deadline.expired():  # (its connection made, as a rule: the request may have been read)
                raise AnswerCut(f"{method} {url}: {answer_too_slow(seconds)}") from exc
            if isinstance(exc, aiohttp.ServerDisconnectedError) and not isinstance(exc.message, str):
                # the status line came, the head's end did not: aiohttp's repr of what it parsed was
                # the message (headers and all); the sync client's words instead
                raise AnswerCut(f"{method} {url}: {HEAD_CUT}") from exc
            error: type[TransportError] = AnswerCut  # connected: the request may have been read
            if isinstance(exc, aiohttp.ClientConnectorError):
                refused = isinstance(exc.os_error, ConnectionRefusedError)
                error = NotConnected if refused else TransportError
                raise error(f"{method} {url}: {unreached(exc.os_error)}") from exc
            raise error(f"{method} {url}: {exc!r}") from exc

    async def _error_body(self, method: str, url: str, response: aiohttp.ClientResponse) -> bytes:
        """At most ERROR_BODY_LIMIT bytes of a refusal's body, whole within the read timeout; what came
        when it was cut short (the status says what happened, as in the sync client)."""
        raw = b""
        try:
            async with asyncio.timeout(self.seconds):
                with contextlib.suppress(aiohttp.ClientPayloadError):
                    while len(raw) < ERROR_BODY_LIMIT and (chunk := await response.content.readany()):
                        raw += chunk
        except TimeoutError:
            raise TransportError(f"{method} {url}: {answer_too_slow(self.seconds)}") from None
        return raw[:ERROR_BODY_LIMIT]

    async def json(
        self, method: str, path: str, body: Any = None, at_once: bool = False
    ) -> tuple[int, dict[str, Any]]:
        response = await self.open(method, path, body, at_once)
        try:
            stopped = self._reading()
        except BaseException:  # the caller's own error, as itself; its answer let go (it was held)
            response.close()
            raise
        try:
            async with response, asyncio.timeout(self.seconds) as deadline:
                raw = await _body_unless(response, stopped)
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            if deadline.expired():
                raise AnswerCut(f"{method} {self.base}{path}: {answer_too_slow(self.seconds)}") from None
            # a cut as the read broke: the stop said, as the sync client says it
            said = STOPPED_READING if stopped is not None and stopped.is_set() else repr(exc)
            raise AnswerCut(f"{method} {self.base}{path}: {said}") from exc
        if raw is None:
            raise AnswerCut(f"{method} {self.base}{path}: {STOPPED_READING}")
        if len(raw) > BODY_LIMIT:
            raise over_limit(method, self.base + path)
        where = f"{method} {self.base}{path}"
        if self.on_answer is not None:
            self.on_answer()
        return response.status, answer_of(raw, response.status, response.headers.get("Content-Type"), where)

    def _reading(self) -> asyncio.Event | None:
        """`on_reading(cut)` for an answer whose head is in (a 2xx: `open` raised for the others), and
        the event `cut` sets, from a signal handler or another thread too; None without `on_reading`."""
        if self.on_reading is None:
            return None
        stopped, loop = asyncio.Event(), asyncio.get_running_loop()

        def cut() -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: no read is left to cut
                loop.call_soon_threadsafe(stopped.set)

        self.on_reading(cut)
        return stopped


async def _whole_body(response: aiohttp.ClientResponse) -> bytes:
    """Up to BODY_LIMIT + 1 bytes of the body (one more than allowed: an answer over it is told)."""
    try:
        return await response.content.readexactly(BODY_LIMIT + 1)
    except asyncio.IncompleteReadError as whole:  # the usual case: the body ended first
        return whole.partial


async def _body_unless(response: aiohttp.ClientResponse, stopped: asyncio.Event | None) -> bytes | None:
    """The body, or None once `stopped` is set before it is whole (a body whole first is kept)."""
    if stopped is None:
        return await _whole_body(response)
    reading = asyncio.ensure_future(_whole_body(response))
    stopping = asyncio.ensure_future(stopped.wait())
    try:
        await asyncio.wait((reading, stopping), return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        reading.cancel()  # (nothing once it is done; else the stop, or the deadline, ended it)
    return reading.result() if reading.done() and not reading.cancelled() else None


@asynccontextmanager
async def _http(
    session: aiohttp.ClientSession | None,
    base: str | None,
    token: str | None,
    timeout: float,
    answer_timeout: float | None = None,
    timeout_name: str = "timeout",
) -> AsyncIterator[_Http]:
    if session is not None:
        yield _Http(session, base, token, timeout, answer_timeout, timeout_name)
        return
    async with aiohttp.ClientSession() as own:
        yield _Http(own, base, token, timeout, answer_timeout, timeout_name)


async def health(
    *,
    base: str | None = None,
    token: str | None = None,
    timeout: float = 10.0,
    session: aiohttp.ClientSession | None = None,
) -> dict[str, Any]:
    """GET /health; see `npu_worker.client.sync.health`."""
    async with _http(session, base, token, timeout) as http_:
        return (await http_.json("GET", "/health"))[1]


async def synth(
    text: str,
    output_path: str | os.PathLike[str],
    *,
    base: str | None = None,
    lang: str = "ko",
    speed_factor: float = 1.0,
    ref_wav: str | None = None,
    token: str | None = None,
    timeout: float = 600.0,
    session: aiohttp.ClientSession | None = None,
    on_progress: ProgressCallback | None = None,
    wait_limit: float = WAIT_LIMIT,
    on_answer: Callable[[], object] | None = None,
    on_reading: Callable[[Callable[[], None]], object] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """POST /synth: one text to one wav; see `npu_worker.client.sync.synth` (it waits as asked, calls
    `on_answer` once the answer is read whole and `on_reading(cut)` once its head is in, `cut()` ending
    the body's read at once, as `AnswerCut`, unless it was whole; both went into the request as fields)."""
    body = synth_body(text, output_path, lang, speed_factor, ref_wav, **extra)
    plan = synth_plan(body, SUBMIT_ATTEMPTS, SUBMIT_DELAY, wait_limit)
    async with _http(session, base, token, timeout) as http_:
        http_.on_answer, http_.on_reading = on_answer, on_reading
        return await _run(plan, http_, BatchCollector(on_progress))


async def cancel_job(
    job_id: str,
    *,
    base: str | None = None,
    token: str | None = None,
    timeout: float = 10.0,
    session: aiohttp.ClientSession | None = None,
    on_progress: ProgressCallback | None = None,
    wait_limit: float = WAIT_LIMIT,
) -> dict[str, Any]:
    """DELETE /jobs/{id}; see `npu_worker.client.sync.cancel_job` (it waits as asked)."""
    plan = cancel_plan(job_id, SUBMIT_DELAY, wait_limit)
    async with _http(session, base, token, timeout) as http_:
        return await _run(plan, http_, BatchCollector(on_progress))


async def _drain(
    response: aiohttp.ClientResponse, collector: BatchCollector, line_timeout: float
) -> BaseException | None:
    """Feed a stream's lines to the collector until `done` or EOF; returns what broke it, if anything
    (a TimeoutError when a line took over `line_timeout` as a whole: `sock_read` bounds each read only)."""
    async with response:
        while collector.done is None:
            try:
                async with asyncio.timeout(line_timeout) as deadline:
                    raw = await response.content.readline()
            except LineTooLong:  # aiohttp's own bound, LINE_LIMIT
                raise WorkerProtocolError(f"the worker sent a line over {LINE_LIMIT} bytes") from None
            except _BROKEN as exc:
                return TimeoutError(line_too_slow(line_timeout)) if deadline.expired() else exc
            if not raw:
                return None
            event = parse_line(raw)
            if event is not None:
                if gap := collector.gap(event):
                    return gap
                await maybe_await(collector.accept(event))
            if stall := collector.stalled():  # each line, heartbeats too: noticed within their interval
                raise stall
    return None


async def _run(plan: Plan, http_: _Http, collector: BatchCollector) -> dict[str, Any]:
    """Perform the core's steps over aiohttp until the plan returns its result; a batch given up on
    once queued raises with what had come so far (`ClientError.partial_result`). A Ctrl-C gets the sync
    client's note naming the job it leaves (`BatchCollector.left_running`): under `asyncio.run` it
    cancels the task, and the `KeyboardInterrupt` raised after carries this `CancelledError` as its
    `__context__`, printed in its traceback (it named no job: the caller could not stop it); a cancel
    of the caller's own (a timeout) leaves the job running too, and says so the same way."""
    try:
        return await _steps(plan, http_, collector)
    except ClientError as exc:
        exc.partial_result = collector.partial()
        raise
    except (asyncio.CancelledError, KeyboardInterrupt) as stop:
        if (left := collector.left_running()) is not None:
            stop.add_note(left)
        raise


async def _steps(plan: Plan, http_: _Http, collector: BatchCollector) -> dict[str, Any]:
    outcome: Any = None
    error: ClientError | None = None
    while True:
        try:
            step = plan.throw(error) if error is not None else plan.send(outcome)
        except StopIteration as stop:
            return stop.value
        outcome, error = None, None
        if isinstance(step, Sleep):
            await asyncio.sleep(step.seconds)
        elif isinstance(step, Deliver):
            await maybe_await(collector.accept(step.event))
        elif isinstance(step, Follow):
            try:
                response = await http_.open(step.method, step.path, step.body, step.at_once)
            except (TransportError, WorkerHTTPError) as exc:
                error = exc
                continue
            outcome = await _drain(response, collector, http_.seconds)
        else:
            try:
                outcome = (await http_.json(step.method, step.path, step.body, step.at_once))[1]
            except (TransportError, WorkerHTTPError) as exc:
                error = exc


async def synth_batch_streaming(
    sections: Iterable[dict[str, Any]],
    on_progress: ProgressCallback | None = None,
    *,
    base: str | None = None,
    lang: str = "ko",
    speed_factor: float = 1.0,
    ref_wav: str | None = None,
    token: str | None = None,
    read_timeout: float = 120.0,
    answer_timeout: float = ANSWER_TIMEOUT,
    reattach_attempts: int = 10,
    reattach_delay: float = 0.5,
    wait_limit: float = WAIT_LIMIT,
    stall_limit: float | None = None,
    report_stream_lost: bool = False,
    session: aiohttp.ClientSession | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """POST /synth_batch (NDJSON) and follow it to `done`, re-attaching if the stream breaks.

    See `npu_worker.client.sync.synth_batch_streaming`; this is the same contract on aiohttp.
    """
    collector = BatchCollector(on_progress, stall_limit=stall_limit, report_stream_lost=report_stream_lost)
    body = batch_body(sections, lang, speed_factor, ref_wav, **extra)
    plan = streaming_plan(collector, body, reattach_attempts, reattach_delay, wait_limit)
    async with _http(session, base, token, read_timeout, answer_timeout, "read_timeout") as http_:
        return await _run(plan, http_, collector)


async def synth_batch_polling(
    sections: Iterable[dict[str, Any]],
    on_progress: ProgressCallback | None = None,
    *,
    base: str | None = None,
    lang: str = "ko",
    speed_factor: float = 1.0,
    ref_wav: str | None = None,
    token: str | None = None,
    poll_interval: float = 1.0,
    timeout: float = 60.0,
    answer_timeout: float = ANSWER_TIMEOUT,
    reattach_attempts: int = 10,
    reattach_delay: float = 0.5,
    wait_limit: float = WAIT_LIMIT,
    stall_limit: float | None = None,
    session: aiohttp.ClientSession | None = None,
    report_stream_lost: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """Polling mode (`?async=1`); see `npu_worker.client.sync.synth_batch_polling`."""
    collector = BatchCollector(on_progress, stall_limit=stall_limit, report_stream_lost=report_stream_lost)
    body = batch_body(sections, lang, speed_factor, ref_wav, **extra)
    plan = polling_plan(collector, body, poll_interval, reattach_attempts, reattach_delay, wait_limit)
    async with _http(session, base, token, timeout, answer_timeout) as http_:
        return await _run(plan, http_, collector)
