"""The client's `stream_lost` event: driven step by step (the plan alone, no I/O), said once per loss,
with the worker's words, before the re-attach; on a real socket, only to a caller that asks for it.
`npu-worker batch` asks for it and prints it (tests/test_cli_batch_reattach.py)."""

from __future__ import annotations

from typing import Any

import pytest

from npu_worker.client.collector import BatchCollector, result_events
from npu_worker.client.errors import NotConnected, TransportError, WorkerProtocolError
from npu_worker.client.plans import streaming_plan
from tests.rogue_worker import RogueWorker, ndjson
from tests.test_client_core import DONE, HEALTHY, OK0, OK1, START, Script
from tests.test_client_rogue_worker import gapped, stream


def test_the_loss_of_a_stream_is_said_once_per_loss_with_the_worker_s_words():
    """A shutting-down worker's last line is said in the `stream_lost` event; re-attaches that bring
    nothing are no new loss; a stream that brought something and broke again is."""
    events: list[dict[str, Any]] = []
    collector = BatchCollector(lambda idx, event: events.append(event), report_stream_lost=True)
    script = Script(streaming_plan(collector, {"sections": []}, attempts=3, delay=0.0))
    # what the drivers send back for the worker's last line (`collector.gap` of its request-level error)
    shutting = TransportError("the stream failed: ShuttingDown: the worker is shutting down; job j1 …")
    down = NotConnected("connection refused")
    answers = [[START, OK0, shutting], down, HEALTHY, down, HEALTHY, [None], [OK1, None], [DONE, None]]
    script.run(collector, answers)
    lost = [(e["after"], e["error"]) for e in events if e["event"] == "stream_lost"]
    assert lost == [
        (2, "the stream failed: ShuttingDown: the worker is shutting down; job j1 …"),
        (3, "the stream ended before its done event"),
    ]
    assert script.result["wav_paths"] == ["/w/0.wav", "/w/1.wav"]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_stream_lost_reaches_only_a_caller_that_asks_for_it(use_async):
    """On a real socket, through a real re-attach: a callback written before `stream_lost` (it reads
    `event["seq"]` on every event) raised KeyError at the loss; it now gets the log's events only, and
    `report_stream_lost=True` (what `npu-worker batch` passes) gets the loss too, before the re-attach."""
    old_style: list[int] = []
    async with RogueWorker(gapped) as rogue:
        result = await stream(
            rogue.base, use_async, on_progress=lambda i, event: old_style.append(event["seq"])
        )
    assert old_style == [1, 2, 3, 4] and result["wav_paths"] == ["/w/s00.wav", "/w/s01.wav"]
    asked: list[dict[str, Any]] = []
    async with RogueWorker(gapped) as rogue:
        await stream(
            rogue.base, use_async, on_progress=lambda i, event: asked.append(event), report_stream_lost=True
        )
    lost = {"event": "stream_lost", "job_id": "j1", "after": 2, "error": "the stream skipped from seq 2 to 4"}
    assert [event.get("seq", event) for event in asked] == [1, 2, lost, 3, 4]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_stream_lost_line_from_the_worker_is_a_protocol_error(use_async):
    """The event is the client's own: a worker's line so named was passed on as the client's (without
    `seq`, it was a protocol error before the event existed), so `batch` printed a loss that never was."""
    spoof = {"event": "stream_lost", "job_id": "j1", "after": 7, "error": "made up"}
    events: list[dict[str, Any]] = []
    script = lambda method, path: ndjson(START, spoof, OK0, OK1, DONE)  # noqa: E731
    async with RogueWorker(script) as rogue:
        with pytest.raises(WorkerProtocolError, match="named as the client's own stream_lost"):
            await stream(
                rogue.base, use_async, on_progress=lambda i, e: events.append(e), report_stream_lost=True
            )
    assert [event["event"] for event in events] == ["start"]


WAITING_SPOOF = {"event": "waiting", "status": 503, "error": "Loading: made up", "retry_after": 5}
STATUS_SPOOF = {"event": "status", "job_id": "j1", "status": "done", "done": 2, "total": 2}


@pytest.mark.parametrize("spoof", [WAITING_SPOOF, STATUS_SPOOF], ids=["waiting", "status"])
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_line_from_the_worker_named_as_a_client_event_is_a_protocol_error(use_async, spoof):
    """`waiting` (it waits as a "not now" answer's Retry-After asks) and `status` (its polled
    `/jobs/{id}/status` snapshot) are the client's own events: a worker's line so named was passed on as
    the client's, so `batch` printed a wait that never was, or a job state the client never polled,
    counted as progress."""
    events: list[dict[str, Any]] = []
    script = lambda method, path: ndjson(START, spoof, OK0, OK1, DONE)  # noqa: E731
    async with RogueWorker(script) as rogue:
        with pytest.raises(WorkerProtocolError, match=f"named as the client's own {spoof['event']}"):
            await stream(rogue.base, use_async, on_progress=lambda i, e: events.append(e))
    assert [event["event"] for event in events] == ["start"]


@pytest.mark.parametrize("kind", ["status", "stream_lost", "waiting"])
def test_a_polled_result_section_named_as_a_client_event_is_a_protocol_error(kind):
    """A `/jobs/{id}/result` section is the worker's: one named `status`, `waiting` or `stream_lost` was
    passed on to `on_progress` as the client's own event, as a stream's line so named was."""
    body = {"sections": [{"idx": 0, "status": "ok", "wav_path": "/w/0.wav"}, {"idx": 1, "event": kind}]}
    with pytest.raises(WorkerProtocolError, match=f"named as the client's own {kind}"):
        result_events(body)
    assert [event["event"] for event in result_events({"sections": body["sections"][:1]})] == ["progress"]
