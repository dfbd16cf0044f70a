"""A queue URL's query at `serve`'s start-up, against a real redis-server: redis-py takes every key of it as
a setting of the worker's connections, so a key the worker sets itself left a node running broken."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.redis_server import RedisServer, redis_available
from tests.serve_process import ServeProcess
from tests.timing import seconds

pytestmark = [
    pytest.mark.allow_blocking,
    pytest.mark.skipif(not redis_available(), reason="redis-server is not installed"),
]

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "scheme, query, words",
    [
        # a node whose /health said 200 while its engine and writer loops had ended on the replies' shape
        ("redis", "?protocol=3", "queue URL setting 'protocol' refused"),
        # its loops waited for a connection for ever, a warning every 50 ms
        ("redis", "?max_connections=1", "queue URL setting 'max_connections' refused"),
        ("redis", "?decode_responses=true", "queue URL setting 'decode_responses' refused"),  # a traceback
        ("redis", "?socket_timeout=abc", "queue URL setting 'socket_timeout' refused"),  # a traceback
        ("redis", "?client=x", "queue URL setting 'client' refused"),  # redis-py's TypeError: a traceback
        ("redis", "?password=x&ssl_certfile=/x", "'ssl_certfile' refused: a TLS setting needs a rediss://"),
        ("rediss", "?ssl_min_version=bad", "the queue URL cannot be read"),  # a traceback
    ],
)
def test_a_queue_url_setting_the_worker_sets_itself_is_refused_in_words_at_start_up(
    tmp_path: Path, redis_server: RedisServer, scheme: str, query: str, words: str
) -> None:
    url = scheme + redis_server.url.removeprefix("redis") + query
    env = {**os.environ, "PYTHONPATH": str(REPO), "NPU_WORKER_QUEUE": url}
    command = [sys.executable, "-m", "npu_worker.cli", "serve", "--state-dir", str(tmp_path / "s")]
    command += ["--port", "0"]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=seconds(30))
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"serve started on {query}: {str(exc.stderr)[-3000:]}") from None
    assert done.returncode == 2, done.stderr[-3000:]
    assert words in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]
    if "password" in query:
        assert "password=***" in done.stderr and "password=x" not in done.stderr, done.stderr


def test_a_password_in_the_query_still_reaches_a_redis_that_asks_for_one(tmp_path: Path) -> None:
    """`?password=` is the worker's to pass on (docs/security.md): refusing unknown keys keeps it."""
    redis_server = RedisServer(tmp_path, "--requirepass", "s3cret")
    redis_server.start()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env["NPU_WORKER_QUEUE"] = redis_server.url + "?password=s3cret"
    worker = ServeProcess(["--state-dir", str(tmp_path / "s")], env)
    try:
        worker.log_until("joined the queue", seconds(30))
        try:
            with urllib.request.urlopen(f"{worker.base}/health", timeout=seconds(20)) as response:
                health = json.loads(response.read())
        except urllib.error.HTTPError as loading:  # a 503 while the engine loads still says how Redis is
            health = json.loads(loading.read())
        assert (health["queue_backend"], health["redis"]) == ("redis", "ok"), health
    finally:
        worker.kill()
        worker.wait(seconds(30))
        redis_server.stop()
