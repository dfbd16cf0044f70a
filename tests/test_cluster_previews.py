"""Previews (`/synth`) an api node accepted, when that node stops (a rolling restart) or its answer is an
error: nothing is left in Redis for nobody, and the caller is told what a local worker tells it."""

from __future__ import annotations

import asyncio
import concurrent.futures
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from npu_worker.jobs.cluster.follower import Followers
from npu_worker.jobs.cluster.keys import CANCEL_CHANNEL, final_key
from npu_worker.jobs.cluster.preview_drain import drain_previews
from npu_worker.jobs.cluster.store import RedisJobs
from npu_worker.jobs.model import Job, Section
from npu_worker.jobs.subscription import Subscription
from npu_worker.protocol import Progress, SectionError, Start, SynthParams
from tests.cluster_support import Node, call, node_starter
from tests.redis_server import RedisServer
from tests.test_cluster_store import ok
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


async def published(pubsub: Any, within: float) -> Any:
    """The first message on `pubsub` within `within` s, else None."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while (left := deadline - loop.time()) > 0:
        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=left)
        if message is not None:
            return message
    return None


async def test_a_preview_begun_on_an_engine_but_still_queued_in_the_api_nodes_copy_is_given_the_grace(
    redis_server,
):
    """The api node's copy of a job folds its log a read behind. A preview whose `synth` an engine node
    had logged just before the SIGTERM looked queued there: it was ended with `QueueFull` and its engine
    told to stop, not given the grace to finish (the test above failed so, 1 run in 20, on a loaded
    machine). Here the copy has read nothing yet when the drain begins; the engine node's section ends
    1 s later, well within the grace, unless it is told to stop first."""
    jobs = RedisJobs(redis_server.url)
    followers = Followers(jobs)
    job = Job("begun", SynthParams(), [Section(0, "x", None)], True, persisted=False)
    try:
        await jobs.create(job, "api", Start(1, "tone", "cpu", job.id, 24000), max_queue=10, window=1)
        assert await jobs.append(job.id, Progress(0, "synth")) == 2  # an engine node began it
        async with jobs.redis.pubsub() as cancels:
            await cancels.subscribe(CANCEL_CHANNEL)
            Subscription(followers.attach(job))  # its caller; the copy here: queued, nothing read yet
            drain = asyncio.create_task(drain_previews(jobs, followers, "api", seconds(30), lambda *_: None))
            cancel = await published(cancels, 1.0)  # the engine node runs the section this long
            made = await jobs.made_ok(job.id, "engine", 0, b"RIFF", ok(0))
            await asyncio.wait_for(drain, seconds(20))
    finally:
        await followers.close()
        await jobs.close()
    assert cancel is None, cancel
    assert made > 0  # the engine node's `ok` was logged, not refused as after another final
    assert isinstance(job.sections[0].final, Progress) and job.sections[0].final.status == "ok"


async def test_a_running_previews_other_sections_end_once_its_running_one_has_finished(redis_server):
    """A multi-section preview (a `/ws` request) with a section running on an engine node when its api
    node stopped was left to run whole, all 8 sections up to the grace, where a local worker's drain
    lets the running section finish and then ends the rest with `QueueFull`. Here sections 1 and 2
    must be ended once section 0's `ok` is logged, long before the grace, and after that `ok` (idx
    order); no engine is told to stop while section 0 runs."""
    jobs = RedisJobs(redis_server.url)
    followers = Followers(jobs)
    job = Job("multi", SynthParams(), [Section(i, "x", None) for i in range(3)], True, persisted=False)
    loop = asyncio.get_running_loop()
    try:
        await jobs.create(job, "api", Start(3, "tone", "cpu", job.id, 24000), max_queue=10, window=1)
        await jobs.append(job.id, Progress(0, "synth"))  # an engine node runs section 0
        async with jobs.redis.pubsub() as cancels:
            await cancels.subscribe(CANCEL_CHANNEL)
            Subscription(followers.attach(job))
            drain = asyncio.create_task(drain_previews(jobs, followers, "api", seconds(30), lambda *_: None))
            cancel = await published(cancels, 0.5)  # section 0 runs this long
            early = await jobs.redis.hkeys(final_key(job.id))
            made = await jobs.made_ok(job.id, "engine", 0, b"RIFF", ok(0))
            deadline = loop.time() + seconds(10)
            while len(await jobs.redis.hkeys(final_key(job.id))) < 3:  # sections 1 and 2 ended
                assert loop.time() < deadline, "the sections not begun were left to run"
                await asyncio.sleep(0.02)
            await asyncio.wait_for(drain, seconds(20))
    finally:
        await followers.close()
        await jobs.close()
    assert (cancel, early) == (None, []), (cancel, early)
    assert made > 0  # the running section's `ok` was logged
    assert isinstance(job.sections[0].final, Progress)
    ends = [s.final.error if isinstance(s.final, SectionError) else s.final for s in job.sections[1:]]
    assert all(str(end).startswith("QueueFull: the worker is shutting down") for end in ends), ends
    finals = [
        e.event.idx
        for e in job.log
        if isinstance(e.event, Progress | SectionError) and e.event.idx is not None
    ]
    assert [i for i in finals if i is not None][-3:] == [0, 1, 2], job.log
    assert job.finished
