"""A section's and a job's end counted on the engine lanes call no `labels(...)` (≈ 10 Python calls
under its lock each; benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 53) and, since stop 58, touch no
prometheus_client value at all (`http_compat/lane_tallies.py`); `/metrics` shows the same series and values."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from prometheus_client import values as prometheus_values
from prometheus_client.metrics import MetricWrapperBase

from npu_worker.http_compat.metrics import METRICS_KEY
from tests.test_metrics import scrape, value
from tests.test_ws_support import batch, connect, run_request


@pytest.fixture
def labels_called(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The threads that called the real `labels`, once counting is switched on (`labels_called.append("on")`)."""
    called: list[str] = []
    real = MetricWrapperBase.labels

    def counted(self: MetricWrapperBase, *args: Any, **kwargs: Any) -> Any:
        if called[:1] == ["on"]:
            called.append(threading.current_thread().name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(MetricWrapperBase, "labels", counted)
    return called


async def test_previews_after_the_first_call_no_labels_and_count_the_same(worker, labels_called):
    client = await worker()
    ws = await connect(client)
    try:
        for text in ("One.", "Two."):  # the children of `ok` sections and `preview ok` jobs are made here
            assert (await run_request(ws, batch(text))).done["ok_count"] == 1
        labels_called.append("on")
        for text in ("Three.", "Four.", "Five."):
            assert (await run_request(ws, batch(text))).done["ok_count"] == 1
        assert labels_called == ["on"]
    finally:
        await ws.close()
    samples = await scrape(client)
    assert value(samples, "npu_worker_sections_total", outcome="ok") == 5
    assert value(samples, "npu_worker_jobs_total", kind="preview", outcome="ok") == 5
    assert value(samples, "npu_worker_section_seconds_count") == 5
    assert ("npu_worker_sections_total", (("outcome", "error"),)) not in samples  # made by the first only


async def test_a_failed_section_and_a_partial_job_make_their_series(worker):
    client = await worker()
    ws = await connect(client)
    try:
        done = (await run_request(ws, batch("One.", " "))).done  # an empty text fails its section
    finally:
        await ws.close()
    assert done["ok_count"] == 1 and done["fail_count"] == 1
    samples = await scrape(client)
    assert value(samples, "npu_worker_sections_total", outcome="error") == 1
    assert value(samples, "npu_worker_sections_total", outcome="ok") == 1
    assert value(samples, "npu_worker_jobs_total", kind="preview", outcome="partial") == 1
    assert value(samples, "npu_worker_errors_total", name="EmptyText") == 1


async def test_a_previews_counts_touch_no_prometheus_value_and_busy_seconds_are_the_section_sum(
    worker, monkeypatch
):
    """A preview's section, job, TTFA and engine time are counted in plain numbers by the thread that
    counts them (`lane_tallies.py`, stop 58): no prometheus_client value is incremented or set (its lock
    and ≈ 6 calls a count, 2 counters and 2 histograms a preview before); `/metrics` shows the counts, and
    `npu_worker_engine_busy_seconds_total` is the section histogram's sum, read when scraped."""
    touched: list[str] = []
    value_class = prometheus_values.ValueClass

    def recorded(name: str) -> Any:
        real = getattr(value_class, name)

        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            touched.append(f"{name} on {threading.current_thread().name}")
            return real(self, *args, **kwargs)

        return call

    client = await worker()
    ws = await connect(client)
    try:
        assert (await run_request(ws, batch("One."))).done["ok_count"] == 1
        for name in ("inc", "set"):
            monkeypatch.setattr(value_class, name, recorded(name))
        for text in ("Two.", "Three."):
            assert (await run_request(ws, batch(text))).done["ok_count"] == 1
        monkeypatch.undo()
    finally:
        await ws.close()
    assert touched == []
    samples = await scrape(client)
    assert value(samples, "npu_worker_sections_total", outcome="ok") == 3
    assert value(samples, "npu_worker_jobs_total", kind="preview", outcome="ok") == 3
    assert value(samples, "npu_worker_ttfa_seconds_count") == 3
    assert value(samples, "npu_worker_section_seconds_count") == 3
    busy = value(samples, "npu_worker_engine_busy_seconds_total")
    assert busy > 0 and busy == value(samples, "npu_worker_section_seconds_sum")
    assert ("npu_worker_engine_busy_seconds_created", ()) not in samples  # as no other series has one


async def until_done_or_refused(ws: Any) -> dict[str, Any]:
    while True:
        item = await ws.receive()
        if isinstance(item, dict) and (item["event"] == "done" or item.get("idx", 0) is None):
            return item


async def test_a_callers_voices_languages_and_texts_make_no_series_or_children(worker, tmp_path):
    """The kept children are keyed by outcomes and kinds only: a caller's voice names, languages and
    texts (a million of each) never grow them, nor any other series."""
    client = await worker()
    metrics = client.app[METRICS_KEY]

    async def round_of(i: int) -> None:
        ws = await connect(client)
        try:
            for extra in ({"ref_wav": f"v{i}"}, {"lang": f"x{i}"}):  # refused: an unknown voice, language
                await ws.send_json(batch(f"Text {i}.", **extra))
                await until_done_or_refused(ws)
            assert (await run_request(ws, batch(f"Text {i}.", " "))).done["fail_count"] == 1
        finally:
            await ws.close()
        synth = {"text": f"Text {i}.", "ref_wav": f"w{i}", "output_path": str(tmp_path / f"{i}.wav")}
        assert (await client.post("/synth", json=synth)).status == 400

    await round_of(0)
    await scrape(client)  # (its own series)
    before = set(await scrape(client))
    for i in range(1, 40):
        await round_of(i)
    assert set(await scrape(client)) == before
    tallies = metrics.tallies
    assert len(tallies.series("npu_worker_sections")) <= 3 and len(tallies.series("npu_worker_jobs")) <= 8
