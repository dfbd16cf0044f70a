"""The wire on a live worker against its golden files: status, content type and every body, NDJSON line
and WebSocket text frame of the v1, `/ws` and OpenAI routes, in order (tests/golden_support.py says
what is compared and how the files are rewritten when the wire is meant to change)."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import aiohttp

from tests.golden_support import canonical, check, loosen, normalise
from tests.test_ws_support import ChunkGate
from tests.timing import seconds
from tests.tone_engine import ToneEngine

TEXT_TYPES = ("application/json", "application/x-ndjson", "text/event-stream")


class Recorder:
    """Every answer of one conversation with the worker, normalised."""

    def __init__(self, tmp: str) -> None:
        self.tmp = tmp
        self.exchanges: list[dict[str, Any]] = []

    def value(self, body: Any) -> Any:
        return normalise(body, self.tmp)

    async def answer(self, label: str, response: aiohttp.ClientResponse, loose: bool = False) -> Any:
        data = await response.read()
        content_type = response.headers.get("Content-Type", "")
        record: dict[str, Any] = {"request": label, "status": response.status, "content_type": content_type}
        if content_type.startswith("application/x-ndjson"):
            record["lines"] = [self.value(canonical(line)) for line in data.splitlines() if line.strip()]
        elif content_type.startswith("text/event-stream"):
            record["events"] = [self.sse(chunk) for chunk in data.decode().split("\n\n") if chunk]
        elif content_type.startswith("application/json"):
            record["body"] = self.value(canonical(data))
            if loose:
                record["body"] = loosen(record["body"])
        else:
            record["bytes"] = len(data) > 0
        for header in ("Retry-After", "Cache-Control", "X-Accel-Buffering"):
            if header in response.headers:
                record[header] = response.headers[header]
        self.exchanges.append(record)
        return record.get("body", record.get("lines"))

    def sse(self, chunk: str) -> Any:
        assert chunk.startswith("data: ") and "\n" not in chunk, chunk
        body = canonical(chunk[len("data: ") :])
        if "audio" in body:
            body["audio"] = "<base64>"
        return self.value(body)

    async def frames(self, label: str, ws: Any, until: Any, loose: bool = False) -> list[Any]:
        """Text frames in order; binary frames as a count of bytes between them."""
        items: list[Any] = []
        pcm = 0
        while True:
            message = await ws.receive(timeout=seconds(20))
            if message.type == aiohttp.WSMsgType.BINARY:
                pcm += len(message.data)
                continue
            assert message.type == aiohttp.WSMsgType.TEXT, message
            if pcm:
                items.append(f"<{pcm} bytes of pcm>")
                pcm = 0
            body = canonical(message.data)
            items.append(loosen(self.value(body)) if loose else self.value(body))
            if until(body):
                break
        self.exchanges.append({"socket": label, "frames": items})
        return items


async def wait_status(client: Any, job_id: str, status: str) -> None:
    async with asyncio.timeout(seconds(10)):
        while (await (await client.get(f"/jobs/{job_id}/status")).json())["status"] != status:
            await asyncio.sleep(0.02)


async def test_v1_http_routes(worker, tmp_path):
    engine = ToneEngine(fail_on="BOOM")
    client = await worker(engine)
    rec = Recorder(str(tmp_path))
    out = str(tmp_path / "one.wav")
    await rec.answer("GET /health", await client.get("/health"))
    await rec.answer("GET /ready", await client.get("/ready"))
    await rec.answer(
        "POST /synth", await client.post("/synth", json={"text": "안녕하세요.", "output_path": out})
    )
    failing = {"text": "BOOM here", "output_path": str(tmp_path / "two.wav")}
    await rec.answer("POST /synth (engine fails)", await client.post("/synth", json=failing))
    sections = [
        {"idx": 0, "text": "첫 문장."},
        {"idx": 1, "text": "BOOM"},
        {"idx": 2, "text": "   "},
        {"idx": 5, "text": "끝.", "output_path": str(tmp_path / "s5.wav")},
    ]
    await rec.answer("POST /synth_batch", await client.post("/synth_batch", json={"sections": sections}))
    job_id = (await (await client.get("/jobs")).json())["jobs"][0]["job_id"]  # (normalised away above)
    await rec.answer(
        "POST /synth_batch stream:false",
        await client.post(
            "/synth_batch", json={"sections": sections[:2], "stream": False, "lang": "en", "speed_factor": 2}
        ),
    )
    await rec.answer("GET /jobs/{id}/status", await client.get(f"/jobs/{job_id}/status"))
    await rec.answer("GET /jobs/{id}/result", await client.get(f"/jobs/{job_id}/result"))
    await rec.answer("GET /jobs/{id}/events?after=2", await client.get(f"/jobs/{job_id}/events?after=2"))
    await rec.answer("GET /jobs/{id}/events?after=99", await client.get(f"/jobs/{job_id}/events?after=99"))
    await rec.answer("GET /jobs/{id}/sections/0/audio", await client.get(f"/jobs/{job_id}/sections/0/audio"))
    await rec.answer("GET /jobs/{id}/sections/1/audio", await client.get(f"/jobs/{job_id}/sections/1/audio"))
    await rec.answer("GET /jobs/{id}/sections/x/audio", await client.get(f"/jobs/{job_id}/sections/x/audio"))
    await rec.answer("GET /jobs/{id}/events?after=-1", await client.get(f"/jobs/{job_id}/events?after=-1"))
    await rec.answer("DELETE /jobs/{id} (finished)", await client.delete(f"/jobs/{job_id}"))
    await rec.answer("GET /jobs", await client.get("/jobs"))
    await rec.answer("GET /jobs/nope/status", await client.get("/jobs/nope/status"))
    await rec.answer("GET /nope", await client.get("/nope"))
    await rec.answer("GET /synth", await client.get("/synth"))
    await rec.answer("POST /synth (not JSON)", await client.post("/synth", data=b"{not json"))
    await rec.answer(
        "POST /synth (empty text)", await client.post("/synth", json={"text": " ", "output_path": out})
    )
    await rec.answer(
        "POST /synth (path)", await client.post("/synth", json={"text": "a", "output_path": "/etc/x.wav"})
    )
    dup = {"sections": [{"idx": 0, "text": "a"}, {"idx": 0, "text": "b"}]}
    await rec.answer("POST /synth_batch (duplicate)", await client.post("/synth_batch", json=dup))
    check("live_v1_http", rec.exchanges)


async def test_v1_jobs_while_running_and_cancelled(worker, tmp_path):
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine, max_queue=3)
    rec = Recorder(str(tmp_path))
    body = {"sections": [{"idx": i, "text": "abc."} for i in range(3)]}
    accepted = await rec.answer(
        "POST /synth_batch?async=1", await client.post("/synth_batch?async=1", json=body)
    )
    job_id = (await (await client.get("/jobs")).json())["jobs"][0]["job_id"]
    assert accepted["status"] == "queued"
    await wait_status(client, job_id, "running")
    await rec.answer("GET /jobs/{id}/result (running)", await client.get(f"/jobs/{job_id}/result"))
    full = {"sections": [{"idx": 0, "text": "b."}]}
    await rec.answer(
        "POST /synth_batch?async=1 (queue full)", await client.post("/synth_batch?async=1", json=full)
    )
    await rec.answer("GET /ready (queue full)", await client.get("/ready"))
    await rec.answer("DELETE /jobs/{id} (running)", await client.delete(f"/jobs/{job_id}"))
    engine.gate.set()
    await rec.answer("GET /jobs/{id}/events", await client.get(f"/jobs/{job_id}/events"))
    await rec.answer("GET /jobs/{id}/result (cancelled)", await client.get(f"/jobs/{job_id}/result"))
    check("live_v1_jobs_cancelled", rec.exchanges)


async def test_v1_websocket(worker, tmp_path):
    engine = ToneEngine(fail_on="BOOM")
    client = await worker(engine)
    rec = Recorder(str(tmp_path))
    done = lambda body: body.get("event") == "done"  # noqa: E731
    async with client.ws_connect("/ws") as ws:
        await ws.send_str(json.dumps({"type": "synth", "text": "안녕하세요."}))
        await rec.frames("synth", ws, done)
        sections = [{"idx": 0, "text": "첫 문장."}, {"idx": 1, "text": "BOOM"}, {"idx": 2, "text": "끝."}]
        await ws.send_str(json.dumps({"type": "synth_batch", "sections": sections}))
        await rec.frames("synth_batch", ws, done)
        await ws.send_str(json.dumps({"type": "synth", "text": "no audio.", "audio": False}))
        await rec.frames("synth audio:false", ws, done)
        for label, text, loose in [
            ("not JSON", "{not json", False),
            ("unknown type", '{"type": "dance"}', False),
            ("no text", '{"type": "synth"}', True),
            ("bad speed", '{"type": "synth", "text": "a", "speed_factor": 9}', False),
            ("cancel with nothing running", '{"type": "cancel"}', False),
        ]:
            await ws.send_str(text)
            await rec.frames(label, ws, lambda body: True, loose)
        gate = ChunkGate()
        engine.gate = gate
        gate.allow(1)
        try:
            await ws.send_str(json.dumps({"type": "synth", "text": "long enough to wait for a while."}))
            await rec.frames(
                "cancelled: until first_audio", ws, lambda body: body.get("event") == "first_audio"
            )
            await ws.send_str(json.dumps({"type": "synth", "text": "second"}))
            await rec.frames("busy", ws, lambda body: True)
            await ws.send_str(json.dumps({"type": "cancel"}))
            gate.open()  # the engine thread sees the cancel at its next chunk
            await rec.frames("cancelled: the rest", ws, done)
        finally:
            gate.open()
    check("live_v1_ws", rec.exchanges)


async def test_openai_routes(worker, tmp_path):
    client = await worker(ToneEngine(fail_on="BOOM"))
    rec = Recorder(str(tmp_path))
    await rec.answer("GET /v1/models", await client.get("/v1/models"))
    await rec.answer("GET /v1/audio/voices", await client.get("/v1/audio/voices"))
    speech = {"model": "tts-1", "input": "안녕하세요.", "voice": "alloy"}
    await rec.answer(
        "POST /v1/audio/speech wav",
        await client.post("/v1/audio/speech", json={**speech, "response_format": "wav"}),
    )
    await rec.answer(
        "POST /v1/audio/speech sse",
        await client.post(
            "/v1/audio/speech", json={**speech, "response_format": "pcm", "stream_format": "sse"}
        ),
    )
    await rec.answer(
        "POST /v1/audio/speech (bad speed)",
        await client.post("/v1/audio/speech", json={**speech, "speed": 9}),
    )
    await rec.answer(
        "POST /v1/audio/speech (engine fails)",
        await client.post("/v1/audio/speech", json={**speech, "input": "BOOM"}),
    )
    await rec.answer("POST /v1/audio/speech (not JSON)", await client.post("/v1/audio/speech", data=b"[1"))
    batch = {
        "items": [{"input": "하나."}, {"input": ""}, {"input": "BOOM"}, 5, {"input": "둘.", "speed": 2}],
        "response_format": "pcm",
        "voice": "default",
    }
    await rec.answer(
        "POST /v1/audio/speech/batch", await client.post("/v1/audio/speech/batch", json=batch), loose=True
    )
    await rec.answer(
        "POST /v1/audio/speech/batch (no items)",
        await client.post("/v1/audio/speech/batch", json={"items": []}),
        loose=True,
    )
    await rec.answer("DELETE /v1/audio/voices/nobody", await client.delete("/v1/audio/voices/nobody"))
    check("live_openai_http", rec.exchanges)


async def test_openai_stream_socket(worker, tmp_path):
    client = await worker(ToneEngine())
    rec = Recorder(str(tmp_path))
    async with client.ws_connect("/v1/audio/speech/stream") as ws:
        await ws.send_str(json.dumps({"type": "session.config", "voice": "default", "language": "ko"}))
        await rec.frames("session.config", ws, lambda body: True)
        await ws.send_str(json.dumps({"type": "input.text", "text": "첫 번째 문장입니다. 두 번째"}))
        await ws.send_str(json.dumps({"type": "input.text", "text": " 문장!"}))
        await ws.send_str(json.dumps({"type": "input.done"}))
        await rec.frames("utterance", ws, lambda body: body.get("type") == "session.done")
        await ws.send_str(json.dumps({"type": "input.done"}))
        await rec.frames("empty utterance", ws, lambda body: body.get("type") == "session.done")
        for label, text, loose in [
            ("not JSON", "{not json", False),
            ("unknown type", '{"type": "dance"}', False),
            ("no type", "{}", False),
            ("not an object", "[1]", False),
            ("bad fragment", '{"type": "input.text", "text": 5}', True),
            ("bad config", '{"type": "session.config", "speed": 9}', False),
            ("bad stream_audio", '{"type": "session.config", "stream_audio": "yes"}', True),
            ("unknown voice", '{"type": "session.config", "voice": "nobody"}', False),
        ]:
            await ws.send_str(text)
            await rec.frames(label, ws, lambda body: True, loose)
        await ws.send_str(
            json.dumps({"type": "session.config", "response_format": "wav", "stream_audio": False})
        )
        await rec.frames("session.config wav", ws, lambda body: True)
        await ws.send_str(json.dumps({"type": "input.text", "text": "파일 하나."}))
        await ws.send_str(json.dumps({"type": "session.close"}))
        await rec.frames("close", ws, lambda body: body.get("type") == "session.done")
        closing = await ws.receive(timeout=seconds(10))
        rec.exchanges.append({"socket": "after session.close", "message": closing.type.name})
    check("live_openai_stream", rec.exchanges)
