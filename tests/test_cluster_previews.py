"""Previews (`/synth`) an api node accepted, when that node stops (a rolling restart) or its answer is an
error: nothing is left in Redis for nobody, and the caller is told what a local worker tells it."""

from __future__ import annotations

import concurrent.futures
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.cluster_support import Node, call, node_starter
from tests.redis_server import RedisServer
from tests.timing import seconds

pytestmark = pytest.mark.allow_blocking


@pytest.fixture
def start_node(tmp_path: Path, redis_server: RedisServer) -> Iterator[Any]:
    yield from node_starter(tmp_path, redis_server)


@pytest.fixture
def shared(redis_server: RedisServer) -> Iterator[redis.Redis]:
    with redis.Redis.from_url(redis_server.url, decode_responses=True) as client:
        yield client


def preview_at(shared: redis.Redis, entries: int) -> str:
    """The one preview under way, once its log holds `entries` events (2: its `synth` is logged)."""
    deadline = time.monotonic() + seconds(20)
    while True:
        ids = shared.zrange("npu:previews", 0, -1)
        if ids and shared.xlen(f"npu:log:{ids[0]}") >= entries:
            return ids[0]
        assert time.monotonic() < deadline, "the preview never got that far"
        time.sleep(0.02)


def stop(node: Node) -> None:
    node.process.send_signal(signal.SIGTERM)
    assert node.process.wait(timeout=seconds(40)) == 0


def test_a_preview_queued_when_its_api_node_stops_is_ended_and_its_caller_told_to_resend(
    tmp_path, start_node, shared
):
    """The api node's drain had nothing to wait for: its /synth caller was answered `Cancelled: the
    request was cancelled` while the preview stayed queued in Redis, to be made, and its file written
    at the node's restart, for nobody."""
    start_node("engine", role="engine", delay=0.02)
    api = start_node("api", role="api")
    busy = {"sections": [{"text": "가" * 1000}]}  # 20 s of audio, 8 s to make: the engine is taken
    assert call("POST", f"{api.base}/synth_batch?async=1", busy)[0] == 200
    out = tmp_path / "queued.wav"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        answer = pool.submit(call, "POST", f"{api.base}/synth", {"text": "short", "output_path": str(out)})
        job_id = preview_at(shared, 1)
        stop(api)
        status, body = answer.result(timeout=seconds(20))
    assert (status, body["status"]) == (200, "fail"), body
    assert body["error"].startswith("QueueFull: the worker is shutting down"), body
    assert shared.hget(f"npu:job:{job_id}", "done") == "1"  # nothing left to run
    assert int(shared.get("npu:pending") or 0) == 1  # the batch's section alone


def test_a_preview_running_when_its_api_node_stops_finishes_within_the_grace(tmp_path, start_node, shared):
    """As on a local worker, the drain lets a running section finish: the /synth was answered
    `Cancelled` at once while its section ran on, and its file was written only at the node's restart."""
    start_node("engine", role="engine", delay=0.02)
    api = start_node("api", role="api")
    out = tmp_path / "running.wav"
    body = {"text": "가" * 100, "output_path": str(out)}  # 2 s of audio, 0.8 s to make
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        answer = pool.submit(call, "POST", f"{api.base}/synth", body)
        preview_at(shared, 2)
        stop(api)
        status, body = answer.result(timeout=seconds(20))
    assert (status, body["status"]) == (200, "ok"), body
    assert out.is_file() and body["wav_path"] == str(out)
