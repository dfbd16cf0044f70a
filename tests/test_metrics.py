"""GET /metrics: the Prometheus text a scraper reads, after real requests to a real worker."""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_ws_support import batch, connect, run_request
from tests.timing import seconds
from tests.tone_engine import ToneEngine


async def scrape(client, **headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = await client.get("/metrics", headers=headers)
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(await response.text()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


AUTH = {"Authorization": "Bearer s3cret"}


def value(samples: dict, metric: str, **labels: str) -> float:
    return samples.get((metric, tuple(sorted(labels.items()))), 0.0)


async def test_requests_sections_errors_and_timings_are_counted(worker, tmp_path: Path):
    client = await worker(ToneEngine(fail_on="boom"))
    ok = await client.post("/synth", json={"text": "안녕하세요.", "output_path": str(tmp_path / "a.wav")})
    assert ok.status == 200
    empty = await client.post("/synth", json={"text": " ", "output_path": str(tmp_path / "b.wav")})
    assert empty.status == 400
    batch = {"sections": [{"text": "one."}, {"text": "boom."}], "stream": False}
    assert (await client.post("/synth_batch", json=batch)).status == 200

    samples = await scrape(client)
    assert value(samples, "npu_worker_http_requests_total", method="POST", route="/synth", status="200") == 1
    assert value(samples, "npu_worker_http_requests_total", method="POST", route="/synth", status="400") == 1
    assert value(samples, "npu_worker_errors_total", name="EmptyText") == 1
    assert value(samples, "npu_worker_errors_total", name="EngineError") == 1
    assert value(samples, "npu_worker_sections_total", outcome="ok") == 2
    assert value(samples, "npu_worker_sections_total", outcome="error") == 1
    assert value(samples, "npu_worker_jobs_total", kind="preview", outcome="ok") == 1
    assert value(samples, "npu_worker_jobs_total", kind="batch", outcome="partial") == 1
    assert value(samples, "npu_worker_ttfa_seconds_count") == 0  # no listener heard them as made
    assert value(samples, "npu_worker_section_seconds_count") == 3
    assert value(samples, "npu_worker_engine_busy_seconds_total") > 0
    assert value(samples, "npu_worker_engine_loaded") == 1
    info = dict(backend="tone", device="cpu", model="tone-test-1", precision="fp32")
    assert value(samples, "npu_worker_engine_info", **info) == 1
    assert value(samples, "npu_worker_queue_sections") == 0


async def test_errors_in_openais_shape_are_counted_by_their_code(worker):
    client = await worker()
    assert (await client.post("/v1/audio/speech", json={"input": " "})).status == 400
    assert (await client.post("/v1/audio/speech", json={"input": "a", "speed": 9})).status == 400
    samples = await scrape(client)
    assert value(samples, "npu_worker_errors_total", name="EmptyText") == 1
    assert value(samples, "npu_worker_errors_total", name="BadRequest") == 1


async def test_queue_depth_is_read_when_scraped(worker):
    engine = ToneEngine()
    engine.gate = threading.Event()  # the first section blocks until the test lets it go
    client = await worker(engine)
    try:
        batch = {"sections": [{"text": "a."}, {"text": "b."}, {"text": "c."}]}
        assert (await client.post("/synth_batch?async=1", json=batch)).status == 200
        samples = await scrape(client)
        assert value(samples, "npu_worker_queue_sections") == 3
        assert value(samples, "npu_worker_jobs_active") == 1
    finally:
        engine.gate.set()


async def test_metrics_need_the_token_when_one_is_set(worker):
    client = await worker(token="s3cret")
    assert (await client.get("/metrics")).status == 401
    samples = await scrape(client, Authorization="Bearer s3cret")
    assert value(samples, "npu_worker_http_requests_total", method="GET", route="/metrics", status="401") == 1
    assert value(samples, "npu_worker_errors_total", name="Unauthorized") == 1


async def test_unknown_paths_and_wrong_methods_are_one_unmatched_route(worker):
    """A 405 has no route either (docs/protocol.md said `unmatched` only for 404s): both stay one
    label value, so a scanner cannot grow the label set."""
    client = await worker()
    assert (await client.get("/no/such/path")).status == 404
    assert (await client.get("/synth")).status == 405
    samples = await scrape(client)
    assert (
        value(samples, "npu_worker_http_requests_total", method="GET", route="unmatched", status="404") == 1
    )
    assert (
        value(samples, "npu_worker_http_requests_total", method="GET", route="unmatched", status="405") == 1
    )


async def settled_scrape(client, metric: str, expected: float, **labels: str) -> dict:
    """A scrape once `metric` reaches `expected`: with a Redis queue the node that logged an end counts
    it as its script returns, which may be just after a follower answered the caller."""
    async with asyncio.timeout(seconds(10)):
        while value(await scrape(client), metric, **labels) != expected:
            await asyncio.sleep(0.02)
    await asyncio.sleep(0.1)  # and nothing more comes
    return await scrape(client)


async def until_an_engine_is_alive(client) -> None:
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)


async def test_with_a_redis_queue_sections_and_jobs_are_counted(worker, redis_server, tmp_path: Path):
    """With `--queue redis` sections and jobs ended in Redis scripts, past the observer: /metrics
    counted none of them. Each is counted once, by the node that logged its end."""
    engine = ToneEngine(fail_on="boom")
    client = await worker(engine, queue=redis_server.url, claim_timeout=1.0)
    await until_an_engine_is_alive(client)
    ok = await client.post("/synth", json={"text": "안녕하세요.", "output_path": str(tmp_path / "a.wav")})
    assert (await ok.json())["status"] == "ok"
    batch = {"sections": [{"text": "one."}, {"text": "boom."}], "stream": False}
    assert (await (await client.post("/synth_batch", json=batch)).json())["fail_count"] == 1
    engine.gate = threading.Event()  # the next section blocks: the job is cancelled while it waits
    try:
        held = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "a."}]})).json()
        assert (await client.delete(f"/jobs/{held['job_id']}")).status == 200
    finally:
        engine.gate.set()
    samples = await settled_scrape(client, "npu_worker_jobs_total", 1, kind="batch", outcome="cancelled")
    assert value(samples, "npu_worker_sections_total", outcome="ok") == 2
    assert value(samples, "npu_worker_sections_total", outcome="error") == 1
    assert value(samples, "npu_worker_errors_total", name="EngineError") == 1
    assert value(samples, "npu_worker_jobs_total", kind="preview", outcome="ok") == 1
    assert value(samples, "npu_worker_jobs_total", kind="batch", outcome="partial") == 1
    assert value(samples, "npu_worker_jobs_total", kind="batch", outcome="cancelled") == 1


async def test_with_a_redis_queue_the_accepting_node_counts_the_files_it_writes(
    worker, redis_server, tmp_path: Path
):
    """An `api` node writes the files an engine node made (the writer hop): the section's `ok` and
    the job's end are counted there, once in the cluster."""
    engine_node = await worker(
        queue=redis_server.url, role="engine", claim_timeout=1.0, state_dir=str(tmp_path / "engine")
    )
    api = await worker(None, queue=redis_server.url, role="api", state_dir=str(tmp_path / "api"))
    await until_an_engine_is_alive(api)
    batch = {"sections": [{"text": "one."}, {"text": "two."}], "stream": False}
    assert (await (await api.post("/synth_batch", json=batch)).json())["ok_count"] == 2
    on_api = await settled_scrape(api, "npu_worker_jobs_total", 1, kind="batch", outcome="ok")
    on_engine = await scrape(engine_node)
    assert value(on_api, "npu_worker_sections_total", outcome="ok") == 2
    assert value(on_api, "npu_worker_jobs_total", kind="batch", outcome="ok") == 1
    assert value(on_engine, "npu_worker_sections_total", outcome="ok") == 0
    assert value(on_engine, "npu_worker_jobs_total", kind="batch", outcome="ok") == 0


async def test_a_websocket_request_refused_is_counted_by_its_error_name(worker):
    """A refusal on /ws is an `error` event, neither an HTTP answer nor a job's: /metrics saw no
    QueueFull for the player's previews. Each is counted in npu_worker_errors_total."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine, max_queue=2)
    try:
        held = await client.post(
            "/synth_batch?async=1", json={"sections": [{"text": "하나."}, {"text": "둘."}]}
        )
        assert held.status == 200
        ws = await connect(client)
        for message in (batch("넘침."), {"type": "nonsense"}):
            await ws.send_json(message)
            event = await ws.receive()
            assert isinstance(event, dict) and event["event"] == "error"
        await ws.close()
    finally:
        engine.gate.set()
    samples = await scrape(client)
    assert value(samples, "npu_worker_errors_total", name="QueueFull") == 1
    assert value(samples, "npu_worker_errors_total", name="UnknownMessage") == 1


async def test_health_polls_of_a_failed_worker_are_not_errors(worker, tmp_path: Path):
    """/health's 500 names the load failure at every poll: a probe every few seconds made
    npu_worker_errors_total{name="ModelLoadError"} grow with no caller refused. A refused request counts."""
    from tests.test_ready import BrokenEngine

    client = await worker(BrokenEngine(), wait_loaded=False, token="s3cret")
    scheduler = client.app[SCHEDULER_KEY]
    async with asyncio.timeout(seconds(10)):
        while scheduler.load_error is None:
            await asyncio.sleep(0.01)
    for _ in range(3):
        assert (await client.get("/health")).status == 500
        assert (await client.get("/ready")).status == 503
    refused = await client.post(
        "/synth", json={"text": "a", "output_path": str(tmp_path / "a.wav")}, headers=AUTH
    )
    assert refused.status >= 500
    samples = await scrape(client, **AUTH)
    assert value(samples, "npu_worker_errors_total", name="ModelLoadError") == 1
    labels = dict(method="GET", route="/health", status="500")
    assert value(samples, "npu_worker_http_requests_total", **labels) == 3


async def test_a_failed_openai_speech_is_one_error(worker):
    """Its section's `error` event was counted, then again the 500 that relays it: one engine
    failure was two in npu_worker_errors_total."""
    client = await worker(ToneEngine(fail_on="boom"))
    answer = await client.post("/v1/audio/speech", json={"input": "boom.", "response_format": "wav"})
    assert answer.status == 500 and (await answer.json())["error"]["code"] == "EngineError"
    samples = await scrape(client)
    assert value(samples, "npu_worker_errors_total", name="EngineError") == 1
    assert value(samples, "npu_worker_sections_total", outcome="error") == 1
    labels = dict(method="POST", route="/v1/audio/speech", status="500")
    assert value(samples, "npu_worker_http_requests_total", **labels) == 1


def documented_metrics() -> set[str]:
    """The names in the first column of docs/protocol.md's `/metrics` table."""
    text = (Path(__file__).parent.parent / "docs" / "protocol.md").read_text()
    section = text.split("## `GET /metrics`", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `npu_worker_"):
            names.update(re.findall(r"`(npu_worker_\w+)`", line.split("|")[1]))
    return names


async def test_every_exposed_series_is_documented_and_every_documented_one_exposed(worker, tmp_path: Path):
    client = await worker(ToneEngine(fail_on="boom"))
    assert (
        await client.post("/synth", json={"text": "a.", "output_path": str(tmp_path / "a.wav")})
    ).status == 200
    batch = {"sections": [{"text": "one."}, {"text": "boom."}], "stream": False}
    assert (await client.post("/synth_batch", json=batch)).status == 200
    response = await client.get("/metrics")
    documented = documented_metrics()
    exposed: set[str] = set()
    for family in text_string_to_metric_families(await response.text()):
        name = family.name + "_total" if family.type == "counter" else family.name
        exposed.add(name)
        for sample in family.samples:  # a histogram's _bucket/_sum/_count; no `_created` timestamps
            assert sample.name.removesuffix("_bucket").removesuffix("_sum").removesuffix("_count") in (
                {name, family.name} if family.type != "counter" else {name}
            ), sample.name
    assert exposed == documented


async def test_ttfa_counts_only_jobs_a_listener_hears_as_they_are_made(worker, tmp_path: Path):
    """A `/synth` or a `/synth_batch` has no listener of its audio: its engine makes the first audio
    unhurried (espeak's child holds the first frame, ZipVoice makes a longer first segment), so its
    "first audio" read later than a `/ws` preview's, mixed into one window and one histogram."""
    client = await worker(ToneEngine())
    synth = await client.post("/synth", json={"text": "하나.", "output_path": str(tmp_path / "a.wav")})
    assert synth.status == 200
    ndjson = {"sections": [{"text": "둘."}], "stream": False}
    assert (await client.post("/synth_batch", json=ndjson)).status == 200
    health = await (await client.get("/health")).json()
    assert health["ttfa_ms"] == {"p50": None, "p95": None, "count": 0}
    assert value(await scrape(client), "npu_worker_ttfa_seconds_count") == 0

    ws = await connect(client)
    try:
        assert (await run_request(ws, batch("셋."))).done["ok_count"] == 1
    finally:
        await ws.close()
    health = await (await client.get("/health")).json()
    assert health["ttfa_ms"]["count"] == 1 and health["ttfa_ms"]["p50"] > 0
    assert value(await scrape(client), "npu_worker_ttfa_seconds_count") == 1
