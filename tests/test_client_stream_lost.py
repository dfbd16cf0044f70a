"""The client's `stream_lost` event, driven step by step (the plan alone, no I/O): said once per loss,
with the worker's words, before the re-attach. `npu-worker batch` prints it (tests/test_cli_batch_reattach.py)."""

from __future__ import annotations

from typing import Any

from npu_worker.client.collector import BatchCollector
from npu_worker.client.errors import NotConnected, TransportError
from npu_worker.client.plans import streaming_plan
from tests.test_client_core import DONE, HEALTHY, OK0, OK1, START, Script


def test_the_loss_of_a_stream_is_said_once_per_loss_with_the_worker_s_words():
    """A shutting-down worker's last line is said in the `stream_lost` event; re-attaches that bring
    nothing are no new loss; a stream that brought something and broke again is."""
    events: list[dict[str, Any]] = []
    collector = BatchCollector(lambda idx, event: events.append(event))
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
