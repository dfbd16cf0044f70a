"""One request's work in the ZipVoice engine: the voice's prompts and the text's segments planned, each
segment synthesised (`ZipVoiceEngine.segment_pieces`, `synthesis.py`) and passed through the joiner,
and the checks at the stream's end (a text with no speakable token, a stream without audio).

Apart from `engine.py`, which loads the model and offers its operations (plan a text, one segment's
pieces): this is how a request strings them together, with all its state in the generator, so the
engine thread may pause a section here, run another and resume it (runner.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.text_form import readable
from npu_worker.engine.zipvoice.joiner import StreamJoiner
from npu_worker.engine.zipvoice.prompt import VoicePrompts
from npu_worker.engine.zipvoice.synthesis import SegmentTrace
from npu_worker.protocol import EmptyText, EngineError, WorkerError

if TYPE_CHECKING:
    from npu_worker.engine.zipvoice.engine import ZipVoiceEngine


def stream(engine: ZipVoiceEngine, request: SynthesisRequest) -> Iterator[np.ndarray]:
    """The request's audio per segment as it is final, and the step boundaries (empty chunks) between;
    EmptyText for a text with no speakable token, EngineError for one that gave no audio."""
    info = engine.info
    early = request.early_audio
    prompts, segments = _planned(engine, request)
    seed = engine.config.seed if request.seed is None else request.seed
    joiner = StreamJoiner(
        info.sample_rate, engine.options.crossfade_ms, trim=engine.options.trim_edge_silence
    )
    traces: list[SegmentTrace] = []  # this request's own (another may run while it is paused)
    engine.traces = traces
    produced = 0
    for index, text in enumerate(segments):
        first = index == 0 and early
        for out in _joined_segment(engine, joiner, request, text, prompts, first, seed + index, traces):
            produced += out.size
            yield out
    if not any(trace.tokens for trace in traces):  # "...!!!", "😀", zero-width characters: the caller's
        raise EmptyText(
            f"the text gives no speakable tokens for lang {request.lang!r}: {request.text[:40]!r}"
        )
    out = joiner.finish()
    produced += out.size
    if out.size:
        yield out
    if not produced:  # never an `ok` without audio for a text with words
        raise EngineError(
            f"the synthesis of {request.text[:40]!r} gave no audible audio ({len(traces)} segments)"
        )


def _planned(engine: ZipVoiceEngine, request: SynthesisRequest) -> tuple[VoicePrompts, list[str]]:
    """The voice's prompts and the text's segments; a failure of our own here is the engine's
    (EngineError), a caller's mistake (a WorkerError) its own."""
    voice = request.voice if request.voice.ref_wav else engine.default_voice()
    try:
        prompts = engine.prompts.get(voice, request.lang)
        segments = engine.plan(
            readable(request.text),  # composed first: a cut never parts a syllable's jamo
            request.lang,
            prompts.rest,
            request.speed_factor,
            request.early_audio,
            prompts.frames_per_token,
        )
    except WorkerError:
        raise
    except Exception as exc:
        raise EngineError(f"preparing the text failed: {exc}") from exc
    return prompts, segments


def _joined_segment(
    engine: ZipVoiceEngine,
    joiner: StreamJoiner,
    request: SynthesisRequest,
    text: str,
    prompts: VoicePrompts,
    first: bool,
    seed: int,
    traces: list[SegmentTrace],
) -> Iterator[np.ndarray]:
    """One segment's audio as the joiner makes it final, and its step boundaries (empty chunks),
    where the caller may cancel or pause; the early first segment takes the short prompt."""
    prompt = prompts.first if first else prompts.rest
    steps = (engine.options.first_segment_steps or engine.num_steps) if first else engine.num_steps
    joiner.start_segment()
    pieces = engine.segment_pieces(
        text,
        request.lang,
        prompt,
        request.speed_factor,
        seed,
        steps,
        prompts.frames_per_token,
        traces,
    )
    for piece in pieces:
        if not piece.size:
            yield piece  # a step boundary: the caller may cancel or pause here
            continue
        out = joiner.feed(piece)
        if out.size:
            yield out
