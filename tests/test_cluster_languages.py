"""An api node's /health lists the languages every live engine node speaks (an intersection), against
a real redis-server and real nodes: a real espeak-ng engine node beside a tone engine that speaks three.

An api node listed none (it has no engine of its own), so `npu-worker bench --lang` and the player could
not check a language against it; a union would have listed some that one engine node refuses."""

from __future__ import annotations

import asyncio
from typing import Any

from npu_worker.engine.espeak import EspeakEngine
from tests.timing import seconds
from tests.tone_engine import ToneEngine


class ThreeLanguageTone(ToneEngine):
    """A tone engine that says it speaks `ko`, `en` and one code espeak-ng has no voice for."""

    def spoken_languages(self) -> list[str]:
        return ["ko", "en", "zz-not-espeak"]


async def engines_seen(client: Any, count: int) -> dict[str, Any]:
    """The node's /health once `count` loaded engine nodes report to it."""
    async with asyncio.timeout(seconds(30)):
        while True:
            health = await (await client.get("/health")).json()
            nodes = health.get("cluster", {}).get("nodes", [])
            if health.get("loaded") and sum(1 for node in nodes if node.get("backend")) == count:
                return health
            await asyncio.sleep(0.05)


async def test_an_api_node_lists_the_languages_all_its_engine_nodes_speak(worker, redis_server, tmp_path):
    cluster = {"queue": redis_server.url, "wait_loaded": False}
    api = await worker(role="api", state_dir=str(tmp_path / "api"), **cluster)
    espeak = await worker(EspeakEngine(), role="engine", state_dir=str(tmp_path / "espeak"), **cluster)
    spoken_by_espeak = (await engines_seen(espeak, 1))["languages"]
    assert {"ko", "en"} <= set(spoken_by_espeak) and "zz-not-espeak" not in spoken_by_espeak
    health = await engines_seen(api, 1)
    assert health["languages"] == spoken_by_espeak  # one engine node: its list
    assert all("languages" not in node for node in health["cluster"]["nodes"])  # (4.5 KB each, not echoed)

    await worker(ThreeLanguageTone(), role="engine", state_dir=str(tmp_path / "tone"), **cluster)
    health = await engines_seen(api, 2)
    # In the first node's order by name, and the nodes' names are drawn at random: either order.
    assert health["languages"] in (["en", "ko"], ["ko", "en"])


def test_a_planted_languages_value_narrows_nothing():
    """Any local process can write to Redis: a `languages` that is not a list of short codes is left
    out of the node's entry (the node still shown), never intersected nor failing /health."""
    import json

    from npu_worker.jobs.cluster.entries import node_entry

    beat = {"role": "engine", "seen": 1.0}
    for planted in ("ko", [1, 2], ["x" * 65], {"ko": 1}):
        entry = node_entry(json.dumps({**beat, "languages": planted}).encode())
        assert entry is not None and "languages" not in entry, planted
    assert node_entry(json.dumps({**beat, "languages": ["ko"]}).encode())["languages"] == ["ko"]  # type: ignore[index]


async def test_a_planted_list_with_repeats_lists_each_language_once(worker, redis_server, tmp_path):
    """The api node's list kept the first node's order and every entry of it: a beat planted first by
    name with 6 000 repeats of two codes (29 KB, under the 64 KiB a beat may have) made /health list
    both 3 000 times each, which bench and the player showed."""
    import json

    import redis.asyncio as aioredis

    cluster = {"queue": redis_server.url, "wait_loaded": False}
    api = await worker(role="api", state_dir=str(tmp_path / "api"), **cluster)
    await worker(ThreeLanguageTone(), role="engine", state_dir=str(tmp_path / "tone"), **cluster)
    await engines_seen(api, 1)
    planter = aioredis.from_url(redis_server.url)
    try:
        now, _micros = await planter.time()
        beat = {"role": "engine", "backend": "tone", "device": "cpu", "precision": "fp32", "model": "tone"}
        beat |= {"sample_rate": 24000, "seen": now + 4, "languages": ["en"] * 3000 + ["ko"] * 3000}
        await planter.hset("npu:nodes", "0-planted", json.dumps(beat))
        health = await engines_seen(api, 2)
        assert health["languages"] == ["en", "ko"], len(health["languages"])
    finally:
        await planter.aclose()
