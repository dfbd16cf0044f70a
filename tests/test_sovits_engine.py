"""The sovits proxy engine against a stand-in sovits_worker on a real socket."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import numpy as np
import pytest

from npu_worker.audio import resample
from npu_worker.engine.base import Engine, SynthesisRequest, Voice
from npu_worker.engine.sovits import SovitsConfig, SovitsEngine, create
from npu_worker.protocol import EngineError, ModelLoadError
from tests.sovits_standin import SovitsStandIn, tone

TEXT = "안녕하세요. 박씨 음성 합성 테스트입니다."


@pytest.fixture
def upstream() -> Iterator[SovitsStandIn]:
    with SovitsStandIn() as standin:
        yield standin


@pytest.fixture
def engine(upstream: SovitsStandIn) -> Iterator[SovitsEngine]:
    engine = SovitsEngine(upstream.base)
    engine.load()
    yield engine
    engine.close()


def closed_port_base() -> str:
    """A loopback URL on which nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_engine_satisfies_the_engine_contract(engine):
    assert isinstance(engine, Engine)


def test_engine_yields_the_audio_the_upstream_wrote_at_its_own_rate(engine, upstream):
    chunks = list(engine.stream(SynthesisRequest(TEXT)))
    audio = np.concatenate(chunks)
    expected = resample(tone(TEXT, upstream.wav_rate), upstream.wav_rate, 24000)
    assert engine.info.sample_rate == 24000
    assert audio.size == expected.size
    np.testing.assert_allclose(audio, expected, atol=1e-3)  # 16-bit wav quantisation only


def test_audio_comes_in_half_second_chunks(engine):
    chunks = list(engine.stream(SynthesisRequest(TEXT)))
    assert len(chunks) > 1
    assert all(chunk.size == 12000 for chunk in chunks[:-1])
    assert 0 < chunks[-1].size <= 12000


def test_request_carries_text_lang_speed_and_reference(engine, upstream):
    request = SynthesisRequest(TEXT, lang="ko", speed_factor=1.25, voice=Voice(ref_wav="/voices/park.wav"))
    list(engine.stream(request))
    (sent,) = upstream.requests
    assert sent["text"] == TEXT
    assert (sent["lang"], sent["speed_factor"], sent["ref_wav"]) == ("ko", 1.25, "/voices/park.wav")
    assert sent["output_path"].startswith(str(engine.work_dir))


def test_default_voice_is_sent_as_null_reference(engine, upstream):
    list(engine.stream(SynthesisRequest(TEXT)))
    assert upstream.requests[0]["ref_wav"] is None


def test_upstream_wav_is_removed_after_streaming(engine, upstream):
    list(engine.stream(SynthesisRequest(TEXT)))
    assert not any(engine.work_dir.iterdir())


def test_health_device_and_version_are_reported():
    health = {"status": "ok", "loaded": True, "device": "cuda", "backend": "gpt-sovits", "version": "v2"}
    with SovitsStandIn(health=health) as upstream:
        engine = SovitsEngine(upstream.base)
        engine.load()
        engine.close()
    assert (engine.info.backend, engine.info.device, engine.info.model) == ("sovits", "cuda", "gpt-sovits-v2")


def test_health_without_device_reports_cpu():
    with SovitsStandIn(health={"status": "ok"}) as upstream:
        engine = SovitsEngine(upstream.base)
        engine.load()
        engine.close()
    assert engine.info.device == "cpu"


def test_upstream_failure_becomes_engine_error_with_its_text(engine):
    with pytest.raises(EngineError, match="reference wav unreadable"):
        list(engine.stream(SynthesisRequest("FAIL " + TEXT)))


def test_upstream_http_error_becomes_engine_error_with_its_text(engine):
    with pytest.raises(EngineError, match="500.*CUDA out of memory"):
        list(engine.stream(SynthesisRequest("CRASH " + TEXT)))


def test_unreachable_base_is_model_load_error_naming_the_url():
    base = closed_port_base()
    with pytest.raises(ModelLoadError, match=f"{base}/health"):
        SovitsEngine(base).load()


def test_upstream_still_loading_is_model_load_error():
    with SovitsStandIn(health={"status": "loading", "loaded": False}) as upstream:
        with pytest.raises(ModelLoadError, match="not ready"):
            SovitsEngine(upstream.base).load()


def test_upstream_gone_after_load_is_engine_error(upstream):
    engine = SovitsEngine(upstream.base)
    engine.load()
    upstream.stop()
    try:
        with pytest.raises(EngineError, match="unreachable"):
            list(engine.stream(SynthesisRequest(TEXT)))
    finally:
        engine.close()


def test_close_removes_the_work_directory(engine):
    work_dir = engine.work_dir
    engine.close()
    assert not work_dir.exists()


def test_create_uses_the_configured_sovits_base():
    engine = create(SovitsConfig("http://127.0.0.1:7766/"))
    assert isinstance(engine, SovitsEngine)
    assert engine.base == "http://127.0.0.1:7766"
