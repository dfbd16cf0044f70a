"""What a `/ws` request's subscription holds when its pump wakes goes out in one write (`burst.py`):
fewer `send` syscalls and reader wake-ups per preview, the same frames byte for byte."""

from __future__ import annotations

import threading
import time
from asyncio import selector_events
from typing import Any

import numpy as np
import pytest
from aiohttp import WSMsgType
from aiohttp._websocket.writer import WebSocketWriter

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.audio import to_pcm16
from npu_worker.engine.base import SynthesisRequest
from npu_worker.jobs.audio_handover import LATER_AUDIO_SECONDS, URGENT_AUDIO_SECONDS
from npu_worker.jobs.model import AudioChunk, LogEntry
from npu_worker.ws_server.burst import BURST_BYTES, Burst, frame_header
from tests.test_ws_support import AiohttpWs, batch, connect, live_job, receive_until_done
from tests.timing import seconds
from tests.tone_engine import ToneEngine


class _Written:
    """What aiohttp's writer hands its transport (the only part of a transport it uses here)."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    def is_closing(self) -> bool:
        return False


async def _aiohttp_frame(payload: bytes, opcode: WSMsgType) -> bytes:
    written = _Written()
    writer = WebSocketWriter(protocol=None, transport=written)  # type: ignore[arg-type]
    await writer.send_frame(payload, opcode)
    return bytes(written.data)


@pytest.mark.parametrize("length", [0, 1, 125, 126, 127, 15360, 65535, 65536, 70000])
async def test_a_burst_holds_the_frames_aiohttp_writes_byte_for_byte(length):
    payload = bytes(i % 251 for i in range(length))
    burst = Burst()
    burst.text(payload)
    burst.binary(memoryview(payload))
    binary = await _aiohttp_frame(payload, WSMsgType.BINARY)
    expected = await _aiohttp_frame(payload, WSMsgType.TEXT) + binary
    assert burst.size == len(expected)
    assert burst.take() == expected
    assert not burst and burst.size == 0
    assert frame_header(WSMsgType.BINARY, length) == binary[: len(binary) - length]


def test_every_length_s_inline_header_is_frame_header_s_and_a_pcm_frame_counts_its_bytes():
    """`Burst.text`/`binary` build the header inline (stop 54): every length around the 126 and 65536
    bounds and every 97th up to 70000, both opcodes, against `frame_header` (checked against aiohttp
    above); a PCM frame's buffer is int16, whose `len` is half its bytes: the length is its `nbytes`."""
    pcm = np.arange(35001, dtype="<i2")
    lengths = {*range(400), *range(65280, 65800), *range(0, 70001, 97), 70000}
    for length in sorted(lengths):
        payload = bytes(length)
        frame = pcm[: length // 2]
        burst = Burst()
        burst.text(payload)
        burst.binary(frame.data)
        expected = (
            frame_header(WSMsgType.TEXT, length)
            + payload
            + frame_header(WSMsgType.BINARY, frame.nbytes)
            + frame.tobytes()
        )
        assert burst.size == len(expected), length
        assert burst.take() == expected, length


def test_a_chunk_s_frames_in_one_call_are_the_frames_one_call_a_frame_makes():
    """`Burst.binaries` (stop 55: a chunk's frames once `first_audio` is out) writes each frame as
    `binary` does, around both header bounds and past 64 KiB, after a text frame, and says how many
    samples they hold (the pump's counts of the section and the stream)."""
    cuts = [0, 1, 62, 63, 64, 32_767, 32_768, 35_000, 40, 20_001]
    pcm = (np.arange(sum(cuts)) % 30_011).astype("<i2")
    frames, start = [], 0
    for samples in cuts:
        frames.append(pcm[start : start + samples])
        start += samples
    one_by_one, together = Burst(), Burst()
    for burst in (one_by_one, together):
        burst.text(b'{"event":"audio_start"}')
    for frame in frames:
        one_by_one.binary(frame.data)
    assert together.binaries(frames) == sum(cuts)
    assert together.size == one_by_one.size
    assert together.take() == one_by_one.take()
    assert together.binaries([]) == 0 and not together and together.size == 0


class WriteCount:
    """Counts the writes to the server's side of one connection (its local port is the server's)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, server_port: int) -> None:
        self.count = 0
        transport_class = selector_events._SelectorSocketTransport
        names = ["write"] + (
            ["writelines"] if "writelines" in vars(transport_class) else []
        )  # (3.12: sendmsg)
        for name in names:
            monkeypatch.setattr(
                transport_class, name, self._counted(getattr(transport_class, name), server_port)
            )

    def _counted(self, original: Any, server_port: int) -> Any:
        def write(transport: Any, data: Any) -> None:
            if transport.get_extra_info("sockname")[1] == server_port:
                self.count += 1
            original(transport, data)

        return write


def _hold_the_loop_until_done(client: Any, job: Any) -> None:
    """Block the event loop's thread (on purpose) while the engine thread makes the whole request: its
    chunks and events pile up for the loop, as when the loop is busy elsewhere."""
    deadline = time.monotonic() + seconds(10)
    while not job.finished and time.monotonic() < deadline:
        time.sleep(0.001)
    assert job.finished, "the engine thread did not finish the request"
    with client.app[SCHEDULER_KEY].journal._lock:  # `done` is folded, then handed over, under this lock
        pass


async def test_what_the_pump_finds_waiting_goes_out_in_one_write_each_frame_whole(worker, monkeypatch):
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = threading.Event()
    client = await worker(engine)
    ws = await connect(client)
    texts = ("가" * 10, "나" * 10, "다" * 10)  # 0.2 s each: every frame and event fits in one burst
    try:
        await ws.send_json(batch(*texts))
        seen = []
        while not (seen and seen[-1].get("event") == "progress"):  # section 0 started, the engine waits
            item = await ws.receive()
            assert isinstance(item, dict)
            seen.append(item)
        job = live_job(client, seen[0]["job_id"])
        writes = WriteCount(monkeypatch, client.port)
        engine.gate.set()
        _hold_the_loop_until_done(client, job)
        transcript = await receive_until_done(ws)
        written = writes.count  # (the close's frame comes after)
    finally:
        engine.gate.set()
        await ws.close()

    assert written == 1
    names = [item["event"] if isinstance(item, dict) else "pcm" for item in transcript.items]
    assert names[0] == "audio_start" and names[-1] == "done"
    for idx, text in enumerate(texts):
        expected = to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()
        assert transcript.section_pcm(idx) == expected
    assert transcript.done["ok_count"] == 3
    assert sum(len(frame) for frame in transcript.frames()) < BURST_BYTES


async def test_a_burst_is_written_once_it_holds_64_kib(worker, monkeypatch):
    engine = ToneEngine(chunk_seconds=0.5)
    engine.gate = threading.Event()
    client = await worker(engine)
    ws = await connect(client)
    text = "가" * 250  # 5 s: 240 KB of PCM, so four bursts at least
    try:
        await ws.send_json(batch(text))
        seen = []
        while not (seen and seen[-1].get("event") == "progress"):
            item = await ws.receive()
            assert isinstance(item, dict)
            seen.append(item)
        job = live_job(client, seen[0]["job_id"])
        writes = WriteCount(monkeypatch, client.port)
        engine.gate.set()
        _hold_the_loop_until_done(client, job)
        transcript = await receive_until_done(ws)
        written = writes.count  # (the close's frame comes after)
    finally:
        engine.gate.set()
        await ws.close()

    pcm = sum(len(frame) for frame in transcript.frames())
    assert pcm == len(to_pcm16(engine.render(SynthesisRequest(text)))) * 2
    assert pcm // BURST_BYTES <= written <= pcm // BURST_BYTES + 2


async def test_a_preview_s_first_half_second_goes_to_the_loop_at_once_the_rest_may_wait_a_little(
    worker, monkeypatch
):
    """The runner wakes the loop for a streaming job's first audio (its listener waits for it); past
    URGENT_AUDIO_SECONDS a chunk may wait LATER_AUDIO_SECONDS to share a wake-up with the next ones.
    The stream is the same either way."""
    engine = ToneEngine(chunk_seconds=0.1)
    client = await worker(engine)
    handoff = client.app[SCHEDULER_KEY].journal.handoff
    later: list[int] = []
    urgent: list[int] = []
    ordinary, waiting = handoff.__call__, handoff.later

    def call(callback: Any, argument: Any) -> None:
        if isinstance(argument, AudioChunk):
            urgent.append(argument.samples.size)
        ordinary(callback, argument)

    def call_later(callback: Any, argument: Any, within: float) -> None:
        assert within == LATER_AUDIO_SECONDS
        later.append(argument.samples.size)
        waiting(callback, argument, within)

    monkeypatch.setattr(type(handoff), "__call__", lambda self, callback, argument: call(callback, argument))
    monkeypatch.setattr(handoff, "later", call_later)
    ws = await connect(client)
    text = "가" * 100  # 2 s in 0.1 s chunks
    try:
        await ws.send_json(batch(text))
        transcript = await receive_until_done(ws)
    finally:
        await ws.close()

    assert sum(urgent[:-1]) < URGENT_AUDIO_SECONDS * 24000 <= sum(urgent)  # the first half second at once
    assert later and sum(urgent + later) == 48000  # the rest may wait; nothing is lost
    expected = to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()
    assert transcript.section_pcm(0) == expected


class PacedTone(ToneEngine):
    """Hands over its first half second, waits until the loop has begun to take it (espeak-ng's
    chunks, ≈ 1.5 ms apart, let the loop take each), then the rest at once."""

    def __init__(self) -> None:
        super().__init__(chunk_seconds=0.1)
        self.drained: Any = lambda: True

    def stream(self, request: SynthesisRequest) -> Any:
        for number, chunk in enumerate(super().stream(request)):
            if number == round(URGENT_AUDIO_SECONDS / self.chunk_seconds):
                deadline = time.monotonic() + seconds(5)
                while not self.drained() and time.monotonic() < deadline:
                    time.sleep(0.001)
            yield chunk


async def test_a_preview_s_ok_and_done_join_the_window_its_last_chunks_wait_in(worker, monkeypatch):
    """A live preview's last chunks wait up to LATER_AUDIO_SECONDS for one wake-up of the loop; its
    `ok` and `done`, appended right after them, each woke the loop at once instead (one wake-up more
    a preview, for nothing a listener could act on sooner). They now go with that window's drain, in
    order. (The window is made 0.3 s long here, so no stall of the engine thread can end it first.)"""
    from npu_worker.jobs import audio_handover

    monkeypatch.setattr(audio_handover, "LATER_AUDIO_SECONDS", 0.3)
    engine = PacedTone()
    client = await worker(engine)
    handoff = client.app[SCHEDULER_KEY].journal.handoff
    engine.drained = lambda: not handoff._scheduled
    woke: list[str] = []  # the events that woke the loop by themselves
    ordinary = handoff.__call__

    def call(callback: Any, argument: Any) -> None:
        if isinstance(argument, LogEntry) and not handoff._scheduled:
            woke.append(getattr(argument.event, "status", type(argument.event).__name__))
        ordinary(callback, argument)

    monkeypatch.setattr(type(handoff), "__call__", lambda self, callback, argument: call(callback, argument))
    ws = await connect(client)
    text = "가" * 50  # 1 s in 0.1 s chunks: the last half second waits in a window
    try:
        await ws.send_json(batch(text))
        transcript = await receive_until_done(ws)
    finally:
        await ws.close()
    assert "ok" not in woke and "Done" not in woke, woke
    ok = [event for event in transcript.events("progress") if event.get("status") == "ok"]
    assert len(ok) == 1 and transcript.items.index(ok[0]) < transcript.items.index(transcript.done)
    expected = to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()
    assert transcript.section_pcm(0) == expected


async def test_a_preview_s_later_chunks_wait_in_a_window_its_last_urgent_chunk_opened(worker, monkeypatch):
    """The drain of a preview's last urgent chunk opens the window its later chunks wait in: the first
    of them had woken the loop only to arm that window's timer (one wake-up a preview). The stream is
    the same. (The window is 0.3 s long here, so no stall of the engine thread can end it first.)"""
    from npu_worker.jobs import audio_handover

    monkeypatch.setattr(audio_handover, "LATER_AUDIO_SECONDS", 0.3)
    engine = PacedTone()
    client = await worker(engine)
    handoff = client.app[SCHEDULER_KEY].journal.handoff
    engine.drained = lambda: not handoff._scheduled
    wakes: list[str] = []
    wake = handoff._wake

    def counted(callback: Any, *arguments: Any) -> None:
        wakes.append(callback.__name__)
        wake(callback, *arguments)

    monkeypatch.setattr(handoff, "_wake", counted)
    ws = await connect(client)
    text = "가" * 50  # 1 s in 0.1 s chunks: the last half second waits in a window
    try:
        await ws.send_json(batch(text))
        transcript = await receive_until_done(ws)
    finally:
        await ws.close()
    assert "_arm_woken" not in wakes, wakes
    expected = to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()
    assert transcript.section_pcm(0) == expected


@pytest.mark.parametrize("path", ["/ws", "/v1/audio/speech/stream"])
async def test_a_client_offering_compression_gets_the_stream_uncompressed(worker, path):
    """A burst's frames are built uncompressed (RSV1 clear); the handshake accepts no extension, so a
    client that offers permessage-deflate (browsers and most libraries do) reads them as they are."""
    engine = ToneEngine(chunk_seconds=0.3)
    client = await worker(engine)
    raw = await client.session.ws_connect(client.make_url(path), compress=15)  # offers permessage-deflate
    try:
        assert raw.compress == 0  # (aiohttp's client: what the handshake's answer accepted)
        if path == "/ws":
            ws = AiohttpWs(raw)
            texts = ("가" * 60, "나" * 30)
            await ws.send_json(batch(*texts))
            transcript = await receive_until_done(ws)
            for idx, text in enumerate(texts):
                expected = to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()
                assert transcript.section_pcm(idx) == expected
    finally:
        await raw.close()
