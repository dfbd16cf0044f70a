"""One segment's audio: encoder → seeded Euler sampler → vocoder, in pieces as they are final, with a
step boundary after each decoder call (where the engine thread may cancel or pause), and what it cost.

Apart from `engine.py`, which plans the segments and keeps the loaded models: this is the work each one
costs, with every input explicit."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field

import numpy as np

from npu_worker.engine.base import Interrupted
from npu_worker.engine.zipvoice import sampler
from npu_worker.engine.zipvoice.features import rms_restore
from npu_worker.engine.zipvoice.options import ZipVoiceOptions
from npu_worker.engine.zipvoice.prompt import Prompt
from npu_worker.engine.zipvoice.runtime import LoadedModels
from npu_worker.engine.zipvoice.vocoder import Vocoder
from npu_worker.protocol import EngineError, WorkerError

STEP_BOUNDARY = np.zeros(0, dtype=np.float32)  # yielded after each decoder call: cancel or pause here


@dataclass
class SegmentTrace:
    """What one segment cost (read by the benchmark; the engine itself does not need it)."""

    text: str
    tokens: int
    prompt_frames: int
    frames: int
    encoder_seconds: float = 0.0
    step_seconds: list[float] = field(default_factory=list)
    vocoder_seconds: float = 0.0
    samples: int = 0


def segment_pieces(
    models: LoadedModels,
    vocoder: Vocoder,
    options: ZipVoiceOptions,
    text: str,
    tokens: list[int],
    prompt: Prompt,
    speed: float,
    seed: int,
    steps: int,
    frames_per_token: float | None,
    trace: SegmentTrace,
) -> Iterator[np.ndarray]:
    """Encoder → sampler → vocoder for one segment's `tokens` (of `text`, named in errors), yielding
    vocoder pieces and, after each decoder call, an empty array (a step boundary); what it cost goes
    into `trace`. `frames_per_token`: see `ZipVoiceEngine.segment_pieces`."""
    started = time.perf_counter()
    try:
        encoder_speed = _encoder_speed(models, prompt, len(tokens), speed, frames_per_token)
        condition = models.encoder(tokens, prompt.tokens, prompt.frames, encoder_speed)
        trace.frames = int(condition.shape[1])
        trace.encoder_seconds = time.perf_counter() - started
        if trace.frames <= prompt.frames + 1:
            return
        generated = yield from _sampled(models, condition, prompt, steps, seed, options.t_shift, trace)
        if not np.all(np.isfinite(generated)):
            raise EngineError(f"the decoder gave non-finite features for {text[:40]!r}")
    except (WorkerError, Interrupted):
        raise
    except Exception as exc:
        raise EngineError(f"synthesis of {text[:40]!r} failed: {exc}") from exc
    pieces = vocoder.decode_pieces(generated / sampler.FEAT_SCALE, options.vocoder_piece_frames)
    while True:
        started = time.perf_counter()
        try:
            piece = next(pieces, None)
        except Interrupted:
            raise
        except Exception as exc:
            raise EngineError(f"vocoder failed on {text[:40]!r}: {exc}") from exc
        trace.vocoder_seconds += time.perf_counter() - started
        if piece is None:
            return
        if not np.all(np.isfinite(piece)):
            raise EngineError(f"the vocoder gave non-finite samples for {text[:40]!r}")
        trace.samples += piece.size
        yield rms_restore(piece, prompt.rms, options.prompt.target_rms)


def _encoder_speed(
    models: LoadedModels, prompt: Prompt, count: int, speed: float, frames_per_token: float | None
) -> float:
    """The encoder's speed for `count` tokens after the prompt: the frames planned at `speed` (or at the
    engine's `frames_per_token`), aligned up to a bucketed decoder's size rather than padded behind."""
    encoder_speed = sampler.encoder_speed(prompt.frames, len(prompt.tokens), count, speed)
    planned = sampler.total_frames(prompt.frames, len(prompt.tokens), count, speed)
    if frames_per_token is not None:
        planned = prompt.frames + math.ceil(frames_per_token * count / speed - 1e-9)
        encoder_speed = sampler.speed_for_frames(prompt.frames, len(prompt.tokens), count, planned)
    aligned = models.decoder.aligned_frames(planned)
    if aligned != planned:  # bucketed decoder: a few frames more instead of padding behind
        encoder_speed = sampler.speed_for_frames(prompt.frames, len(prompt.tokens), count, aligned)
    return encoder_speed


def _sampled(
    models: LoadedModels,
    condition: np.ndarray,
    prompt: Prompt,
    steps: int,
    seed: int,
    t_shift: float,
    trace: SegmentTrace,
) -> Generator[np.ndarray, None, np.ndarray]:
    """The sampler's features, with a step boundary yielded after each decoder call (where the engine
    thread may cancel or pause)."""
    stepping = sampler.euler_steps(
        models.decoder, condition, prompt.features, steps, seed, t_shift, on_step=_timer(trace)
    )
    while True:
        try:
            next(stepping)
        except StopIteration as done:
            return done.value
        yield STEP_BOUNDARY


def _timer(trace: SegmentTrace) -> Callable[[int], None]:
    last = [time.perf_counter()]

    def on_step(step: int) -> None:
        now = time.perf_counter()
        trace.step_seconds.append(now - last[0])
        last[0] = now

    return on_step
