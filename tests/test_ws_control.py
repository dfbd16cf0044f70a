"""GET /ws control: validation at the edge, Busy/NotRunning, cancel, close, slow readers, access checks."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest
import websockets

from npu_worker.app import build_app
from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.model import LogEntry
from npu_worker.protocol import Done
from npu_worker.ws_server.session import UNREAD_SECONDS
from tests.test_ws_support import (
    STALL_HEARTBEAT_SECONDS,
    ChunkGate,
    Transcript,
    batch,
    connect,
    live_job,
    receive_until_done,
    run_request,
    samples_after_a_stall,
    wait_for_thread_event,
)
from tests.timing import seconds
from tests.tone_engine import ToneEngine


@pytest.mark.parametrize(
    ("message", "error_name"),
    [
        ("this is not json", "BadRequest"),
        ('["a", "list"]', "BadRequest"),
        ('{"type": "sing"}', "UnknownMessage"),
        ('{"text": "no type"}', "UnknownMessage"),
        ('{"type": ["synth"]}', "UnknownMessage"),  # was "TypeError: unhashable type: 'list'"
        ('{"type": "synth"}', "BadRequest"),
        ('{"type": "synth", "text": 5}', "BadRequest"),
        ('{"type": "synth_batch", "sections": []}', "BadRequest"),
        (
            '{"type": "synth_batch", "sections": [{"idx": 0, "text": "a"}, {"idx": 0, "text": "b"}]}',
            "DuplicateIndex",
        ),
        ('{"type": "synth", "text": "a", "speed_factor": "fast"}', "BadRequest"),
        ('{"type": "synth", "text": "a", "audio": "yes"}', "BadRequest"),
        ('{"type": "synth", "text": "a", "output_path": ""}', "BadRequest"),  # was a preview with no file
        ('{"type": "synth", "text": "a", "ref_wav": ""}', "BadRequest"),  # was the default voice
        ('{"type": "synth_batch", "sections": [{"text": "a", "output_path": ""}]}', "BadRequest"),
    ],
)
async def test_bad_message_gets_an_error_event_and_the_connection_survives(worker, message, error_name):
    client = await worker()
    ws = await connect(client)
    await ws.send_text(message)
    error = await ws.receive()
    assert isinstance(error, dict) and error["event"] == "error"
    assert error["error"].startswith(f"{error_name}:") and error["idx"] is None
    transcript = await run_request(ws, {"type": "synth", "text": "그래도 된다."})
    assert transcript.done["ok_count"] == 1
    await ws.close()


async def test_text_too_long_is_a_section_error_not_a_refusal(worker):
    client = await worker(max_text_chars=10)
    ws = await connect(client)
    transcript = await run_request(ws, batch("짧다.", "이 문장은 열 글자보다 훨씬 깁니다."))
    await ws.close()
    [error] = transcript.events("error")
    assert error["idx"] == 1 and error["error"].startswith("TextTooLong:")


@pytest.mark.parametrize("kind", ["aiohttp", "websockets"])
async def test_binary_frame_from_the_client_closes_with_1003(worker, kind):
    client = await worker()
    if kind == "aiohttp":
        ws = await client.ws_connect("/ws")
        await ws.send_bytes(b"\x00\x01")
        message = await ws.receive(timeout=seconds(10))
        assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
        assert ws.close_code == 1003
    else:
        async with websockets.connect(f"ws://{client.host}:{client.port}/ws") as ws:
            await ws.send(b"\x00\x01")
            with pytest.raises(websockets.ConnectionClosed) as closed:
                async with asyncio.timeout(seconds(10)):
                    await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1003


async def test_second_request_while_one_runs_gets_busy_and_the_first_goes_on(worker):
    gate = ChunkGate()
    engine = ToneEngine()
    engine.gate = gate  # type: ignore[assignment]
    client = await worker(engine)
    try:
        ws = await connect(client)
        await ws.send_json(batch("첫 요청."))
        start = await ws.receive()
        assert isinstance(start, dict) and start["event"] == "start"
        await ws.send_json(batch("둘째 요청."))
        transcript = Transcript()
        while not transcript.events("error"):
            transcript.items.append(await ws.receive())
        assert transcript.events("error")[0]["error"].startswith("Busy:")
        gate.open()
        await receive_until_done(ws, transcript)
        assert transcript.done["ok_count"] == 1 and engine.calls == ["첫 요청."]
        await ws.close()
    finally:
        gate.open()


async def test_a_new_request_right_after_done_is_accepted(worker):
    client = await worker()
    ws = await connect(client)
    for n in range(5):
        transcript = await run_request(ws, {"type": "synth", "text": f"연달아 {n}."})
        assert not transcript.events("error") and transcript.done["ok_count"] == 1
    await ws.close()


async def test_cancel_with_nothing_running_gets_not_running(worker):
    client = await worker()
    ws = await connect(client, "websockets")
    await ws.send_json({"type": "cancel"})
    error = await ws.receive()
    assert isinstance(error, dict) and error["error"].startswith("NotRunning:")
    await ws.close()


@pytest.mark.parametrize("kind", ["aiohttp", "websockets"])
async def test_cancel_mid_section_ends_with_cancelled_done_within_one_engine_chunk(worker, kind):
    gate = ChunkGate()
    engine = ToneEngine(chunk_seconds=0.1)
    engine.gate = gate  # type: ignore[assignment]
    client = await worker(engine)
    try:
        ws = await connect(client, kind)
        await ws.send_json(batch("가" * 100, "두 번째 섹션은 시작되지 않는다."))
        gate.allow(3)  # 3 × 2400 samples: frames of 960, 1920 and 3840 go out, 480 wait for more
        received = 0
        while received < 960 + 1920 + 3840:
            item = await ws.receive()
            if isinstance(item, dict) and item["event"] == "start":
                job = live_job(client, item["job_id"])
            received += len(item) // 2 if isinstance(item, bytes) else 0
        await ws.send_json({"type": "cancel"})
        await wait_for_thread_event(job.cancel_requested)
        gate.allow(1)
        transcript = await receive_until_done(ws)
        assert transcript.done["cancelled"] is True and transcript.done["ok_count"] == 0
        assert gate.passed <= 4, "the engine made more than one chunk after the cancel"
        assert transcript.frames() == [], "audio was sent after the cancel"
        [end] = transcript.events("audio_end")
        assert end["samples"] == received
        assert engine.calls == ["가" * 100]
        assert client.app[SCHEDULER_KEY].queue_size() == 0 and job.subscribers == []
        await ws.close()
    finally:
        gate.open()


async def test_closing_the_socket_mid_request_frees_the_scheduler(worker):
    client = await worker(ToneEngine(delay_per_chunk=0.01, chunk_seconds=0.1))
    scheduler = client.app[SCHEDULER_KEY]
    first = await connect(client)
    await first.send_json(batch(*["가" * 500] * 20))  # 20 × 10 s of audio at 10 ms per 100 ms chunk
    while not isinstance(item := await first.receive(), bytes):
        if item["event"] == "start":
            job = live_job(client, item["job_id"])
    await first.close()
    second = await connect(client, "websockets")
    transcript = await run_request(second, {"type": "synth", "text": "다음 요청."})
    await second.close()
    assert transcript.done["ok_count"] == 1 and transcript.done["cancelled"] is False
    assert scheduler.jobs_running() == 0 and scheduler.queue_size() == 0
    assert job.done_event is not None and job.done_event.cancelled
    assert job.subscribers == []
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("ws-job-")]


async def test_a_reader_that_never_reads_is_dropped_instead_of_buffered(worker):
    engine = ToneEngine()
    client = await worker(engine, heartbeat_interval=STALL_HEARTBEAT_SECONDS)
    ws = await client.ws_connect("/ws", autoclose=False)
    # 100 sections × 40 s of audio (192 MB of PCM): far more than socket buffers hold; the server may
    # keep at most UNREAD_SECONDS in the subscription before it drops the reader and cancels the job.
    sections = 100
    await ws.send_json(batch(*["가" * 2000] * sections))
    start = await ws.receive_json(timeout=seconds(10))
    job = live_job(client, start["job_id"])
    watcher = client.app[SCHEDULER_KEY].subscribe(job)  # a server-side listener on the job's log
    async with asyncio.timeout(seconds(60)):
        async for item in watcher:
            if isinstance(item, LogEntry) and isinstance(item.event, Done):
                break
    received = await samples_after_a_stall(ws)
    assert received < (UNREAD_SECONDS + 400) * 24000 < sections * 40 * 24000, "buffered without bound"
    assert len(engine.calls) < sections
    await ws.close()


async def test_heartbeat_events_while_a_request_waits_for_the_engine(worker):
    gate = ChunkGate()
    engine = ToneEngine()
    engine.gate = gate  # type: ignore[assignment]
    client = await worker(engine, heartbeat_interval=0.05)
    try:
        ws = await connect(client)
        await ws.send_json(batch("기다린다."))
        kinds = []
        while "heartbeat" not in kinds:
            item = await ws.receive()
            kinds.append(item["event"] if isinstance(item, dict) else "pcm")
        assert "pcm" not in kinds
        gate.open()
        transcript = await receive_until_done(ws)
        assert transcript.done["ok_count"] == 1
        await ws.close()
    finally:
        gate.open()


async def test_a_peer_that_stops_answering_pings_is_dropped_and_its_request_cancelled(worker):
    gate = ChunkGate()
    engine = ToneEngine()
    engine.gate = gate  # type: ignore[assignment]
    client = await worker(engine, heartbeat_interval=0.2)
    try:
        ws = await client.ws_connect("/ws", autoping=False)
        await ws.send_json(batch("대답 없는 상대."))
        job = live_job(client, (await ws.receive_json(timeout=seconds(10)))["job_id"])
        while (await ws.receive(timeout=seconds(10))).type not in CLOSING_TYPES:
            pass  # pings, heartbeat events: never answered
        await wait_for_thread_event(job.cancel_requested)
    finally:
        gate.open()


CLOSING_TYPES = (
    aiohttp.WSMsgType.CLOSE,
    aiohttp.WSMsgType.CLOSING,
    aiohttp.WSMsgType.CLOSED,
    aiohttp.WSMsgType.ERROR,
)


async def test_fifty_concurrent_connections_each_complete_their_request(worker):
    client = await worker()

    async def one(n: int) -> tuple[int, int]:
        ws = await connect(client, "aiohttp" if n % 2 else "websockets")
        transcript = await run_request(ws, {"type": "synth", "text": f"연결 번호 {n}."})
        await ws.close()
        return transcript.done["ok_count"], len(transcript.section_pcm(0))

    async with asyncio.timeout(seconds(60)):
        results = await asyncio.gather(*(one(n) for n in range(50)))
    assert all(ok == 1 and pcm > 0 for ok, pcm in results), results


def test_an_unusable_chunk_schedule_is_refused_when_the_app_is_built(settings):
    with pytest.raises(ValueError, match="chunk"):
        build_app(settings.replace(chunk_schedule_ms=()), engine=ToneEngine())


# -- access checks before the upgrade ------------------------------------------------------------


async def test_a_foreign_browser_origin_is_refused_with_403(worker):
    client = await worker()
    response = await client.get("/ws", headers=upgrade_headers(Origin="http://evil.example"))
    assert response.status == 403
    assert (await response.json())["error"].startswith("OriginNotAllowed:")


async def test_a_loopback_origin_and_no_origin_are_accepted_by_default(worker):
    client = await worker()
    for headers in ({"Origin": f"http://127.0.0.1:{client.port}"}, {"Origin": "http://localhost:5173"}, {}):
        ws = await connect(client, **headers)
        await ws.close()


async def test_a_configured_origin_is_accepted(worker):
    client = await worker(allowed_origins=("https://studio.example",))
    ws = await connect(client, "websockets", Origin="https://studio.example")
    await ws.close()
    response = await client.get("/ws", headers=upgrade_headers(Origin="http://localhost:1"))
    assert response.status == 403


async def test_with_a_token_configured_a_missing_or_wrong_token_is_401(worker):
    client = await worker(token="s3cret")
    assert (await client.get("/ws", headers=upgrade_headers())).status == 401
    wrong = await client.get("/ws?token=nope", headers=upgrade_headers())
    assert wrong.status == 401 and (await wrong.json())["error"].startswith("Unauthorized:")


async def test_the_token_is_accepted_from_the_header_or_the_query(worker):
    client = await worker(token="s3cret")
    ws = await connect(client, "websockets", Authorization="Bearer s3cret")
    await ws.close()
    via_query = await client.ws_connect("/ws?token=s3cret")
    await via_query.close()


def upgrade_headers(**extra: str) -> dict[str, str]:
    """A WebSocket handshake's headers, sent as a plain GET so the refusal's status and body are visible."""
    return {
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        **extra,
    }


async def test_a_reader_slower_than_a_fast_engine_but_reading_gets_a_long_preview_whole(worker):
    """A long preview (80 s of audio) from an engine far faster than the link: 30 s of audio unread was
    enough to cut it as a slow consumer, though the reader took every frame as it came (on a 4 MB/s link,
    85 times real time, a 154 s preview was cut at 122 s). A reader that stops is still dropped (the
    frame-send grace, and the worker-wide unread budget)."""
    engine = ToneEngine()
    client = await worker(engine)
    ws = await client.ws_connect("/ws")
    await ws.send_json(batch("가" * 2000, "나" * 2000))
    received, events = 0, []
    while not events or events[-1]["event"] != "done":
        message = await ws.receive(timeout=seconds(20))
        if message.type == aiohttp.WSMsgType.BINARY:
            received += len(message.data) // 2
            await asyncio.sleep(0.002)  # about 800 times real time: slower than the engine
        else:
            events.append(message.json())
    await ws.close()
    assert not [e for e in events if e["event"] == "error"], events
    assert events[-1]["ok_count"] == 2 and received == 2 * 40 * 24000
