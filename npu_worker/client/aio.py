"""The pipeline client on aiohttp, for callers that already run an event loop (the voice MCP server).

Same calls and results as `npu_worker.client.sync`; `on_progress` may be a plain function or a
coroutine function. Pass `session=` to reuse a connection pool; otherwise each call opens its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote

import aiohttp

from npu_worker.client.common import (
    TERMINAL_STATUSES,
    BatchCollector,
    ProgressCallback,
    TransportError,
    WorkerHTTPError,
    auth_headers,
    batch_body,
    done_event,
    error_body_of,
    events_path,
    maybe_await,
    parse_line,
    resolve_base,
    result_events,
    retry_after_of,
    status_event,
    synth_body,
)

RETRYABLE_STATUSES = frozenset({502, 503, 504})
_BROKEN = (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError)


class _Http:
    def __init__(self, session: aiohttp.ClientSession, base: str | None, token: str | None, timeout: float):
        self.session = session
        self.base = resolve_base(base)
        self.headers = auth_headers(token)
        self.timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout, sock_read=timeout)

    async def open(self, method: str, path: str, body: Any = None) -> aiohttp.ClientResponse:
        """The response with its status checked; the caller reads and releases it."""
        url = self.base + path
        try:
            response = await self.session.request(
                method, url, json=body, headers=self.headers, timeout=self.timeout
            )
            if response.status >= 400:
                async with response:
                    raw = await response.read()
                retry_after = retry_after_of(response.headers.get("Retry-After"))
                raise WorkerHTTPError(response.status, error_body_of(raw), retry_after)
            return response
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise TransportError(f"{method} {url}: {exc!r}") from exc

    async def json(self, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
        response = await self.open(method, path, body)
        try:
            async with response:
                return response.status, error_body_of(await response.read())
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise TransportError(f"{method} {self.base}{path}: {exc!r}") from exc


@asynccontextmanager
async def _http(
    session: aiohttp.ClientSession | None, base: str | None, token: str | None, timeout: float
) -> AsyncIterator[_Http]:
    if session is not None:
        yield _Http(session, base, token, timeout)
        return
    async with aiohttp.ClientSession() as own:
        yield _Http(own, base, token, timeout)


async def health(
    *, base: str | None = None, token: str | None = None, session: aiohttp.ClientSession | None = None
) -> dict[str, Any]:
    async with _http(session, base, token, 10.0) as http_:
        return (await http_.json("GET", "/health"))[1]


async def synth(
    text: str,
    output_path: str,
    *,
    base: str | None = None,
    lang: str = "ko",
    speed_factor: float = 1.0,
    ref_wav: str | None = None,
    token: str | None = None,
    timeout: float = 600.0,
    session: aiohttp.ClientSession | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """POST /synth: one text to one wav. A failed synthesis is a 200 body with `status: "fail"`."""
    async with _http(session, base, token, timeout) as http_:
        body = synth_body(text, output_path, lang, speed_factor, ref_wav, **extra)
        return (await http_.json("POST", "/synth", body))[1]


async def _drain(response: aiohttp.ClientResponse, collector: BatchCollector) -> BaseException | None:
    """Feed a stream's lines to the collector until `done` or EOF; returns what broke it, if anything."""
    async with response:
        while collector.done is None:
            try:
                raw = await response.content.readline()
                event = parse_line(raw) if raw else None
            except _BROKEN as exc:
                return exc
            if not raw:
                return None
            if event is not None:
                await maybe_await(collector.accept(event))
    return None


def _backoff(failures: int, delay: float) -> float:
    return 0.0 if failures == 0 else min(delay * 2 ** (failures - 1), 5.0)


async def _reattach(
    http_: _Http, collector: BatchCollector, failures: int, attempts: int, delay: float, problem: Any
) -> tuple[aiohttp.ClientResponse, int]:
    assert collector.job_id is not None
    while failures <= attempts:
        await asyncio.sleep(_backoff(failures, delay))
        try:
            return await http_.open("GET", events_path(collector.job_id, collector.last_seq)), failures
        except WorkerHTTPError as exc:
            if exc.status not in RETRYABLE_STATUSES:
                raise
            problem = exc
        except TransportError as exc:
            problem = exc
        failures += 1
    raise TransportError(
        f"job {collector.job_id}: stream lost after event {collector.last_seq}; "
        f"re-attaching failed {failures} times: {problem}"
    )


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
    reattach_attempts: int = 5,
    reattach_delay: float = 0.5,
    session: aiohttp.ClientSession | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """POST /synth_batch (NDJSON) and follow it to `done`, re-attaching if the stream breaks.

    See `npu_worker.client.sync.synth_batch_streaming`; this is the same contract on aiohttp.
    """
    collector = BatchCollector(on_progress)
    async with _http(session, base, token, read_timeout) as http_:
        body = batch_body(sections, lang, speed_factor, ref_wav, **extra)
        response = await http_.open("POST", "/synth_batch", body)
        failures = 0
        while True:
            before = collector.last_seq
            problem = await _drain(response, collector)
            if collector.done is not None:
                return collector.result()
            if collector.job_id is None:
                raise TransportError(f"the batch stream broke before its start event: {problem or 'EOF'}")
            failures = 0 if collector.last_seq > before else failures + 1
            response, failures = await _reattach(
                http_, collector, failures, reattach_attempts, reattach_delay, problem
            )


async def _poll_json(http_: _Http, path: str, attempts: int, delay: float) -> dict[str, Any]:
    failures = 0
    while True:
        try:
            return (await http_.json("GET", path))[1]
        except (TransportError, WorkerHTTPError) as exc:
            retryable = isinstance(exc, TransportError) or exc.status in RETRYABLE_STATUSES
            failures += 1
            if not retryable or failures > attempts:
                raise
            await asyncio.sleep(_backoff(failures, delay))


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
    reattach_attempts: int = 5,
    reattach_delay: float = 0.5,
    session: aiohttp.ClientSession | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Polling mode (`?async=1`); see `npu_worker.client.sync.synth_batch_polling`."""
    collector = BatchCollector(on_progress)
    async with _http(session, base, token, timeout) as http_:
        body = batch_body(sections, lang, speed_factor, ref_wav, **extra)
        accepted = (await http_.json("POST", "/synth_batch?async=1", body))[1]
        collector.job_id, collector.total = str(accepted["job_id"]), accepted.get("total")
        job = f"/jobs/{quote(collector.job_id, safe='')}"
        seen: tuple[Any, ...] = ()
        while True:
            status = await _poll_json(http_, f"{job}/status", reattach_attempts, reattach_delay)
            key = (status.get("status"), status.get("done"), status.get("current_idx"))
            if key != seen:
                seen = key
                await maybe_await(collector.accept(status_event(status)))
            if status.get("status") in TERMINAL_STATUSES:
                break
            await asyncio.sleep(poll_interval)
        result = await _poll_json(http_, f"{job}/result", reattach_attempts, reattach_delay)
    for event in result_events(result):
        await maybe_await(collector.accept(event))
    await maybe_await(collector.accept(done_event(result, collector.total)))
    return collector.result()
