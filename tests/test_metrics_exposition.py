"""`GET /metrics`, the whole text, against its golden file (tests/golden/metrics_exposition.json): every
family's `# HELP` and `# TYPE` lines, its series in order, their labels and values, after one fixed
workload on a real worker (previews over `/ws`, `/synth`, a cached section, a batch with a failed
section, a refused body): what a scraper reads, byte for byte but the values that vary from run to run
(timings, bytes kept, the version), so a change to how the worker counts cannot change it unnoticed.

`NPU_WORKER_WRITE_GOLDEN=1 python -m pytest tests/test_metrics_exposition.py` rewrites the file.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.golden_support import check
from tests.test_ws_support import batch, connect, run_request
from tests.timing import until
from tests.tone_engine import ToneEngine

# Series whose values move with the clock or the machine: the timings' buckets and sums, the bytes jobs
# keep (paths under a temporary folder), the gauges of work and connections the test does not wait on.
VARYING = re.compile(
    r"^(npu_worker_(ttfa|section)_seconds_(bucket|sum)|npu_worker_engine_busy_seconds_total|"
    r"npu_worker_job_bytes|npu_worker_jobs_active|npu_worker_queue_sections|npu_worker_connections_(open|lingering)|"
    r"npu_worker_body_bytes_held)\b"
)
VERSION = re.compile(r'^(npu_worker_build_info\{.*\bversion=")[^"]*(")')


def masked(exposition: str) -> list[str]:
    """The exposition's lines, the varying values replaced by `<value>` (names and labels kept)."""
    lines = []
    for line in exposition.splitlines():
        line = VERSION.sub(r"\1<version>\2", line)
        if not line.startswith("#") and VARYING.match(line):
            line = line.rsplit(" ", 1)[0] + " <value>"
        lines.append(line)
    return lines


async def test_the_exposition_after_a_fixed_workload_is_the_golden_one(worker, tmp_path: Path, settings):
    client = await worker(ToneEngine(fail_on="boom"), cache_max_bytes=10_000_000)
    ws = await connect(client)
    try:
        assert (await run_request(ws, batch("One."))).done["ok_count"] == 1
        assert (await run_request(ws, batch("Two.", " "))).done["fail_count"] == 1  # EmptyText
    finally:
        await ws.close()
    synth = {"text": "Three.", "output_path": str(tmp_path / "a.wav")}
    assert (await client.post("/synth", json=synth)).status == 200
    cache = Path(settings.state_dir) / "cache"
    await until(lambda: list(cache.glob("*.wav")), "the cache entry")  # put after the answer
    synth["output_path"] = str(tmp_path / "again.wav")
    assert (await (await client.post("/synth", json=synth)).json())["cached"] is True
    refused = {"text": " ", "output_path": str(tmp_path / "b.wav")}
    assert (await client.post("/synth", json=refused)).status == 400
    sections = {"sections": [{"text": "four."}, {"text": "boom."}], "stream": False}
    assert (await client.post("/synth_batch", json=sections)).status == 200
    assert (await client.get("/metrics")).status == 200  # the scrape itself, counted in the next one
    response = await client.get("/metrics")
    assert response.status == 200
    check("metrics_exposition", masked(await response.text()))
