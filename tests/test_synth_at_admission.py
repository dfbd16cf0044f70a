"""A streaming preview an idle engine takes at once has its first `synth` told at admission, on the loop,
with its `start`: both go out in the handler's own write, where the lane's `synth` was a wake-up of the
loop, a turn and a `send` of its own a `/ws` preview (benchmarks/SERVER_OVERHEAD.md, stop 59). A preview
that waits (the engine busy) is told `synth` when its section starts, as before. The same events, in the
same order, once each."""

from __future__ import annotations

import asyncio
from asyncio import selector_events
from typing import Any

import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.audio import to_pcm16
from npu_worker.engine.base import SynthesisRequest
from npu_worker.jobs.model import Job, LogEntry, Section, new_job_id
from npu_worker.protocol import BatchRequest, Progress, SectionRequest, SynthParams
from tests.test_ws_support import ChunkGate, Transcript, batch, connect, live_job, receive_until_done
from tests.timing import until
from tests.tone_engine import ToneEngine


class ServerWrites:
    """Each write to the server's side of the connections on `port`: the writing task's name ("" for a
    callback of the loop, a hand-over's drain) and the bytes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, port: int) -> None:
        self.writes: list[tuple[str, bytes]] = []
        transport_class = selector_events._SelectorSocketTransport
        original = transport_class.write

        def write(transport: Any, data: Any) -> None:
            if transport.get_extra_info("sockname")[1] == port:
                task = asyncio.current_task()
                self.writes.append(("" if task is None else task.get_name(), bytes(data)))
            original(transport, data)

        monkeypatch.setattr(transport_class, "write", write)


def order_of(transcript: Transcript) -> list[str]:
    """The events up to the first audio, by name (a `progress` by its status)."""
    names = []
    for event in transcript.events():
        names.append(event["status"] if event["event"] == "progress" else event["event"])
        if event["event"] == "audio_start":
            break
    return names


async def test_an_idle_engine_s_preview_has_its_synth_written_with_its_start(worker, monkeypatch):
    engine = ToneEngine(chunk_seconds=0.05)
    client = await worker(engine)
    admission = client.app[SCHEDULER_KEY].admission
    ws = await connect(client)
    try:
        await ws.send_json(batch("가"))  # (the handshake and a first request: written before counting)
        await receive_until_done(ws)
        await until(admission.taken_at_once, "the engine thread to wait for work again")
        writes = ServerWrites(monkeypatch, client.port)
        await ws.send_json(batch("가" * 10))
        transcript = await receive_until_done(ws)
    finally:
        await ws.close()

    writer, first = writes.writes[0]
    assert writer != ""  # the handler's step, not a drain's turn after it
    assert b'"event": "start"' in first and b'"status": "synth"' in first
    assert order_of(transcript) == ["start", "synth", "audio_start"]
    assert len(transcript.events("progress")) == 2  # `synth` once (no second from the lane), then `ok`
    assert (
        transcript.section_pcm(0)
        == to_pcm16(engine.render(SynthesisRequest("가" * 10))).astype("<i2").tobytes()
    )
    assert transcript.done["ok_count"] == 1


async def test_a_preview_waiting_for_a_busy_engine_is_told_synth_when_its_section_starts(worker):
    gate = ChunkGate()
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate  # type: ignore[assignment]
    client = await worker(engine)
    first, second = await connect(client), await connect(client)
    try:
        await until(client.app[SCHEDULER_KEY].admission.taken_at_once, "the engine thread to wait for work")
        await first.send_json(batch("가" * 30))
        started = await first.receive()
        busy = live_job(client, started["job_id"])  # type: ignore[index]
        await second.send_json(batch("나" * 10, "다" * 10))
        waiting_start = await second.receive()
        waiting = live_job(client, waiting_start["job_id"])  # type: ignore[index]
        assert not waiting.synth_at_admission and waiting.status == "queued"  # the engine has `busy`
        gate.open()
        await receive_until_done(first)
        transcript = await receive_until_done(second)
    finally:
        gate.open()
        await first.close()
        await second.close()
    assert busy.synth_at_admission  # (the engine was idle when it came)
    assert order_of(transcript) == ["synth", "audio_start"]
    assert [(e["idx"], e["status"]) for e in transcript.events("progress")] == [
        (0, "synth"),
        (0, "ok"),
        (1, "synth"),
        (1, "ok"),
    ]
    assert transcript.done["ok_count"] == 2


class QueuesAnotherAtItsSynth:
    """A listener on a preview that queues `other` the moment that preview is told `synth`: another
    admission at the same instant (a handler's executor thread queues its job whenever it gets there)."""

    def __init__(self, admission: Any, other: Job) -> None:
        self.admission, self.other, self.queued = admission, other, False

    def push(self, entry: LogEntry) -> None:
        event = entry.event
        if isinstance(event, Progress) and event.status == "synth" and not self.queued:
            self.queued = True
            self.admission.enqueue(self.other)

    def push_audio(self, chunk: object) -> None:
        pass


async def test_a_job_queued_while_a_preview_is_told_synth_at_admission_does_not_go_before_it(worker):
    """The look at the idle engine and the queueing are one step: a job queued between them (a batch or
    a preview admitted at the same instant on another thread) was taken first, and the preview told
    `synth` waited for it. `other` is such a preview: reserved, queued once the first is told `synth`;
    queued first, it would go first (the same rank, the same turn)."""
    engine = ToneEngine(chunk_seconds=0.05)
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    admission = scheduler.admission
    params = await asyncio.to_thread(scheduler.checked_params, SynthParams())
    other = Job(new_job_id(), params, [Section(0, "나" * 10, None)], preview=True, persisted=False)
    other.stream_audio = True
    admission.reserve(other, 1)
    await until(admission.taken_at_once, "the engine thread to wait for work")
    listener = QueuesAnotherAtItsSynth(admission, other)
    request = BatchRequest((SectionRequest(0, "가" * 10),))
    told = await scheduler.submit(
        request, preview=True, on_created=lambda job: job.subscribers.append(listener)
    )
    await until(lambda: engine.calls, "the engine to start a section")
    assert told.synth_at_admission and listener.queued
    assert engine.calls[0] == "가" * 10  # the preview told `synth` is the one the engine took
    await until(lambda: told.finished and other.finished, "both to end")
