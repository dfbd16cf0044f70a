"""The markdown record of a run whose requests failed: its percentiles are of the requests that succeeded
(docs/benchmark.md says so), and the record did not. A run past capacity, 25 of 27 requests timed out, read
`TTFA p95 7178` beside `errors 25 (25 t/o)`: a p95 a reader took for every request's, each timeout (20 s
and more) left out. Now each such row is named under its table."""

from __future__ import annotations

import asyncio
import threading

from npu_worker.app_keys import SETTINGS_KEY
from npu_worker.bench.load import LoadConfig, run_load
from npu_worker.bench.report import markdown, summarize_runs
from tests.timing import seconds
from tests.tone_engine import ToneEngine


async def test_requests_that_failed_are_named_as_left_out_of_the_percentiles(worker):
    stuck = ToneEngine()
    stuck.gate = held = threading.Event()  # no chunk until the test ends: each request times out
    try:
        server = await worker(stuck)
        config = LoadConfig(
            f"http://127.0.0.1:{server.port}",
            (4.0,),
            ("첫 번째 문장입니다.",),
            transports=("ws",),  # (a held engine would hold the drain before the next transport's run)
            duration=2.0,
            max_requests=2,
            timeout=0.3,
            wav_dir=server.app[SETTINGS_KEY].output_roots[0],
        )
        async with asyncio.timeout(seconds(60)):
            result = await run_load(config)
    finally:
        held.set()
    summary = summarize_runs(result["records"])
    text = markdown(
        {
            "command": "npu-worker bench",
            "started_at": "s",
            "finished_at": "f",
            "machine": {"platform": "p", "cpu_count": 2},
            "health": result["health"],
            "summary": summary,
        }
    )
    [row] = summary
    sent = row["sent"]
    assert row["errors"] == row["timeouts"] == sent > 0 and row["ok"] == 0, row
    said = f"At 4/s, {sent} of {sent} requests failed ({sent} timed out): left out of every column, whose"
    assert f"{said} figures are of the 0 that succeeded." in text, text
