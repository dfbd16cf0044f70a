"""The synthesis cache: keyed by everything that changes the audio, bounded in bytes."""

from __future__ import annotations

import os

from npu_worker.engine.base import EngineInfo, SynthesisRequest, Voice
from npu_worker.jobs.cache import SynthesisCache, cache_key

CPU = EngineInfo("zipvoice-onnx", "cpu", "fp32", 24000, "zipvoice-distill-1")


def test_key_changes_with_device_precision_text_speed_voice_and_seed(tmp_path):
    base = SynthesisRequest("안녕하세요.", "ko", 1.0, Voice(), 0)
    keys = {
        cache_key(CPU, base),
        cache_key(EngineInfo("zipvoice-onnx", "qnn", "fp16", 24000, "zipvoice-distill-1"), base),
        cache_key(EngineInfo("zipvoice-onnx", "cpu", "int8", 24000, "zipvoice-distill-1"), base),
        cache_key(CPU, SynthesisRequest("안녕.", "ko", 1.0, Voice(), 0)),
        cache_key(CPU, SynthesisRequest("안녕하세요.", "ko", 1.5, Voice(), 0)),
        cache_key(CPU, SynthesisRequest("안녕하세요.", "ko", 1.0, Voice(str(tmp_path / "r.wav"), "x"), 0)),
        cache_key(CPU, SynthesisRequest("안녕하세요.", "ko", 1.0, Voice(), 1)),
    }
    assert len(keys) == 7


def test_least_recently_used_entries_are_evicted_past_the_bound(tmp_path):
    cache = SynthesisCache(tmp_path, max_bytes=2500)
    for index, key in enumerate(("a", "b", "c")):
        cache.put(key, bytes(1000))
        os.utime(tmp_path / f"{key}.wav", (1000 + index, 1000 + index))
    assert cache.get("a") is None  # oldest went first
    assert cache.get("b") is not None and cache.get("c") is not None
    assert sum(p.stat().st_size for p in tmp_path.glob("*.wav")) <= 2500


def test_a_zero_bound_disables_the_cache(tmp_path):
    cache = SynthesisCache(tmp_path / "off", max_bytes=0)
    cache.put("a", bytes(10))
    assert cache.get("a") is None and not (tmp_path / "off").exists()
