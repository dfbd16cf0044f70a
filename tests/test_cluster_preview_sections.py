"""A `/ws` request's sections on a Redis queue with several engine nodes: run one after another, so its
events come in idx order as on a local queue, whatever its `audio`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

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


@pytest.mark.parametrize("audio", [False, True])
async def test_a_ws_requests_sections_run_in_idx_order_on_several_engine_nodes(start_node, audio):
    """With `audio: false` a `/ws` job was queued with a window of several sections: two engine nodes
    took sections 0 and 1 at once, and the short section 1's `synth` and `ok` came before section 0's
    `ok` (`synth 0, synth 1, ok 1, ok 0`), where a local queue, and the protocol, keep idx order."""
    start_node("one", role="engine", delay=0.02)
    start_node("two", role="engine", delay=0.02)
    api = start_node("api", role="api")
    wait_engines(api, 2)
    texts = ["the first section is much longer than the others are", "b", "c", "d"]
    message = {"type": "synth_batch", "sections": [{"idx": i, "text": t} for i, t in enumerate(texts)]}
    async with aiohttp.ClientSession() as session:
        ws = AiohttpWs(await session.ws_connect(f"ws://127.0.0.1:{api.port}/ws", autoclose=False))
        for _ in range(3):
            await ws.send_json({**message, "audio": audio})
            transcript = await receive_until_done(ws)
            assert transcript.done["ok_count"] == len(texts), transcript.done
            order = [
                (e["idx"], e["status"]) for e in transcript.events("progress") if e["status"] != "queued"
            ]
            assert order == [(i, s) for i in range(len(texts)) for s in ("synth", "ok")], order
        await ws.close()
