"""The sovits proxy engine against a stand-in sovits_worker on a real socket."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from npu_worker.audio import resample
from npu_worker.engine.base import Engine, SynthesisRequest, Voice
from npu_worker.engine.sovits import SovitsConfig, SovitsEngine, create
from npu_worker.protocol import EngineError, ModelLoadError
from tests.sovits_standin import SovitsStandIn, tone
from tests.timing import seconds
from tests.worker_process import refusing_port

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


class Outcome:
    """A call running on its own thread (as on the engine thread), to be waited for with a bound."""

    def __init__(self, call: Callable[[], object]) -> None:
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call: Callable[[], object]) -> None:
        try:
            call()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            self._error = error

    def running(self) -> bool:
        return self._thread.is_alive()

    def error(self, within: float) -> BaseException | None:
        """What the call raised (None: it returned); fails the test if it runs past `within` s."""
        self._thread.join(within)
        assert not self._thread.is_alive(), f"the call still runs after {within:g} s"
        return self._error


def in_thread(call: Callable[[], object]) -> Outcome:
    return Outcome(call)


# "At once", for a call that must end now (a cancel, a close, an upstream come up or refused): well
# short of what it waits where it misses that (the upstream's 10 s connect timeout, 10 s of retries, its
# 900 s call, a load that retries for ever), not a figure of speed: on a loaded machine thread switches,
# not the engine, decide a 1 or 2 s bound.
AT_ONCE = seconds(5)


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


def test_what_health_names_is_bounded_and_printable():
    """It goes into every start event, /synth answer and metrics scrape: 100 kB there was 100 kB each."""
    health = {"status": "ok", "device": "x" * 100_000, "precision": "fp\n16", "backend": ["a"], "version": 2}
    with SovitsStandIn(health=health) as upstream:
        engine = SovitsEngine(upstream.base)
        engine.load()
        engine.close()
    assert (engine.info.device, engine.info.precision, engine.info.model) == ("x" * 64, "fp16", "2")


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


def phase_says(engine: SovitsEngine, words: str) -> None:
    """Wait until the engine's load phase (what /health shows while it loads) holds `words`."""
    deadline = time.monotonic() + seconds(10)
    while words not in (engine.load_phase or ""):
        assert time.monotonic() < deadline, f"load phase {engine.load_phase!r}, not {words!r}"
        time.sleep(0.01)


def test_close_ends_the_wait_for_an_unreachable_upstream_with_model_load_error():
    with refusing_port() as port:
        engine = SovitsEngine(f"http://127.0.0.1:{port}")
        outcome = in_thread(engine.load)
        time.sleep(0.3)
        assert outcome.running(), "load() gave up on an upstream that may yet come up"
        engine.close()
        error = outcome.error(within=AT_ONCE)
    assert isinstance(error, ModelLoadError) and "stopped waiting" in str(error)
    assert "127.0.0.1" not in str(error)


def test_load_waits_for_an_upstream_that_is_still_loading(upstream):
    upstream.health = {"status": "loading", "loaded": False}
    engine = SovitsEngine(upstream.base, load_retry_cap=0.1)
    outcome = in_thread(engine.load)
    phase_says(engine, "not ready yet")
    assert outcome.running()
    upstream.health = {"status": "ok", "loaded": True, "device": "cuda"}
    assert outcome.error(within=AT_ONCE) is None
    assert engine.info.device == "cuda" and engine.load_phase is None
    engine.close()


def test_load_waits_for_an_upstream_that_comes_up_later():
    with refusing_port() as port:  # until the stand-in takes it
        engine = SovitsEngine(f"http://127.0.0.1:{port}", load_retry_cap=0.1)
        outcome = in_thread(engine.load)
        phase_says(engine, "connection refused")
    with SovitsStandIn(port=port):
        assert outcome.error(within=AT_ONCE) is None
        list(engine.stream(SynthesisRequest(TEXT)))
    engine.close()


def test_a_health_that_can_never_work_is_model_load_error_at_once(upstream):
    engine = SovitsEngine(upstream.base + "/nothing-here")
    with pytest.raises(ModelLoadError, match="sovits_worker /health answered 404: NotFound") as caught:
        engine.load()
    assert "127.0.0.1" not in str(caught.value)


def test_upstream_gone_after_load_is_engine_error(upstream):
    engine = SovitsEngine(upstream.base)
    engine.load()
    engine.retry_seconds = 0.3
    upstream.stop()
    try:
        with pytest.raises(EngineError, match="sovits_worker is unreachable: connection refused") as caught:
            list(engine.stream(SynthesisRequest(TEXT)))
        assert "127.0.0.1" not in str(caught.value)  # callers see the reason, the log the address
    finally:
        engine.close()


def test_a_blip_of_the_upstream_is_ridden_out(upstream):
    """The upstream restarts (down about half a second): the section is asked again, not failed."""
    port = int(upstream.base.rsplit(":", 1)[1])
    engine = SovitsEngine(upstream.base)
    engine.load()
    upstream.stop()
    outcome = in_thread(lambda: list(engine.stream(SynthesisRequest(TEXT))))
    time.sleep(0.5)
    with SovitsStandIn(port=port) as again:
        assert outcome.error(within=AT_ONCE) is None
        assert len(again.requests) == 1
    engine.close()


def test_a_path_prefix_in_the_base_is_kept():
    with SovitsStandIn(prefix="/tts") as upstream:
        engine = SovitsEngine(upstream.base + "/tts/")
        engine.load()
        assert np.concatenate(list(engine.stream(SynthesisRequest(TEXT)))).size > 0
        engine.close()


def test_close_removes_the_work_directory(engine):
    work_dir = engine.work_dir
    engine.close()
    assert not work_dir.exists()


@pytest.mark.parametrize("base", ["http://127.0.0.1:7766/a b", "http://127.0.0.1:7766/é", "http://exa mple:7766",
                                  "http://127.0.0.1:7766/a\tb", "http://127.0.0.1:7766/a\x01"])  # fmt: skip
def test_a_base_no_request_line_can_carry_is_refused(base: str):
    """http.client refuses such a path or host on every call: load() waited for ever (a space), or
    failed with a UnicodeEncodeError or InvalidURL, instead of `serve` exiting 2."""
    with pytest.raises(ValueError, match="must be printable ASCII without spaces"):
        SovitsEngine(base)


def test_create_uses_the_configured_sovits_base():
    engine = create(SovitsConfig("http://127.0.0.1:7766/"))
    assert isinstance(engine, SovitsEngine)
    assert engine.base == "http://127.0.0.1:7766"
