"""The ZipVoice engine's warm-up at load: one short first segment with the default voice, so the first
request does not pay what every later one finds ready. Apart from `engine.py`, which it would push
past the module size: it is one step of the load, run once, with nothing of the streaming path."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from npu_worker.engine import qnn_targets
from npu_worker.engine.base import SynthesisRequest
from npu_worker.protocol import WorkerError

if TYPE_CHECKING:
    from npu_worker.engine.zipvoice.engine import ZipVoiceEngine

log = logging.getLogger(__name__)
# Spoken once at load with the default voice: a first segment as a preview's (benchmarks/PREVIEW_LATENCY.md).
WARM_UP = ("ko", "안녕하세요. 반갑습니다.")


def warm_up(engine: ZipVoiceEngine) -> None:
    """Synthesise one short first segment with the default voice, so the first request does not pay
    what every later one finds ready: onnxruntime's first runs (memory planning, arena growth), the
    sampler's random generator, the tokenizer's first call. Skipped on the x86 HTP simulator (a
    simulated decoder call takes seconds to minutes) and without a reference voice."""
    on_simulator = engine.models.device == "qnn" and qnn_targets.htp_is_simulated()
    lang, text = WARM_UP
    if on_simulator or not engine.config.default_voice.ref_wav:
        return
    engine.load_phase = "warming up: one short sentence with the default voice"
    started = time.perf_counter()
    try:
        engine.check_language(lang)
        for _ in engine.stream(SynthesisRequest(text, lang, seed=0)):
            pass
    except WorkerError as exc:  # a model without Korean, say: the first request pays, nothing breaks
        log.info("warm-up skipped: %s", exc)
        return
    log.info("warm-up sentence in %.2f s", time.perf_counter() - started)
