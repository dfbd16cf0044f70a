"""A gateway between the pipeline client and the worker that gives up on the worker's answer (a buffering
proxy's timeout: nginx's `504 Gateway Time-out`, or its `502` for a connection lost) after passing the
batch on: the worker has queued it, so the caller is told so, and that polling goes through such a proxy,
where the client raised a bare `HTTP 504: <html>…` and `batch` run again made the lecture twice."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from npu_worker import client
from npu_worker.cli_client import main
from npu_worker.client import aio
from npu_worker.client.errors import AnswerCut
from tests.rogue_worker import RogueWorker, reply
from tests.timing import seconds
from tests.tone_engine import ToneEngine

PAGE = b"<html><head><title>504 Gateway Time-out</title></head><body><center>nginx</center></body></html>"
STATUS_LINES = {504: b"HTTP/1.1 504 Gateway Time-out", 502: b"HTTP/1.1 502 Bad Gateway"}


class GivingUpGateway:
    """Passes each request on to the worker and, once the worker's answer has begun (so the batch is
    queued), answers `status` itself with an HTML page and closes, as a proxy whose timeout ran out
    while it held the answer does."""

    def __init__(self, target_port: int, status: int = 504) -> None:
        self.target_port, self.status = target_port, status
        self.port = 0
        self._server: asyncio.AbstractServer | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> GivingUpGateway:
        self._server = await asyncio.start_server(self._handled, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Its connections end with it: a handler left waiting on the worker was destroyed pending when
        the test's loop closed, its two sockets reported unclosed by a later collection."""
        assert self._server is not None
        self._server.close()
        for handler in self._handlers:
            handler.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    async def _handled(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._handlers.add(asyncio.current_task())  # type: ignore[arg-type]
        try:
            await self._handle(reader, writer)
        finally:
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        passing = asyncio.create_task(self._pass_on(reader, up_writer))
        try:
            await up_reader.read(1)  # the worker's answer began: the batch is queued
            head = STATUS_LINES[self.status] + b"\r\nContent-Type: text/html\r\nConnection: close\r\n"
            writer.write(head + b"Content-Length: %d\r\n\r\n" % len(PAGE) + PAGE)
            with contextlib.suppress(ConnectionError):
                await writer.drain()
        finally:
            up_writer.close()
            passing.cancel()

    @staticmethod
    async def _pass_on(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()


async def submit(call: str, base: str, use_async: bool, tmp_path: Path) -> None:
    sections = [
        {"idx": i, "text": f"section {i}", "output_path": str(tmp_path / f"s{i}.wav")} for i in range(2)
    ]
    options: dict[str, Any] = {"base": base, "reattach_attempts": 0, "reattach_delay": 0.01}
    async with asyncio.timeout(seconds(30)):
        if use_async:
            await getattr(aio, call)(sections, **options)
        else:
            await asyncio.to_thread(getattr(client, call), sections, **options)


async def jobs_of(port: int) -> list[dict[str, Any]]:
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/jobs") as answer:
        jobs: list[dict[str, Any]] = (await answer.json())["jobs"]
        return jobs


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("status", [504, 502])
@pytest.mark.parametrize("call", ["synth_batch_streaming", "synth_batch_polling"])
async def test_a_gateways_504_or_502_after_the_batch_went_on_says_it_may_be_queued(
    worker, tmp_path, call, status, use_async
):
    server = await worker()
    async with GivingUpGateway(server.port, status) as gateway:
        with pytest.raises(client.TransportError) as raised:
            await submit(call, f"http://127.0.0.1:{gateway.port}", use_async, tmp_path)
    said = str(raised.value)
    assert f"HTTP {status} from a gateway between the client and the worker" in said, said
    assert "it may have queued the batch: GET /jobs lists it (sent again, it would run twice)" in said, said
    assert len(await jobs_of(server.port)) == 1  # it had: the words are true
    if call == "synth_batch_streaming":
        assert "lets polling through (batch --poll, synth_batch_polling)" in said, said


async def test_the_workers_own_refusal_is_still_its_own(worker, tmp_path):
    """Only a gateway's 502 and 504 are read so: the worker's refusal keeps its status and words."""
    server = await worker(max_sections=1)
    with pytest.raises(client.WorkerHTTPError) as raised:
        await submit("synth_batch_streaming", f"http://127.0.0.1:{server.port}", False, tmp_path)
    assert raised.value.status == 400 and raised.value.error_name == "TooManySections"
    assert "may have queued" not in str(raised.value)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("status", [504, 502])
async def test_a_gateways_504_or_502_to_a_synth_is_an_answer_cut(worker, tmp_path, status, use_async):
    """A `synth` the gateway passed on, then gave up on, ran: the answer never came, it is not the
    worker's refusal (it was `WorkerHTTPError`, `HTTP 504: <html>…`)."""
    server = await worker()
    out = tmp_path / "a.wav"
    async with GivingUpGateway(server.port, status) as gateway, asyncio.timeout(seconds(30)):
        base = f"http://127.0.0.1:{gateway.port}"
        with pytest.raises(AnswerCut) as raised:
            if use_async:
                await aio.synth("hi", out, base=base)
            else:
                await asyncio.to_thread(client.synth, "hi", out, base=base)
    said = str(raised.value)
    assert f"POST /synth: HTTP {status} from a gateway between the client and the worker" in said, said
    assert "<html>" not in said and "may have queued" not in said, said


async def test_synth_behind_a_gateways_504_says_the_wav_may_or_may_not_be_written(worker, tmp_path, capsys):
    """`npu-worker synth` said `HTTP 504: <html>…`, as if the worker had refused the text."""
    server = await worker()
    out = tmp_path / "a.wav"
    async with GivingUpGateway(server.port, 504) as gateway, asyncio.timeout(seconds(30)):
        base = f"http://127.0.0.1:{gateway.port}"
        code = await asyncio.to_thread(main, ["synth", "가나다.", "-o", str(out), "--base", base])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "HTTP 504 from a gateway between the client and the worker" in err, err
    assert f"the answer was cut off, so {out} may or may not have been written" in err, err


class HoldingProxy(GivingUpGateway):
    """Passes each request on and holds the worker's whole answer until it has ended (a proxy that
    buffers): a stream's lines, heartbeats included, reach the client only after `done`."""

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        passing = asyncio.create_task(self._pass_on(reader, up_writer))
        try:
            with contextlib.suppress(ConnectionError):
                writer.write(await up_reader.read())
                await writer.drain()
        finally:
            up_writer.close()
            passing.cancel()


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_stream_a_proxy_holds_past_the_read_timeout_points_to_polling(worker, tmp_path, use_async):
    """Nothing of the stream came within `read_timeout` (a buffering proxy holds it while the engine
    works): the batch may be queued, as it said, and polling goes through such a proxy, which it did
    not say (`batch` run again the same way was cut again, and made the lecture twice)."""
    engine = ToneEngine()
    engine.gate = threading.Event()  # the engine waits: the batch runs past the read timeout
    server = await worker(engine)
    sections = [{"idx": 0, "text": "section 0", "output_path": str(tmp_path / "s0.wav")}]
    options: dict[str, Any] = {"reattach_attempts": 0, "read_timeout": 0.5}
    try:
        async with HoldingProxy(server.port) as proxy, asyncio.timeout(seconds(30)):
            base = f"http://127.0.0.1:{proxy.port}"
            with pytest.raises(client.TransportError) as raised:
                if use_async:
                    await aio.synth_batch_streaming(sections, base=base, **options)
                else:
                    await asyncio.to_thread(client.synth_batch_streaming, sections, base=base, **options)
    finally:
        engine.gate.set()
    said = str(raised.value)
    assert "it may have queued the batch" in said and "lets polling through (batch --poll" in said, said
    assert len(await jobs_of(server.port)) == 1


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("call", ["synth", "synth_batch_polling"])
async def test_a_gateways_504_after_loading_waits_keeps_the_tries_note(tmp_path, call, use_async):
    """A worker that said `Loading` (waited through), then a gateway's 504: the error said the 504 alone,
    the tries before it dropped (a plain refusal after them says 'given up after N tries')."""
    loading = reply(503, b'{"error": "Loading: the engine is loading"}', headers="Retry-After: 0\r\n")
    gateway = b"%s\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s" % (
        STATUS_LINES[504],
        len(PAGE),
        PAGE,
    )
    answers = [loading, gateway]

    def script(method: str, path: str) -> bytes:
        return answers.pop(0) if answers else gateway

    async with RogueWorker(script) as rogue, asyncio.timeout(seconds(30)):
        with pytest.raises(AnswerCut) as raised:
            if call == "synth":
                options: dict[str, Any] = {"base": rogue.base}
                args: tuple[Any, ...] = ("hi", tmp_path / "a.wav")
            else:
                options = {"base": rogue.base, "reattach_delay": 0.01}
                args = ([{"idx": 0, "text": "hi", "output_path": str(tmp_path / "s0.wav")}],)
            if use_async:
                await getattr(aio, call)(*args, **options)
            else:
                await asyncio.to_thread(getattr(client, call), *args, **options)
    said = str(raised.value)
    path = "/synth" if call == "synth" else "/synth_batch?async=1"
    assert said.startswith(f"POST {path}: given up after 2 tries in "), said
    assert "; the last answer: HTTP 504 from a gateway between the client and the worker" in said, said
    assert len(rogue.requests) == 2
