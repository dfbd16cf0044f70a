"""Hostile bytes at the edge: every client mistake is a 4xx with the error body (never a 500, never a
traceback), every refusal aiohttp itself makes gets the same body, and /ws answers with an error event."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import logging
import time
import zlib
from pathlib import Path

import pytest
from aiohttp import WSMsgType

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_http_bad_input import assert_error_body, written_wavs
from tests.timing import seconds

DEEP = b"[" * 100_000
BIG = b"1" * 5000


def _synth(out: str, extra: bytes) -> bytes:
    return b'{"text": "hi", "output_path": "%s"%s}' % (out.encode(), extra)


HOSTILE_SYNTH_BODIES = {
    "deep-array": lambda out: DEEP,
    "deep-object": lambda out: b'{"a":' * 5000 + b"1" + b"}" * 5000,
    "big-seed": lambda out: _synth(out, b', "seed": ' + BIG),
    "big-speed": lambda out: _synth(out, b', "speed_factor": ' + BIG),
    "surrogate-text": lambda out: b'{"text": "\\ud800", "output_path": "%s"}' % out.encode(),
    "surrogate-lang": lambda out: _synth(out, b', "lang": "k\\udfff"'),
    "surrogate-output": lambda out: _synth(out[:-4] + "\\ud800", b""),
    "surrogate-ref": lambda out: _synth(out, b', "ref_wav": "/tmp/\\udc80.wav"'),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_SYNTH_BODIES))
async def test_hostile_json_on_synth_is_400_without_traceback(worker, tmp_path, case):
    client = await worker()
    body = HOSTILE_SYNTH_BODIES[case](str(tmp_path / "out.wav"))
    response = await client.post("/synth", data=body, headers={"Content-Type": "application/json"})
    assert response.status == 400
    answer = await response.json()
    assert_error_body(answer, "BadRequest")
    assert answer["traceback"] is None
    assert written_wavs(tmp_path) == []


@pytest.mark.parametrize(
    "sections",
    [
        b'[{"idx": 0, "text": "\\ud800"}]',
        b'[{"idx": %s, "text": "hi"}]' % BIG,
        b'[{"idx": 0, "text": "hi", "output_path": "\\udc80"}]',
    ],
)
async def test_hostile_json_on_async_batch_is_400(worker, tmp_path, sections):
    client = await worker()
    response = await client.post("/synth_batch?async=1", data=b'{"sections": %s}' % sections)
    assert response.status == 400
    assert_error_body(await response.json(), "BadRequest")
    assert written_wavs(tmp_path) == []


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_body_not_matching_its_content_encoding_is_400(worker, tmp_path, encoding):
    client = await worker()
    response = await client.post(
        "/synth", data=b'{"text": "not compressed"}', headers={"Content-Encoding": encoding}
    )
    assert response.status == 400
    assert_error_body(await response.json(), "BadRequest")
    # The worker still answers afterwards (the broken connection was closed, not the server).
    assert (await client.get("/health")).status == 200


@pytest.mark.parametrize(("path", "body"), [("/synth", b"SYNTH"), ("/v1/audio/speech", b"SPEECH")])
async def test_a_content_encoding_the_worker_does_not_decode_is_400_not_read_as_plain(
    worker, tmp_path, path, body
):
    """aiohttp passes a coding it does not know through undecoded: the JSON must not be read as if plain."""
    client = await worker()
    bodies = {
        b"SYNTH": {"text": "hi", "output_path": str(tmp_path / "x.wav")},
        b"SPEECH": {"model": "tts-1", "input": "hi", "voice": "default"},
    }
    response = await client.post(path, json=bodies[body], headers={"Content-Encoding": "xz"})
    assert response.status == 400
    answer = await response.json()
    message = answer["error"] if path == "/synth" else answer["error"]["message"]
    assert "Content-Encoding 'xz' is not supported" in message
    assert written_wavs(tmp_path) == []


async def test_a_body_too_large_once_decompressed_is_not_decompressed_on(worker):
    """A 200 KB gzip body that inflates to 200 MB: refused at the limit, and the rest is not read.
    aiohttp went on reading it (to reuse the connection), inflating it on the event loop: /health
    waited 1.4 s for each such body."""
    client = await worker(max_body_bytes=1024 * 1024)
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip
    zeros = bytes(1024 * 1024)
    bomb = b"".join(
        [packer.compress(b'{"a": "'), *(packer.compress(zeros) for _ in range(200)), packer.flush()]
    )
    head = b"POST /synth_batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Encoding: gzip\r\n"
    started = time.process_time()  # the server runs in this process
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(head + b"Content-Length: %d\r\n\r\n" % len(bomb) + bomb)
    answer = await asyncio.wait_for(reader.readuntil(b"}"), seconds(20))
    with contextlib.suppress(ConnectionError):  # closed with the rest unread: a reset, as it may
        await asyncio.wait_for(reader.read(), seconds(20))
    writer.close()
    assert answer.startswith(b"HTTP/1.1 413 ") and b"BodyTooLarge: " in answer
    spent = time.process_time() - started
    # The unit, measured in the same run: inflating the whole bomb (what aiohttp went on doing).
    started = time.process_time()
    zlib.decompress(bomb, 31)
    assert spent < (time.process_time() - started) / 2


@pytest.mark.parametrize("compress", [gzip.compress, zlib.compress])
async def test_a_correctly_compressed_body_still_works(worker, tmp_path, compress):
    client = await worker()
    out = tmp_path / "c.wav"
    body = compress(json.dumps({"text": "hi", "output_path": str(out)}).encode())
    encoding = "gzip" if compress is gzip.compress else "deflate"
    response = await client.post("/synth", data=body, headers={"Content-Encoding": encoding})
    assert (await response.json())["status"] == "ok"
    assert out.is_file()


UPGRADE = {"Upgrade": "websocket", "Connection": "Upgrade"}


@pytest.mark.parametrize(
    ("headers", "said"),
    [
        ({}, "the Upgrade header does not say websocket"),
        ({"Upgrade": "websocket"}, "the Connection header does not say Upgrade"),
        (UPGRADE, "the Sec-WebSocket-Version header (13) is missing"),  # (aiohttp: "Unsupported version: ")
        (
            {**UPGRADE, "Sec-WebSocket-Version": "13"},
            "the Sec-WebSocket-Key header is missing",
        ),  # ("Handshake error: None")
        ({**UPGRADE, "Sec-WebSocket-Version": "99"}, "Sec-WebSocket-Version '99' is not supported"),
        (
            {**UPGRADE, "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "short"},
            "Sec-WebSocket-Key 'short' is not 16 bytes in base64",
        ),
    ],
)
async def test_failed_ws_handshakes_get_the_json_error_body(worker, headers, said):
    client = await worker()
    response = await client.get("/ws", headers=headers)
    assert response.status == 400
    assert response.content_type == "application/json"
    body = await response.json()
    assert_error_body(body, "BadRequest")
    assert said in body["error"] and body["error"].count("invalid WebSocket handshake") == 1, body["error"]


WS_KEY = {"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}


@pytest.mark.parametrize("path", ["/ws", "/v1/audio/speech/stream"])
@pytest.mark.parametrize("version", [None, "8", "7", "99"])
async def test_a_refused_ws_version_names_the_one_spoken(worker, path, version):
    """RFC 6455 §4.2.2: a version the server does not speak is refused with `Sec-WebSocket-Version`
    naming the one it does (aiohttp's 400 had none, and it took the drafts' 8 and 7)."""
    client = await worker()
    sent = {**UPGRADE, **WS_KEY} | ({} if version is None else {"Sec-WebSocket-Version": version})
    response = await client.get(path, headers=sent)
    assert response.status == 400
    assert response.headers.getall("Sec-WebSocket-Version") == ["13"]
    body = await response.json()
    said = body["error"] if path == "/ws" else body["error"]["message"]
    assert "Sec-WebSocket-Version" in said and "(13" in said, said


@pytest.mark.parametrize("path", ["/ws", "/v1/audio/speech/stream"])
async def test_other_ws_refusals_name_no_version(worker, path):
    client = await worker()
    response = await client.get(path, headers={**UPGRADE, "Sec-WebSocket-Version": "13"})
    assert response.status == 400 and "Sec-WebSocket-Version" not in response.headers


async def test_missing_static_file_is_the_json_404(worker):
    client = await worker()
    response = await client.get("/no-such-file.js")
    assert response.status == 404
    assert response.content_type == "application/json"
    assert_error_body(await response.json(), "BadRequest")


async def test_ws_hostile_messages_are_error_events_not_closes(worker, tmp_path):
    client = await worker()
    ws = await client.ws_connect("/ws")
    messages = [
        DEEP.decode(),
        f'{{"type": "synth", "text": "hi", "seed": {BIG.decode()}}}',
        f'{{"type": "synth", "text": "hi", "output_path": "{tmp_path}/\\ud800.wav"}}',
        f'{{"type": "synth", "text": "hi", "output_path": "{tmp_path}/\\udc80.wav"}}',
        '{"type": "synth_batch", "sections": [{"idx": 0, "text": "\\ud800"}]}',
    ]
    for message in messages:
        await ws.send_str(message)
        reply = await ws.receive(timeout=seconds(10))
        assert reply.type == WSMsgType.TEXT, reply
        event = json.loads(reply.data)
        assert event["event"] == "error" and event["idx"] is None
        assert event["error"].startswith("BadRequest: ")
    assert not ws.closed
    await ws.close()
    assert written_wavs(tmp_path) == []
    assert [p for p in Path(tmp_path).rglob("*") if p.is_file() and "state" not in p.parts] == []


@pytest.mark.parametrize(
    "body",
    [
        b'{"input": "\\ud800", "voice": "default"}',
        b'{"input": "hi", "voice": "default", "language": "\\udc80"}',
        b'{"input": "hi", "voice": "default", "speed": ' + BIG + b"}",
        DEEP,
    ],
)
async def test_hostile_json_on_the_openai_routes_is_400(worker, body):
    client = await worker()
    for path, payload in [("/v1/audio/speech", body), ("/v1/audio/speech/batch", b'{"items": [%s]}' % body)]:
        response = await client.post(path, data=payload, headers={"Content-Type": "application/json"})
        assert response.status == 400, await response.text()
        assert (await response.json())["error"]["code"] == "BadRequest"


async def test_openai_stream_socket_answers_hostile_messages_with_error_messages(worker):
    client = await worker()
    ws = await client.ws_connect("/v1/audio/speech/stream")
    for message in [DEEP.decode(), '{"type": "input.text", "text": "\\ud800"}']:
        await ws.send_str(message)
        reply = await ws.receive(timeout=seconds(10))
        assert reply.type == WSMsgType.TEXT, reply
        assert json.loads(reply.data)["type"] == "error"
    assert not ws.closed
    await ws.close()


def test_surrogate_pairs_are_fine_and_lone_ones_are_named_by_where_they_are():
    from npu_worker.protocol import BadRequest, decode_json

    assert decode_json(b'{"text": "\\ud83d\\ude00"}') == {"text": "\U0001f600"}
    with pytest.raises(BadRequest, match=r"sections\[1\]\.text holds a lone surrogate"):
        decode_json(b'{"sections": [{"text": "a"}, {"text": "\\udfff"}]}')
    with pytest.raises(BadRequest, match="a key holds"):
        decode_json(b'{"\\ud800": 1}')
    deep = b'{"a": ' * 500 + b'"\\ud800"' + b"}" * 500
    with pytest.raises(BadRequest, match="lone surrogate"):
        decode_json(deep)


async def test_an_internal_error_is_logged_with_the_path_as_sent_so_no_line_is_forged(
    worker, caplog, monkeypatch
):
    client = await worker()

    def broken(job_id: str) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(client.app[SCHEDULER_KEY], "find_job", broken)
    caplog.set_level(logging.ERROR, logger="npu_worker")
    # (in the section's index: a job id holding a line break is no job's, a 404 before any lookup)
    response = await client.get("/jobs/x/sections/0%0A2026-12-04%20CRITICAL%20forged/audio")
    assert response.status == 500
    [record] = [r for r in caplog.records if r.getMessage().startswith("internal error on")]
    said = record.getMessage()
    assert said.startswith(
        "internal error on GET /jobs/x/sections/0%0A2026-12-04%20CRITICAL%20forged/audio (incident "
    )
    assert "\n" not in said
