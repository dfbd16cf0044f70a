"""What every answer costs the event loop besides its route's own work, counted on a real worker over a real
socket (issue 25, stop 63: benchmarks/SERVER_OVERHEAD.md counts it with `call_counts.py --synths`). Each
of these ran on the loop an answer: the CORS hook's `Vary` built a list and a generator where none was set
yet (and looked for an allowed origin where no `Origin` came); the request counter's prometheus_client
`labels(...).inc()` ≈ 9 calls; the connection guard's `queued_refusal` per piece received and per request
fed (5 a `/synth`); the `/ws` pump's `if burst:` (≈ 6 a preview). The answers stay as they were:
tests/test_cors.py, tests/test_metrics_exposition.py, tests/test_server_parser_refusals.py and
tests/test_ws_burst.py keep their headers, series, refusals and frames."""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import aiohttp

from tests.loop_calls import loop_calls_in_three_synths
from tests.test_ws_support import batch, connect, run_request


async def test_an_answer_with_no_origin_builds_no_vary_list_on_the_loop(worker, tmp_path):
    client = await worker()
    calls = await loop_calls_in_three_synths(
        client, tmp_path, lambda code: code.co_filename.endswith("/npu_worker/http_compat/cors.py")
    )
    # (each answer: the middleware's steps — as many as the handler's resumes, not counted —, the prepare
    # hook, `vary_on`; no `_allowed`, no list or generator)
    counted = Counter(name for name in calls if name != "cors_middleware")
    assert counted == {"add_cors_headers": 3, "vary_on": 3}, Counter(calls)


async def test_an_answer_is_counted_without_prometheus_client_on_the_loop(worker, tmp_path):
    client = await worker()
    calls = await loop_calls_in_three_synths(
        client, tmp_path, lambda code: "/prometheus_client/" in code.co_filename
    )
    assert calls == []
    metrics = await (await client.get("/metrics")).text()  # (and still counted: three more than the warm one)
    assert 'npu_worker_http_requests_total{method="POST",route="/synth",status="200"} 4.0' in metrics


async def test_a_request_received_looks_for_a_refusal_without_a_call(served, tmp_path):
    listener = await served()  # (the connection guard, as `serve` runs it)
    async with aiohttp.ClientSession(f"http://127.0.0.1:{listener.port}") as client:
        calls = await loop_calls_in_three_synths(
            client, tmp_path, lambda code: code.co_filename.endswith("/npu_worker/refused_bodies.py")
        )
    assert calls == []


async def test_a_ws_preview_asks_its_burst_whether_empty_without_a_call(worker):
    """The `/ws` pump asked `if burst:` (`Burst.__bool__`, a Python call) ≈ 6 times a preview on the loop;
    it reads the burst's `size` (0 exactly when it holds no frame)."""
    client = await worker()
    ws = await connect(client)
    await run_request(ws, batch("한 번에."))  # (warm)
    calls: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.endswith("/npu_worker/ws_server/burst.py"):
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)  # (this thread: the loop's)
    try:
        transcripts = [await run_request(ws, batch(f"한 번에 {call}.")) for call in range(3)]
    finally:
        sys.setprofile(None)
    await ws.close()
    assert all(transcript.done["ok_count"] == 1 for transcript in transcripts)
    assert "__bool__" not in calls and "take" in calls, calls


async def test_a_request_s_headers_are_looked_for_their_end_without_a_generator(served, tmp_path):
    """The header bound looked for the headers' end with `any` over a generator (two calls a request)."""
    listener = await served()
    async with aiohttp.ClientSession(f"http://127.0.0.1:{listener.port}") as client:
        calls = await loop_calls_in_three_synths(
            client, tmp_path, lambda code: code.co_filename.endswith("/npu_worker/connection_guard.py")
        )
    assert "<genexpr>" not in calls and "_count_header_bytes" in calls, calls
