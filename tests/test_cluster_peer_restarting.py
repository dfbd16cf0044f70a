"""An api node whose every live engine node waits for one of its loops to start again (a real
redis-server, a real api worker in process, the engine node's beat as `RedisJobs.heartbeat` sends it): the
engine node itself answers 503 `NodeRestarting` with `Retry-After` meanwhile, yet the api node, the one
callers ask, read its beat's `load_error` as a failed load: 500 `ModelLoadError: every engine node failed to
load its engine (…)`, no `Retry-After`, so a client gave up on what waiting mends."""

from __future__ import annotations

from typing import Any

from npu_worker.jobs.cluster.store import RedisJobs

RESTARTING = (
    "NodeRestarting: this node's writer loop ended on RuntimeError; it starts again in 60 s (its log has why)"
)


async def test_an_api_node_whose_engine_node_restarts_a_loop_says_not_now(
    worker: Any, redis_server: Any, tmp_path: Any
) -> None:
    api = await worker(role="api", state_dir=str(tmp_path / "api"), queue=redis_server.url, wait_loaded=False)
    jobs = RedisJobs(redis_server.url)
    try:
        # The engine node's beat, as its heartbeat loop sends it each second while another loop is down
        # (sent again before each question: a beat older than 5 s is a node gone).
        await jobs.heartbeat("engine-1", {"role": "engine", "load_error": RESTARTING})
        health = await api.get("/health")
        body = await health.json()
        await jobs.heartbeat("engine-1", {"role": "engine", "load_error": RESTARTING})
        refused = await api.post("/synth_batch", json={"sections": [{"idx": 0, "text": "later"}]})
        error = (await refused.json())["error"]
    finally:
        await jobs.close()
    said = (
        "NodeRestarting: no engine node runs; engine-1 starts again soon (NodeRestarting: this node's writer"
    )
    assert (health.status, body["status"]) == (503, "fail") and body["error"].startswith(said), body
    assert health.headers.get("Retry-After") == "1"
    assert refused.status == 503 and error.startswith(said), error
    assert refused.headers.get("Retry-After") == "1"
