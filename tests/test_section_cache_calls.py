"""What the engine lane asks of the cache and of a section's audio a `/ws` preview, counted
(benchmarks/SERVER_OVERHEAD.md, stop 56): `SynthesisCache.enabled` was a property (a Python call each of
three reads a section) and `_finish` read `SectionAudio.cached` twice; the same answers."""

from __future__ import annotations

from typing import Any

import pytest

from npu_worker.engine.base import EngineInfo, SynthesisRequest
from npu_worker.jobs.cache import SynthesisCache
from npu_worker.jobs.delivery import SectionAudio
from tests.test_lane_chunk_work import python_calls_of
from tests.test_ws_support import batch, connect, run_request

INFO = EngineInfo("tone", "cpu", "fp32", 24000, "tone")


def test_a_cache_that_is_off_says_so_without_a_call_and_keeps_nothing(tmp_path) -> None:
    off, on = SynthesisCache(tmp_path / "off", max_bytes=0), SynthesisCache(tmp_path / "on", max_bytes=10**6)
    assert (off.enabled, on.enabled) == (False, True)
    request = SynthesisRequest("Hello.")
    called = python_calls_of(lambda: (off.enabled, off.key_for(INFO, request, None), off.get("k", 24000)))
    assert called == ["key_for", "get"]  # no `enabled`
    assert off.key_for(INFO, request, None) == "" and on.key_for(INFO, request, None) != ""


@pytest.mark.parametrize("cache_max_bytes", [0, 10**6])
async def test_a_sections_end_reads_whether_it_was_cached_once(worker, monkeypatch, cache_max_bytes) -> None:
    reads: list[bool] = []

    def cached(self: SectionAudio) -> bool:
        reads.append(self.hit is not None)
        return self.hit is not None

    monkeypatch.setattr(SectionAudio, "cached", property(cached))
    client = await worker(cache_max_bytes=cache_max_bytes)
    ws = await connect(client)
    try:
        heard: Any = await run_request(ws, batch("A preview."))
    finally:
        await ws.close()
    assert heard.done["ok_count"] == 1 and reads == [False, False]  # (`run_section`'s and `_finish`'s)
