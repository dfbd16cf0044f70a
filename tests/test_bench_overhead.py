"""`--engine-baseline`'s "What the server adds": the engine's own time for a text taken from what a
listener waits, so what is left is the worker's. A `/synth` wav is not trimmed (only a preview's first
section is), so its leading silence is the engine's, made the same with or without the worker: it was
counted as the worker's (a text whose wav opens with 50 ms of silence added 50 ms to the figure)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from npu_worker.app_keys import SETTINGS_KEY
from npu_worker.bench.load import LoadConfig, run_load
from npu_worker.bench.measure import RequestRecord
from npu_worker.bench.report import markdown, summarize_runs
from tests.timing import seconds
from tests.tone_engine import ToneEngine

TEXTS = ("첫 번째 문장입니다.", "두 번째 문장은 조금 더 깁니다.")
SILENCE_MS = 300.0  # the tone engine's leading silence: far above any server cost on loopback


async def run_against(server: Any, transports: tuple[str, ...]) -> dict[str, Any]:
    settings = server.app[SETTINGS_KEY]
    config = LoadConfig(
        base=f"http://127.0.0.1:{server.port}",
        rates=(4.0,),
        texts=TEXTS,
        transports=transports,
        duration=1.0,
        max_requests=2,
        wav_dir=settings.output_roots[0],
    )
    async with asyncio.timeout(seconds(60)):
        return await run_load(config)


def baseline(whole_ms: float, first_audible_ms: float) -> dict[str, Any]:
    """An engine-alone record for TEXTS, as `benchmarks/load/engine_first_chunk.py` writes one."""
    return {
        "per_text_whole_ms": [whole_ms] * len(TEXTS),
        "per_text_first_audible_ms": [first_audible_ms] * len(TEXTS),
    }


async def test_a_wavs_leading_silence_is_the_engines_not_the_servers(worker):
    result = await run_against(await worker(ToneEngine(leading_silence=SILENCE_MS / 1000)), ("http",))
    records = [r for r in result["records"] if r["error"] is None]
    assert records, result["records"]
    summarize_runs(result["records"], baseline(whole_ms=0.0, first_audible_ms=0.0))
    for r in records:
        assert r["leading_silence_ms"] == pytest.approx(SILENCE_MS, abs=10)
        assert r["ttfa_ms"] == pytest.approx(r["e2e_ms"] + r["leading_silence_ms"])
        # An engine that took no time at all: what is left is the worker's answer time, nothing of the silence.
        assert r["overhead_ms"] == pytest.approx(r["e2e_ms"])


async def test_a_previews_kept_silence_is_still_counted(worker):
    """A preview's first section is trimmed to 10 ms of its silence by the worker: those count."""
    result = await run_against(await worker(ToneEngine(leading_silence=SILENCE_MS / 1000)), ("ws",))
    records = [r for r in result["records"] if r["error"] is None]
    assert records, result["records"]
    summarize_runs(result["records"], baseline(whole_ms=0.0, first_audible_ms=0.0))
    for r in records:
        assert r["leading_silence_ms"] <= 10.0
        assert r["overhead_ms"] == pytest.approx(r["ttfa_ms"])


def test_the_report_says_what_the_figure_leaves_out():
    record = RequestRecord(transport="http", rate=1.0, index=0, text_idx=0, scheduled_s=0.5).to_dict()
    record.update(ttfa_ms=80.0, e2e_ms=30.0, first_chunk_ms=30.0, leading_silence_ms=50.0, audio_sec=1.0)
    report = {
        "command": "npu-worker bench",
        "started_at": "s",
        "finished_at": "f",
        "machine": {"platform": "p", "cpu_count": 2},
        "health": {"backend": "tone", "device": "cpu"},
        "summary": summarize_runs([record], baseline(whole_ms=20.0, first_audible_ms=1.0)),
        "records": [record],
    }
    assert record["overhead_ms"] == pytest.approx(10.0)  # 30 ms to the wav, 20 of them the engine's
    assert "the wav's leading silence is the engine's" in markdown(report)
