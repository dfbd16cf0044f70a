"""A bug of ours (an unexpected exception), as each surface's caller sees it: `InternalError` with an
incident id, never the exception's class or words (nor its traceback), which the log keeps under that id;
an answer whose head was sent ends in its own words, never with a second answer inside its body."""

from __future__ import annotations

import asyncio
import json
import logging
import re

import aiohttp
import pytest
from aiohttp import web

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.client import aio
from npu_worker.openai_compat import speech, speech_stream
from tests.timing import seconds

SECRET = "secret_key_name"  # the bug's own words: never the caller's to read


def bug(*args: object, **kwargs: object) -> None:
    raise KeyError(SECRET)


def incident_of(said: str) -> str:
    """The incident id an answer names (it names no class nor words of the bug)."""
    assert said.startswith("InternalError: ") or "InternalError" not in said, said
    assert SECRET not in said and "KeyError" not in said, said
    found = re.search(r"incident ([0-9a-f]{12})", said)
    assert found, said
    return found.group(1)


def logged_with_traceback(caplog: pytest.LogCaptureFixture, incident: str) -> bool:
    return any(
        incident in record.getMessage() and record.exc_info is not None and record.levelno == logging.ERROR
        for record in caplog.records
    )


async def test_v1_json_answer(worker, tmp_path, caplog):
    client = await worker()
    client.app[SCHEDULER_KEY].submit = bug
    response = await client.post("/synth", json={"text": "hi", "output_path": str(tmp_path / "a.wav")})
    assert response.status == 500
    body = await response.json()
    assert set(body) == {"status", "error", "traceback", "fallback"}  # the fixed fields, all of them
    assert body["status"] == "fail" and body["traceback"] is None and body["fallback"] is None
    incident = incident_of(body["error"])
    assert body["error"].startswith("InternalError: ")
    assert logged_with_traceback(caplog, incident)


async def test_openai_answer(worker, caplog):
    client = await worker()
    client.app[SCHEDULER_KEY].submit = bug
    response = await client.post("/v1/audio/speech", json={"input": "hi", "voice": "default"})
    assert response.status == 500
    error = (await response.json())["error"]
    assert error["code"] == "InternalError" and error["type"] == "server_error"
    assert logged_with_traceback(caplog, incident_of(error["message"]))


async def test_ws_error_event(worker, caplog):
    client = await worker()
    client.app[SCHEDULER_KEY].submit = bug
    ws = await client.ws_connect("/ws")
    await ws.send_str(json.dumps({"type": "synth", "text": "hi"}))
    event = json.loads((await ws.receive(timeout=seconds(10))).data)
    assert event["event"] == "error" and event["idx"] is None and event["error"].startswith("InternalError: ")
    assert logged_with_traceback(caplog, incident_of(event["error"]))
    assert not ws.closed  # the connection survives a request that could not start
    await ws.close()


async def test_a_started_ndjson_stream_ends_with_an_error_line_not_a_second_answer(worker, caplog):
    """The stream's head was sent: the 500 went out as its next chunk (`HTTP/1.1 500 …`), and the
    caller's HTTP parser failed on it ("Invalid character in chunk size"). Now its error line, then the
    connection closes without the body's end: a stream cut short, re-attached with `after=`."""
    client = await worker()
    client.app[SCHEDULER_KEY].subscribe = bug  # after the stream's head
    response = await client.post("/synth_batch", json={"sections": [{"idx": 0, "text": "hi"}]})
    assert response.status == 200
    last = await last_line_of_a_cut_stream(response)
    assert last["event"] == "error" and last["idx"] is None and last["status"] == "fail"
    assert last["error"].startswith("InternalError: ")
    assert logged_with_traceback(caplog, incident_of(last["error"]))


async def test_the_python_client_re_attaches_after_a_streams_failure(worker, tmp_path, monkeypatch):
    """The job goes on when its stream fails: the client re-attaches after the last seq and gets all."""
    client = await worker()
    writes = {"of_lines": 0}
    real_write = web.StreamResponse.write

    async def fails_once(response: web.StreamResponse, data: bytes) -> None:
        """The stream's second event line fails, in whatever write it comes (the first holds `start`, the
        job's id for the re-attach): the pump writes a wake-up's lines at once (`BURST_LINES`), and a short
        job's lines can all come in one wake-up (a CI run had the whole job in one write, nothing failed).
        Each line is written on its own here, as the burst's bytes would reach the caller."""
        if not data:
            return await real_write(response, data)
        for line in bytes(data).splitlines(keepends=True):
            if b'"event"' in line:
                writes["of_lines"] += 1
                if writes["of_lines"] == 2:
                    raise KeyError(SECRET)
            await real_write(response, line)

    monkeypatch.setattr(web.StreamResponse, "write", fails_once)
    sections = [
        {"idx": i, "text": f"slide {i}", "output_path": str(tmp_path / f"s{i}.wav")} for i in range(2)
    ]
    base = f"http://{client.host}:{client.port}"
    options = {"base": base, "reattach_attempts": 2, "reattach_delay": 0.01}
    async with asyncio.timeout(seconds(30)):
        result = await aio.synth_batch_streaming(sections, **options)
    assert result["wav_paths"] == [str(tmp_path / "s0.wav"), str(tmp_path / "s1.wav")]
    assert writes["of_lines"] > 2  # the re-attached stream wrote on


async def test_a_started_sse_stream_ends_with_an_error_event(worker, caplog, monkeypatch):
    client = await worker()
    monkeypatch.setattr(speech_stream, "speech_usage", bug)  # for the last event, after the deltas were sent
    response = await client.post(
        "/v1/audio/speech",
        json={"input": "hi there", "voice": "default", "stream_format": "sse", "response_format": "pcm"},
    )
    assert response.status == 200
    async with asyncio.timeout(seconds(10)):  # (the second answer inside it left the caller waiting)
        raw = await response.read()
    assert b"HTTP/1.1" not in raw
    events = [json.loads(line.removeprefix(b"data: ")) for line in raw.split(b"\n\n") if line.strip()]
    assert events[-1]["type"] == "error" and events[-1]["error"]["code"] == "InternalError"
    assert logged_with_traceback(caplog, incident_of(events[-1]["error"]["message"]))


async def test_a_started_audio_body_is_cut_not_followed_by_a_second_answer(worker, caplog, monkeypatch):
    """Audio has no words for a failure: the body is cut short (never a whole file), nothing after it."""
    client = await worker()
    monkeypatch.setattr(speech.StreamEncoder, "finish_async", bug)  # after the audio so far was sent
    body = {"input": "hi there", "voice": "default", "response_format": "pcm"}
    response = await client.post("/v1/audio/speech", json=body)
    assert response.status == 200
    received = b""
    with pytest.raises(aiohttp.ClientPayloadError):
        async with asyncio.timeout(seconds(10)):
            while chunk := await response.content.readany():
                received += chunk
    assert received and b"HTTP/1.1" not in received
    assert any("internal error on POST /v1/audio/speech" in r.getMessage() for r in caplog.records)


async def test_the_speech_stream_socket_says_its_error_before_1011(worker, caplog):
    """It closed with 1011 and no word: the caller had no error message, nor an id to report."""
    client = await worker()
    client.app[SCHEDULER_KEY].submit = bug
    ws = await client.ws_connect("/v1/audio/speech/stream")
    await ws.send_str(json.dumps({"type": "input.text", "text": "hi. "}))
    await ws.send_str(json.dumps({"type": "input.done"}))
    message = await ws.receive(timeout=seconds(10))
    assert message.type == aiohttp.WSMsgType.TEXT, message
    error = json.loads(message.data)
    assert error["type"] == "error" and error["code"] == "InternalError", error
    assert logged_with_traceback(caplog, incident_of(error["message"]))
    closing = await ws.receive(timeout=seconds(10))
    assert closing.type == aiohttp.WSMsgType.CLOSE and closing.data == 1011


def http_refusal(*args: object, **kwargs: object) -> None:
    raise web.HTTPBadRequest(text="a refusal raised after the head")


async def test_an_aiohttp_refusal_raised_after_a_stream_began_ends_it_in_its_own_words(worker):
    """An aiohttp `HTTPException` raised once an answer was under way was answered the old way: a second
    answer (`HTTP/1.1 400 …`) written inside the first one's body, which the caller's parser failed on
    (NDJSON) or waited past (SSE). It follows the begun answer's path now, as any other failure does."""
    client = await worker()
    client.app[SCHEDULER_KEY].subscribe = http_refusal  # after the NDJSON stream's head
    response = await client.post("/synth_batch", json={"sections": [{"idx": 0, "text": "hi"}]})
    assert response.status == 200
    last = await last_line_of_a_cut_stream(response)
    assert last["event"] == "error" and last["idx"] is None
    assert last["error"] == "BadRequest: a refusal raised after the head"


async def test_an_aiohttp_refusal_raised_after_an_sse_stream_began_ends_it_with_an_error_event(
    worker, monkeypatch
):
    client = await worker()
    monkeypatch.setattr(speech_stream, "speech_usage", http_refusal)  # for the SSE's last event
    body = {"input": "hi there", "voice": "default", "stream_format": "sse", "response_format": "pcm"}
    response = await client.post("/v1/audio/speech", json=body)
    assert response.status == 200
    async with asyncio.timeout(seconds(10)):
        raw = await response.read()
    assert b"HTTP/1.1" not in raw
    events = [json.loads(line.removeprefix(b"data: ")) for line in raw.split(b"\n\n") if line.strip()]
    assert events[-1]["type"] == "error" and events[-1]["error"]["code"] == "BadRequest", events[-1]


async def last_line_of_a_cut_stream(response: aiohttp.ClientResponse) -> dict:
    """The last line of an NDJSON stream that must end cut short (never whole without `done`), none of
    its lines a second answer's head."""
    lines = []
    with pytest.raises(aiohttp.ClientPayloadError):
        async with asyncio.timeout(seconds(10)):
            while line := await response.content.readline():
                lines.append(line)
    assert lines and not any(b"HTTP/1.1" in line for line in lines), lines
    return json.loads(lines[-1])
