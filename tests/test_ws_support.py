"""Helpers for the test_ws_* modules (no tests here): two real WebSocket clients behind one interface,
a transcript of what a request streamed, and a gate that lets the tone engine make N chunks only."""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import numpy as np
import websockets
from aiohttp.test_utils import TestClient

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.audio import from_pcm16
from npu_worker.jobs.model import Job
from tests.timing import seconds


class AiohttpWs:
    """aiohttp's client."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws

    async def send_json(self, body: Any) -> None:
        await self.ws.send_str(json.dumps(body))

    async def send_text(self, text: str) -> None:
        await self.ws.send_str(text)

    async def receive(self) -> dict[str, Any] | bytes:
        message = await self.ws.receive(timeout=seconds(20))
        if message.type == aiohttp.WSMsgType.TEXT:
            return json.loads(message.data)
        if message.type == aiohttp.WSMsgType.BINARY:
            return bytes(message.data)
        raise ConnectionError(f"socket ended: {message.type} {message.data!r}")

    async def close(self) -> None:
        await self.ws.close()


class WebsocketsWs:
    """The `websockets` library's client."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    async def send_json(self, body: Any) -> None:
        await self.ws.send(json.dumps(body))

    async def send_text(self, text: str) -> None:
        await self.ws.send(text)

    async def receive(self) -> dict[str, Any] | bytes:
        async with asyncio.timeout(seconds(20)):
            data = await self.ws.recv()
        return json.loads(data) if isinstance(data, str) else bytes(data)

    async def close(self) -> None:
        await self.ws.close()


CLIENT_KINDS = ("aiohttp", "websockets")


async def connect(client: TestClient, kind: str = "aiohttp", **headers: str) -> AiohttpWs | WebsocketsWs:
    if kind == "aiohttp":
        return AiohttpWs(await client.ws_connect("/ws", headers=headers or None, autoclose=False))
    url = f"ws://{client.host}:{client.port}/ws"
    return WebsocketsWs(await websockets.connect(url, additional_headers=headers or None, max_size=None))


@dataclass
class Transcript:
    """Everything one request streamed, in order: dicts for text frames, bytes for binary frames."""

    items: list[dict[str, Any] | bytes] = field(default_factory=list)

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        return [i for i in self.items if isinstance(i, dict) and (kind is None or i["event"] == kind)]

    def frames(self) -> list[bytes]:
        return [i for i in self.items if isinstance(i, bytes)]

    def section_frames(self, idx: int) -> list[bytes]:
        """The binary frames between `audio_start` and `audio_end` of section `idx`."""
        inside, frames = False, []
        for item in self.items:
            if isinstance(item, dict) and item["event"] in ("audio_start", "audio_end"):
                inside = item["event"] == "audio_start" and item["idx"] == idx
            elif isinstance(item, bytes) and inside:
                frames.append(item)
        return frames

    def section_pcm(self, idx: int) -> bytes:
        return b"".join(self.section_frames(idx))

    def section_audio(self, idx: int) -> np.ndarray:
        return from_pcm16(self.section_pcm(idx))

    @property
    def done(self) -> dict[str, Any]:
        return self.events("done")[-1]


async def receive_until_done(
    ws: AiohttpWs | WebsocketsWs, transcript: Transcript | None = None
) -> Transcript:
    transcript = transcript or Transcript()
    while True:
        item = await ws.receive()
        transcript.items.append(item)
        if isinstance(item, dict) and item["event"] == "done":
            return transcript


# The heartbeat interval of a worker whose test stalls a reader (`samples_after_a_stall`): the send grace
# (1.5 intervals) and the WebSocket ping then outlast the test's wait for the job's end, so the reader is
# dropped by the listener's bound (`SlowConsumer`), what those tests check. At the default 10 s, a job
# slowed past 15 s by a loaded machine had its socket closed by the send grace first (the done never sent).
STALL_HEARTBEAT_SECONDS = 600.0


async def samples_after_a_stall(ws: aiohttp.ClientWebSocketResponse) -> int:
    """Reads a stalled socket to its `done`, checks the server dropped it as a slow consumer (a
    `SlowConsumer` error, a cancelled `done`) and returns the samples it had sent before that. The
    worker runs with `STALL_HEARTBEAT_SECONDS`: a socket closed before its `done` fails, saying so."""
    received, events = 0, []
    while not events or events[-1]["event"] != "done":
        message = await ws.receive(timeout=seconds(20))
        if message.type == aiohttp.WSMsgType.BINARY:
            received += len(message.data) // 2
        elif message.type == aiohttp.WSMsgType.TEXT:
            events.append(message.json())
        else:
            raise AssertionError(
                f"the socket ended ({message.type.name} {message.data!r}) before its done, after "
                f"{received} samples and {events[-3:]}: dropped by the send grace or the heartbeat, "
                "not as a slow consumer (is the worker's heartbeat_interval STALL_HEARTBEAT_SECONDS?)"
            )
    assert events[-1]["cancelled"] is True
    assert any(e["event"] == "error" and e["error"].startswith("SlowConsumer:") for e in events)
    return received


async def run_request(ws: AiohttpWs | WebsocketsWs, message: dict[str, Any]) -> Transcript:
    await ws.send_json(message)
    return await receive_until_done(ws)


def batch(*texts: str, **extra: Any) -> dict[str, Any]:
    sections = [{"idx": i, "text": text} for i, text in enumerate(texts)]
    return {"type": "synth_batch", "sections": sections, **extra}


class ChunkGate:
    """Duck-types ToneEngine.gate: the engine may make only as many chunks as were allowed."""

    def __init__(self) -> None:
        self._permits = threading.Semaphore(0)
        self._opened = threading.Event()
        self.passed = 0

    def wait(self) -> None:
        while not self._opened.is_set():
            if self._permits.acquire(timeout=0.05):
                break
        self.passed += 1

    def allow(self, chunks: int) -> None:
        for _ in range(chunks):
            self._permits.release()

    def open(self) -> None:
        """Let the engine run freely (always call at the end, so the worker thread can stop)."""
        self._opened.set()


def live_job(client: TestClient, job_id: str) -> Job:
    """A running preview job (previews are not in the /jobs list)."""
    scheduler = client.app[SCHEDULER_KEY]
    job = scheduler.live_job(job_id)
    assert job is not None
    return job


async def wait_for_thread_event(event: threading.Event) -> None:
    assert await asyncio.to_thread(event.wait, seconds(20)), "timed out waiting"
