"""A `both` node whose own engine still loads accepts work its peers can run, as one whose engine failed
does (docs/deploy.md, Roles): it answered every submission 503 `Loading` meanwhile (a ZipVoice load on a
board takes 8 s and more), while a loaded engine node waited idle."""

from __future__ import annotations

import asyncio

from npu_worker.app_keys import SCHEDULER_KEY
from tests.timing import seconds
from tests.tone_engine import HeldLoad

PHASE = "compiling the decoder (1/5)"


async def peer_engine_seen(node) -> None:
    """Until `node`'s view of the cluster holds a loaded engine node (its beat names its backend)."""
    scheduler = node.app[SCHEDULER_KEY]
    async with asyncio.timeout(seconds(30)):
        while not any(n.get("backend") for n in scheduler.heartbeat.view["nodes"]):
            await node.get("/health")  # refreshes the view
            await asyncio.sleep(0.05)


async def test_a_loading_both_node_accepts_work_a_loaded_peer_runs(worker, redis_server, tmp_path):
    cluster = {"queue": redis_server.url, "wait_loaded": False}
    held = HeldLoad()
    held.load_phase = PHASE  # what a loading engine says it is doing
    both = await worker(held, role="both", state_dir=str(tmp_path / "both"), **cluster)
    try:
        await worker(role="engine", state_dir=str(tmp_path / "engine"), **cluster)
        await peer_engine_seen(both)
        assert not held.loaded.is_set() and both.app[SCHEDULER_KEY].engine_node.runner.info is None
        health = await both.get("/health")
        said = await health.json()
        assert health.status == 200 and said["backend"] == "tone"
        # it serves (`loaded`: its peer's engine) and its own load is said where its node is: the
        # top-level `load_phase` beside `loaded: true` read as a worker both loaded and loading
        assert said["loaded"] is True and said["load_phase"] is None, said
        async with asyncio.timeout(seconds(30)):
            while not any(n.get("load_phase") == PHASE for n in said["cluster"]["nodes"]):
                await asyncio.sleep(0.1)
                said = await (await both.get("/health")).json()
        [own] = [n for n in said["cluster"]["nodes"] if n["node"] == said["node"]]
        assert own["role"] == "both" and "backend" not in own
        out = tmp_path / "s0.wav"
        body = {"sections": [{"idx": 0, "text": "slide", "output_path": str(out)}], "stream": False}
        async with both.post("/synth_batch", json=body) as answer:
            assert answer.status == 200, await answer.text()
            assert (await answer.json())["ok_count"] == 1
        assert await asyncio.to_thread(out.is_file)  # written by the accepting node, made by its peer
    finally:
        held.loaded.set()


async def test_a_loading_both_node_alone_still_says_it_loads(worker, redis_server, tmp_path):
    held = HeldLoad()
    both = await worker(
        held, role="both", state_dir=str(tmp_path / "both"), queue=redis_server.url, wait_loaded=False
    )
    try:
        answer = await both.post("/synth_batch", json={"sections": [{"idx": 0, "text": "slide"}]})
        assert answer.status == 503
        assert (await answer.json())["error"] == "Loading: the engine is still loading; retry shortly"
    finally:
        held.loaded.set()
