"""The header deadline bounds only the wait for request headers (raw sockets, a slow tone engine).

Python's http.client writes a request's headers and its body in two send() calls, so a body that
arrives in a read of its own is the normal case: it, and the long answer after it, must never be cut
by `--header-timeout`. Each test runs a request for several header timeouts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.test_ws_support import AiohttpWs, run_request
from tests.timing import seconds
from tests.tone_engine import ToneEngine
from tests.worker_process import start_worker_process

HEADER_TIMEOUT = 0.4
PAUSE = 0.2  # between the headers and the body: inside the header timeout, as a loaded client does
LONG_TEXT = "가" * 60  # the slow tone engine takes 1.2 s over it: three header timeouts


def slow_engine() -> ToneEngine:
    return ToneEngine(chunk_seconds=0.1, delay_per_chunk=0.1)  # real time: 0.02 s per character


def request_head(path: str, body: bytes, *extra: str, close: bool = True) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    lines += [f"Content-Length: {len(body)}", *extra]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response (Content-Length, chunked, or until close) from a raw socket."""
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")[:-2]
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in header_lines)}
    status = int(status_line.split(" ")[1])
    if headers.get("transfer-encoding") == "chunked":
        body = bytearray()
        while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
            body += await reader.readexactly(size)
            await reader.readexactly(2)
        await reader.readexactly(2)
        return status, headers, bytes(body)
    if "content-length" in headers:
        return status, headers, await reader.readexactly(int(headers["content-length"]))
    return status, headers, await reader.read()


async def headers_then_body(port: int, head: bytes, body: bytes) -> tuple[int, dict[str, str], bytes, float]:
    """Send the headers, wait PAUSE, send the body; the answer and the seconds it took."""
    started = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head)
        await writer.drain()
        await asyncio.sleep(PAUSE)
        writer.write(body)
        await writer.drain()
        async with asyncio.timeout(seconds(30)):
            status, headers, answer = await read_response(reader)
        return status, headers, answer, time.monotonic() - started
    finally:
        writer.close()


def ndjson(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.splitlines() if line.strip()]


async def test_synth_whose_body_comes_in_its_own_write_is_answered(served, tmp_path):
    listener = await served(slow_engine(), header_timeout=HEADER_TIMEOUT)
    body = json.dumps({"text": LONG_TEXT, "output_path": str(tmp_path / "a.wav")}).encode()
    status, _, answer, took = await headers_then_body(listener.port, request_head("/synth", body), body)
    assert status == 200 and json.loads(answer)["status"] == "ok"
    assert took > 3 * HEADER_TIMEOUT and listener.guard.timed_out == 0


async def test_a_streamed_batch_whose_body_comes_in_its_own_write_reaches_done(served, tmp_path):
    listener = await served(slow_engine(), header_timeout=HEADER_TIMEOUT)
    sections = [{"idx": i, "text": "나" * 30, "output_path": str(tmp_path / f"{i}.wav")} for i in range(3)]
    body = json.dumps({"sections": sections, "stream": True}).encode()
    status, _, answer, took = await headers_then_body(listener.port, request_head("/synth_batch", body), body)
    events = ndjson(answer)
    assert status == 200 and events[-1]["event"] == "done" and events[-1]["ok_count"] == 3
    assert [e["idx"] for e in events if e["event"] == "progress" and e["status"] == "ok"] == [0, 1, 2]
    assert took > 3 * HEADER_TIMEOUT


async def test_a_streamed_openai_speech_outlasts_the_header_timeout(served):
    listener = await served(slow_engine(), header_timeout=HEADER_TIMEOUT)
    body = json.dumps({"input": LONG_TEXT, "response_format": "pcm"}).encode()
    status, _, audio, took = await headers_then_body(
        listener.port, request_head("/v1/audio/speech", body), body
    )
    assert status == 200 and len(audio) == 2 * int(len(LONG_TEXT) * 0.02 * 24000)
    assert took > 3 * HEADER_TIMEOUT


async def test_expect_100_continue_gets_its_answer(served, tmp_path):
    listener = await served(slow_engine(), header_timeout=HEADER_TIMEOUT)
    body = json.dumps({"text": LONG_TEXT, "output_path": str(tmp_path / "c.wav")}).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(request_head("/synth", body, "Expect: 100-continue"))
        async with asyncio.timeout(seconds(10)):
            assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 100 Continue")
        await asyncio.sleep(PAUSE)  # as curl does, after reading the 100
        writer.write(body)
        async with asyncio.timeout(seconds(30)):
            status, _, answer = await read_response(reader)
    finally:
        writer.close()
    assert status == 200 and json.loads(answer)["status"] == "ok"


async def test_a_chunked_body_trickled_within_the_body_timeout_is_read(served, tmp_path):
    listener = await served(slow_engine(), header_timeout=HEADER_TIMEOUT, body_timeout=seconds(10))
    body = json.dumps({"text": "다" * 20, "output_path": str(tmp_path / "t.wav")}).encode()
    head = (
        b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    pieces = [body[i : i + 8] for i in range(0, len(body), 8)]
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    started = time.monotonic()
    try:
        writer.write(head)
        for piece in pieces:  # over three header timeouts in all
            await asyncio.sleep(3 * HEADER_TIMEOUT / len(pieces))
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        async with asyncio.timeout(seconds(30)):
            status, _, answer = await read_response(reader)
    finally:
        writer.close()
    assert time.monotonic() - started > 3 * HEADER_TIMEOUT
    assert status == 200 and json.loads(answer)["status"] == "ok"


async def test_a_body_that_stalls_is_cut_by_the_body_timeout_not_the_header_timeout(served):
    listener = await served(header_timeout=HEADER_TIMEOUT, body_timeout=3 * HEADER_TIMEOUT)
    head = request_head("/synth", b"x" * 100)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    started = time.monotonic()
    try:
        writer.write(head + b'{"text"')
        async with asyncio.timeout(seconds(10)):
            status, headers, answer = await read_response(reader)
            assert await reader.read() == b""  # and the connection is closed
    finally:
        writer.close()
    assert status == 408 and headers.get("connection") == "close"
    assert json.loads(answer)["error"].startswith("RequestTimeout: ")
    assert time.monotonic() - started >= 3 * HEADER_TIMEOUT * 0.9
    assert listener.guard.timed_out == 0


async def test_a_kept_alive_connection_serves_a_second_request_after_a_long_answer(served, tmp_path):
    listener = await served(slow_engine(), header_timeout=HEADER_TIMEOUT)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        for name in ("first", "second"):
            body = json.dumps({"text": LONG_TEXT, "output_path": str(tmp_path / f"{name}.wav")}).encode()
            writer.write(request_head("/synth", body, close=False))
            await asyncio.sleep(PAUSE)
            writer.write(body)
            async with asyncio.timeout(seconds(30)):
                status, headers, answer = await read_response(reader)
            assert status == 200 and json.loads(answer)["status"] == "ok"
            assert headers.get("connection") != "close"
    finally:
        writer.close()
    assert listener.guard.timed_out == 0


async def test_an_idle_kept_alive_connection_is_closed_a_header_timeout_after_its_answer(served):
    listener = await served(header_timeout=HEADER_TIMEOUT)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        async with asyncio.timeout(seconds(10)):
            status, _, _ = await read_response(reader)
            answered = time.monotonic()
            assert status == 200
            assert await reader.read() == b""
    finally:
        writer.close()
    assert time.monotonic() - answered >= HEADER_TIMEOUT * 0.9
    assert listener.guard.timed_out == 1


async def test_headers_trickled_a_byte_at_a_time_are_still_cut(served):
    listener = await served(header_timeout=HEADER_TIMEOUT)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)

    async def trickle() -> None:
        with contextlib.suppress(ConnectionError):
            for byte in b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200:
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(HEADER_TIMEOUT / 8)

    started = time.monotonic()
    trickler = asyncio.create_task(trickle())
    try:
        async with asyncio.timeout(seconds(10)):
            assert await reader.read() == b""  # closed with no answer, though bytes kept coming
    finally:
        trickler.cancel()
        writer.close()
    assert time.monotonic() - started < seconds(3 * HEADER_TIMEOUT)  # cut, though bytes kept coming
    assert listener.guard.timed_out == 1


async def test_a_websocket_session_outlasts_the_header_timeout(served):
    listener = await served(slow_engine(), header_timeout=HEADER_TIMEOUT)
    started = time.monotonic()
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(f"http://127.0.0.1:{listener.port}/ws") as ws:
            sections = [{"idx": i, "text": "라" * 30} for i in range(3)]
            transcript = await run_request(AiohttpWs(ws), {"type": "synth_batch", "sections": sections})
    pcm = sum(len(frame) for frame in transcript.frames())
    assert transcript.done["ok_count"] == 3 and pcm == 3 * 2 * int(30 * 0.02 * 24000)
    assert time.monotonic() - started > 3 * HEADER_TIMEOUT and listener.guard.timed_out == 0


def synth_batch_streaming(base: str, sections: list[dict]) -> dict:
    """The user's own client from the interface document (urllib: headers and body in two writes),
    as written there but for `async`, which it does not use."""
    body = json.dumps({"sections": sections, "stream": True}).encode("utf-8")
    req = urllib.request.Request(
        f"{base}/synth_batch", data=body, headers={"Content-Type": "application/json"}
    )
    results = []
    done = None
    with urllib.request.urlopen(req, timeout=3600) as resp:
        for raw_line in resp:
            line = raw_line.decode("utf-8").strip()
            if not line:
                continue
            event = json.loads(line)
            if event["event"] == "progress" and event.get("status") == "ok":
                results.append(event)
            elif event["event"] == "done":
                done = event
                break
    return {"sections": results, "done": done}


@pytest.mark.allow_blocking
def test_the_pipelines_urllib_client_reaches_done_every_time_under_cpu_load(tmp_path: Path):
    worker = start_worker_process(
        tmp_path / "state", 0, delay=0.05, output_root=tmp_path, extra=["--header-timeout", "0.3"]
    )
    port = worker.port
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)
    ]
    try:
        for run in range(6):
            sections = [
                {"idx": i, "text": "마" * 30, "output_path": str(tmp_path / f"r{run}s{i}.wav")}
                for i in range(2)
            ]
            result = synth_batch_streaming(f"http://127.0.0.1:{port}", sections)
            assert result["done"] is not None and result["done"]["ok_count"] == 2, (run, result)
            assert [event["idx"] for event in result["sections"]] == [0, 1]
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:  # reaped: left unwaited, a later test's GC warned 'still running'
            burner.wait(seconds(10))
        worker.terminate()
        worker.wait(timeout=seconds(10))


async def test_a_voice_upload_that_stalls_is_cut_by_the_body_timeout(served):
    """Once headers are in, the body timeout is the only bound on a body, so the upload has it too."""
    listener = await served(header_timeout=HEADER_TIMEOUT, body_timeout=3 * HEADER_TIMEOUT)
    head = (
        b"POST /v1/audio/voices HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n"
        b"Content-Type: multipart/form-data; boundary=b\r\n\r\n"
    )
    part = b'--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nslow'
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(head + part)
        async with asyncio.timeout(seconds(10)):
            status, _, answer = await read_response(reader)
    finally:
        writer.close()
    assert status == 408 and json.loads(answer)["error"]["code"] == "RequestTimeout"
    assert listener.guard.timed_out == 0
