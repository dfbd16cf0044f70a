"""A `/ws` request's sections on a Redis queue with several engine nodes: run one after another, so its
events come in idx order as on a local queue, whatever its `audio`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis

from tests.cluster_support import Node, call, node_starter
from tests.redis_server import RedisServer
from tests.test_ws_support import AiohttpWs, receive_until_done
from tests.timing import seconds

pytestmark = pytest.mark.allow_blocking


@pytest.fixture
def start_node(tmp_path: Path, redis_server: RedisServer) -> Iterator[Any]:
    yield from node_starter(tmp_path, redis_server)


def wait_engines(api: Node, count: int) -> None:
    deadline = time.monotonic() + seconds(20)
    while call("GET", f"{api.base}/health")[1]["cluster"]["engines_alive"] < count:
        assert time.monotonic() < deadline, "the engine nodes never joined"
        time.sleep(0.05)


async def test_a_ws_requests_sections_run_in_idx_order_on_several_engine_nodes(start_node):
    """With `audio: false` a `/ws` job was queued with a window of several sections: two engine nodes
    took sections 0 and 1 at once, and the short section 1's `synth` and `ok` came before section 0's
    `ok` (`synth 0, synth 1, ok 1, ok 0`), where a local queue, and the protocol, keep idx order. Both
    values of `audio` on the same nodes, one after the other (three requests each): the nodes start once."""
    start_node("one", role="engine", delay=0.02)
    start_node("two", role="engine", delay=0.02)
    api = start_node("api", role="api")
    wait_engines(api, 2)
    texts = ["the first section is much longer than the others are", "b", "c", "d"]
    message = {"type": "synth_batch", "sections": [{"idx": i, "text": t} for i, t in enumerate(texts)]}
    async with aiohttp.ClientSession() as session:
        ws = AiohttpWs(await session.ws_connect(f"ws://127.0.0.1:{api.port}/ws", autoclose=False))
        for audio in (False, True):
            for _ in range(3):
                await ws.send_json({**message, "audio": audio})
                transcript = await receive_until_done(ws)
                assert transcript.done["ok_count"] == len(texts), (audio, transcript.done)
                order = [
                    (e["idx"], e["status"]) for e in transcript.events("progress") if e["status"] != "queued"
                ]
                assert order == [(i, s) for i in range(len(texts)) for s in ("synth", "ok")], (audio, order)
        await ws.close()


async def test_a_previews_audio_is_not_stored_in_redis_and_a_batchs_still_is(
    tmp_path, start_node, redis_server
):
    """No route serves a preview's audio (`GET /jobs/<preview>/...` is 404), yet the engine node encoded
    every section of a `/ws` preview (listened to or not) and of a `/synth` whose file it wrote itself
    as a wav and stored it in Redis (`npu:wav:<id>:<idx>`), kept there until the preview's expiry."""
    node = start_node("both", role="both")
    wait_engines(node, 1)
    message = {"type": "synth_batch", "sections": [{"idx": i, "text": t} for i, t in enumerate("ab")]}
    async with aiohttp.ClientSession() as session:
        ws = AiohttpWs(await session.ws_connect(f"ws://127.0.0.1:{node.port}/ws", autoclose=False))
        for audio in (False, True):
            await ws.send_json({**message, "audio": audio})
            assert (await receive_until_done(ws)).done["ok_count"] == 2
        await ws.close()
    synth = {"text": "a file", "output_path": str(tmp_path / "synth.wav")}
    assert call("POST", f"{node.base}/synth", synth)[1]["status"] == "ok"
    assert (tmp_path / "synth.wav").stat().st_size > 44
    status, batch = call(
        "POST", f"{node.base}/synth_batch", {"sections": [{"text": "kept"}], "stream": False}
    )
    assert (status, batch["ok_count"]) == (200, 1), batch
    with redis.Redis.from_url(redis_server.url) as client:
        stored = sorted(key.decode() for key in client.scan_iter("npu:wav:*"))
    assert stored == [f"npu:wav:{batch['job_id']}:0"]  # the batch's, which GET .../audio serves
    status, wav = call("GET", f"{node.base}/jobs/{batch['job_id']}/sections/0/audio")
    assert status == 200 and wav[:4] == b"RIFF"
