"""With the cache off (`--cache-max-bytes 0`) a section makes no cache key: nothing is looked up or
kept by it, and it cost the engine thread a JSON dump, a sha256 and, for a named voice, two `stat`s a
section (benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 52). With the cache on, a preview still looks
itself up (it may be served from the cache)."""

from __future__ import annotations

from typing import Any

import pytest

from npu_worker.jobs import cache as cache_module
from npu_worker.jobs import runner as runner_module
from tests.test_ws_support import batch, connect, run_request


@pytest.fixture
def keys_made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every cache key made, counted around the real `cache_key`."""
    made: list[str] = []
    real = cache_module.cache_key

    def counted(*args: Any, **kwargs: Any) -> str:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(cache_module, "cache_key", counted)
    monkeypatch.setattr(runner_module, "cache_key", counted, raising=False)  # (where it was called)
    return made


@pytest.mark.parametrize("cache_max_bytes", [0, 1 << 20])
async def test_a_section_makes_a_cache_key_only_with_the_cache_on(worker, keys_made, cache_max_bytes):
    client = await worker(cache_max_bytes=cache_max_bytes)
    ws = await connect(client)
    try:
        preview = await run_request(ws, batch("Hello there."))
        two = await run_request(ws, batch("One.", "Two."))
    finally:
        await ws.close()
    assert preview.done["ok_count"] == 1 and two.done["ok_count"] == 2
    assert len(preview.section_pcm(0)) > 0
    assert len(keys_made) == (3 if cache_max_bytes else 0)
