"""The real 39-slide Korean lecture through /synth_batch with the embedded espeak-ng engine."""

from __future__ import annotations

import json
import time
import wave
from pathlib import Path

import pytest

LECTURE = Path(__file__).resolve().parents[1] / "npu_worker" / "bench" / "lecture_ko_39.json"  # shipped copy


@pytest.mark.slow
async def test_the_39_slide_lecture_yields_39_playable_wavs_with_matching_durations(worker, tmp_path):
    lecture = json.loads(LECTURE.read_text(encoding="utf-8"))
    client = await worker(engine=None, backend="espeak")  # the configured backend, as `serve` builds it
    sections = [
        {"idx": s["idx"], "text": s["text"], "output_path": str(tmp_path / "out" / f"s{s['idx']:02d}.wav")}
        for s in lecture["sections"]
    ]
    started = time.monotonic()
    response = await client.post("/synth_batch", json={"sections": sections, "lang": lecture["lang"]})
    events = [json.loads(line) async for line in response.content if line.strip()]
    wall = time.monotonic() - started
    oks = [e for e in events if e["event"] == "progress" and e["status"] == "ok"]
    assert events[0]["backend"] == "espeak-ng" and events[-1]["event"] == "done"
    assert events[-1]["ok_count"] == 39 and events[-1]["fail_count"] == 0
    assert sorted(e["idx"] for e in oks) == list(range(39))
    for event in oks:
        with wave.open(event["wav_path"]) as wav:
            assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 24000)
            seconds = wav.getnframes() / wav.getframerate()
        assert seconds > 0.5
        assert abs(seconds - event["duration_sec"]) < 0.002
    print(f"39 slides, {sum(e['duration_sec'] for e in oks):.1f} s of audio, wall {wall:.2f} s")
