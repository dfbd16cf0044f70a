"""A `/synth` preview whose file its accepting node writes from audio another node made: once the file
is written, the wav the engine node put in Redis for it is dropped. Nothing else
reads it (no route serves a preview's audio), yet it stayed until retention, 30 s after the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.cluster_support import call, node_starter
from tests.redis_server import RedisServer
from tests.test_cluster_preview_sections import wait_engines

pytestmark = pytest.mark.allow_blocking


@pytest.fixture
def start_node(tmp_path: Path, redis_server: RedisServer) -> Iterator[Any]:
    yield from node_starter(tmp_path, redis_server)


def test_a_previews_wav_is_dropped_from_redis_once_its_file_is_written(tmp_path, start_node, redis_server):
    start_node("engine", role="engine")
    api = start_node("api", role="api")
    wait_engines(api, 1)
    written = tmp_path / "synth.wav"
    status, answer = call("POST", f"{api.base}/synth", {"text": "a file", "output_path": str(written)})
    assert (status, answer["status"]) == (200, "ok"), answer
    assert written.stat().st_size > 44
    with redis.Redis.from_url(redis_server.url) as client:
        jobs = [key for key in client.scan_iter("npu:job:*") if client.hget(key, "preview") == b"1"]
        assert len(jobs) == 1  # the preview's keys are still there (retention removes them later)
        assert sorted(client.scan_iter("npu:wav:*")) == []
